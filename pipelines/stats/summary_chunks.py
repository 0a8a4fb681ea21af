"""A gaming day's summaries from the summaries of chunks of its tables, merged exactly.

The statistics step used to read a whole night's wagers and card events at once and summarise them: on the
1,000,000-round night its process held 7-8 GB for the frames and their intermediates (issue 13's goal is 3 GB for
the whole run). It now reads and summarises a run of tables at a time (``load.table_chunks``: at most
``PITAUDIT_GROUP_ROUNDS`` rounds; a table's day, and so each of its shoes, is one chunk's) and merges the chunks'
summaries into the day's (``merge_chunks``), as a window adds days:

- a frame keyed by table (``hands``, ``entries``) is the chunks' rows put together;
- an entity that plays at many tables (a dealer, a player, a shoe id) has a row per chunk: its counts and money
  add (a round is one table's, so its rounds in two chunks are different rounds), its first and last day are the
  least and greatest, its tables the union, its rule set the first chunk's (the chunks come in table order, as the
  day's rows did), a side-bet family's squared deviations combine by the parallel formula;
- the baccarat hold's rows: the outcome vectors of the chunks are numbered again as one day's (``unique_rows`` of
  their union numbers each distinct vector as the day's own pass did), a single bet's rows with the same bet, deck
  count and stake add their counts (as the day's pass grouped them), a round's all-bets row stays its own, and each
  entity's cumulants are computed from its merged rows in the day's order (the same bits as the day's pass). The
  stored rows name an entity by its number in the day (``eid``); a round's all-bets row, the same for its table,
  dealer and shoe, is stored once (``hold_rounds``, its parts numbered after the chunks before).

Exact where the day's pass was: every count, id, stake, list and cumulant is what summarising the day in one piece
gives; a float sum over wagers of an entity in several chunks (a dealer's ``theo``, a player's ``wins_expected``)
is the sum of the chunks' sums, which may differ from the one-piece sum in its last bits
(``tests/test_stats_chunks.py``).
"""

from __future__ import annotations

import datetime as dt
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl

from pipelines.memory import trim
from pipelines.stats.collusion import GRAPH_SUMS
from pipelines.stats.config import StatsParams
from pipelines.stats.hold_sums import GroupingSums, HoldSums, lex_order, unique_rows
from pipelines.stats.summaries import ChunkSummaries, DaySummaries, _conform, _vectors, polars_schemas
from schemas.derived import ROUND_EIDS

DAY = "gaming_day"
ROWS_SCHEMA = polars_schemas()["hold_rows"]
ROUNDS_SCHEMA = polars_schemas()["hold_rounds"]


def _union() -> pl.Expr:
    return pl.col("tables").list.explode(keep_nulls=False, empty_as_null=False).unique().sort()


def _sums(*cols: str) -> list[pl.Expr]:
    return [pl.col(c).sum() for c in cols]


def _days() -> list[pl.Expr]:
    return [pl.col("first_day").min(), pl.col("last_day").max()]


#: per frame: (its entity's keys, how the rows of one entity in several chunks become one)
MERGES: dict[str, tuple[list[str], list[pl.Expr]]] = {
    "luck_entities": ([DAY, "player_id", "currency", "entity_bet"], [
        *_sums("wagers", "rounds", "wins", "wins_expected", "theo", "recorded", "cards"), *_days(),
        pl.col("ruleset").first(), _union()]),
    "luck_parts": ([DAY, "player_id", "currency", "entity_bet", "ruleset", "ruleset_version", "decks", "bet", "grid"],
                   _sums("n", "k")),
    "dealers": ([DAY, "dealer_id"], [*_sums("rounds", "errors"), *_days()]),
    "pairs": ([DAY, "dealer_id", "player_id", "currency"], [
        *_sums(*GRAPH_SUMS), *_days(), _union(), pl.col("game").first(), pl.col("ruleset").first()]),
    "games_hold": ([DAY, "grouping", "key", "currency", "game", "level"], [
        *_sums("wagers", "rounds", "handle", "theo", "recorded"), pl.col("one_sided").any(), *_days(), _union(),
        pl.col("ruleset").first(), pl.col("first_round").min(), pl.col("last_round").max()]),
    "games_draws": ([DAY, "grouping", "key", "currency", "game", "ruleset", "ruleset_version", "decks", "bet", "amount",
                     "scale"], _sums("c")),
    "games_lines": ([DAY, "player_id", "currency", "game", "bet"], [
        *_sums("wagers", "rounds", "wins", "wins_expected", "theo", "recorded", "cards"), *_days(),
        pl.col("ruleset").first(), _union()]),
    "games_parts": ([DAY, "player_id", "currency", "game", "bet", "ruleset", "ruleset_version", "decks", "grid"],
                    _sums("n", "k", "score")),
    "games_jackpot": ([DAY, "player_id", "currency", "ruleset", "ruleset_version"], [
        *_sums("wagers", "hits", "recorded", "rounds"), pl.col("p_hit").first(), pl.col("how").first(), *_days(),
        _union()]),
}
#: frames keyed by table: a table is one chunk's
BY_TABLE = ("hands", "entries")
#: frames whose rows name their entity by ``grouping`` and ``key``, one row per merge key in a chunk (they come from a
#: group-by on those keys) and merged by a sum of counts that are never null: only the rows of the groupings whose keys
#: two chunks share are grouped (``_merge_shared``)
BY_GROUPING = ("games_draws",)


def merge_chunks(parts: list[ChunkSummaries], days: tuple[dt.date, ...], params: StatsParams) -> DaySummaries:
    """The summaries of ``days`` from the summaries of chunks of their tables, given in table order (one chunk: its
    own frames, unchanged).

    The frames polars merges (``_merge_frames``) are merged on a thread beside the baccarat hold's (``_hold_frames``,
    numpy's work on this one): the two share nothing, each leaves Python's lock for most of its work, and the merge runs
    after the chunks with the second core otherwise idle (the 1,000,000-round night's 21 chunks: about 0.7 CPU s each,
    one after the other before)."""
    schemas = polars_schemas()

    def merged_hold() -> list:
        return [_hold_frames(day, [p.hold[day] for p in parts if day in p.hold], params.hold_groupings)
                for day in sorted({d for p in parts for d in p.hold})]

    if len(parts) <= 1:  # nothing to merge: the chunk's frames as they are
        frames, hold = _merge_frames(parts, schemas), merged_hold()
    else:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="merge-frames") as pool:
            merged = pool.submit(_merge_frames, parts, schemas)  # (an error here leaves when the thread has ended)
            hold = merged_hold()
            frames = merged.result()
    for i, name in enumerate(("hold_entities", "hold_rows", "hold_rounds", "hold_nets", "hold_probs")):
        dfs = [_conform(h[i], schemas[name]) for h in hold if h[i].height]  # (no copy of a frame in its schema)
        frames[name] = pl.concat(dfs, rechunk=False) if dfs else pl.DataFrame()
    return DaySummaries(tuple(days), **{name: _conform(df, schemas[name]) if df.height else pl.DataFrame(schema=schemas[name])
                                        for name, df in frames.items()})


def _merge_frames(parts: list[ChunkSummaries], schemas: dict) -> dict[str, pl.DataFrame]:
    """Every frame of the chunks but the baccarat hold's, merged (``MERGES``, ``BY_TABLE``, ``BY_GROUPING``, the side
    bets)."""
    frames: dict[str, pl.DataFrame] = {}
    for name in schemas:
        if name.startswith("hold_"):
            continue
        present = [p.frames[name] for p in parts if p.frames[name].height]
        if len(present) <= 1:
            frames[name] = present[0] if present else pl.DataFrame(schema=schemas[name])
        elif name in BY_TABLE:
            frames[name] = pl.concat(present)
        elif name == "side":
            frames[name] = _merge_side(pl.concat(present))
        elif name in BY_GROUPING:
            frames[name] = _merge_shared(present, *MERGES[name])
        else:
            keys, how = MERGES[name]
            frames[name] = pl.concat(present).group_by(keys, maintain_order=True).agg(how)
    if frames["pairs"].height:
        frames["pairs"] = frames["pairs"].sort(DAY, "dealer_id", "player_id", "currency")
    return frames


def _merge_shared(present: list[pl.DataFrame], keys: list[str], how: list[pl.Expr]) -> pl.DataFrame:
    """``pl.concat(present).group_by(keys, maintain_order=True).agg(how)`` of a ``BY_GROUPING`` frame, grouping only the
    rows of the groupings some key of which is in two chunks (the dealers): a row of a table's or a shoe's is alone
    with its keys, so it is its own group, as it is, where its first row stood. The same rows in the same order (the
    games' draws of the 1,000,000-round night: 837,000 rows, two thirds of them of tables and shoes)."""
    every = pl.concat(present).with_row_index("_at")

    def in_two_chunks(grouping: str) -> bool:
        keys_of = [p.filter(pl.col("grouping") == grouping).select("key").unique() for p in present]
        return pl.concat(keys_of)["key"].is_duplicated().any()

    shared = [g for g in every["grouping"].unique().to_list() if g is not None and in_two_chunks(g)]
    together = pl.col("grouping").is_null() | pl.col("grouping").is_in(shared)  # (a row of no grouping: grouped)
    apart = every.filter(~together)
    merged = every.filter(together).group_by(keys, maintain_order=True).agg(pl.col("_at").first(), *how)
    return pl.concat([apart, merged.select(apart.columns)]).sort("_at").drop("_at")


def _merge_side(side: pl.DataFrame) -> pl.DataFrame:
    """Per family, player and currency of a day: counts and sums add; the squared deviations combine as
    ``sum_c m2_c + n_c (mean_c - mean)^2`` (Chan, Golub and LeVeque's parallel formula, as a window does)."""
    keys = [DAY, "family", "player_id", "currency"]
    side = side.with_columns((pl.col("sum_all") / pl.col("n_all")).alias("_mean_c")).with_columns(
        (pl.col("sum_all").sum().over(keys) / pl.col("n_all").sum().over(keys)).alias("_mean"))
    return side.group_by(keys, maintain_order=True).agg(
        *_sums("n_all", "n_bet", "sum_all"),
        (pl.col("m2_all") + pl.col("n_all") * (pl.col("_mean_c") - pl.col("_mean")) ** 2).sum().alias("m2_all"),
        pl.col("sum_bet").sum(), *_days(), pl.col("ruleset").first(), *_sums("expected_net", "recorded_net"), _union())


def _entity_sums() -> list[pl.Expr]:
    """An entity's sums over chunks (``hold_sums._aggregates``: a round is one chunk's, so rounds add)."""
    return [pl.col("wagers").sum(), pl.col("rounds").sum(), pl.col("handle").sum(), pl.col("theo").sum(),
            pl.col("recorded").sum(), *_days(), _union(), pl.col("ruleset").first(), pl.col("first_round").min(),
            pl.col("last_round").max()]


def _hold_frames(day: dt.date, parts: list[HoldSums], groupings: tuple[str, ...]) -> tuple[pl.DataFrame, ...]:
    """(entities with their cumulants, MoneySums rows, the rows' distinct outcome vectors and probabilities) of one
    day from its chunks' ``HoldSums`` (table order)."""
    parts = [h for h in parts if h.groupings]
    if not parts:
        return pl.DataFrame(), pl.DataFrame(), pl.DataFrame(), pl.DataFrame(), pl.DataFrame()
    # the day's vectors: each distinct vector of any chunk, numbered as one pass over the day numbers it
    x_all, p_all = np.concatenate([h.x for h in parts]), np.concatenate([h.p for h in parts])
    x_first, x_of = unique_rows(x_all)
    p_first, p_of = unique_rows(p_all)
    x, p = x_all[x_first], p_all[p_first]
    del x_all, p_all
    x_at = np.cumsum([0] + [len(h.x) for h in parts])
    p_at = np.cumsum([0] + [len(h.p) for h in parts])
    part_at = np.cumsum([0] + [h.parts for h in parts])  # a round part's number in the day: after the chunks before
    # a bet's number in the day: its rank among the day's bets (the day's pass numbers them by a dense rank)
    pays = sorted({tuple(r) for h in parts for r in h.pays.select("ruleset", "ruleset_version", "bet").rows()},
                  key=lambda k: tuple((v is not None, v or "") for v in k))  # polars ranks nulls first
    pay_rank = {k: i for i, k in enumerate(pays)}
    # one grouping at a time: its merged ids are dropped once its rows are made (a day's rows are millions)
    sums = HoldSums((), x, p)  # the vectors' moments, worked out once for every grouping
    ents, rows = [], []
    n_parts = int(part_at[-1])
    rounds = _Rounds(n_parts)
    eid = 0  # the day's entities are numbered grouping after grouping, each grouping's in its order
    for grouping in groupings:
        gs = [(i, g) for i, h in enumerate(parts) for g in h.groupings if g.grouping == grouping]
        if not gs:
            continue
        if len(gs) == 1:
            i, g = gs[0]
            summary = g.summary
            part = g.rows["part"].to_numpy()
            merged = g.rows.with_columns(pl.Series("xid", x_of[x_at[i] + g.rows["xid"].to_numpy()]),
                                         pl.Series("pid", p_of[p_at[i] + g.rows["pid"].to_numpy()]),
                                         pl.Series("part", np.where(part >= 0, part + part_at[i], -1)))
        else:
            summary, merged = _merge_grouping(gs, parts, x_of, x_at, p_of, p_at, pay_rank, part_at)
        del gs
        g = GroupingSums(grouping, summary, merged)
        del merged
        mean, var, k3 = sums.moments(g)
        ents.append(g.summary.drop("ent").with_columns(
            pl.lit(day).alias(DAY), pl.Series("m_mean", mean), pl.Series("m_var", var), pl.Series("m_k3", k3),
            pl.Series("eid", g.summary["ent"].to_numpy() + eid)))
        rows.append(rounds.take(day, g, eid))
        eid += g.summary.height
        del g
        trim()
    # the day repeated by polars (a list of 370,000 dates made one by one was a tenth of the merge)
    nets = pl.DataFrame({DAY: pl.repeat(day, len(x), dtype=pl.Date, eager=True),
                         "xid": np.arange(len(x), dtype=np.int64)}).with_columns(_vectors("x", x))
    probs = pl.DataFrame({DAY: pl.repeat(day, len(p), dtype=pl.Date, eager=True),
                          "pid": np.arange(len(p), dtype=np.int64)}).with_columns(_vectors("p", p))
    return (pl.concat(ents, how="diagonal_relaxed"), pl.concat(rows, rechunk=False), rounds.frame(day), nets, probs)


class _Rounds:
    """A day's round parts whose all-bets row is the same for every grouping (``GroupingSums.rows``' ``part``): the
    row is stored once (``stat_day_hold_rounds``), naming each grouping's entity of the round, instead of once per
    grouping naming its entity by four strings (the 1,000,000-round night's hold rows were 4.8 million, 3 million of
    them these). A grouping without a column there (``ROUND_EIDS``) keeps its rows in ``stat_day_hold_rows``."""

    def __init__(self, n: int):
        self.eids: dict[str, np.ndarray] = {}
        self.xid = np.full(n, -1, dtype=np.int64)
        self.pid = np.full(n, -1, dtype=np.int64)

    def take(self, day: dt.date, g: GroupingSums, first_eid: int) -> pl.DataFrame:
        """``g``'s rows in ``stat_day_hold_rows``' columns but those this keeps (its entities numbered from
        ``first_eid``), in their order."""
        r = g.rows
        part = r["part"].to_numpy()
        shared = part >= 0 if g.grouping in ROUND_EIDS else np.zeros(len(part), dtype=bool)
        eid = r["ent"].to_numpy() + first_eid
        if shared.any():
            at = part[shared]
            col = self.eids.setdefault(ROUND_EIDS[g.grouping], np.full(len(self.xid), -1, dtype=np.int64))
            col[at] = eid[shared]
            xid, pid = r["xid"].to_numpy()[shared], r["pid"].to_numpy()[shared]
            seen = self.xid[at] >= 0  # the part's row as another grouping gave it: the same vectors, or a bug
            if not (np.array_equal(self.xid[at][seen], xid[seen]) and np.array_equal(self.pid[at][seen], pid[seen])):
                raise AssertionError(f"a round's all-bets row differs between groupings ({g.grouping})")
            self.xid[at], self.pid[at] = xid, pid
            keep = ~shared
            r, eid = r.filter(pl.Series(keep)), eid[keep]
        return pl.DataFrame({DAY: pl.repeat(day, len(eid), dtype=pl.Date, eager=True), "eid": eid.astype(np.int64),
                             "a": r["a"].to_numpy().astype(np.float64),
                             "c": r["c"].to_numpy().astype(np.float64), "xid": r["xid"].to_numpy().astype(np.int64),
                             "pid": r["pid"].to_numpy().astype(np.int64)}).select(list(ROWS_SCHEMA))

    def frame(self, day: dt.date) -> pl.DataFrame:
        """The parts some grouping shares, in round order: each grouping's entity (null: the round has none there)."""
        at = np.flatnonzero(self.xid >= 0)
        none = np.full(len(at), -1, dtype=np.int64)
        cols = {name: self.eids[name][at] if name in self.eids else none for name in ROUND_EIDS.values()}
        return pl.DataFrame({DAY: pl.repeat(day, len(at), dtype=pl.Date, eager=True), **cols,
                             "c": np.ones(len(at), dtype=np.int64), "xid": self.xid[at], "pid": self.pid[at]}
                            ).with_columns(pl.when(pl.col(c) >= 0).then(pl.col(c)).alias(c) for c in ROUND_EIDS.values()
                                           ).select(list(ROUNDS_SCHEMA))


def _merge_grouping(gs: list[tuple[int, GroupingSums]], parts: list[HoldSums], x_of: np.ndarray, x_at: np.ndarray,
                    p_of: np.ndarray, p_at: np.ndarray, pay_rank: dict[tuple, int], part_at: np.ndarray
                    ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One grouping's entities and rows over several chunks, numbered and ordered as the day's pass makes them:
    entities sorted by key, level, currency; a single bet's rows by entity, bet, deck count and stake with their
    counts added; then each entity's all-bets rows, a round each, in round order (the chunks' order)."""
    keys = ["key", "currency", "level"]
    every = pl.concat([g.summary.drop("ent") for _, g in gs], how="diagonal_relaxed").with_row_index("_row")
    summary = every.group_by(keys, maintain_order=True).agg(
        *_entity_sums(), pl.col("grouping").first(), pl.col("_row")).sort(
        "key", "level", "currency").with_row_index("ent").with_columns(pl.col("ent").cast(pl.Int64))
    # each chunk entity's number in the day, from the rows each day entity was made of (a join of every chunk's
    # entities with all of the day's, one per chunk, was most of the merge of a night's shoes: 21 x 150,000 entities)
    made_of = summary.select("ent", "_row").explode("_row")
    day_ent = np.empty(every.height, dtype=np.int64)
    day_ent[made_of["_row"].to_numpy()] = made_of["ent"].to_numpy()
    del every, made_of
    summary = summary.drop("_row").with_columns(pl.col("wagers").cast(pl.UInt32), pl.col("rounds").cast(pl.UInt32))
    first_row = np.cumsum([0] + [g.summary.height for _, g in gs])
    cols: dict[str, list[np.ndarray]] = {c: [] for c in ("ent", "a", "c", "xid", "pid", "pay_key", "decks", "part")}
    for k, (i, g) in enumerate(gs):
        ent_of = np.empty(g.summary.height, dtype=np.int64)  # by the chunk's entity number
        ent_of[g.summary["ent"].to_numpy()] = day_ent[first_row[k]:first_row[k + 1]]
        pay_of = np.array([pay_rank[(r, v, b)] for _, r, v, b in parts[i].pays.sort("pay_key").rows()] or [0],
                          dtype=np.int64)
        r = g.rows
        pay_key = r["pay_key"].to_numpy()
        cols["ent"].append(ent_of[r["ent"].to_numpy()].astype(np.int64))
        cols["a"].append(r["a"].to_numpy())
        cols["c"].append(r["c"].to_numpy())
        cols["xid"].append(x_of[x_at[i] + r["xid"].to_numpy()])
        cols["pid"].append(p_of[p_at[i] + r["pid"].to_numpy()])
        cols["pay_key"].append(np.where(pay_key >= 0, pay_of[np.maximum(pay_key, 0)], -1))
        cols["decks"].append(r["decks"].to_numpy())
        part = r["part"].to_numpy()
        cols["part"].append(np.where(part >= 0, part + part_at[i], -1))
    ids = {c: np.concatenate(v) for c, v in cols.items()}
    del cols
    # a single bet's rows: one per entity, bet, deck count and stake (its vectors follow from the bet and the decks),
    # their counts added, in that order; numpy's stable sort and sums over runs (a polars group_by over six keys and
    # a sort of a night's million rows per grouping were most of the merge)
    one = np.flatnonzero(ids["pay_key"] >= 0)
    ent, pay, decks, a = ids["ent"][one], ids["pay_key"][one], ids["decks"][one], ids["a"][one]
    order = lex_order(ent, pay, decks, a)
    ent, pay, decks, a = ent[order], pay[order], decks[order], a[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (ent[1:] != ent[:-1]) | (pay[1:] != pay[:-1]) | (decks[1:] != decks[:-1]) | (a[1:] != a[:-1])
    starts = np.flatnonzero(new)
    first = one[order[starts]]
    c = np.add.reduceat(ids["c"][one][order], starts) if len(starts) else ids["c"][:0]
    # then each entity's all-bets rows in the chunks' order
    rest = np.flatnonzero(ids["pay_key"] < 0)
    rest = rest[np.argsort(ids["ent"][rest], kind="stable")]
    take = np.concatenate([first, rest])
    rows = pl.DataFrame({"ent": ids["ent"][take], "a": ids["a"][take], "c": np.concatenate([c, ids["c"][rest]]),
                         "xid": ids["xid"][take], "pid": ids["pid"][take], "pay_key": ids["pay_key"][take],
                         "decks": ids["decks"][take], "part": ids["part"][take]})
    return summary, rows
