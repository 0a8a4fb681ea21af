"""The Tiger bets against the shoe left: exact expected values of any composition, and effects of removal.

Whether the Banker wins on 6 (the Tiger, Small Tiger and Big Tiger lines) depends on the whole shoe, not
on two cards as a pair does, so the exact EV of the shoe left before each round would cost an
enumeration per round. Instead:

- ``exact_ev(composition)``: the exact EV of each Tiger bet for any 13-rank composition, by the same
  enumeration of the first six cards as ``rulebook.baccarat.odds`` (the rounds' result classes do not
  depend on the composition, only the weights do, so the 10**6 sequences of card values are resolved
  once and re-weighted);
- ``effects_of_removal(decks)``: per rank, the change in each bet's EV when one card of that rank leaves
  a full shoe (13 exact enumerations, cached);
- the EV of the shoe left before a round is then the linear effect-of-removal estimate
  ``EV0 + N0 * sum_r EoR_r * (p_r - p'_r)`` with ``p`` the full shoe's and ``p'`` the shoe left's
  proportions of each rank (the classic card-counting approximation; ``tests/test_stats.py`` checks it
  against ``exact_ev`` on depleted shoes).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import polars as pl

TIGER_BETS = ("tiger", "small_tiger", "big_tiger")


@lru_cache(maxsize=4)
def _classes(deal_order: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every sequence of six card *values* (A..9 and the ten-value T/J/Q/K: 10**6, the Tiger bets need no
    faces), its result class, and for each position the cards of the same value earlier in the sequence
    (the weights' without-replacement offsets), resolved once."""
    from rulebook.baccarat import vector as V

    seq = np.indices((10,) * 6, dtype=np.int8).reshape(6, -1).T.copy()
    cls = V.result_class(V.resolve(seq.astype(np.int16) * 4, deal_order=deal_order)).astype(np.int8)
    used = np.zeros_like(seq)
    for i in range(6):
        for j in range(i):
            used[:, i] += seq[:, j] == seq[:, i]
    return seq, cls, used


def _by_value(composition: np.ndarray) -> np.ndarray:
    """13 rank counts (A..K) -> 10 value counts (A..9, then T+J+Q+K)."""
    c = np.asarray(composition, dtype=float)
    return np.concatenate([c[:9], [c[9:].sum()]])


def _weights(seq: np.ndarray, used: np.ndarray, composition: np.ndarray) -> np.ndarray:
    """Without-replacement weight of each sequence from ``composition`` (cards left per value)."""
    w = np.ones(len(seq), dtype=float)
    for i in range(6):
        w *= np.maximum(composition[seq[:, i]] - used[:, i], 0.0)
    return w


def class_probabilities(composition: np.ndarray, deal_order: tuple[str, ...] = ("player", "banker", "player", "banker")) -> np.ndarray:
    """P(result class) for a shoe of ``composition`` (13 rank counts, A..K): 0 Player, 1 Tie, 2 Banker, 3 Banker
    on 6 with two cards, 4 with three."""
    seq, cls, used = _classes(deal_order)
    w = _weights(seq, used, _by_value(composition))
    return np.bincount(cls, weights=w, minlength=5) / w.sum()


def _tiger_nets(ruleset_name: str, ruleset_version: str) -> np.ndarray:
    """5 classes x 3 Tiger bets: the net per unit (the Tiger bets depend on the class only: outcome class * 4)."""
    from pipelines.stats.distributions import unit_nets_by_outcome

    nets = unit_nets_by_outcome(ruleset_name, ruleset_version)
    return np.stack([nets[b][::4] for b in TIGER_BETS], axis=1)


def exact_ev(composition: np.ndarray, ruleset_name: str, ruleset_version: str) -> dict[str, float]:
    """Each Tiger bet's exact expected net per unit for a shoe of ``composition`` (13 counts, A..K)."""
    from pipelines.stats.distributions import ruleset_of

    order = tuple(ruleset_of(ruleset_name, ruleset_version).params.deal_order)
    ev = class_probabilities(np.asarray(composition), order) @ _tiger_nets(ruleset_name, ruleset_version)
    return dict(zip(TIGER_BETS, ev.tolist()))


@lru_cache(maxsize=8)
def _removal_classes(decks: int, deal_order: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(class probabilities of the full shoe, 13 x 5 of the shoe less one card of each rank): shared by the
    rule sets (only their pay tables differ). The frozen record when there is one (``enumerations_frozen``: the same
    floats, 0.3 CPU s less per deck count in every audit), else the enumeration (``removal_enumerated``)."""
    from pipelines.stats.enumerations_frozen import REMOVAL

    frozen = REMOVAL.get((decks, deal_order))
    if frozen is None:
        return removal_enumerated(decks, deal_order)
    p0, removed = frozen
    return np.array(p0, dtype=np.float64), np.array(removed, dtype=np.float64).reshape(13, 5)


def removal_enumerated(decks: int, deal_order: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``_removal_classes`` by 11 exact enumerations (the four ten-value ranks are one)."""
    full = np.full(13, 4 * decks)
    p0 = class_probabilities(full, deal_order)
    removed = np.zeros((13, 5))
    for r in range(10):
        comp = full.copy()
        comp[r] -= 1
        removed[r] = class_probabilities(comp, deal_order)
    removed[10:] = removed[9]
    return p0, removed


def effects_of_removal(decks: int, ruleset_name: str, ruleset_version: str) -> tuple[dict[str, float], np.ndarray]:
    """(EV of the full shoe per bet, EoR array 13 x 3: the change in EV per card of each rank removed)."""
    from pipelines.stats.distributions import ruleset_of

    order = tuple(ruleset_of(ruleset_name, ruleset_version).params.deal_order)
    p0, removed = _removal_classes(decks, order)
    nets = _tiger_nets(ruleset_name, ruleset_version)
    ev0 = p0 @ nets
    return dict(zip(TIGER_BETS, ev0.tolist())), removed @ nets - ev0[None, :]


def estimated_ev(left: np.ndarray, decks: int, ruleset_name: str, ruleset_version: str) -> np.ndarray:
    """Rows of 13 rank counts left -> rows of the three Tiger bets' estimated EV (effect-of-removal, linear)."""
    ev0, eor = effects_of_removal(decks, ruleset_name, ruleset_version)
    n0 = 52.0 * decks
    p0 = np.full(13, 1 / 13)
    p = left / np.maximum(left.sum(axis=1, keepdims=True), 1)
    return np.array([ev0[b] for b in TIGER_BETS])[None, :] + n0 * (p0[None, :] - p) @ eor


def tiger_ev_before_rounds(cards: pl.DataFrame, ruleset_by_table: dict[str, tuple[str, str]], shoes=None) -> pl.DataFrame:
    """Per (table, shoe, round) of a baccarat table: the three Tiger bets' estimated EV of the shoe left (``shoes``:
    the cards' ``counts.shoe_rounds`` when the caller has them)."""
    from pipelines.stats.counts import ranks_left, shoe_rounds

    schema = {"table_id": pl.String, "round_no": pl.Int64, **{f"ev_{b}": pl.Float64 for b in TIGER_BETS}}
    shoes = shoe_rounds(cards) if shoes is None else shoes
    mine = shoes.rounds["table_id"].is_in(list(ruleset_by_table)).to_numpy()
    if not mine.any():
        return pl.DataFrame(schema=schema)
    per_round = shoes.rounds.filter(pl.Series(mine)).select("table_id", "round_no", "decks").with_row_index("i")
    left_all = ranks_left(shoes)[mine].astype(float)
    parts = []
    for (table, decks), g in per_round.group_by(["table_id", "decks"], maintain_order=True):
        name, version = ruleset_by_table[table]
        ev = estimated_ev(left_all[g["i"].to_numpy()], int(decks), name, version)
        parts.append(g.select("table_id", "round_no").with_columns(
            [pl.Series(f"ev_{b}", ev[:, i]) for i, b in enumerate(TIGER_BETS)]))
    return pl.concat(parts).select(list(schema)) if parts else pl.DataFrame(schema=schema)
