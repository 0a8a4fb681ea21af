"""The deterministic detectors: each a plain function over the audit's frames that returns findings.

One module per family: money (payout, limits, differential, void, Free Hand), cards (card
integrity, the engine's irregularities), results (announced result v the cards), timing (late
wagers), gaps (event and round numbering) and matching (rounds seen by one side only).
:func:`detect_partition` runs every per-partition detector; the gap detectors need the whole
night and run once (:func:`pipelines.audit.detectors.gaps.detect_gaps`).
"""

from __future__ import annotations

import polars as pl

from pipelines.audit.detectors.cards import detect_cards
from pipelines.audit.detectors.matching import detect_unmatched
from pipelines.audit.detectors.money import detect_money
from pipelines.audit.detectors.results import detect_result_mismatch
from pipelines.audit.detectors.timing import detect_late_wagers
from pipelines.audit.findings import finalize
from pipelines.audit.params import AuditParams


def detect_partition(
    recon: pl.DataFrame, wagers: pl.DataFrame, rounds: pl.DataFrame, params: AuditParams,
    irregularities: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Every per-partition finding: ``wagers``, ``rounds``, ``irregularities`` are :class:`pipelines.audit.settle.Settled`'s frames."""
    return finalize([
        detect_money(wagers, rounds),
        detect_cards(recon, rounds, irregularities),
        detect_result_mismatch(rounds),
        detect_late_wagers(wagers, rounds),
        detect_unmatched(recon, rounds),
    ])
