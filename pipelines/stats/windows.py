"""A window's tests from the per-day summaries of its days (``pipelines.stats.summaries``), without its wagers.

Each detector's window statistic is the sum of its days' summaries: counts and money add, a union of tables
is a union, a rule set is the earliest day's, the spread of the shoe-left measure combines by the parallel
variance formula, and the hold's cumulants add. The hold's saddle point needs the rows of an entity's sum,
so only the entities beyond ``SADDLE_BEYOND`` standard deviations of theory read theirs (``hold_rows_for``);
the others' p-value is the normal figure from the summed cumulants, as in ``distributions.batch_two_sided``.
The test rows, sentences and evidence are the detectors' own functions (``hold_rows``, ``luck_rows``, ...):
a window tested from summaries gives the p-values a test of all its wagers gives (``tests/test_stats_windows.py``);
it reads no wager and no card event, whatever the game.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from dataclasses import dataclass
from typing import Callable, Union

import numpy as np
import polars as pl

from pipelines.memory import trim
from pipelines.stats.advantage import counter_rows, pair_count_rows
from pipelines.stats.collusion import GRAPH_SUMS, collusion_tests
from pipelines.stats.config import StatsParams
from pipelines.stats.distributions import MoneySums
from pipelines.stats.hold import dealer_error_rows, hold_identity, hold_rows
from pipelines.stats.hold_sums import unique_rows
from pipelines.stats.luck import ENTITY_KEYS, PART_KEYS, luck_rows
from pipelines.stats.reuse import Reuse, interleave
from pipelines.stats.summaries import HOLD_KEYS, DaySummaries, hold_rows_reader
from pipelines.stats.tests_frame import tests_frame

#: (days, far entities: grouping, key, currency, level, and their number ``ent``) -> their rows of ``stat_day_hold_rows``
#: in those days: a frame with their keys and vectors (``summaries.hold_rows_reader``), or a ``FarRows``
HoldRowsReader = Callable[[dt.date, dt.date, pl.DataFrame], Union[pl.DataFrame, "FarRows"]]


class WindowMemo:
    """What the windows of one run already worked out per entity, by the entity and its first and last day.

    A window is a run of consecutive gaming days, and within one run a day's summaries do not change; so an entity
    whose first and last day are the same in two windows has the same rows in both (it has none outside those days
    in either, and both hold every day between them), and its hold sum the same moments and p-value. The 7- and
    30-day windows of a night test again every shoe, player and table that played only in the shorter window: they
    take those figures from here instead of reading the rows and solving the saddle point again. Only the hold's are
    kept: luck's p-values are kept by their own parts (``luck._entity_p_value``), the others cost little."""

    def __init__(self):
        self._hold: dict[tuple, tuple[float, float, float, float]] = {}
        self._band: dict[tuple, tuple[float, float, float, float]] = {}

    def known(self, keys: list[tuple]) -> np.ndarray:
        """(n, 4) mean, variance, third cumulant and p of each entity's sum; NaN where not worked out yet."""
        nan = (np.nan,) * 4
        return np.array([self._hold.get(k, nan) for k in keys], dtype=float).reshape(len(keys), 4)

    def keep(self, keys: list[tuple], mean: np.ndarray, var: np.ndarray, k3: np.ndarray, p: np.ndarray) -> None:
        self._hold.update(zip(keys, zip(mean.tolist(), var.tolist(), k3.tolist(), p.tolist())))

    def known_band(self, keys: list[tuple]) -> np.ndarray:
        """(n, 4) the moments each entity's band was taken from (``distributions.body_moments``) and the least value
        its sum can take; NaN where none."""
        nan = (np.nan,) * 4
        return np.array([self._band.get(k, nan) for k in keys], dtype=float).reshape(len(keys), 4)

    def keep_band(self, keys: list[tuple], mean: np.ndarray, var: np.ndarray, k3: np.ndarray, least: np.ndarray) -> None:
        self._band.update(zip(keys, zip(mean.tolist(), var.tolist(), k3.tolist(), least.tolist())))


def _first_by_day(col: str) -> pl.Expr:
    return pl.col(col).sort_by("gaming_day").first()


def _union(col: str) -> pl.Expr:
    return pl.col(col).list.explode(keep_nulls=False, empty_as_null=False).unique().sort()


def window_tests(s: DaySummaries, first: dt.date, last: dt.date, params: StatsParams, window_days: int,
                 hold_rows_for: HoldRowsReader | None = None,
                 memo: WindowMemo | None = None, reuse: Reuse | None = None,
                 widths: dict | None = None) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Every detector over the days ``first..last`` of ``s``: (tests, funnel, graph), as ``run.detect_all``;
    ``memo``: the hold figures of the run's earlier windows (the same summaries); ``reuse``: the same window of an
    earlier night, whose rows the entities untouched since keep (``pipelines.stats.reuse``: the hold's and luck's);
    ``widths``: gets the games' hold padding widths by grouping (``hold_games.games_hold_rows``), for the next night."""
    from pipelines.stats.hold_games import games_hold_rows
    from pipelines.stats.luck_games import games_luck_rows
    from pipelines.stats.wonging import entry_rows, window_entries

    s = s.only(first, last)
    read_rows = hold_rows_for or hold_rows_reader(s)
    memo = memo if memo is not None else WindowMemo()
    baccarat = _beside(_hold, s.hold_entities, first, last, params, window_days, read_rows, memo, reuse)
    try:
        games_hold, games_funnel = games_hold_rows(s.games_hold, s.games_draws, params, window_days, memo, reuse, widths)
        games = [games_hold, games_luck_rows(s.games_lines, s.games_parts, s.games_jackpot, params, window_days),
                 entry_rows(window_entries(s.entries), params, window_days)]
        graph = _graph(s.pairs, window_days)
        collusion = collusion_tests(graph, params, window_days)
        others = [
            dealer_error_rows(_dealers(s.dealers), params, window_days),
            _luck(s.luck_entities, s.luck_parts, params, window_days, reuse),
            counter_rows(s.hands.filter(pl.col("gaming_day").is_between(first, last)), params, window_days),
            pair_count_rows(_side(s.side), params, window_days),
        ]
    except BaseException:
        with contextlib.suppress(BaseException):  # the thread's reads end before the caller closes their connection
            baccarat()
        raise
    hold, funnel = baccarat()
    trim()  # the far entities' rows and money sums (numpy, DuckDB: glibc's heap) back to the system
    if games_funnel.height:
        funnel = pl.concat([f for f in (funnel, games_funnel) if f.height], how="diagonal_relaxed")
    tests = pl.concat([hold, *others, *games, collusion])
    if graph.height:
        graph = graph.join(collusion.select("dealer_id", "player_id", "currency", "p_value"),
                           on=["dealer_id", "player_id", "currency"], how="left")
    trim()
    return tests, funnel, graph


def _beside(work: Callable, *args) -> Callable[[], object]:
    """``work(*args)`` on a thread of its own (its result: call what this returns).

    A window's baccarat hold (the far entities' rows read, merged and their saddle points: half of a 30-day window's
    CPU at night 31 of 30 nights, about 40 % of the 1,000,000-round night's 1-day window) is mostly DuckDB's and
    numpy's work, which leaves Python's lock, so the window's other tests (the games' hold, luck's convolutions, the
    counters) run beside it on the second core. It shares nothing with them but the ``WindowMemo``, whose keys (the
    baccarat hold's entities) no other test writes or reads, and its reader opens a cursor of its own
    (``summary_store.stored_hold_rows``). The same rows in the same order. A 1-day window too: it ran in line for its
    peak memory, but the 1,000,000-round night's windows beside it hold about 0.1 GB more, about the peak of the
    chunks' merge before them (docs/detectors.md, "Speed")."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="window-hold")
    future = pool.submit(work, *args)

    def result():
        try:
            return future.result()
        finally:
            pool.shutdown(wait=True)

    return result


def _hold(ents: pl.DataFrame, first: dt.date, last: dt.date, params: StatsParams, window_days: int,
          read_rows: HoldRowsReader, memo: WindowMemo, reuse: Reuse | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    if ents.height == 0:
        return tests_frame([]), pl.DataFrame()
    summed = ents.group_by(list(HOLD_KEYS)).agg(
        *[pl.col(c).sum() for c in ("wagers", "rounds", "handle", "theo", "recorded", "m_mean", "m_var", "m_k3")],
        pl.col("first_day").min(), pl.col("last_day").max(), _union("tables"), _first_by_day("ruleset"),
        pl.col("first_round").min(), pl.col("last_round").max(),
    ).filter(pl.col("wagers") >= params.hold_min_wagers)
    tests, funnels = [], []
    for grouping in params.hold_groupings:
        summary = summed.filter(pl.col("grouping") == grouping).sort("key", "level", "currency").with_row_index(
            "ent").with_columns(pl.col("ent").cast(pl.Int64))
        if summary.height == 0:
            continue
        moments = tuple(summary[c].to_numpy().astype(float) for c in ("m_mean", "m_var", "m_k3"))

        def sums_for(far: np.ndarray, summary=summary) -> MoneySums:
            wanted = summary.filter(pl.Series(far)).select(*HOLD_KEYS, "ent")
            rows = read_rows(first, last, wanted) if wanted.height else pl.DataFrame()
            return _money_sums(rows, wanted, summary.height)

        keys = summary.select(*HOLD_KEYS, "first_day", "last_day").rows()
        known = memo.known(keys)[:, 3]
        kept, old_tests, old_funnel = untouched_hold(summary, reuse)
        t, f = hold_rows(summary, moments, sums_for, window_days, known, keep=~kept)
        memo.keep([k for k, r in zip(keys, kept) if not r], *(m[~kept] for m in moments), t["p_value"].to_numpy())
        t, f = interleave(t, old_tests, kept), interleave(f, old_funnel, kept)
        tests.append(t)
        if f.height:
            funnels.append(f)
    return (pl.concat(tests) if tests else tests_frame([])), (pl.concat(funnels) if funnels else pl.DataFrame())


def untouched_hold(summary: pl.DataFrame, reuse: Reuse | None, bets: list[str] | None = None
                   ) -> tuple[np.ndarray, pl.DataFrame, pl.DataFrame]:
    """(which of a grouping's hold entities keep their rows of ``reuse``, those test rows, those funnel rows): an entity
    is untouched when it has no row after the basis night and lost none (``Reuse.match``), and it must find its one
    funnel row too. ``bets``: the games' bet labels (``hold_games``)."""
    if reuse is None or summary.height == 0:
        return np.zeros(summary.height, dtype=bool), pl.DataFrame(), pl.DataFrame()
    cols = summary.select("grouping", "key", "level").to_dict(as_series=False)
    kinds, _, tests, entities = hold_identity(cols["grouping"], cols["key"], cols["level"], bets)
    counts = summary.select("currency", "first_day", "last_day", "wagers", "rounds")
    mask, rows = reuse.match(counts.with_columns(pl.Series("test", tests), pl.Series("entity", entities)),
                             ["test", "entity", "currency"])
    fmask, funnel = reuse.funnel_rows(counts.with_columns(pl.Series("entity_type", kinds), summary["key"].alias("entity"),
                                                          summary["level"].alias("bet")))
    both = mask & fmask
    if not both.any():
        return both, rows.clear(), funnel.clear()
    # the rows of the entities both found (each frame holds those of its own mask, in order)
    return both, rows.filter(pl.Series(both[mask])), funnel.filter(pl.Series(both[fmask]))


@dataclass(frozen=True)
class FarRows:
    """Far entities' rows by number: row i is ``c[i]`` draws of stake ``a[i]`` of entity ``ent[i]`` with the outcome
    vector ``x[xi[i]]`` and probabilities ``p[pi[i]]``; each vector is kept once however many rows name it (a
    30-day window's far dealers are 400,000 rows over about 190,000 stored vectors)."""

    ent: np.ndarray
    a: np.ndarray
    c: np.ndarray
    xi: np.ndarray
    pi: np.ndarray
    x: np.ndarray
    p: np.ndarray

    @staticmethod
    def empty(width: int = 1) -> "FarRows":
        none = np.zeros(0, dtype=np.int64)
        return FarRows(none, np.zeros(0), np.zeros(0), none, none, np.zeros((0, width)), np.zeros((0, width)))

    @staticmethod
    def of_frame(rows: pl.DataFrame) -> "FarRows":
        """From a frame of ``ent``, ``a``, ``c`` and the list columns ``x`` and ``p`` (one vector per row)."""
        if rows.height == 0:
            return FarRows.empty()
        return FarRows(rows["ent"].to_numpy().astype(np.int64), rows["a"].to_numpy().astype(float),
                       rows["c"].to_numpy().astype(float), np.arange(rows.height), np.arange(rows.height),
                       _matrix(rows["x"]), _matrix(rows["p"]))

    @staticmethod
    def concat(parts: list["FarRows"]) -> "FarRows":
        """The rows of every part in order (the vectors padded with zeros to the widest: an atom of probability 0
        is ignored by the saddle point)."""
        parts = [q for q in parts if len(q.ent)] or [FarRows.empty()]
        width = max(max(q.x.shape[1], q.p.shape[1]) for q in parts)
        xs, ps = np.cumsum([0] + [len(q.x) for q in parts]), np.cumsum([0] + [len(q.p) for q in parts])
        return FarRows(np.concatenate([q.ent for q in parts]), np.concatenate([q.a for q in parts]),
                       np.concatenate([q.c for q in parts]), np.concatenate([q.xi + o for q, o in zip(parts, xs)]),
                       np.concatenate([q.pi + o for q, o in zip(parts, ps)]),
                       np.concatenate([_padded(q.x, width) for q in parts]), np.concatenate([_padded(q.p, width) for q in parts]))


def _matrix(col: pl.Series) -> np.ndarray:
    """A list column of floats as a matrix, each row padded with zeros to the longest."""
    lens = col.list.len().to_numpy()
    width = int(lens.max()) if len(lens) else 1
    if (lens == width).all():
        return np.ascontiguousarray(col.explode().to_numpy().reshape(-1, width), dtype=float)
    m = np.zeros((len(col), width))
    for i, v in enumerate(col.to_list()):
        m[i, :len(v)] = v
    return m


def vector_ids(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``hold_sums.unique_rows`` of the stored vectors, -0.0 taken as 0.0: the same net, so the same vector."""
    return unique_rows(m + 0.0)


def _padded(m: np.ndarray, width: int) -> np.ndarray:
    return m if m.shape[1] == width else np.pad(m, ((0, 0), (0, width - m.shape[1])))


def _money_sums(rows: "pl.DataFrame | FarRows", wanted: pl.DataFrame, n: int) -> MoneySums:
    """The far entities' rows as a ``MoneySums`` numbered like the window's entities. ``rows``: the reader's, a frame
    with the entities' keys (``summaries.hold_rows_reader``) or a ``FarRows``.

    The same stake and outcome vectors on several days are one row with their counts added (a third fewer rows over
    30 nights for the saddle point, whose work is per row): equal vectors get one number (``vector_ids``), and the rows are merged by entity, stake and the two numbers, in the order
    of their first row."""
    if isinstance(rows, pl.DataFrame):
        if rows.height:
            rows = rows.join(wanted, on=list(HOLD_KEYS), how="inner")
        rows = FarRows.of_frame(rows.select("ent", "a", "c", "x", "p") if rows.height else rows)
    if len(rows.ent) == 0:
        return MoneySums(np.zeros(0, dtype=np.int64), np.zeros((0, 1)), np.zeros((0, 1)), np.zeros(0), np.zeros(0), n)
    x_first, x_of = vector_ids(rows.x)
    p_first, p_of = vector_ids(rows.p)
    merged = pl.DataFrame({"ent": rows.ent, "a": rows.a, "gx": x_of[rows.xi], "gp": p_of[rows.pi], "c": rows.c}).group_by(
        "ent", "a", "gx", "gp", maintain_order=True).agg(pl.col("c").sum())
    return MoneySums(merged["ent"].to_numpy().astype(np.int64), rows.x[x_first][merged["gx"].to_numpy()],
                     rows.p[p_first][merged["gp"].to_numpy()], merged["a"].to_numpy().astype(float),
                     merged["c"].to_numpy().astype(float), n)


def _dealers(d: pl.DataFrame) -> pl.DataFrame:
    return d.group_by("dealer_id").agg(pl.col("rounds").sum(), pl.col("errors").sum(), pl.col("first_day").min(),
                                       pl.col("last_day").max())


def _luck(ents: pl.DataFrame, parts: pl.DataFrame, params: StatsParams, window_days: int,
          reuse: Reuse | None = None) -> pl.DataFrame:
    keys = list(ENTITY_KEYS)
    summary = ents.group_by(keys).agg(
        *[pl.col(c).sum() for c in ("wagers", "rounds", "wins", "wins_expected", "theo", "recorded", "cards")],
        pl.col("first_day").min(), pl.col("last_day").max(), _first_by_day("ruleset"), _union("tables"),
    ).filter(pl.col("wagers") >= params.luck_min_wagers).sort(keys)  # the order ``luck_rows`` writes its rows in
    kept, old = np.zeros(summary.height, dtype=bool), None
    if reuse is not None and summary.height:
        # a luck row is found by its player, currency and bet (``luck_rows`` writes ``entity_bet`` as ``bet``)
        kept, old = reuse.match(summary.with_columns(pl.lit("luck").alias("test"), pl.col("entity_bet").alias("bet")),
                                ["test", "player_id", "currency", "bet"])
    if kept.any():
        summary = summary.filter(pl.Series(~kept))
    per_part = parts.join(summary.select(keys), on=keys, how="semi") if kept.any() else parts
    per_part = per_part.group_by(*keys, *PART_KEYS).agg(pl.col("n").sum(), pl.col("k").sum())
    rows = luck_rows(summary, per_part, window_days)
    return interleave(rows, old, kept) if kept.any() else rows


def _graph(pairs: pl.DataFrame, window_days: int) -> pl.DataFrame:
    if pairs.height == 0:
        return pl.DataFrame()
    return pairs.group_by("dealer_id", "player_id", "currency").agg(
        *[pl.col(c).sum() for c in GRAPH_SUMS], pl.col("first_day").min(), pl.col("last_day").max(),
        _union("tables"), _first_by_day("game"), _first_by_day("ruleset"),
    ).with_columns(pl.lit(window_days).cast(pl.Int64).alias("window_days")).select(
        "dealer_id", "player_id", "currency", *GRAPH_SUMS, "first_day", "last_day", "tables", "game", "ruleset",
        "window_days").sort("dealer_id", "player_id", "currency")


def _side(side: pl.DataFrame) -> pl.DataFrame:
    """Per family, player and currency over the days: counts and sums add; the squared deviations combine as
    ``sum_d m2_d + n_d (mean_d - mean)^2`` (Chan, Golub and LeVeque's parallel formula)."""
    keys = ["family", "player_id", "currency"]
    if side.height == 0:
        return side
    side = side.with_columns((pl.col("sum_all") / pl.col("n_all")).alias("_mean_d"))
    side = side.with_columns((pl.col("sum_all").sum().over(keys) / pl.col("n_all").sum().over(keys)).alias("_mean"))
    return side.group_by(keys).agg(
        pl.col("n_all").sum(), pl.col("n_bet").sum(), pl.col("sum_all").sum(),
        (pl.col("m2_all") + pl.col("n_all") * (pl.col("_mean_d") - pl.col("_mean")) ** 2).sum().alias("m2_all"),
        pl.col("sum_bet").sum(), pl.col("first_day").min(), pl.col("last_day").max(), _first_by_day("ruleset"),
        pl.col("expected_net").sum(), pl.col("recorded_net").sum(), _union("tables"),
    )
