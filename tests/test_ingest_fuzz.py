"""Fuzz: random bytes, truncated files, huge lines, wrong encodings. Never a traceback; every file and
every physical line accounted for."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.ingest.lines import MAX_LINE_BYTES
from pipelines.ingest.synthetic import CSV_HEADER
from test_ingest_helpers import ingest, write_table


def physical_lines(data: bytes) -> int:
    """Lines as the contract counts them: pieces between '\\n', the last one only if not empty."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data:
        return 0
    n = data.count(b"\n")
    return n if data.endswith(b"\n") else n + 1


def _check_accounting(con, folder: Path) -> None:
    files = {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if p.is_file()}
    rows = con.execute("SELECT source_file, kind, status, lines_read, rows_accepted, rows_quarantined, error "
                       "FROM core_source_files").fetchall()
    recorded = {r[0] for r in rows}
    kinds = {r[0]: r[1] for r in rows}
    contents = {(kinds[f], files[f].read_bytes()) for f in recorded if f in files}
    for rel in set(files) - recorded:  # every file accounted for: a file not read repeats one that was (content)
        kind = "shoe_csv" if rel.startswith("shoe_") else "rounds_jsonl"
        assert (kind, files[rel].read_bytes()) in contents, rel
    for source_file, kind, status, read, accepted, quarantined, error in rows:
        if status == "unreadable":
            assert error and "\n" not in error
            assert not error.startswith("could not be loaded"), error  # a loader defect, not bad input
            continue
        assert read == accepted + quarantined
        data = files[source_file].read_bytes()
        expected = physical_lines(data) - (1 if kind == "shoe_csv" else 0)
        assert read == expected, (source_file, read, expected)
        q = con.execute("SELECT count(*) FROM core_quarantine WHERE source_file = ?", [source_file]).fetchall()[0][0]
        assert q == quarantined


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.binary(max_size=600), min_size=1, max_size=4),
    st.lists(st.binary(max_size=600), min_size=1, max_size=4),
)
def test_random_bytes_never_raise_and_every_line_is_accounted_for(jsonl_blobs, csv_blobs) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "in"
        folder.mkdir()
        for i, blob in enumerate(jsonl_blobs):
            (folder / f"rounds_{i}.jsonl").write_bytes(blob)
        for i, blob in enumerate(csv_blobs):  # a valid header, then noise: the lines are judged one by one
            (folder / f"shoe_{i}.csv").write_bytes(CSV_HEADER.encode() + b"\n" + blob)
        con, _ = ingest(folder, Path(tmp) / "db.duckdb")
        _check_accounting(con, folder)
        con.close()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_truncated_and_spliced_real_logs(data) -> None:
    """Valid logs cut at a random byte, or with random bytes spliced in."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "in"
        rp, sp, _, _ = write_table(folder, data.draw(st.integers(0, 5)), 6, cards=3)
        for p in (rp, sp):
            raw = p.read_bytes()
            cut = data.draw(st.integers(len(CSV_HEADER) + 1, len(raw)))
            noise = data.draw(st.binary(max_size=40))
            at = data.draw(st.integers(len(CSV_HEADER) + 1, cut))
            p.write_bytes(raw[:at] + noise + raw[at:cut])
        con, _ = ingest(folder, Path(tmp) / "db.duckdb")
        _check_accounting(con, folder)
        con.close()


def test_huge_lines_wrong_encodings_and_odd_files(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    rp, sp, rounds, events = write_table(folder, 0, 5)
    # a huge line in the middle of each file, and a file that is one huge line with no line end
    rp.write_text("\n".join(rounds[:2] + ["{" + "x" * (MAX_LINE_BYTES + 10) + "}"] + rounds[2:]) + "\n", encoding="utf-8")
    sp.write_text(CSV_HEADER + "\n" + "\n".join(events[:3] + ["A," * (MAX_LINE_BYTES // 2 + 5)] + events[3:]) + "\n",
                  encoding="utf-8")
    (folder / "rounds_oneline.jsonl").write_bytes(b"[" * (3 * MAX_LINE_BYTES))
    # latin-1: the lines with a non-ASCII byte are quarantined, the others load
    latin = [r.replace('"D1000"', '"Déalér"') if i % 2 else r for i, r in enumerate(rounds)]
    (folder / "rounds_latin1.jsonl").write_bytes(("\n".join(latin) + "\n").encode("latin-1"))
    (folder / "rounds_utf16.jsonl").write_bytes(("\n".join(rounds) + "\n").encode("utf-16"))
    (folder / "shoe_utf16le.csv").write_bytes((CSV_HEADER + "\n" + "\n".join(events)).encode("utf-16-le"))
    (folder / "shoe_only_header.csv").write_text(CSV_HEADER, encoding="utf-8")
    (folder / "rounds_nul.jsonl").write_bytes(b'{"a":1}\x00\n')
    (folder / "rounds_dir.jsonl").mkdir()  # a folder with an input-like name is not a file
    con, s = ingest(folder, tmp_path / "db.duckdb")
    (folder / "rounds_dir.jsonl").rmdir()
    _check_accounting(con, folder)
    q = dict(con.execute("SELECT source_file || ':' || source_line, reason_code FROM core_quarantine").fetchall())
    assert q[f"{rp.name}:3"] == "line_too_long"
    assert q[f"{sp.name}:5"] == "line_too_long"
    assert q["rounds_oneline.jsonl:1"] == "line_too_long"
    assert [k for k, v in q.items() if k.startswith("rounds_latin1")] == ["rounds_latin1.jsonl:2", "rounds_latin1.jsonl:4"]
    assert all(v == "not_utf8" for k, v in q.items() if k.startswith("rounds_latin1"))
    status = dict(con.execute("SELECT source_file, status FROM core_source_files").fetchall())
    assert status["rounds_utf16.jsonl"] == status["shoe_utf16le.csv"] == status["rounds_nul.jsonl"] == "unreadable"
    assert status["shoe_only_header.csv"] == "loaded"
    raw = con.execute(f"SELECT length(raw) FROM core_quarantine WHERE source_file = '{rp.name}' AND source_line = 3"
                      ).fetchall()[0][0]
    assert raw <= 1 << 16  # the quarantine keeps the start of a huge line, not all of it
