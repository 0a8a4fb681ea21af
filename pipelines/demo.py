"""``pitaudit demo``: audit the committed sample night (data/sample/) and say where the report is."""

from __future__ import annotations

from pathlib import Path

from pipelines.audit.run import AuditError, run_audit

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def run_demo(out: Path, sample: Path | None = None, progress: bool = True, settings=None):
    """Audit ``data/sample/`` into ``out`` (database ``out/pitaudit.duckdb``); returns the audit's outcome."""
    sample = Path(sample) if sample is not None else SAMPLE
    if not sample.is_dir() or not any(sample.rglob("rounds_*.jsonl")):
        raise AuditError(
            f"no sample night in {sample} (rounds_*.jsonl and shoe_*.csv); write one with "
            f"`pitaudit simulate --out {sample}`"
        )
    out = Path(out)
    outcome = run_audit(sample, out / "pitaudit.duckdb", out, "06:00", progress=progress, settings=settings)
    print(f"open {outcome.paths['report'].resolve()} in a browser (it needs no network)")
    return outcome
