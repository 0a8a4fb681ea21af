"""Per gaming day, what every statistical detector needs of it: summaries that a window adds up.

A rolling window (7, 30 gaming days) used to re-read every night of it and re-run every detector over every
wager and card event, so tonight's audit grew with the history. Each detector's statistic is a sum over
days of something computed from one day alone, so each day is summarised once, when it is audited, and a
window adds the summaries of its days (``pipelines.stats.windows``):

- **hold**: per entity (table, dealer or shoe x bet type or all bets) and day, the counts and sums of the
  entity (wagers, rounds, handle, theory, recorded net) and the first three cumulants of its sum under the
  null (``hold_entities``: they add up over days, each with its number in the day ``eid``); and the rows of its
  ``MoneySums``, which only the entities far from theory read back, for the saddle point: one row per distinct
  stake of a bet type (``hold_rows``, naming its entity by ``eid``), and on all bets one row per round
  (``hold_rounds``: once for the round, naming its table's, dealer's and shoe's entity; a round whose all-bets
  row differs by grouping, split between dealers, shoes or deck counts, has its rows per entity in ``hold_rows``),
  each with the ids of its outcome nets ``x`` and probabilities ``p`` in ``hold_nets`` and ``hold_probs``.
- **luck**: per player, currency and bet type (and side bets together) the wagers and the net on the pay
  table's grid per payout (``luck_parts``: the exact convolution needs only these counts) and the entity's
  sums (``luck_entities``).
- **dealer error rates**: rounds dealt and rounds with a dealer-error finding per dealer and day.
- **collusion**: the dealer-player graph per day (its counts add up: a round is a gaming day's).
- **counting (blackjack)**: one row per player and round with his bet and the true count before it
  (``hands``), computed from the card events once; the rank statistic is within a table and day, so
  the rows of the window are all it needs.
- **counting (baccarat side bets)**: per family, player and day the count, sum and sum of squared
  deviations of the shoe-left measure over his rounds and the sum where he bet (``side``), combined over
  days by the parallel-variance formula. A family's measure is taken on the days someone bet it (a window
  of all the wagers takes it on every day of the window once some player bet the family 20 times: the two
  differ only over a day on which no rated player bet that family at all).

- **Hold'em Bonus and blackjack** (``hold_games``, ``luck_games``): per entity and day the sums, and its independent
  draws (a wager's or a round's stake and spread per distribution) with their counts, which add; per player and
  bet the luck sums and the parts of the exact convolution of rarity scores (count, net, score per distribution);
  per player the jackpot wagers and hits. Their detectors run on the summed aggregates in ``detect_all`` too.
- **mid-shoe entry (blackjack)**: per player and shoe his first round of the day with the rank of its true count
  among the shoe's rounds he could have joined (``entries``, ``wonging.shoe_entries``); a window takes each
  shoe's earliest (``wonging.window_entries``) and reads no wager or card event.

A bet type with a pay-table distribution reaches these summaries through ``settled_wagers`` (the luck
detector's frame of settled wagers with their payout grid, mean and ``k``) and ``hold_sums.hold_sums`` (the
outcome nets and probabilities of each row): no summary names a game.
Plain functions over frames; the database side is ``pipelines.stats.summary_store``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, fields

import numpy as np
import polars as pl

from pipelines.stats.advantage import FAMILIES, blackjack_hands, side_bet_aggregates
from pipelines.stats.collusion import dealer_player_graph
from pipelines.stats.config import StatsParams
from pipelines.stats.counts import shoe_rounds
from pipelines.stats.entity_codes import coded, decoded
from pipelines.stats.games import settled_games
from pipelines.stats.hold import dealer_error_aggregates
from pipelines.stats.hold_games import games_hold_aggregates
from pipelines.stats.hold_sums import GroupingSums, HoldSums, hold_sums
from pipelines.stats.load import StatsInputs
from pipelines.stats.luck import luck_aggregates, settled_baccarat
from pipelines.stats.luck_games import games_luck_aggregates
from pipelines.stats.wonging import shoe_entries
from schemas.derived import ROUND_EIDS

#: the version of the summaries' content: a day summarised by an earlier one is summarised again when read
SUMMARY_FORMAT = 4  # 4: the hold's rows by entity number, a round's all-bets row once (schema 7)

HOLD_KEYS = ("grouping", "key", "currency", "level")


@dataclass(frozen=True)
class DaySummaries:
    """Summaries of gaming days (every frame has ``gaming_day``); ``days``: the days summarised (one with no
    wager still counts as summarised: its frames hold no row)."""

    days: tuple[dt.date, ...]
    hold_entities: pl.DataFrame  # per entity and day its sums and cumulants, and its number in the day ``eid``
    hold_rows: pl.DataFrame  # a row of entity ``eid``'s sum: stake ``a``, count ``c``, its vectors' ids ``xid``, ``pid``
    hold_rounds: pl.DataFrame  # a round's all-bets row (stake 1), once for its table's, dealer's and shoe's ``eid``
    hold_nets: pl.DataFrame  # the day's outcome vectors ``x`` by ``xid``
    hold_probs: pl.DataFrame  # the day's outcome probabilities ``p`` by ``pid``
    luck_entities: pl.DataFrame
    luck_parts: pl.DataFrame
    dealers: pl.DataFrame
    pairs: pl.DataFrame
    hands: pl.DataFrame
    entries: pl.DataFrame  # mid-shoe entry: per player and shoe, his first round of the day (``wonging.shoe_entries``)
    side: pl.DataFrame
    games_hold: pl.DataFrame  # Hold'em Bonus and blackjack: per entity, its sums (``hold_games``)
    games_draws: pl.DataFrame  # ... and its independent draws with their counts
    games_lines: pl.DataFrame  # per player and bet, the luck sums (``luck_games``)
    games_parts: pl.DataFrame  # ... and per distribution the wagers, the net on the grid, the rarity score
    games_jackpot: pl.DataFrame  # per player and jackpot rule set, the wagers and hits

    def frames(self) -> dict[str, pl.DataFrame]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "days"}

    def only(self, first: dt.date, last: dt.date) -> "DaySummaries":
        """The summaries of the days ``first..last`` (a frame whose days are in order is sliced, not copied: a night's
        hold rows are millions)."""
        return DaySummaries(tuple(d for d in self.days if first <= d <= last),
                            **{name: _days_of(df, first, last) for name, df in self.frames().items()})


def _days_of(df: pl.DataFrame, first: dt.date, last: dt.date) -> pl.DataFrame:
    """The rows of ``df`` of the days ``first..last``: a slice when its days are in order, else a filter."""
    if df.height == 0:
        return df
    day = df["gaming_day"]
    if day.null_count() == 0 and day.is_sorted():
        lo, hi = int(day.search_sorted(first, side="left")), int(day.search_sorted(last, side="right"))
        return df.slice(lo, hi - lo)
    return df.filter(pl.col("gaming_day").is_between(first, last))


def _conform(df: pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """``df`` in ``schema``'s columns and types; as it is when it has them (a select of a frame whose columns are cut
    in different chunks copies it whole: a night's hold rows, 0.4 GB)."""
    if df.schema == pl.Schema(schema):
        return df
    return df.select([pl.col(c).cast(t) if c in df.columns else pl.lit(None, dtype=t).alias(c) for c, t in schema.items()])


def polars_schemas() -> dict[str, dict[str, pl.DataType]]:
    """Each summary frame's columns in the polars types of the tables of ``schemas.derived``."""
    from schemas.derived import STAT_DAY_TABLES, summary_frame_of

    types = {"DATE": pl.Date, "VARCHAR": pl.String, "BIGINT": pl.Int64, "HUGEINT": pl.Int128, "DOUBLE": pl.Float64,
             "BOOLEAN": pl.Boolean, "VARCHAR[]": pl.List(pl.String), "DOUBLE[]": pl.List(pl.Float64)}
    return {summary_frame_of(table): {c: types[t] for c, t in cols} for table, cols in STAT_DAY_TABLES.items()
            if summary_frame_of(table)}


def empty_summaries(days: tuple[dt.date, ...] = ()) -> DaySummaries:
    return DaySummaries(tuple(days), **{name: pl.DataFrame(schema=s) for name, s in polars_schemas().items()})


def concat_summaries(parts: list[DaySummaries]) -> DaySummaries:
    """Several days' summaries as one (of different days)."""
    parts = [p for p in parts if p.days]
    if not parts:
        return empty_summaries()
    schemas = polars_schemas()
    frames = {}
    for name in schemas:
        dfs = [getattr(p, name) for p in parts]
        frames[name] = pl.concat([_conform(df, schemas[name]) for df in dfs])
    days = sorted({d for p in parts for d in p.days})
    return DaySummaries(tuple(days), **frames)


def summarise(inputs: StatsInputs, params: StatsParams, days: tuple[dt.date, ...] | None = None,
              families: set[str] | None = None) -> DaySummaries:
    """The summaries of every gaming day of ``inputs`` (``days``: the days they cover, default first..last). ``families``:
    the side-bet families some rated player bet on those days (default: those of ``inputs``; a chunk of a day's
    tables is given the whole day's, ``load.side_bet_families``)."""
    from pipelines.stats.summary_chunks import merge_chunks

    if days is None:
        n = (inputs.last_day - inputs.first_day).days + 1
        days = tuple(inputs.first_day + dt.timedelta(days=i) for i in range(n))
    return merge_chunks([summarise_chunk(inputs, params, families)], days, params)


@dataclass(frozen=True)
class ChunkSummaries:
    """What one chunk of tables (``load.table_chunks``; a whole read is one chunk) gives before its day's chunks are
    merged (``summary_chunks.merge_chunks``): the summary frames but the baccarat hold's (conformed to the summary
    schemas), and per day the hold's sums (``hold_sums.HoldSums``, whose vector ids are the chunk's own). Kept until
    a day's chunks are merged, they hold no buffer of the chunk's read: their ids and labels are strings again made from
    the chunk's Enums (``entity_codes.decoded``), the rest is made by group-bys and numpy (copying them once more
    through Arrow IPC, as was done, cost 0.6-1 s CPU per 1,000,000-round night for the same peak memory)."""

    frames: dict[str, pl.DataFrame]
    hold: dict[dt.date, HoldSums]


def summarise_chunk(inputs: StatsInputs, params: StatsParams, families: set[str] | None = None) -> ChunkSummaries:
    """The summaries of ``inputs`` (a day's tables, or some of them) before any merge: each frame is per entity and day
    of these tables' wagers and card events alone. The ids are coded as one sorted Enum while it works
    (``entity_codes``: the same groups and orders as the strings) and are strings again in what it returns."""
    schemas = polars_schemas()
    by = ("gaming_day",)
    inputs = coded(inputs)
    wagers = inputs.wagers
    # each game's detectors read its own wagers (each used to filter every wager of the night again)
    baccarat = wagers.filter(pl.col("game") == "baccarat")
    others = wagers.filter(pl.col("game") != "baccarat")
    settled = settled_baccarat(baccarat)
    hold = {day: _decoded_hold(hold_sums(wd, params.hold_groupings))
            for (day,), wd in settled.group_by(["gaming_day"], maintain_order=True)} if settled.height else {}
    players = settled.filter(pl.col("player_id").is_not_null())
    del settled
    if players.height:
        luck_parts, luck_ents = luck_aggregates(players, by)
    else:
        luck_parts = luck_ents = pl.DataFrame()
    del players
    dealers = dealer_error_aggregates(wagers, inputs.dealer_errors, by)
    pairs = dealer_player_graph(wagers, 1, by).drop("window_days")
    shoes = shoe_rounds(inputs.cards)  # the shoes' rounds and running rank counts, for the counters and the side bets
    hands = blackjack_hands(others, inputs.cards, shoes)
    entries = shoe_entries(others, inputs.cards, params)
    bac = baccarat.filter(pl.col("player_id").is_not_null() & (pl.col("status") == "settled"))
    del baccarat
    # a family's shoe-left measure for the days some rated player bet it at all (the Tigers' effects of removal
    # cost an enumeration per process): a window's players are compared over the days their family was played
    if families is None:
        families = {name for name, bets, *_ in FAMILIES if bac.height and bac["bet"].is_in(list(bets)).any()}
    side = (side_bet_aggregates(bac, inputs.cards, families, by, shoes)
            if families and inputs.cards.height and bac.height else pl.DataFrame())
    del bac, shoes
    games = settled_games(others)
    games_hold, games_draws = games_hold_aggregates(games, params)
    games_lines, games_parts, games_jackpot = games_luck_aggregates(others, games)
    frames = {"games_hold": games_hold, "games_draws": games_draws, "games_lines": games_lines, "games_parts": games_parts,
              "games_jackpot": games_jackpot, "luck_entities": luck_ents, "luck_parts": luck_parts,
              "dealers": dealers, "pairs": pairs, "hands": hands, "entries": entries, "side": side}
    return ChunkSummaries({name: _conform(df, schemas[name]) if df.height else pl.DataFrame(schema=schemas[name])
                           for name, df in frames.items()}, hold)


def _decoded_hold(h: HoldSums) -> HoldSums:
    """``h`` with its entities' keys, labels and tables, and its bets, as strings again (its rows are numbers)."""
    return HoldSums(tuple(GroupingSums(g.grouping, decoded(g.summary), g.rows) for g in h.groupings), h.x, h.p,
                    decoded(h.pays) if h.pays is not None else None, h.parts)


def _vectors(name: str, m: np.ndarray) -> pl.Series:
    """Rows of a 2-D array as a list column (any width: a bet type's outcomes)."""
    m = np.ascontiguousarray(m, dtype=np.float64)
    return pl.Series(name, m).cast(pl.List(pl.Float64))


def _vectors_by_id(day: pl.DataFrame, name: str) -> np.ndarray:
    """A day's stored vectors ``name`` (``x`` of ``hold_nets``, ``p`` of ``hold_probs``) as a matrix whose row i is the
    vector numbered i (``xid``, ``pid``), padded with zeros as ``windows._matrix`` pads them."""
    from pipelines.stats.windows import _matrix

    ids = day[f"{name}id"].to_numpy()
    vectors = _matrix(day[name])
    m = np.zeros((int(ids.max()) + 1, vectors.shape[1]))
    m[ids] = vectors
    return m


class _StoredRows:
    """The hold rows of summaries in memory, read by entity number (``hold_rows`` and ``hold_rounds``): for some
    entities of one grouping and day, their rows in the order the day's pass made them (a grouping's single-bet rows by
    entity, then its all-bets rows by entity, each entity's in round order). Each day's columns are taken out of the
    frames once, as numpy arrays."""

    def __init__(self, s: DaySummaries):
        self.s = s
        self._rows: dict[dt.date, dict[str, np.ndarray]] = {}
        self._rounds: dict[dt.date, dict[str, np.ndarray]] = {}
        self._vectors: dict[tuple[str, dt.date], np.ndarray] = {}

    def vectors(self, name: str, day: dt.date) -> np.ndarray:
        """The day's vectors ``name`` (x, p) by id (:func:`_vectors_by_id`), made the first time they are asked for."""
        if (name, day) not in self._vectors:
            frame = self.s.hold_nets if name == "x" else self.s.hold_probs
            self._vectors[(name, day)] = _vectors_by_id(frame.filter(pl.col("gaming_day") == day), name)
        return self._vectors[(name, day)]

    def _day(self, cache: dict, frame: pl.DataFrame, day: dt.date) -> dict[str, np.ndarray]:
        if day not in cache:
            d = _days_of(frame, day, day)
            cache[day] = {c: (d[c].fill_null(-1) if d[c].dtype == pl.Int64 else d[c]).to_numpy() for c in d.columns
                          if c != "gaming_day"}
        return cache[day]

    def far_ids(self, first: dt.date, last: dt.date, far: pl.DataFrame) -> pl.DataFrame:
        """``far``'s entities (grouping, key, currency, level, ent) by their number in each day of ``first..last``:
        grouping, gaming_day, eid, ent (a null key or currency matches nothing, as in a join of frames)."""
        ents = _days_of(self.s.hold_entities, first, last)
        return ents.select("gaming_day", *HOLD_KEYS, "eid").join(far.select(*HOLD_KEYS, "ent"), on=list(HOLD_KEYS),
                                                                how="inner").select("grouping", "gaming_day", "eid", "ent")

    def rows(self, grouping: str, day: dt.date, eids: np.ndarray, ents: np.ndarray) -> dict[str, np.ndarray]:
        """The rows of the entities ``eids`` of ``grouping`` on ``day``, each named by its ``ents`` number: ent, a, c,
        xid, pid."""
        if len(eids) == 0:
            return {c: np.zeros(0) for c in ("ent", "a", "c", "xid", "pid")}
        ent_of = np.full(int(eids.max()) + 1, -1, dtype=np.int64)
        ent_of[eids] = ents

        def named(eid: np.ndarray) -> np.ndarray:
            """Each row's ``ents`` number, -1 for a row of another entity (or of none: a null stored as -1)."""
            out = np.full(len(eid), -1, dtype=np.int64)
            known = (eid >= 0) & (eid < len(ent_of))
            out[known] = ent_of[eid[known]]
            return out

        r = self._day(self._rows, self.s.hold_rows, day)
        ent = named(r["eid"])
        take = np.flatnonzero(ent >= 0)
        out = {"ent": [ent[take]], **{c: [r[c][take]] for c in ("a", "c", "xid", "pid")}}
        column = ROUND_EIDS.get(grouping)
        rounds = self._day(self._rounds, self.s.hold_rounds, day) if column else {}
        if len(rounds.get(column, ())):
            eid = rounds[column]
            ent = named(eid)
            take = np.flatnonzero(ent >= 0)
            take = take[np.argsort(eid[take], kind="stable")]  # by entity, each entity's in round order
            out["ent"].append(ent[take])
            out["a"].append(np.ones(len(take)))
            out["c"].append(rounds["c"][take].astype(float))
            out["xid"].append(rounds["xid"][take])
            out["pid"].append(rounds["pid"][take])
        return {c: np.concatenate(v) for c, v in out.items()}

    def each(self, first: dt.date, last: dt.date, far: pl.DataFrame):
        """(grouping, day, its far entities' rows) in ``far``'s grouping order and day order."""
        ids = self.far_ids(first, last, far)
        for (grouping,), f in far.group_by(["grouping"], maintain_order=True):
            g = ids.filter(pl.col("grouping") == grouping)
            for (day,), d in sorted(g.group_by(["gaming_day"]), key=lambda kv: kv[0][0]):
                rows = self.rows(grouping, day, d["eid"].to_numpy(), d["ent"].to_numpy())
                if len(rows["ent"]):
                    yield grouping, day, rows


def hold_rows_reader(s: DaySummaries):
    """A ``windows.HoldRowsReader`` over summaries in memory: the rows of the far entities (``hold_rows`` and
    ``hold_rounds``) with their keys and outcome vectors ``x`` and probabilities ``p`` as lists, in the order the day's
    pass made them, grouping by grouping, day by day (the reference ``far_rows_reader`` is held to)."""
    stored = _StoredRows(s)
    schema = {"gaming_day": pl.Date, **{k: pl.String for k in HOLD_KEYS}, "a": pl.Float64, "c": pl.Float64,
              "xid": pl.Int64, "pid": pl.Int64, "x": pl.List(pl.Float64), "p": pl.List(pl.Float64)}

    def read(first: dt.date, last: dt.date, far: pl.DataFrame) -> pl.DataFrame:
        out = []
        ent_keys = far.select("ent", *HOLD_KEYS).sort("ent")
        ents = ent_keys["ent"].to_numpy()
        for _, day, r in stored.each(first, last, far):
            pos = np.searchsorted(ents, r["ent"])
            out.append(ent_keys.select(list(HOLD_KEYS))[pos].with_columns(
                pl.lit(day).alias("gaming_day"), pl.Series("a", r["a"]), pl.Series("c", r["c"]),
                pl.Series("xid", r["xid"].astype(np.int64)), pl.Series("pid", r["pid"].astype(np.int64)),
                *[pl.Series(name, stored.vectors(name, day)[r[f"{name}id"].astype(np.int64)]).cast(pl.List(pl.Float64))
                  for name in ("x", "p")]).select(list(schema)))
        return pl.concat(out) if out else pl.DataFrame(schema=schema)
    return read


def far_rows_reader(s: DaySummaries):
    """``hold_rows_reader``'s rows as a ``windows.FarRows`` numbered by ``far``'s ``ent`` (what the windows make of
    them): the same rows in the same order, each day's vectors gathered once from its matrix by their ids. (The frame
    gives every row its two vectors as lists, which the windows turned back into matrices: a read of 16,698 far
    entities' 685,889 rows of the 1,000,000-round night took 0.94 s CPU so, 0.45 s as numbered rows.)"""
    from pipelines.stats.windows import FarRows

    stored = _StoredRows(s)

    def read(first: dt.date, last: dt.date, far: pl.DataFrame) -> "FarRows":
        parts = []
        for _, day, r in stored.each(first, last, far):
            xs, xi = np.unique(r["xid"], return_inverse=True)
            ps, pi = np.unique(r["pid"], return_inverse=True)
            parts.append(FarRows(r["ent"].astype(np.int64), r["a"].astype(float), r["c"].astype(float),
                                 xi.ravel().astype(np.int64), pi.ravel().astype(np.int64), stored.vectors("x", day)[xs],
                                 stored.vectors("p", day)[ps]))
        return FarRows.concat(parts) if parts else FarRows.empty()
    return read
