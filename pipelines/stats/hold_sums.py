"""The baccarat hold detector's sums for every grouping (table, dealer, shoe) from one pass over the wagers.

Each entity's net is a sum of independent draws: on one bet type a round's stake on it times the bet's net per
unit on the round's joint outcome (20 atoms); on all bets one draw per round, the round's nets on every outcome
added (a round's Banker and Player bets cancel). What they need of the wagers is the same for every grouping: per
round, bet and stake, so the wagers are reduced once to one row per round and bet (``round_bets``), a round's
all-bets vector is added once (not once per grouping: a round is one table's, one dealer's, one shoe's), and equal
vectors share an id (``unique_rows``: a hash of their bits, checked row by row). Then each grouping is a relabelling
of the rounds: its entities' counts and sums, and its draws kept once per distinct (stake, vector, probabilities)
with a count ``c`` (a round's all-bets draw is its own row). A night of 1,000,000 rounds made its table, dealer and shoe sums three times over, wager by
wager (the largest part of the detectors' time, issue 11).

Exact where it was: the vectors are the same products and sums in the same order (bet by bet within a round); the
moments add the same terms in another order (the last bit of a float sum may move, not a p-value's six digits). A round with wagers of two dealers, shoes or deck counts in one currency is handled by the general
path (its grouping's rows added per grouping, as before).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import polars as pl

from pipelines.stats.distributions import OUTCOMES, MoneySums, joint_outcome_probabilities, unit_nets_by_outcome
from pipelines.stats.entity_codes import like

#: a round's part: its wagers of one currency, dealer, shoe and deck count (normally the whole round)
PART = ["gaming_day", "table_id", "round_no", "currency", "dealer_id", "shoe_id", "decks"]
ROUND_BET = [*PART, "ruleset", "ruleset_version", "bet"]


@dataclass(frozen=True)
class GroupingSums:
    """One grouping's entities (``summary``: ``entity_aggregates`` columns, ``grouping`` and ``ent`` 0..n-1, sorted by
    key, level, currency) and their draws (``rows``: ``ent``, stake ``a``, count ``c``, ``xid``, ``pid``, and the
    ``pay_key`` and ``decks`` a single bet's row was grouped by, -1 on a round's all-bets row: what merging the sums of
    several chunks of tables needs, ``summaries.merge_chunks``; ``part``: on an all-bets row that is the same for every
    grouping, the round part's number ``0..HoldSums.parts-1`` in round order, else -1, so that the stored summaries keep
    that row once for the round, ``stat_day_hold_rounds``)."""

    grouping: str
    summary: pl.DataFrame
    rows: pl.DataFrame


@dataclass(frozen=True)
class HoldSums:
    """Every grouping's sums, with the outcome vectors ``x[xid]`` and probabilities ``p[pid]`` their rows name, and
    the bets their rows' ``pay_key`` numbers (``pays``: pay_key, ruleset, ruleset_version, bet); ``parts``: how many
    round parts the rows' ``part`` numbers."""

    groupings: tuple[GroupingSums, ...]
    x: np.ndarray
    p: np.ndarray
    pays: pl.DataFrame | None = None
    parts: int = 0

    def money_sums(self, g: GroupingSums, keep: np.ndarray | None = None) -> MoneySums:
        """The grouping's rows as a ``MoneySums`` (only the entities in boolean ``keep``, numbered as before)."""
        rows = g.rows
        if keep is not None:
            rows = rows.filter(pl.Series(keep)[rows["ent"]]) if rows.height else rows
        return MoneySums(rows["ent"].to_numpy().astype(np.int64), self.x[rows["xid"].to_numpy()],
                         self.p[rows["pid"].to_numpy()], rows["a"].to_numpy().astype(float),
                         rows["c"].to_numpy().astype(float), g.summary.height)

    def moments(self, g: GroupingSums) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean, variance and third cumulant of each entity's sum (``MoneySums.moments``, each vector's moments under
        each probability vector taken once: the rows only name them)."""
        m1, var, k3 = self._draw_moments
        xid, pid = g.rows["xid"].to_numpy(), g.rows["pid"].to_numpy()
        a, c, ent = g.rows["a"].to_numpy().astype(float), g.rows["c"].to_numpy().astype(float), g.rows["ent"].to_numpy()
        at = pid * m1.shape[1] + xid  # each row's (pid, xid) in the flattened arrays: one gather, not a 2-D one, each
        m1, var, k3 = m1.ravel().take(at), var.ravel().take(at), k3.ravel().take(at)
        n = g.summary.height

        def total(v: np.ndarray) -> np.ndarray:
            return np.bincount(ent, weights=v, minlength=n)

        return total(c * a * m1), total(c * a ** 2 * var), total(c * a ** 3 * k3)

    @cached_property
    def _draw_moments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pid x xid) arrays of one unit draw's mean, variance and third central moment (as ``MoneySums.moments``)."""
        out = [np.empty((len(self.p), len(self.x))) for _ in range(3)]
        for i, p in enumerate(self.p):
            m1 = (p[None, :] * self.x).sum(axis=1)  # summed as MoneySums.moments sums (p * x)
            d = self.x - m1[:, None]
            pd2 = p[None, :] * d * d
            out[0][i], out[1][i], out[2][i] = m1, pd2.sum(axis=1), (pd2 * d).sum(axis=1)
        return out[0], out[1], out[2]


def unique_rows(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of each distinct row's first occurrence, each row's distinct number) of a float matrix, rows equal when
    their bits are: a 64-bit hash of each row sorted, every row then compared with its group's first (a collision
    falls back to sorting the rows' bytes). Each word is folded (``b ^ b >> 32``) before it is multiplied: an outcome
    vector and its negation differ in their sign bits alone, and an even number of flipped top bits times odd
    multipliers cancels, which sent half the chunks of a night to the slow path before the fold."""
    m = np.ascontiguousarray(m, dtype=np.float64)
    if len(m) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    bits = m.view(np.uint64)
    mult = np.random.default_rng(20261127).integers(1, 2**63, size=m.shape[1], dtype=np.uint64) | np.uint64(1)
    with np.errstate(over="ignore"):
        h = ((bits ^ (bits >> np.uint64(32))) * mult).sum(axis=1, dtype=np.uint64)
        h ^= h >> np.uint64(29)
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    if not np.array_equal(bits[first[inverse]], bits):
        _, first, inverse = np.unique(m.view(np.dtype((np.void, 8 * m.shape[1]))).ravel(), return_index=True,
                                      return_inverse=True)
        inverse = inverse.ravel()
    return first.astype(np.int64), inverse.astype(np.int64)


def round_bets(w: pl.DataFrame) -> pl.DataFrame:
    """Settled baccarat wagers (``luck.settled_baccarat``) as one row per round part and bet: wagers ``n``, stake,
    theory, recorded net; groups in the order of their first wager (an entity's first row is its first wager's)."""
    return w.group_by(ROUND_BET, maintain_order=True).agg(
        pl.len().alias("n"), pl.col("amount").sum(), (pl.col("amount") * pl.col("mean")).sum().alias("theo"),
        pl.col("recorded_net").cast(pl.Int128).sum().alias("recorded"),
    ).with_columns(
        (pl.struct("ruleset", "ruleset_version", "bet").rank("dense") - 1).cast(pl.Int64).alias("pay_key"),
        (pl.struct(*PART).rank("dense") - 1).cast(pl.Int64).alias("part"),
        (pl.struct("gaming_day", "table_id", "round_no").rank("dense") - 1).cast(pl.Int64).alias("rid"),
    )


def _aggregates() -> list[pl.Expr]:
    return [pl.col("n").sum().cast(pl.UInt32).alias("wagers"), pl.col("rid").n_unique().alias("rounds"),
            pl.col("amount").cast(pl.Int128).sum().alias("handle"), pl.col("theo").sum().alias("theo"),
            pl.col("recorded").sum().alias("recorded"), pl.col("gaming_day").min().alias("first_day"),
            pl.col("gaming_day").max().alias("last_day"), pl.col("table_id").unique().sort().alias("tables"),
            pl.col("ruleset").first().alias("ruleset"), pl.col("round_no").min().alias("first_round"),
            pl.col("round_no").max().alias("last_round")]


def _entities(base: pl.DataFrame, min_wagers: int) -> pl.DataFrame:
    """Per entity (key x currency, on each bet type and on all bets): ``entity_aggregates`` of its round parts."""
    by_bet = base.group_by("key", "currency", "bet").agg(_aggregates()).rename({"bet": "level"})
    by_all = base.group_by("key", "currency").agg(_aggregates()).with_columns(like("all", base, "bet").alias("level"))
    ents = pl.concat([by_bet, by_all.select(by_bet.columns)])
    if min_wagers:
        ents = ents.filter(pl.col("wagers") >= min_wagers)
    return ents.sort("key", "level", "currency").with_row_index("ent").with_columns(pl.col("ent").cast(pl.Int64))


def _add_by_row(row: np.ndarray, n_rows: int, amount: np.ndarray, pay_key: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Per row number, the nets of its bets added outcome by outcome, in the order given (a stake times its bet's
    net per unit)."""
    out = np.empty((n_rows, OUTCOMES))
    amount = amount.astype(float)
    for k in range(OUTCOMES):
        out[:, k] = np.bincount(row, weights=amount * table[pay_key, k], minlength=n_rows)
    return out


def lex_order(*keys: np.ndarray) -> np.ndarray:
    """The stable order of rows by ``keys``, the first the most significant: ``np.lexsort(keys[::-1])``. Integer keys
    (or floats that are whole numbers) that are never negative and fit together in 63 bits are packed into one integer
    and sorted once (a lexsort sorts once per key: most of the hold's counting of a night's rows); the same order."""
    n = len(keys[0]) if keys else 0
    packed = np.zeros(n, dtype=np.int64)
    bits = 0
    for k in keys:
        if n == 0:
            break
        whole = k.astype(np.int64) if k.dtype.kind == "f" else k
        if whole.dtype.kind not in "iu" or (k.dtype.kind == "f" and not np.array_equal(whole, k)):
            return np.lexsort(keys[::-1])
        lo, hi = int(whole.min()), int(whole.max())
        width = max(hi, 1).bit_length()
        if lo < 0 or bits + width > 63:
            return np.lexsort(keys[::-1])
        packed = (packed << np.int64(width)) | whole.astype(np.int64)
        bits += width
    return np.argsort(packed, kind="stable")


def _counted(single: pl.DataFrame) -> dict[str, np.ndarray]:
    """A single bet's draws (ent, decks, pay_key, amount per round) as one row per distinct draw with its count ``c``,
    ordered by entity, bet, deck count and stake: one stable numpy sort and its runs (a polars group_by over four keys
    and a sort of its groups did the same at twice the cost)."""
    cols = {c: single[c].to_numpy() for c in ("ent", "decks", "pay_key", "amount")}
    if single.height == 0:
        return {**cols, "c": np.zeros(0, dtype=np.int64)}
    order = lex_order(cols["ent"], cols["pay_key"], cols["decks"], cols["amount"])
    cols = {c: v[order] for c, v in cols.items()}
    new = np.ones(len(order), dtype=bool)
    new[1:] = np.logical_or.reduce([v[1:] != v[:-1] for v in cols.values()])
    starts = np.flatnonzero(new)
    return {**{c: v[starts] for c, v in cols.items()}, "c": np.diff(np.append(starts, len(order)))}


def hold_sums(w: pl.DataFrame, groupings: tuple[str, ...], min_wagers: int = 0) -> HoldSums:
    """Every grouping's entities and draws from settled baccarat wagers (``min_wagers``: only the entities tested)."""
    rb = round_bets(w)
    keys = rb.select("pay_key", "ruleset", "ruleset_version", "bet").unique("pay_key").sort("pay_key")
    table = np.array([unit_nets_by_outcome(r, v)[b] for _, r, v, b in keys.rows()]).reshape(-1, OUTCOMES)
    decks = sorted(int(d) for d in rb["decks"].unique().to_list())
    probs = np.stack([joint_outcome_probabilities(d) for d in decks]) if decks else np.zeros((0, OUTCOMES))
    p_first, p_of = unique_rows(probs)
    pid_of_decks = dict(zip(decks, p_of.tolist()))
    n_parts = int(rb["part"].max()) + 1 if rb.height else 0
    simple = n_parts == rb.select(pl.struct("rid", "currency").n_unique()).item() if rb.height else True
    # the vectors: every bet's net per unit (the single-bet draws), every round part's nets on all bets
    vectors = [table]
    if simple:
        order = rb.select("part", "pay_key", "amount").sort("part", "pay_key")
        vectors.append(_add_by_row(order["part"].to_numpy(), n_parts, order["amount"].to_numpy(),
                                   order["pay_key"].to_numpy(), table))
        parts = rb.select(*PART, "part").unique("part")
    else:  # a round of one part has the same all-bets row in every grouping: which part it is, for the others -1
        sole = rb.group_by("rid", "currency").agg(pl.col("part").n_unique().alias("n"), pl.col("part").first()).filter(
            pl.col("n") == 1).drop("n")
    out, pending = [], []
    for grouping in groupings:
        base = rb.filter(pl.col(grouping).is_not_null()).with_columns(pl.col(grouping).alias("key"))
        if base.height == 0:
            continue
        summary = _entities(base, min_wagers).with_columns(pl.lit(grouping).alias("grouping"))
        per_bet = base if simple else base.group_by("key", "currency", "bet", "rid", "decks", "pay_key").agg(pl.col("amount").sum())
        single = _counted(per_bet.join(summary.filter(pl.col("level") != "all").select("key", "currency", "level", "ent"),
                                       left_on=["key", "currency", "bet"], right_on=["key", "currency", "level"],
                                       how="inner").select("ent", "decks", "pay_key", "amount"))
        ents_all = summary.filter(pl.col("level") == "all").select("key", "currency", "ent")
        if simple:
            whole = parts.filter(pl.col(grouping).is_not_null()).join(
                ents_all, left_on=[grouping, "currency"], right_on=["key", "currency"], how="inner").select(
                "ent", "decks", (pl.col("part") + len(table)).alias("vec"), "part").sort("ent", "vec")
        else:  # a round split between dealers, shoes or deck counts: this grouping's own round sums
            whole = per_bet.join(ents_all, on=["key", "currency"], how="inner").sort("ent", "rid", "pay_key")
            whole = whole.with_columns(((pl.col("ent") != pl.col("ent").shift()) | (pl.col("rid") != pl.col("rid").shift()))
                                       .fill_null(True).cast(pl.Int64).cum_sum().sub(1).alias("row"))
            row = whole["row"].to_numpy()
            n_rows = int(row[-1]) + 1 if len(row) else 0
            offset = sum(len(v) for v in vectors)
            vectors.append(_add_by_row(row, n_rows, whole["amount"].to_numpy(), whole["pay_key"].to_numpy(), table))
            whole = whole.group_by("row", maintain_order=True).agg(
                pl.col("ent").first(), pl.col("decks").first(), pl.col("rid").first(), pl.col("currency").first()).join(
                sole, on=["rid", "currency"], how="left", maintain_order="left").select(
                "ent", "decks", (pl.col("row") + offset).alias("vec"), pl.col("part").fill_null(-1).cast(pl.Int64)).sort(
                "ent", "vec")
        pending.append((grouping, summary, single, whole))
    every = np.concatenate(vectors) if vectors else np.zeros((0, OUTCOMES))
    x_first, x_of = unique_rows(every)
    pid_lookup = np.full(max(decks, default=0) + 1, -1, dtype=np.int64)
    for d, pid in pid_of_decks.items():
        pid_lookup[d] = pid
    for grouping, summary, single, whole in pending:
        rows = pl.DataFrame({
            "ent": np.concatenate([single["ent"], whole["ent"].to_numpy()]).astype(np.int64),
            "a": np.concatenate([single["amount"].astype(float), np.ones(whole.height)]),
            "c": np.concatenate([single["c"], np.ones(whole.height)]).astype(np.int64),
            "xid": np.concatenate([x_of[single["pay_key"]], x_of[whole["vec"].to_numpy()]]).astype(np.int64),
            "pid": pid_lookup[np.concatenate([single["decks"], whole["decks"].to_numpy()]).astype(np.int64)],
            "pay_key": np.concatenate([single["pay_key"], np.full(whole.height, -1)]).astype(np.int64),
            "decks": np.concatenate([single["decks"], np.full(whole.height, -1)]).astype(np.int64),
            "part": np.concatenate([np.full(len(single["ent"]), -1), whole["part"].to_numpy()]).astype(np.int64),
        })
        out.append(GroupingSums(grouping, summary, rows))
    return HoldSums(tuple(out), every[x_first], probs[p_first], keys.select("pay_key", "ruleset", "ruleset_version", "bet"),
                    n_parts)
