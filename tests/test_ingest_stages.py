"""The ingest reads as a straight line: each stage imports only the stages before it, the parse workers import
nothing that writes, and only the load stage names the writer's transaction."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
INGEST = ROOT / "pipelines" / "ingest"
ORDER = ("discover", "screen", "plan", "parse", "parallel", "load", "run")
HELPERS = {"records", "lines", "batch", "quarantine", "rounds_jsonl", "shoe_csv", "duck", "synthetic", "worker_env"}


def _ingest_imports(module: str) -> set[str]:
    tree = ast.parse((INGEST / f"{module}.py").read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pipelines.ingest."):
            names.add(node.module.removeprefix("pipelines.ingest."))
    return names


def test_each_stage_imports_only_the_stages_before_it() -> None:
    for i, stage in enumerate(ORDER):
        later = set(ORDER[i + 1:]) - ({"parallel"} if stage == "parse" else set())
        assert not (_ingest_imports(stage) & later), (stage, _ingest_imports(stage) & later)
    assert _ingest_imports("parallel") - HELPERS == {"parse"}
    assert "store" in _ingest_imports("load") and "store" not in set().union(*(_ingest_imports(s) for s in ORDER if s != "load"))


def test_only_the_load_stage_begins_commits_or_rolls_back() -> None:
    for path in INGEST.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.stem != "load":
            assert "BEGIN TRANSACTION" not in text and '"COMMIT"' not in text and '"ROLLBACK"' not in text, path.name


def test_a_parse_worker_imports_nothing_that_writes() -> None:
    code = ("import sys, pipelines.ingest.parallel; "
            "print(sorted(m for m in sys.modules if m in ('pipelines.ingest.load', 'pipelines.ingest.store', "
            "'pipelines.ingest.run', 'pipelines.db')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_screen_decides_from_content_without_a_database(tmp_path: Path) -> None:
    """Stage 2 with hand-made records: known content is skipped whatever its name, a grown file is read from the
    end of its last read, new content under a known name is read whole."""
    import hashlib

    from pipelines.ingest.records import FileStatus, FoundFile, Kind, Loaded
    from pipelines.ingest.screen import fingerprint, screen

    old = b'{"a": 1}\n{"a": 2}\n'
    (tmp_path / "rounds_copy.jsonl").write_bytes(old)
    (tmp_path / "rounds_grown.jsonl").write_bytes(old + b'{"a": 3}\n{"a"')  # still being copied
    (tmp_path / "rounds_new.jsonl").write_bytes(b'{"b": 1}\n')
    fp = fingerprint(tmp_path / "rounds_grown.jsonl", (len(old),))
    assert (fp.prefix_bytes, fp.prefix_lines) == (len(old) + 9, 3) and dict(fp.at)[len(old)] == hashlib.sha256(old).hexdigest()
    loaded = Loaded(contents=frozenset({("rounds_jsonl", hashlib.sha256(old).hexdigest())}),
                    prefixes={"rounds_grown.jsonl": ((len(old), 2, hashlib.sha256(old).hexdigest()),),
                              "rounds_new.jsonl": ((4, 1, "0" * 64),)})
    found = [FoundFile(n, Kind.ROUNDS_JSONL, tmp_path / n) for n in ("rounds_copy.jsonl", "rounds_grown.jsonl",
                                                                       "rounds_new.jsonl")]
    got = screen(found, loaded)
    assert [(o.source_file, o.status) for o in got.skipped] == [("rounds_copy.jsonl", FileStatus.ALREADY_LOADED)]
    grown, new = got.to_load
    assert (grown.rel, grown.start_byte, grown.first_line) == ("rounds_grown.jsonl", len(old), 3)
    assert (new.rel, new.start_byte, new.first_line) == ("rounds_new.jsonl", 0, 1)


def test_fingerprint_hashes_equal_a_whole_read_of_each_prefix(tmp_path: Path, monkeypatch) -> None:
    """Every hash :func:`fingerprint` takes in its one pass (the file, its bytes up to the last line end, each length
    asked for) equals SHA-256 of those bytes read whole, whatever blocks the file is read in and however many of the
    lengths fall in one block (a name read every night asks for one length per night)."""
    import hashlib

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from pipelines.ingest import screen

    path = tmp_path / "rounds.jsonl"

    @settings(max_examples=150, deadline=None)
    @given(data=st.binary(max_size=200).map(lambda b: b.replace(b"\x00", b"\n")),
           lengths=st.lists(st.integers(0, 210), max_size=8), block=st.sampled_from([1, 3, 16, 8 << 20]))
    def check(data: bytes, lengths: list[int], block: int) -> None:
        monkeypatch.setattr(screen, "BLOCK", block)
        path.write_bytes(data)
        fp = screen.fingerprint(path, tuple(lengths))
        end = data.rfind(b"\n") + 1
        assert (fp.sha256, fp.size) == (hashlib.sha256(data).hexdigest(), len(data))
        assert (fp.prefix_sha256, fp.prefix_bytes, fp.prefix_lines) == (hashlib.sha256(data[:end]).hexdigest(), end,
                                                                         data.count(b"\n"))
        assert fp.at == tuple((n, hashlib.sha256(data[:n]).hexdigest()) for n in sorted(set(lengths)) if 0 < n <= len(data))

    check()


def test_every_name_the_formats_glob_matches_is_found(tmp_path: Path) -> None:
    """formats.md, Output contract: the audit "reads every shoe_*.csv and rounds_*.jsonl under --input". A name with a
    line end in it (the glob matches it) was skipped without a word, its rounds never audited; brackets and spaces
    are plain characters. The near-misses stay out: another extension, or a line end after it."""
    from pipelines.ingest.discover import discover

    names = ["rounds_new\nline.jsonl", "[a]/rounds_[b].jsonl", "shoe_x y\n.csv", "rounds_plain.jsonl"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    for other in ("rounds_a.jsonl.bak", "rounds_b.jsonl\n", "shoe_c.csvx"):
        (tmp_path / other).write_text("", encoding="utf-8")
    assert sorted(f.rel for f in discover(tmp_path)) == sorted(names)


def test_the_stage_benchmark_answers_help_and_refuses_a_missing_folder(tmp_path) -> None:
    """``benchmarks.ingest_stages --help`` took "--help" for the folder and printed a table of zeros, as it did for
    a folder that does not exist."""
    run = [sys.executable, "-m", "benchmarks.ingest_stages"]
    shown = subprocess.run([*run, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "usage:" in shown.stdout and "the whole parse" not in shown.stdout, shown.stdout
    missing = subprocess.run([*run, str(tmp_path / "nowhere")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "nowhere" in missing.stderr and "the whole parse" not in missing.stdout


def test_the_stage_benchmark_parses_with_a_parse_workers_allocator_setting() -> None:
    """It measures the parse "as a parse worker runs it": one polars thread, and polars' allocator keeping its pages
    as a worker's does (pipelines.ingest.parallel); it set the thread count only."""
    from pipelines.ingest.parallel import WORKER_ENV

    code = ("import os, benchmarks.ingest_stages; import polars; "
            "print(os.environ.get('POLARS_MAX_THREADS')); print(os.environ.get('_RJEM_MALLOC_CONF'))")
    env = {k: v for k, v in __import__("os").environ.items() if k not in WORKER_ENV}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    threads, malloc = out.stdout.splitlines()
    assert threads == WORKER_ENV["POLARS_MAX_THREADS"]
    assert WORKER_ENV["_RJEM_MALLOC_CONF"] in malloc, malloc
