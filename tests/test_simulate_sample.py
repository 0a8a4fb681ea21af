"""The committed sample night (data/sample/) is exactly what its README's command writes."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from pipelines.cli import app
from pipelines.simulate.catalogue import VARIANTS
from pipelines.simulate.ground_truth import read_ground_truth

SAMPLE = Path(__file__).parents[1] / "data" / "sample"


def _readme_command() -> list[str]:
    text = (SAMPLE / "README.md").read_text()
    line = next(x for x in text.splitlines() if x.startswith(".venv/bin/pitaudit simulate"))
    return shlex.split(line)[1:]


def test_the_readme_command_reproduces_the_sample_byte_for_byte(tmp_path):
    args = _readme_command()
    args[args.index("--out") + 1] = str(tmp_path)
    result = CliRunner().invoke(app, args + ["--quiet"])
    assert result.exit_code == 0, result.output
    committed = sorted(p.name for p in SAMPLE.iterdir() if p.name != "README.md")
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == committed
    for name in committed:
        assert (tmp_path / name).read_bytes() == (SAMPLE / name).read_bytes(), name


def test_the_sample_holds_every_fault_variant_and_behaviour_and_stays_small():
    rows = read_ground_truth(SAMPLE / "ground_truth.csv")
    variants = {r.detail.split(":")[0] for r in rows}
    assert {v.name for v in VARIANTS} <= variants
    assert {"advantage_play", "player_luck_anomaly", "collusion_pattern", "hold_anomaly"} <= {r.kind for r in rows}
    size = sum(p.stat().st_size for p in SAMPLE.iterdir())
    assert size < 6_000_000
    tables = {p.name.split("_")[1] for p in SAMPLE.glob("rounds_*.jsonl")}
    assert len(tables) >= 20
    readme = (SAMPLE / "README.md").read_text()
    assert f"({len(rows)} ground-truth rows)" in readme
    assert re.search(r"--rounds \d+", readme)
