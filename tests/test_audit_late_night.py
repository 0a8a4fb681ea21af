"""A late export: night 3 audited before night 2, then night 2, through `pitaudit audit` into one database.

Night 3's first audit rightly reports the rounds and device events of night 2 as missing (``sequence_gap``). Once
night 2 is loaded they are not: a gap is judged from the rounds and events around a partition, while a partition is
re-settled only when its own evidence changes (its fingerprint). Night 3's partitions kept their gap findings, and
every re-run and backfill of night 3 published them again ("rounds 73434 to 73570 (137 rounds) are missing from
both logs"). Now the night-wide findings of the partitions not re-settled are tonight's: night 3 audited again after
the late night 2 publishes what the nights audited in order publish.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipelines.cli import app


@pytest.fixture(scope="module")
def three_nights(tmp_path_factory, prefect_harness):
    from pipelines.simulate.config import Behaviours
    from pipelines.simulate.run import run_simulation

    root = tmp_path_factory.mktemp("late")
    run_simulation(root / "sim", rounds=600, days=3, seed=31, fault_rate=0.0, behaviours=Behaviours.off(), quiet=True,
                   start_day=dt.date(2026, 11, 21))
    for night in (1, 2, 3):
        folder = root / f"night{night}"
        folder.mkdir()
        day = f"2026-11-2{night}"
        for p in (root / "sim").glob(f"*_{day}.*"):  # the same names every night, as an exporter writes them
            shutil.copyfile(p, folder / (p.name.rsplit("_", 1)[0] + p.suffix))
    return root


def _audit(root: Path, night: int, db: str, out: str, *extra: str) -> bytes:
    result = CliRunner().invoke(app, ["audit", "--input", str(root / f"night{night}"), "--db", str(root / db),
                                      "--out", str(root / out), *extra])
    assert result.exit_code == 0, result.output
    return (root / out / "findings.csv").read_bytes()


def test_a_late_night_clears_the_gaps_it_filled_in_the_next_nights_partitions(three_nights):
    root = three_nights
    in_order = [_audit(root, night, "a.duckdb", f"a{night}") for night in (1, 2, 3)]
    _audit(root, 1, "b.duckdb", "b1")
    early = _audit(root, 3, "b.duckdb", "b3")
    assert early.count(b",sequence_gap,") > in_order[2].count(b",sequence_gap,")  # night 2 missing: gaps
    assert _audit(root, 2, "b.duckdb", "b2") == in_order[1]
    assert _audit(root, 3, "b.duckdb", "b3-again") == in_order[2]
    assert _audit(root, 3, "b.duckdb", "b3-backfill", "--from", "2026-11-23", "--to", "2026-11-23") == in_order[2]
