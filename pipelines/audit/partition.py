"""One partition's audit as plain functions: reconstruct, re-settle, detect. No Prefect, no database.

The flow's tasks call these one by one; tests and the benchmark call :func:`audit_partition`.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from pipelines.audit.detectors import detect_partition
from pipelines.audit.load import Partition
from pipelines.audit.params import AuditParams
from pipelines.audit.reconstruct import reconstruct
from pipelines.audit.settle import Settled, published_settlements, settle


@dataclass(frozen=True)
class PartitionResult:
    keys: tuple  # the (gaming day, table) partitions covered
    settlements: pl.DataFrame | None  # the published columns (SETTLEMENTS_SCHEMA); None once staged
    findings: pl.DataFrame | None  # FINDINGS_SCHEMA; None once staged
    rounds: int  # table-system rounds
    device_rounds: int  # rounds the device dealt
    engine_errors: int  # rounds an engine refused with an unexpected error (a defect to report)

    def counts_only(self) -> "PartitionResult":
        return PartitionResult(self.keys, None, None, self.rounds, self.device_rounds, self.engine_errors)


def reconstruct_partition(part: Partition, params: AuditParams) -> pl.DataFrame:
    return reconstruct(part.events, part.rounds, params)


def settle_partition(part: Partition, recon: pl.DataFrame, params: AuditParams) -> Settled:
    return settle(recon, part.rounds, part.wagers, part.actions, params)


def detect_in_partition(recon: pl.DataFrame, settled: Settled, params: AuditParams) -> pl.DataFrame:
    return detect_partition(recon, settled.wagers, settled.rounds, params, settled.irregularities)


def summarise(part: Partition, recon: pl.DataFrame, settled: Settled, findings: pl.DataFrame) -> PartitionResult:
    errors = settled.rounds["engine_error"].is_not_null().sum() if "engine_error" in settled.rounds.columns else 0
    return PartitionResult(
        keys=part.keys,
        settlements=published_settlements(settled.wagers),
        findings=findings,
        rounds=part.rounds.height,
        device_rounds=int(recon["has_cards"].sum()),
        engine_errors=int(errors),
    )


def audit_partition(part: Partition, params: AuditParams) -> PartitionResult:
    recon = reconstruct_partition(part, params)
    settled = settle_partition(part, recon, params)
    findings = detect_in_partition(recon, settled, params)
    return summarise(part, recon, settled, findings)
