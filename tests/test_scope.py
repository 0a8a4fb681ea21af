"""The pieces of one night's scope and of all-or-nothing outputs, without Prefect (pipelines.audit.scope, outputs,
fingerprint, writer_lock)."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.audit.outputs import PARTIAL_PREFIX, output_folder
from pipelines.audit.scope import Scope, ScopeError, chosen_days, days_in_files, input_scope
from pipelines.writer_lock import WriterBusy, lock_path, writer_lock

D = dt.date


def _rounds(path: Path, *closed: str) -> Path:
    path.write_text("".join('{"table_id": "BAC-01", "bets_closed_at": "%s", "x": 1}\n' % c for c in closed) + "{garbage\n")
    return path


def test_a_round_belongs_to_the_gaming_day_of_its_local_close_time(tmp_path):
    f = _rounds(tmp_path / "rounds_a.jsonl", "2026-11-24T22:13:41.120+07:00", "2026-11-25T05:59:59+07:00",
                "2026-11-25T06:00:00+07:00", "2026-11-25T23:10:00Z")
    # the local time as written decides (06:00 start): 05:59:59 is still the 24th, 06:00 the 25th
    assert days_in_files([("rounds_jsonl", f)], 6 * 60) == {D(2026, 11, 24), D(2026, 11, 25)}
    assert days_in_files([("rounds_jsonl", f)], 0) == {D(2026, 11, 24), D(2026, 11, 25)}
    assert days_in_files([("rounds_jsonl", f)], 23 * 60 + 30) == {D(2026, 11, 23), D(2026, 11, 24)}


def test_device_logs_give_days_only_without_a_round_log(tmp_path):
    shoe = tmp_path / "shoe_a.csv"
    shoe.write_text("device_id,table_id,shoe_id,event_seq,ts,event\nA,B,S,1,2026-11-30T10:00:00+07:00,card\n")
    rounds = _rounds(tmp_path / "rounds_a.jsonl", "2026-11-24T22:00:00+07:00")
    assert days_in_files([("shoe_csv", shoe)], 360) == {D(2026, 11, 30)}
    assert days_in_files([("shoe_csv", shoe), ("rounds_jsonl", rounds)], 360) == {D(2026, 11, 24)}


def test_a_big_file_is_read_in_pieces_that_end_at_a_line(tmp_path, monkeypatch):
    import pipelines.audit.scope as scope

    monkeypatch.setattr(scope, "CHUNK_BYTES", 50)
    f = _rounds(tmp_path / "rounds_a.jsonl", *[f"2026-11-{d:02d}T22:00:00+07:00" for d in range(1, 29)])
    assert days_in_files([("rounds_jsonl", f)], 360) == {D(2026, 11, d) for d in range(1, 29)}


def test_the_default_scope_is_the_loaded_files_days_else_every_files(tmp_path):
    old = _rounds(tmp_path / "rounds_old.jsonl", "2026-11-23T22:00:00+07:00")
    new = _rounds(tmp_path / "rounds_new.jsonl", "2026-11-24T22:00:00+07:00")
    every = [("rounds_jsonl", old), ("rounds_jsonl", new)]
    assert input_scope([("rounds_jsonl", new)], every, 360) == Scope((D(2026, 11, 24),), "input")
    assert input_scope([], every, 360).days == (D(2026, 11, 23), D(2026, 11, 24))
    assert input_scope([], [], 360).days == ()


def test_chosen_days():
    assert chosen_days() is None
    assert chosen_days("2026-11-24") == Scope((D(2026, 11, 24),), "day")
    assert chosen_days(None, "2026-11-30", "2026-12-02").days == (D(2026, 11, 30), D(2026, 12, 1), D(2026, 12, 2))
    assert chosen_days(None, "2026-11-30", "2026-12-02").label() == "2026-11-30..2026-12-02"
    with pytest.raises(ScopeError, match="spans"):
        chosen_days(None, "0002-01-01", "9998-12-31")


@pytest.mark.parametrize("line_day", ["0001-01-01T01:00:00+07:00", "0001-06-30T22:00:00Z", "9999-12-31T22:00:00+07:00"])
def test_a_day_beyond_the_accepted_instants_is_no_days_and_no_option(tmp_path, line_day):
    """formats.md, Conventions: an instant lies from 0002-01-01 to 9998-12-31 UTC (the ingest quarantines the line).
    A line of year 1 before the day's start made the scan itself raise OverflowError (its day before 0001-01-01), and
    a day of year 9999 the audit's margins; such a line adds no day now, and an option naming one is refused."""
    f = _rounds(tmp_path / "rounds_a.jsonl", line_day, "2026-11-24T22:00:00+07:00")
    assert days_in_files([("rounds_jsonl", f)], 6 * 60) == {D(2026, 11, 24)}
    near = _rounds(tmp_path / "rounds_b.jsonl", "0002-01-01T07:00:00+07:00", "9998-12-31T22:00:00+07:00")
    assert days_in_files([("rounds_jsonl", near)], 6 * 60) == {D(2, 1, 1), D(9998, 12, 31)}  # the near-miss
    with pytest.raises(ScopeError, match="outside the gaming days"):
        chosen_days(line_day[:10])
    with pytest.raises(ScopeError, match="outside the gaming days"):
        chosen_days(None, "2026-11-24", "9999-12-31")
    assert chosen_days("9998-12-31").days == (D(9998, 12, 31),)


def test_outputs_move_into_place_together_or_not_at_all(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "findings.csv").write_text("old")
    with pytest.raises(OSError):
        with output_folder(out) as partial:
            (partial / "findings.csv").write_text("new, half")
            raise OSError(28, "No space left on device")
    assert sorted(p.name for p in out.iterdir()) == ["findings.csv"] and (out / "findings.csv").read_text() == "old"
    with output_folder(out) as partial:
        (partial / "findings.csv").write_text("new")
        (partial / "report.html").write_text("<html>")
    assert sorted(p.name for p in out.iterdir()) == ["findings.csv", "report.html"]
    assert (out / "findings.csv").read_text() == "new"


@pytest.mark.parametrize("elsewhere", ["a folder", "nothing"])
def test_a_folder_of_the_run_replaces_a_symbolic_link_of_that_name_and_leaves_what_it_led_to(tmp_path, elsewhere):
    """``out/evidence`` a link to a bigger disk (or to a folder since removed): the run's moves stopped on it ("Not a
    directory", every night, status 2). The run's folder takes the name, as each run's folder replaces the last; the
    link goes with the old one, and what it led to is left as it was."""
    out, target = tmp_path / "out", tmp_path / "big-disk" / "evidence"
    out.mkdir()
    target.mkdir(parents=True)
    (target / "kept.html").write_text("an earlier pack")
    (out / "evidence").symlink_to(target, target_is_directory=True)
    if elsewhere == "nothing":
        (target / "kept.html").unlink()
        target.rmdir()
    with output_folder(out) as partial:
        (partial / "evidence").mkdir()
        (partial / "evidence" / "index.html").write_text("tonight's pack")
        (partial / "report.html").write_text("<html>")
    assert sorted(p.name for p in out.iterdir()) == ["evidence", "report.html"]
    assert not (out / "evidence").is_symlink() and (out / "evidence" / "index.html").read_text() == "tonight's pack"
    if elsewhere == "a folder":
        assert (target / "kept.html").read_text() == "an earlier pack"


def test_a_killed_runs_partial_folder_is_cleared_by_the_next(tmp_path):
    out = tmp_path / "out"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leftover = out / f"{PARTIAL_PREFIX}{dead.stdout.strip()}"
    leftover.mkdir(parents=True)
    (leftover / "findings.csv").write_text("half")
    with output_folder(out) as partial:
        (partial / "findings.csv").write_text("whole")
    assert sorted(p.name for p in out.iterdir()) == ["findings.csv"]


def test_the_writer_lock_is_one_at_a_time_and_names_its_holder(tmp_path):
    db = tmp_path / "a.duckdb"
    with writer_lock(db):
        assert str(os.getpid()) in lock_path(db).read_text()
        code = ("import sys; from pipelines.writer_lock import writer_lock, WriterBusy\n"
                "try:\n    with writer_lock(sys.argv[1], 0.3): print('got it')\n"
                "except WriterBusy as e: print(e)")
        other = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True,
                               cwd=Path(__file__).parents[1])
        assert "another pitaudit run is writing" in other.stdout and f"pid {os.getpid()}" in other.stdout
        assert "after waiting 0.3 s" in other.stdout
    with writer_lock(db, 0):
        pass
    with pytest.raises(WriterBusy):
        with writer_lock(db):
            with writer_lock(db, 0):  # a second open file description: refused even in one process
                pass


def test_a_wager_stamped_far_from_its_round_is_still_read():
    """load_partition reads wagers and actions within the days' time window first and the whole table only when the
    rounds' counts say some lie outside: a wager placed (as recorded) ten days after its round must still be there."""
    from pipelines.audit.load import load_partition
    from pipelines.audit.params import AuditParams
    from test_audit_findings import PLAYER_NATURAL
    from test_audit_support import DAY, NightBuilder

    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000), ("W2", "banker", 10000, -10000, 2, "P-2", 864000)])
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W3", "player", 10000, 10000)])
    con = nb.connection()
    part = load_partition(con, ((DAY, "BAC-01"),), AuditParams())
    assert sorted(part.wagers["wager_id"]) == ["W1", "W2", "W3"]


def test_days_far_apart_read_their_own_margins_not_every_day_between():
    """formats.md, The audit's side: "Tonight's queries read tonight's days and a margin of two days around them, never
    the whole history". A stray round of year 9998 beside tonight's made every read span the eight thousand years
    between (and the gap check list every one of those days in its SQL: three minutes on a 2,000-round night)."""
    import duckdb

    from pipelines.audit.load import MARGIN_DAYS, Window

    tonight, stray = D(2026, 11, 24), D(9998, 11, 24)
    apart = Window((tonight, stray))
    con = duckdb.connect()

    def kept(predicate: str, value: str) -> bool:
        return con.execute(f"SELECT {predicate.format(v=value)}").fetchone()[0]

    for day, inside in ((tonight, True), (stray + dt.timedelta(days=MARGIN_DAYS), True), (D(5000, 1, 1), False),
                        (tonight + dt.timedelta(days=MARGIN_DAYS + 1), False)):
        assert kept(apart.near_rounds().replace("gaming_day", "{v}"), f"DATE '{day}'") is inside, day
        assert kept(apart.events().replace("ts", "{v}"), f"TIMESTAMPTZ '{day} 12:00:00+00'") is inside, day
    assert len(apart.near().days) == 2 * (2 * MARGIN_DAYS + 1)
    # a night, or days a few apart, keep the one range they always had (the same SQL, the same row groups skipped)
    night = Window((tonight, tonight + dt.timedelta(days=1)))
    assert night.near_rounds() == "(gaming_day BETWEEN DATE '2026-11-22' AND DATE '2026-11-27')"
    assert night.events("e") == ("(e.ts >= TIMESTAMPTZ '2026-11-22 00:00:00+00' AND "
                                 "e.ts < TIMESTAMPTZ '2026-11-28 00:00:00+00')")
    assert Window((tonight, tonight + dt.timedelta(days=4))).spans() == [(D(2026, 11, 22), D(2026, 11, 30))]


def test_a_file_without_line_ends_is_read_in_bounded_pieces(tmp_path, monkeypatch):
    """A 2 GB sparse file (no line end, NUL bytes) named rounds_*.jsonl took 24 s of the audit's scope scan and 2 GB of
    memory: each block was added to the ones before it, waiting for a line end. A line longer than the ingest's longest
    (quarantined there, line_too_long) that runs past a block is skipped to its end now, so no piece is much longer
    than a block; the lines around it still give their days."""
    import pipelines.audit.scope as scope

    monkeypatch.setattr(scope, "CHUNK_BYTES", 64)
    monkeypatch.setattr(scope, "MAX_LINE_BYTES", 256)
    long_line = '{"bets_closed_at": "2026-11-20T22:00:00+07:00", "pad": "' + "x" * 5000 + '"}\n'
    f = tmp_path / "rounds_a.jsonl"
    f.write_text('{"bets_closed_at": "2026-11-23T22:00:00+07:00"}\n' + long_line + "\0" * 5000 + "\n"
                 + '{"bets_closed_at": "2026-11-24T22:00:00+07:00"}\n', encoding="utf-8")
    assert max(len(piece) for piece in scope._line_chunks(f, 64)) <= 64 + 256
    assert {D(2026, 11, 23), D(2026, 11, 24)} <= days_in_files([("rounds_jsonl", f)], 360)
    from pipelines.ingest.lines import MAX_LINE_BYTES

    monkeypatch.undo()
    assert scope.MAX_LINE_BYTES == MAX_LINE_BYTES


def test_nothing_to_audit_names_the_files_that_are_not_input_names(tmp_path):
    """formats.md, Exit statuses, 4: "The one line says what the input held". A folder of compressed or renamed exports
    (rounds_x.jsonl.gz, Rounds_X.JSONL) said only "no round log with a gaming day"; it now counts them, names one and
    says which names are read. The near-miss: an empty folder says nothing more."""
    from pipelines.audit.scope import nothing_reason

    (tmp_path / "empty").mkdir()
    assert nothing_reason(tmp_path / "empty", None, False).endswith("(no round log with a gaming day)")
    (tmp_path / "in" / "b").mkdir(parents=True)
    for name in ("rounds_x.jsonl.gz", "Rounds_X.JSONL", "b/shoe_y.csv.gz"):
        (tmp_path / "in" / name).write_bytes(b"x")
    line = nothing_reason(tmp_path / "in", None, False)
    assert "; 3 other file(s), e.g. Rounds_X.JSONL: only shoe_*.csv and rounds_*.jsonl are read" in line
    assert "\n" not in line
