"""Property tests (hypothesis): valid logs with random lines corrupted in random ways.

For every file: lines read = accepted + quarantined; the accepted lines are exactly the lines
left intact; every corrupted line is quarantined under the reason its corruption must give; and
ingesting the same folder again changes no table.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.ingest.synthetic import CSV_HEADER
from test_ingest_helpers import CSV_CORRUPTIONS, JSON_CORRUPTIONS, ingest, snapshot, write_table


@st.composite
def corrupted_night(draw):
    tables = draw(st.lists(st.integers(0, 5), min_size=1, max_size=3, unique=True))
    plan = []
    for index in tables:
        rounds = draw(st.integers(2, 12))
        seed = draw(st.integers(0, 10_000))
        json_bad = draw(st.dictionaries(st.integers(0, rounds - 1), st.integers(0, len(JSON_CORRUPTIONS) - 1),
                                        max_size=rounds))
        events = rounds * 3 + 2  # table_log(cards=3): shoe_start, 3 cards a round, shoe_end
        csv_bad = draw(st.dictionaries(st.integers(1, events - 1), st.integers(0, len(CSV_CORRUPTIONS) - 1),
                                       max_size=events // 2))
        plan.append((index, rounds, seed, json_bad, csv_bad))
    return plan


def _write(folder: Path, plan) -> dict[str, dict[int, str]]:
    """Write the night; returns, per file, {physical line: expected reason code} of the corrupted lines."""
    expected: dict[str, dict[int, str]] = {}
    for index, rounds, seed, json_bad, csv_bad in plan:
        rp, sp, round_lines, event_lines = write_table(folder, index, rounds, seed, cards=3)
        for i, k in json_bad.items():
            round_lines[i] = JSON_CORRUPTIONS[k][1](round_lines[i])
        for i, k in csv_bad.items():
            event_lines[i] = CSV_CORRUPTIONS[k][1](event_lines[i])
        rp.write_text("\n".join(round_lines) + "\n", encoding="utf-8")
        sp.write_text(CSV_HEADER + "\n" + "\n".join(event_lines) + "\n", encoding="utf-8")
        expected[rp.name] = {i + 1: JSON_CORRUPTIONS[k][2] for i, k in json_bad.items()}
        expected[sp.name] = {i + 2: CSV_CORRUPTIONS[k][2] for i, k in csv_bad.items()}
        expected[rp.name + "#lines"] = {"n": rounds}  # type: ignore[dict-item]
        expected[sp.name + "#lines"] = {"n": len(event_lines)}  # type: ignore[dict-item]
    return expected


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corrupted_night())
def test_accepted_are_exactly_the_intact_lines_and_rerun_changes_nothing(plan) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        folder = tmp_path / "in"
        expected = _write(folder, plan)
        con, _ = ingest(folder, tmp_path / "db.duckdb")
        files = con.execute("SELECT source_file, kind, lines_read, rows_accepted, rows_quarantined, status "
                            "FROM core_source_files").fetchall()
        assert len(files) == 2 * len(plan)
        for source_file, kind, read, accepted, quarantined, status in files:
            assert status == "loaded"
            assert read == accepted + quarantined == expected[source_file + "#lines"]["n"]
            q = dict(con.execute("SELECT source_line, reason_code FROM core_quarantine WHERE source_file = ?",
                                 [source_file]).fetchall())
            assert q == expected[source_file], source_file
            table = "core_rounds" if kind == "rounds_jsonl" else "core_device_events"
            got = {r[0] for r in con.execute(f"SELECT source_line FROM {table} WHERE source_file = ?",
                                             [source_file]).fetchall()}
            first = 1 if kind == "rounds_jsonl" else 2
            intact = set(range(first, first + read)) - set(expected[source_file])
            assert got == intact, source_file
        before = snapshot(con)
        con.close()
        con, summary = ingest(folder, tmp_path / "db.duckdb")
        assert snapshot(con) == before
        assert summary.count("already loaded") == 2 * len(plan)
        con.close()


# --- across nights: files reused, grown, re-exported, repeated -----------------------------------------------------
@st.composite
def nights(draw):
    """Per night and table: what the export does to the table's two files (same names every night)."""
    n = draw(st.integers(2, 4))
    actions = st.sampled_from(["new", "cut", "repeat", "reexport", "corrupt"])
    return [[(index, draw(actions), draw(st.integers(0, 10_000))) for index in range(2)] for _ in range(n)]


def _night(folder: Path, night: int, plan, previous: dict[str, bytes]) -> dict[str, bytes]:
    import datetime as dt
    import json

    from pipelines.ingest.synthetic import START, table_log

    written: dict[str, bytes] = {}
    for index, action, seed in plan:
        log = table_log(index, 5, seed=seed, cards=3, start=START + dt.timedelta(days=night),
                        first_round=1 + 5 * night, first_seq=1 + 17 * night)
        rounds, events = list(log.round_lines), list(log.event_lines)
        names = (f"rounds_{log.table_id}.jsonl", f"shoe_{log.device_id}.csv")
        if action == "repeat" and names[0] in previous:  # the last export again, untouched
            data = {name: previous[name] for name in names if name in previous}
        else:
            if action == "reexport" and names[0] in previous:  # last night's rounds again, one net changed
                old = previous[names[0]].decode("utf-8").splitlines()
                r = json.loads(old[0]); r["wagers"][0]["net"] += 1
                rounds = old[1:] + [json.dumps(r)] + rounds
            if action == "corrupt":
                rounds[1] = rounds[1][:30]
                events[2] = events[2].replace(",card,", ",crad,")
            data = {names[0]: ("\n".join(rounds) + "\n").encode(),
                    names[1]: (CSV_HEADER + "\n" + "\n".join(events) + "\n").encode()}
            if action == "cut":  # a copy still in progress: tomorrow's export finishes it
                data = {k: v[: len(v) * 2 // 3] for k, v in data.items()}
        for name, blob in data.items():
            (folder / name).write_bytes(blob)
            written[name] = blob
    return written


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nights())
def test_across_nights_every_line_read_is_accepted_or_quarantined(plan) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        folder = tmp_path / "in"
        folder.mkdir()
        contents: dict[str, bytes] = {}  # sha256 -> the bytes as they were when read
        previous: dict[str, bytes] = {}
        import hashlib

        for night, tables in enumerate(plan):
            written = _night(folder, night, tables, previous)
            previous.update(written)
            contents.update({hashlib.sha256(b).hexdigest(): b for b in written.values()})
            con, summary = ingest(folder, tmp_path / "db.duckdb")
            assert all(f.lines_read == f.rows_accepted + f.rows_quarantined for f in summary.files)
            con.close()
        con, _ = ingest(folder, tmp_path / "db.duckdb")  # and a re-run reads nothing
        loads = con.execute("SELECT kind, sha256, start_byte, size_bytes, lines_read, rows_accepted, rows_quarantined, "
                            "rows_duplicate, status FROM core_source_files").fetchall()
        for kind, sha, start, size, read, accepted, quarantined, duplicate, status in loads:
            assert status == "loaded"
            assert read == accepted + quarantined
            part = contents[sha][start:size]
            if start == 0 and part.startswith(b"\xef\xbb\xbf"):
                part = part[3:]
            physical = part.count(b"\n") + (0 if not part or part.endswith(b"\n") else 1)
            assert read == physical - (1 if kind == "shoe_csv" and start == 0 else 0)
        q = con.execute("SELECT count(*) FROM core_quarantine").fetchall()[0][0]
        assert q == sum(r[6] for r in loads)
        for kind, table in (("rounds_jsonl", "core_rounds"), ("shoe_csv", "core_device_events")):
            stored = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
            changes = con.execute("SELECT count(*) FROM core_source_changes WHERE kind = ?", [kind]).fetchall()[0][0]
            accepted = sum(r[5] for r in loads if r[0] == kind)
            duplicate = sum(r[7] for r in loads if r[0] == kind)
            assert stored == accepted - duplicate - changes, kind
        con.close()
