"""The audit's evidence packs: every round with a deterministic finding, written beside the report in one pass.

``pitaudit evidence`` rebuilds one round by re-auditing its whole partition, which is right for a dispute days
later and far too slow for thirteen thousand rounds a night. Here the audit has just settled and written the
night, so the packs are assembled from what it wrote and from one read of the rounds concerned:

- **which rounds**: one query over ``out_findings`` of the audited partitions (a finding with a round and no
  ``p_value``: the statistical findings name subjects, not rounds, and link to an investigation instead);
  ranked by their worst severity, then how many findings, then key; at most ``Settings.evidence_packs``
  (README, Settings) are written, the rest keep the command that makes their pack
  (:class:`PackIndex` tells the report which is which);
- **their evidence**: the audit's own loader (:func:`pipelines.audit.load.load_partition`) over the
  partitions concerned, a group of about ``group_rounds`` rounds at a time (one query set per group), cut down
  to the finding rounds and their shoe neighbours; reconstructed with the audit's function; the finding rounds
  alone settled again, only to build the engine's input and narrate the round card by card (the steps the
  nightly run skips); the wagers' settlements and the findings are the ones the audit recorded
  (``out_settlements``, ``out_findings``, read in one query each), so "re-settled now" is "as audited";
- the source files' on-disk hashes are computed once per file and their lines read in one pass per file.

The pack's files are the ones :func:`pipelines.evidence.pack.write_pack` writes (same document, same page,
same manifest and seal): ``pitaudit evidence --verify`` checks either.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from pipelines.audit.frames import FINDINGS_SCHEMA, in_order
from pipelines.audit.load import Partition, Window, load_partition
from pipelines.audit.params import AuditParams
from pipelines.audit.partition import reconstruct_partition
from pipelines.audit.settle import settle
from pipelines.db import create_keys_table
from pipelines.evidence.cameras import CameraMap
from pipelines.evidence.gather import (
    NEIGHBOURS, RECORDED_FINDING_COLUMNS, EvidenceError, Frames, _rows, assemble_round, audit_params,
)
from pipelines.evidence.manifest import sha256_file
from pipelines.evidence.pack import build_pack_files, read_lines, seal_pack
from pipelines.evidence.rule_text import ClauseText, no_text
from pipelines.report.links import evidence_relpath

SEVERITY_RANK = "CASE severity WHEN 'high' THEN 0 WHEN 'medium' THEN 1 WHEN 'low' THEN 2 ELSE 3 END"


@dataclass
class PackIndex:
    """Which finding rounds got a pack (``written``: (table_id, round_no) -> gaming day) and which did not:
    beyond the bound (``over_bound``) or a round number its table used on another audited day too
    (``same_number``: the folder ``evidence/<table>/<round>`` holds one of them). The report reads it."""

    written: dict[tuple[str, int], dt.date] = field(default_factory=dict)
    over_bound: int = 0
    same_number: int = 0
    bound: int = 0
    rounds: int = 0  # finding rounds of the audited partitions
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    errors: list[str] = field(default_factory=list)  # rounds whose pack could not be made, and why
    notes: list[str] = field(default_factory=list)  # what every pack was written without, and why (a camera map)

    def has_pack(self, table_id: str | None, round_no: int | None, gaming_day: dt.date | None = None) -> bool:
        """Whether the round's pack was written (of that gaming day, when given)."""
        if table_id is None or round_no is None:
            return False
        day = self.written.get((table_id, int(round_no)))
        return day is not None and (gaming_day is None or day == gaming_day)


def finding_rounds(con: duckdb.DuckDBPyConnection, keys: list[tuple[dt.date, str]]) -> pl.DataFrame:
    """The rounds of the audited partitions with a deterministic finding, ranked (module docstring); one query."""
    create_keys_table(con, "_pack_keys", keys)
    try:
        return con.sql(f"""
            SELECT gaming_day, table_id, round_no, min({SEVERITY_RANK}) AS worst, count(*) AS findings
            FROM out_findings
            WHERE round_no IS NOT NULL AND table_id IS NOT NULL AND p_value IS NULL
              AND (gaming_day, table_id) IN (SELECT (gaming_day, table_id) FROM _pack_keys)
            GROUP BY ALL ORDER BY worst, findings DESC, gaming_day, table_id, round_no""").pl()
    finally:
        con.execute("DROP TABLE _pack_keys")


def choose(ranked: pl.DataFrame, bound: int) -> tuple[pl.DataFrame, PackIndex]:
    """The rounds to write: the first ``bound`` of the ranking, one per (table, round number)."""
    index = PackIndex(bound=bound, rounds=ranked.height)
    unique = ranked.unique(["table_id", "round_no"], keep="first", maintain_order=True)
    index.same_number = ranked.height - unique.height
    chosen = unique.head(bound)
    index.over_bound = unique.height - chosen.height
    return chosen, index


class PrefetchedRecord:
    """What the database recorded for the chosen rounds, read in one query per table, answered per round
    (the questions of :class:`pipelines.evidence.gather.Recorded`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, chosen: pl.DataFrame,
                 disk: dict[Path, str | None] | None = None) -> None:
        rounds = chosen.select("gaming_day", "table_id", "round_no")
        # bound as list parameters, not a registered frame (pipelines.db.create_keys_table says why)
        con.execute("CREATE OR REPLACE TEMP TABLE _pack_rounds AS SELECT unnest($1::DATE[]) AS gaming_day, "
                    "unnest($2::VARCHAR[]) AS table_id, unnest($3::BIGINT[]) AS round_no",
                    [rounds["gaming_day"].to_list(), rounds["table_id"].to_list(), rounds["round_no"].to_list()])
        try:
            join = "JOIN _pack_rounds k USING (gaming_day, table_id, round_no)"
            sett = con.sql(f"SELECT s.* FROM out_settlements s {join} ORDER BY table_id, round_no, wager_order").pl()
            self._settlement_rows = sett
            self._settlements = _split(sett, ["gaming_day", "table_id", "round_no"])
            find = con.sql(f"""SELECT gaming_day, table_id, round_no, {RECORDED_FINDING_COLUMNS} FROM out_findings f {join}
                               ORDER BY table_id, round_no, kind, wager_id, finding_id""").pl()
            self._findings = _split(find, ["gaming_day", "table_id", "round_no"])
            # the neighbours' finding counts: every round of the chosen rounds' tables and days (a few per round)
            counts = con.sql("""SELECT gaming_day, table_id, round_no, count(*) AS n FROM out_findings
                                WHERE (gaming_day, table_id) IN (SELECT (gaming_day, table_id) FROM _pack_rounds)
                                  AND round_no IS NOT NULL GROUP BY ALL""").pl()
            self._counts: dict[tuple, dict[int, int]] = {}
            for day, table, rnd, n in counts.iter_rows():
                self._counts.setdefault((day, table), {})[rnd] = n
            self._sources = {r[0]: r[1:] for r in con.execute(
                "SELECT source_file, sha256, size_bytes, input_root FROM core_source_files").fetchall()}
        finally:
            con.execute("DROP TABLE IF EXISTS _pack_rounds")
        self._disk: dict[Path, str | None] = {} if disk is None else disk  # path -> its SHA-256 on disk now

    def settlements(self, table_id: str, round_no: int, day: dt.date) -> list[dict]:
        df = self._settlements.get((day, table_id, round_no))
        return [] if df is None else df.to_dicts()

    def settlement_frame(self, table_id: str, round_no: int, day: dt.date) -> pl.DataFrame | None:
        return self._settlements.get((day, table_id, round_no))

    def settlements_of(self, rounds: pl.DataFrame) -> pl.DataFrame:
        """The recorded settlements of ``rounds`` (gaming_day, table_id, round_no), in one frame."""
        return self._settlement_rows.join(rounds.select("gaming_day", "table_id", "round_no"),
                                          on=["gaming_day", "table_id", "round_no"], how="semi", maintain_order="left")

    def findings(self, table_id: str, round_no: int, day: dt.date) -> list[dict]:
        df = self._findings.get((day, table_id, round_no))
        return [] if df is None else _rows(df.drop("gaming_day", "table_id", "round_no"))

    def finding_frame(self, table_id: str, round_no: int, day: dt.date) -> pl.DataFrame | None:
        return self._findings.get((day, table_id, round_no))

    def finding_counts(self, table_id: str, day: dt.date, lo: int, hi: int) -> dict[int, int]:
        return {r: n for r, n in self._counts.get((day, table_id), {}).items() if lo <= r <= hi}

    def source_file(self, name: str) -> tuple | None:
        return self._sources.get(name)

    def disk_sha256(self, path: Path) -> str | None:
        if path not in self._disk:
            self._disk[path] = sha256_file(path) if path.is_file() else None
        return self._disk[path]


def _round_groups(chosen: pl.DataFrame, per_group: int, sizes: pl.DataFrame | None = None) -> list[list[tuple[dt.date, str]]]:
    """The partitions of the chosen rounds, in key order, cut into groups of about ``per_group`` rounds of those
    partitions (``sizes``: gaming_day, table_id, rounds; without it, the chosen rounds are counted). The loader
    annotates the device events of whole partitions inside DuckDB's memory limit, so a group is bounded by its
    partitions' rounds, as the audit's groups are, not by how few of them get a pack: counted by packs, the
    1,000,000-round night's 2,000 packs were one group of every partition, and DuckDB ran out of memory."""
    parts = chosen.group_by("gaming_day", "table_id").len().sort("gaming_day", "table_id")
    if sizes is not None:
        parts = parts.select("gaming_day", "table_id").join(
            sizes.select("gaming_day", "table_id", pl.col("rounds").alias("len")), on=["gaming_day", "table_id"],
            how="left").with_columns(pl.col("len").fill_null(1)).sort("gaming_day", "table_id")
    groups, current, size = [], [], 0
    for day, table, n in parts.iter_rows():
        current.append((day, table))
        size += n
        if size >= per_group:
            groups.append(current)
            current, size = [], 0
    if current:
        groups.append(current)
    return groups


def _partition_sizes(con, chosen: pl.DataFrame) -> pl.DataFrame:
    """Rounds of each partition of the chosen rounds (what loading it costs)."""
    keys = chosen.select("gaming_day", "table_id").unique()
    create_keys_table(con, "_pack_sizes", list(keys.iter_rows()))
    window = Window(tuple(sorted(set(keys["gaming_day"].to_list()))))
    try:
        return con.sql(f"""SELECT gaming_day, table_id, count(*) AS rounds FROM core_rounds
                           WHERE {window.rounds()} AND (gaming_day, table_id) IN (SELECT (gaming_day, table_id) FROM _pack_sizes)
                           GROUP BY ALL""").pl()
    finally:
        con.execute("DROP TABLE _pack_sizes")


def _wanted(chosen: pl.DataFrame) -> pl.DataFrame:
    """The chosen rounds and the round numbers either side that may be their shoe neighbours."""
    spread = pl.int_ranges(pl.col("round_no") - 2 * NEIGHBOURS, pl.col("round_no") + 2 * NEIGHBOURS + 1)
    return chosen.select("gaming_day", "table_id", spread.alias("round_no")).explode("round_no").unique()


def _frames_of_group(con, keys: list[tuple[dt.date, str]], chosen: pl.DataFrame, params: AuditParams):
    """Load the chosen rounds and their neighbours of the group's partitions, reconstruct, settle the chosen."""
    near = _wanted(chosen).select("table_id", "round_no")
    part = load_partition(con, tuple(keys), params, only_rounds=near)
    this = chosen.select("table_id", "round_no")

    def keep(df: pl.DataFrame, which: pl.DataFrame) -> pl.DataFrame:
        return df.join(which, on=["table_id", "round_no"], how="semi")

    rounds, events = keep(part.rounds, near), keep(part.events, near)
    recon = reconstruct_partition(Partition(keys=part.keys, rounds=rounds, wagers=part.wagers, actions=part.actions,
                                            events=events), params)
    wagers, actions = keep(part.wagers, this), keep(part.actions, this)
    settled = settle(keep(recon, this), keep(rounds, this), wagers, actions, params)
    return rounds, wagers, actions, events, recon, settled


def _split(df: pl.DataFrame, by: list[str]) -> dict[tuple, pl.DataFrame]:
    """``df.partition_by(by, as_dict=True, maintain_order=True)``: the same keys and rows, in the same order, as
    slices of one stable sort instead of a gathered copy per key (a group's thousands of rounds, five frames each:
    ``partition_by`` was a tenth of the packs' time)."""
    if df.height == 0:
        return {}
    # a stable sort of rows already in order leaves them as they are (the packs' frames come sorted by round)
    ordered = df if in_order(df, by) else df.sort(by, maintain_order=True, nulls_last=False)
    keys = ordered.select(by)
    starts = keys.select(pl.any_horizontal(pl.int_range(pl.len()) == 0, *(pl.col(c).ne_missing(pl.col(c).shift(1)) for c in by))
                         .alias("new")).to_series().arg_true().to_list()
    ends = starts[1:] + [ordered.height]
    first = keys.rows()
    return {first[a]: ordered.slice(a, b - a) for a, b in zip(starts, ends)}


class Neighbourhood:
    """A group's reconstructed rounds cut by (table, device shoe), each shoe sorted by round number once, and its
    table records by table: what :func:`pipelines.evidence.gather._neighbours` filtered from the table's frames for
    every pack (the same rows, in the same order)."""

    def __init__(self, recon: pl.DataFrame, rounds: pl.DataFrame) -> None:
        self._recon, self._rounds = recon, rounds
        self._shoes: dict[tuple, pl.DataFrame] | None = None
        self._sorted: dict[tuple, pl.DataFrame] = {}
        self._tables: dict[str, dict] = {}
        self._first: dict[tuple, dict] | None = None

    def shoe(self, table_id: str, shoe: str) -> pl.DataFrame:
        """``recon.filter(table_id, device_shoe_id).sort("round_no")``."""
        key = (table_id, shoe)
        if key not in self._sorted:
            if self._shoes is None:
                self._shoes = _split(self._recon, ["table_id", "device_shoe_id"])
            rows = self._shoes.get(key)
            self._sorted[key] = (rows if rows is not None else self._recon.head(0)).sort("round_no")
        return self._sorted[key]

    def first_rows(self, table_id: str, round_no: int) -> tuple[dict, dict]:
        """The round's first row of the reconstruction and of the table's records (``{}`` where none): what
        :func:`pipelines.evidence.gather.assemble_round` filtered from the table's frames for each pack."""
        if self._first is None:
            self._first = {}
            for name, df in (("recon", self._recon), ("rounds", self._rounds)):
                for r in df.iter_rows(named=True):
                    self._first.setdefault((name, r["table_id"], r["round_no"]), r)
        return (self._first.get(("recon", table_id, round_no), {}), self._first.get(("rounds", table_id, round_no), {}))

    def table(self, table_id: str) -> dict:
        """The table's rounds as rows by round number (a number twice: its last row)."""
        if table_id not in self._tables:
            self._tables[table_id] = {r["round_no"]: r for r in self._rounds.filter(pl.col("table_id") == table_id)
                                      .iter_rows(named=True)}
        return self._tables[table_id]


def _by_round(df: pl.DataFrame) -> dict[tuple[str, int], pl.DataFrame]:
    return _split(df, ["table_id", "round_no"])


def _in_round_order(df: pl.DataFrame, by: list[str]) -> tuple[pl.DataFrame, bool]:
    """``df`` sorted by round, then ``by`` within each round (stable, nulls first as a round's own sort puts them),
    and whether no two rows share those keys: then each round's rows are already what sorting them by ``by`` gives
    (one order only), and the packs sort a group's rows once instead of each round's four frames (8,000 small sorts
    on the 1,000,000-round night). Rows sharing their keys are left to each round's own sort, as before."""
    keys = ["table_id", "round_no", *by]
    ordered = df if in_order(df, keys) else df.sort(keys, maintain_order=True, nulls_last=False)
    if ordered.height < 2:
        return ordered, True
    distinct = ordered.select(pl.any_horizontal(*(pl.col(k).ne_missing(pl.col(k).shift(1)) for k in keys))
                              .slice(1).all()).item()
    return ordered, bool(distinct)


def _by_table(df: pl.DataFrame) -> dict[tuple[str], pl.DataFrame]:
    return _split(df, ["table_id"])


AUDITED_COLUMNS = ["settled_amount", "cards_net", "pay_clause", "recorded_net", "expected_net", "difference", "clause",
                   "adjustment", "detail", "unsettled_reason"]


def _as_audited(settled_wagers: pl.DataFrame, recorded: pl.DataFrame | None) -> pl.DataFrame:
    """The round's wagers with the audit's recorded settlement (its ``out_settlements`` rows) in place of this pass's
    (which saw only the finding rounds: a player's first under-minimum wager, TBAC-7.17, or a Free Hand needs the
    whole partition). The reference for :func:`_as_audited_all`, which the packs run."""
    if recorded is None or recorded.height == 0 or settled_wagers.height == 0:
        return settled_wagers
    cols = AUDITED_COLUMNS
    rec = recorded.select("wager_id", *[pl.col(c).cast(settled_wagers.schema[c]) for c in cols])
    return settled_wagers.drop(cols).join(rec, on="wager_id", how="left").select(settled_wagers.columns)


def _as_audited_all(settled_wagers: pl.DataFrame, recorded: pl.DataFrame) -> pl.DataFrame:
    """:func:`_as_audited` of every round of ``settled_wagers`` at once: ``recorded``, the recorded settlements of
    those rounds (``table_id``, ``round_no``, ``wager_id`` and the audited columns; one gaming day per round). A round
    with no recorded row keeps this pass's values; the others take the recorded ones by wager id (null where none),
    each round's rows in their order. One join a group instead of one a pack (1.5 of the 2,000 packs' 20 CPU s)."""
    if recorded.height == 0 or settled_wagers.height == 0:
        return settled_wagers
    cols = AUDITED_COLUMNS
    key = ["table_id", "round_no"]
    rec = recorded.select(*key, "wager_id", *[pl.col(c).cast(settled_wagers.schema[c]) for c in cols])
    rounds = rec.select(key).unique()
    replaced = (settled_wagers.join(rounds, on=key, how="semi", maintain_order="left").drop(cols)
                .join(rec, on=[*key, "wager_id"], how="left", maintain_order="left").select(settled_wagers.columns))
    return pl.concat([replaced, settled_wagers.join(rounds, on=key, how="anti", maintain_order="left")])


def write_packs(con: duckdb.DuckDBPyConnection, keys: list[tuple[dt.date, str]], folder: Path, *, bound: int,
                database: str, cameras: CameraMap | None = None, clause_text: ClauseText = no_text,
                clause_note: str | None = None, params: AuditParams | None = None, per_group: int = 20_000,
                pool: "PackPool | None" = None, meanwhile: Callable[[], None] | None = None) -> PackIndex:
    """Write the packs of the audited partitions ``keys`` under ``folder/evidence/`` (the report's layout,
    :func:`pipelines.report.links.evidence_relpath`), reading with the connection ``con``.

    ``pool``: write the groups on worker processes (:class:`PackPool`), each reading the database file itself;
    the packs are the same files, byte for byte (``tests/test_evidence_batch.py``). ``meanwhile``: other work of
    the caller, run in this process while the workers write (else after the packs)."""
    wall, cpu = time.perf_counter(), time.process_time()
    params = params or audit_params(con)
    chosen, index = choose(finding_rounds(con, keys), bound)
    if chosen.height == 0:
        if meanwhile is not None:
            meanwhile()
        return index
    camera_map = cameras if cameras is not None else CameraMap()
    groups = []
    for group in _round_groups(chosen, per_group, _partition_sizes(con, chosen)):
        group_keys = pl.DataFrame({"gaming_day": [k[0] for k in group], "table_id": [k[1] for k in group]},
                                  schema={"gaming_day": pl.Date, "table_id": pl.String})
        groups.append((group, chosen.join(group_keys, on=["gaming_day", "table_id"], how="semi", maintain_order="left")))
    if pool is not None and pool.worth_it(chosen.height, len(groups)):
        done = pool.run(groups, folder, params, database, camera_map, clause_note, meanwhile)
        if any(d is None for d in done):  # a worker could not start or died: its groups here, as without a pool
            record = PrefetchedRecord(con, chosen)
            done = [d if d is not None else _write_group(con, record, group, these, folder, params, database, camera_map,
                                                          clause_text, clause_note, {})
                    for d, (group, these) in zip(done, groups)]
    else:
        record = PrefetchedRecord(con, chosen)
        sources_text: dict[tuple[str, int], str] = {}
        done = [_write_group(con, record, group, these, folder, params, database, camera_map, clause_text, clause_note,
                             sources_text) for group, these in groups]
        if meanwhile is not None:
            meanwhile()
    for written, errors in done:  # in group order, as one process writes them
        index.written.update(written)
        index.errors.extend(errors)
    index.seconds = time.perf_counter() - wall
    index.cpu_seconds = time.process_time() - cpu
    return index


def _write_group(con, record: PrefetchedRecord, group: list[tuple[dt.date, str]], these: pl.DataFrame, folder: Path,
                 params: AuditParams, database: str, camera_map: CameraMap, clause_text: ClauseText,
                 clause_note: str | None, sources_text: dict[tuple[str, int], str]
                 ) -> tuple[dict[tuple[str, int], dt.date], list[str]]:
    """The packs of one group's chosen rounds ``these``: (round -> gaming day written, the rounds that could not be)."""
    written: dict[tuple[str, int], dt.date] = {}
    errors: list[str] = []
    pending = []
    rounds, wagers, actions, events, recon, settled = _frames_of_group(con, group, these, params)
    (wagers, w_ok), (actions, a_ok), (events, e_ok), (settled_wagers, sw_ok) = (
        _in_round_order(wagers, ["wager_order"]), _in_round_order(actions, ["action_order"]),
        _in_round_order(events, ["device_id", "event_seq"]),
        _in_round_order(_as_audited_all(settled.wagers, record.settlements_of(these)), ["wager_order"]))
    in_round_order = w_ok and a_ok and e_ok and sw_ok
    w_by, a_by, e_by = _by_round(wagers), _by_round(actions), _by_round(events)
    sw_by, sr_by = _by_round(settled_wagers), _by_round(settled.rounds)
    recon_t, rounds_t = _by_table(recon), _by_table(rounds)
    hood = Neighbourhood(recon, rounds)
    empty = {name: df.head(0) for name, df in (("w", wagers), ("a", actions), ("e", events),
                                               ("sw", settled.wagers), ("sr", settled.rounds))}
    for day, table_id, round_no in these.select("gaming_day", "table_id", "round_no").iter_rows():
        k = (table_id, round_no)
        recorded_findings = record.finding_frame(table_id, round_no, day)
        frames = Frames(
            rounds=rounds_t.get((table_id,), rounds.head(0)), wagers=w_by.get(k, empty["w"]),
            actions=a_by.get(k, empty["a"]), events=e_by.get(k, empty["e"]),
            recon=recon_t.get((table_id,), recon.head(0)), settled_rounds=sr_by.get(k, empty["sr"]),
            settled_wagers=sw_by.get(k, empty["sw"]),
            fresh=(recorded_findings if recorded_findings is not None else pl.DataFrame(schema=FINDINGS_SCHEMA)),
            per_round=True, neighbourhood=hood, in_round_order=in_round_order,
        )
        try:
            evidence = assemble_round(frames, record, table_id, round_no, day, params)
        except EvidenceError as exc:
            errors.append(f"{table_id} round {round_no}: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - one round that cannot be shown must not stop the night's audit
            errors.append(f"{table_id} round {round_no}: the pack could not be made ({type(exc).__name__}: {exc})")
            continue
        pending.append(evidence)
        written[k] = day
    # the pages of this group: their source lines first (each file read once for all of them)
    _read_source_lines(pending, sources_text)
    for evidence in pending:
        files, data = build_pack_files(evidence, camera_map, clause_text, clause_note, database, sources_text)
        out = folder / evidence_relpath(evidence.round["table_id"], evidence.round["round_no"])
        key = {"table_id": evidence.round["table_id"], "round_no": evidence.round["round_no"],
               "gaming_day": evidence.round["gaming_day"]}
        seal_pack(out, files, key, evidence.sources)
    return written, errors


class PackPool:
    """The packs' groups on worker processes: a night's 2,000 packs are some 25 CPU seconds of one core (a tenth of
    it loading their partitions, most of it Python: assembling, rendering, hashing), and by the time the audit
    publishes nothing else keeps the other cores busy. Each worker opens the database file read-only (nobody writes
    it while the audit publishes) and writes its groups' pack folders; the index is put together in group order.

    Only worth it for a night with enough packs (``min_packs``): a spawned worker costs about a second of imports.
    ``rule_docs``: the folder the clause texts come from (each worker opens it again), None for no texts."""

    def __init__(self, db_path: Path, workers: int, rule_docs: Path | None = None, memory_limit: str | None = None,
                 min_packs: int = 200) -> None:
        self.db_path, self.workers, self.rule_docs = Path(db_path), workers, rule_docs
        self.memory_limit, self.min_packs = memory_limit, min_packs
        self.started = 0  # worker processes running the packs (while the caller's ``meanwhile`` runs)

    def worth_it(self, packs: int, groups: int) -> bool:
        """Enough packs, and more than one core. One group is worth a worker too: the caller's ``meanwhile`` (the
        audit's investigation pages) then runs beside it on the other core, not after it (a night of 20,000 rounds
        is one group of ~200 packs, 2-3 CPU s, the pages as many)."""
        return self.workers > 1 and groups >= 1 and packs >= self.min_packs

    def run(self, groups, folder: Path, params: AuditParams, database: str, camera_map: CameraMap,
            clause_note: str | None, meanwhile: Callable[[], None] | None = None) -> list[tuple[dict, list[str]] | None]:
        """Each group's (written, errors), in group order; None for a group whose worker broke (not for an error of
        the group itself, which is raised as it would be in one process)."""
        import multiprocessing
        import threading
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        jobs = [(str(self.db_path), self.memory_limit, group, these, folder, params, database, camera_map,
                 self.rule_docs, clause_note) for group, these in groups]
        self.started = min(self.workers, len(groups))
        executor = ProcessPoolExecutor(max_workers=self.started, initializer=_start_pack_worker,
                                       mp_context=multiprocessing.get_context("spawn"))
        out: list[tuple[dict, list[str]] | None] = []
        failed: list[BaseException] = []

        def collect() -> None:
            """The groups' results in group order; the workers end as soon as the last is in (each holds up to ~1 GB),
            not when the caller's ``meanwhile`` ends."""
            try:
                try:
                    futures = [executor.submit(_pack_job, job) for job in jobs]
                except (BrokenProcessPool, RuntimeError, OSError):
                    futures = []
                for i in range(len(jobs)):
                    try:
                        out.append(futures[i].result() if i < len(futures) else None)
                    except BrokenProcessPool:
                        out.append(None)
            except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread below
                failed.append(exc)
            finally:
                executor.shutdown(wait=True, cancel_futures=True)

        collector = threading.Thread(target=collect, name="pack-results", daemon=True)
        collector.start()
        try:
            if meanwhile is not None:
                meanwhile()
        finally:
            collector.join()
        if failed:
            raise failed[0]
        return out


def _start_pack_worker() -> None:  # pragma: no cover - runs in the worker
    from pipelines.audit.collector import tune_gc
    from pipelines.lifeline import end_with_parent

    end_with_parent()
    tune_gc()


# the source files' SHA-256 on disk, by path, in a pack worker: a worker lives for one night's packs (the pool ends it
# when they are written), and a table's files serve its partitions of both gaming days, often in two of its groups
_WORKER_DISK: dict[Path, str | None] = {}


def _pack_job(job) -> tuple[dict, list[str]]:
    """One group's packs in a worker process (:class:`PackPool`)."""
    from pipelines.db import open_bounded_reader, open_reader
    from pipelines.evidence.rule_text import clause_texts

    db_path, memory_limit, group, these, folder, params, database, camera_map, rule_docs, clause_note = job
    clause_text = clause_texts(rule_docs)[0] if rule_docs is not None else no_text
    con = open_bounded_reader(db_path, memory_limit) if memory_limit else open_reader(db_path)
    try:
        record = PrefetchedRecord(con, these, _WORKER_DISK)
        return _write_group(con, record, group, these, folder, params, database, camera_map, clause_text, clause_note, {})
    finally:
        con.close()


def _read_source_lines(evidences: list, texts: dict[tuple[str, int], str]) -> None:
    """The lines the packs cite, from the source files still on disk and unchanged since the ingest: each file
    read once, up to its last line wanted."""
    wanted: dict[str, set[int]] = {}
    paths: dict[str, Path] = {}
    for ev in evidences:
        usable = {s["source_file"]: Path(s["path_on_disk"]) for s in ev.sources if s["status"] == "unchanged"}
        for line in ev.source_lines:
            name = line["source_file"]
            if name in usable and (name, int(line["source_line"])) not in texts:
                wanted.setdefault(name, set()).add(int(line["source_line"]))
                paths[name] = usable[name]
    for name, numbers in wanted.items():
        texts.update({(name, n): text for n, text in read_lines(paths[name], numbers).items()})
