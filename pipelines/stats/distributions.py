"""Exact payout distributions of single wagers, and the tail probabilities of their sums.

A wager of a bet nets one of a few multiples of its amount (a Tie: -1 or +8; a Tiger: -1, +12 or
+20); the probabilities are an exact enumeration of the shoe's first six cards through the rules
engine's own vectorised resolver (as ``rulebook.baccarat.odds`` does), tallied jointly by result
class and pairs (``joint_outcome_probabilities``), and the nets come from the rule set's own
settlement and pay tables, so a pay-table change changes them. Two tails are needed:

- **the same-stake sum** ``S = sum_i X_i`` in units of each wager (the luck detector): every
  multiple is a fraction with a small denominator, so on the grid ``1/G`` units the sum is an
  integer and its distribution is the exact convolution of the per-wager distributions (FFT of the
  n-fold power); no normal guess, which matters for a bet that loses 97 % of the time and pays 50:1.
- **the money sum** ``sum_i a_i X_i`` with different amounts ``a_i`` (the hold detector): there is
  no common lattice worth convolving, so the tail comes from the Lugannani-Rice saddle-point
  formula on the exact cumulant generating function ``K(t) = sum_i log E exp(t a_i X_i)``. It uses
  every cumulant of every wager's distribution (skew and the long right tail of the big-payout
  bets included) and is accurate to a relative error of O(1/n) in the tails, where a normal or an
  Edgeworth series with two terms is not.

Probabilities are floats (they are not money). FFT round-off bounds what can be resolved: tail
probabilities below ``P_FLOOR`` are reported as ``P_FLOOR`` (a statement "p < 1e-12").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

P_FLOOR = 1e-12


@dataclass(frozen=True, slots=True)
class Payout:
    """One bet's net per unit wagered: ``values / grid`` units with probabilities ``probs`` (sum 1)."""

    bet: str
    grid: int  # the denominator: values are integers on the 1/grid lattice
    values: tuple[int, ...]
    probs: tuple[float, ...]

    @property
    def units(self) -> np.ndarray:
        return np.asarray(self.values, dtype=float) / self.grid

    @property
    def mean(self) -> float:
        return float(np.dot(self.units, self.probs))

    @property
    def variance(self) -> float:
        u = self.units
        return float(np.dot(u * u, self.probs) - self.mean ** 2)

    @property
    def house_edge(self) -> float:
        return -self.mean

    def on_grid(self, grid: int) -> "Payout":
        if grid % self.grid:
            raise ValueError(f"grid {grid} is not a multiple of {self.grid}")
        f = grid // self.grid
        return Payout(self.bet, grid, tuple(v * f for v in self.values), self.probs)


@lru_cache(maxsize=64)
def baccarat_payouts(ruleset_name: str, ruleset_version: str, decks: int) -> dict[str, Payout]:
    """Every bet of a Tiger Baccarat rule-set version with ``decks`` decks: each bet's nets on the round's joint
    outcomes (``unit_nets_by_outcome``) gathered by value, with the outcomes' exact probabilities (one
    enumeration per deck count, cached, shared with the hold detector)."""
    params = ruleset_of(ruleset_name, ruleset_version).params
    probs = joint_outcome_probabilities(decks, tuple(params.deal_order))
    out: dict[str, Payout] = {}
    for bet, nets in unit_nets_by_outcome(ruleset_name, ruleset_version).items():
        outcomes: dict[Fraction, float] = {}
        for v, q in zip(nets, probs):
            k = Fraction(float(v)).limit_denominator(1000)  # the pay table's odds, e.g. 19/20
            outcomes[k] = outcomes.get(k, 0.0) + float(q)
        outcomes = {k: q for k, q in outcomes.items() if q > 0}
        grid = math.lcm(*(k.denominator for k in outcomes))
        keys = sorted(outcomes)
        out[bet] = Payout(bet, grid, tuple(int(k * grid) for k in keys), tuple(outcomes[k] for k in keys))
    return out


@lru_cache(maxsize=64)
def ruleset_of(name: str, version: str):
    from rulebook.catalogue import builtin

    for rs in builtin().versions(name):
        if rs.version == version:
            return rs
    return builtin().latest(name)


# ---- same-stake sums: exact convolution ---------------------------------------------------------


def sum_distribution(parts: list[tuple[Payout, int]]) -> tuple[int, np.ndarray]:
    """The distribution of the sum of ``n`` independent wagers of each (payout, n) part, on a common grid.

    Returns ``(offset, pmf)``: ``pmf[j]`` is P(sum = (j + offset) / grid) with grid the LCM of the parts'.
    One FFT of the product of the parts' characteristic polynomials (each raised to its n).
    """
    parts = [(p, n) for p, n in parts if n > 0]
    if not parts:
        return 0, np.ones(1)
    grid = math.lcm(*(p.grid for p, _ in parts))
    parts = [(p.on_grid(grid), n) for p, n in parts]
    offset = sum(min(p.values) * n for p, n in parts)
    size = sum((max(p.values) - min(p.values)) * n for p, n in parts) + 1
    nfft = 1 << max(1, (size - 1).bit_length())
    spectrum = np.ones(nfft // 2 + 1, dtype=complex)
    for p, n in parts:
        lo = min(p.values)
        base = np.zeros(nfft)
        for v, q in zip(p.values, p.probs):
            base[v - lo] += q
        spectrum *= np.fft.rfft(base) ** n
    pmf = np.fft.irfft(spectrum, nfft)[:size]
    return offset, np.clip(pmf, 0.0, None)


def upper_tail(parts: list[tuple[Payout, int]], observed_on_grid: int, grid: int) -> float:
    """P(sum >= observed) for the sum of the parts' wagers; ``observed_on_grid`` on the 1/``grid`` lattice."""
    offset, pmf = sum_distribution(parts)
    common = math.lcm(*(p.grid for p, n in parts if n > 0)) if parts else 1
    if common % grid and grid % common:
        raise ValueError("the observation's grid must divide the parts' grid")
    k = observed_on_grid * (common // grid) if common >= grid else observed_on_grid // (grid // common)
    j = k - offset
    if j <= 0:
        return 1.0
    if j >= len(pmf):
        return P_FLOOR
    return float(min(1.0, max(P_FLOOR, pmf[j:].sum())))


# ---- money sums: the saddle point -----------------------------------------------------------------


def _norm_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


# ---- many money sums at once (the hold detector's entities) ----------------------------------------


@dataclass(frozen=True, slots=True)
class MoneySums:
    """Many entities' money sums: row r is ``c[r]`` wagers of amount ``a[r]`` with payout ``x[r], p[r]``
    belonging to entity ``ent[r]`` (0..n-1)."""

    ent: np.ndarray
    x: np.ndarray
    p: np.ndarray
    a: np.ndarray
    c: np.ndarray
    n: int

    def _sum(self, v: np.ndarray) -> np.ndarray:
        return np.bincount(self.ent, weights=v, minlength=self.n)

    def moments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean, variance and third cumulant of each entity's sum."""
        m1 = (self.p * self.x).sum(axis=1)
        d = self.x - m1[:, None]
        pd2 = self.p * d * d
        var = pd2.sum(axis=1)
        k3 = (pd2 * d).sum(axis=1)
        return (self._sum(self.c * self.a * m1), self._sum(self.c * self.a ** 2 * var),
                self._sum(self.c * self.a ** 3 * k3))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        xs_lo = np.where(self.p > 0, self.x, np.inf).min(axis=1)
        xs_hi = np.where(self.p > 0, self.x, -np.inf).max(axis=1)
        return self._sum(self.c * self.a * xs_lo), self._sum(self.c * self.a * xs_hi)

    def subset(self, keep: np.ndarray) -> "MoneySums":
        """Only the entities in boolean ``keep`` (renumbered in order)."""
        new = np.cumsum(keep) - 1
        rows = keep[self.ent]
        return MoneySums(new[self.ent[rows]], self.x[rows], self.p[rows], self.a[rows], self.c[rows], int(keep.sum()))

    def cgf(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        z = (t[self.ent] * self.a)[:, None] * self.x
        z = np.where(self.p > 0, z, -np.inf)
        zmax = z.max(axis=1, keepdims=True)
        w = self.p * np.exp(z - zmax)
        s0 = w.sum(axis=1)
        ax = self.a[:, None] * self.x
        s1 = (w * ax).sum(axis=1) / s0
        s2 = (w * ax * ax).sum(axis=1) / s0
        return (self._sum(self.c * (np.log(s0) + zmax[:, 0])), self._sum(self.c * s1),
                self._sum(self.c * (s2 - s1 * s1)))


def _norm_sf_v(z: np.ndarray) -> np.ndarray:
    from math import erfc, sqrt

    return np.array([0.5 * erfc(v / sqrt(2.0)) for v in np.ravel(z)]).reshape(np.shape(z))


def batch_two_sided(ms: MoneySums, s: np.ndarray, saddle_beyond: float = 1.5, iterations: int = 60,
                    moments: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Two-sided tail probability of each entity's observed sum ``s``.

    Entities within ``saddle_beyond`` standard deviations of their mean get the normal figure (p >= 0.13:
    never near a flag); the others the Lugannani-Rice saddle point, solved by a safeguarded Newton
    iteration vectorised over the entities.
    """
    mean, var, _ = moments if moments is not None else ms.moments()
    sd = np.sqrt(np.maximum(var, 1e-300))
    z = (s - mean) / sd
    p = np.minimum(1.0, 2.0 * _norm_sf_v(np.abs(z)))
    far = np.abs(z) > saddle_beyond
    if not far.any():
        return np.maximum(p, P_FLOOR)
    sub = ms.subset(far)
    lo, hi = sub.bounds()
    sf, sd_f, mean_f, z_f = s[far], sd[far], mean[far], z[far]
    up = sf > mean_f
    t = z_f / sd_f
    a = np.where(up, 0.0, -np.inf)
    b = np.where(up, np.inf, 0.0)
    for _ in range(iterations):
        k, k1, k2 = sub.cgf(t)
        below = k1 < sf
        a = np.where(below, np.maximum(a, t), a)
        b = np.where(below, b, np.minimum(b, t))
        # where the tilted variance is too small for a finite Newton step (t far out, the tilted law on one atom),
        # no step: the bisection fallback below moves t (dividing by a floor of 1e-300 overflowed to inf)
        finite = np.abs(k1 - sf) * 1e-300 < k2
        newton = t - np.divide(k1 - sf, k2, out=np.full_like(t, np.nan), where=finite)
        inside = (newton > a) & (newton < b)
        fallback = np.where(np.isfinite(a) & np.isfinite(b), 0.5 * (a + b),
                            np.where(np.isfinite(a), np.abs(a) * 2 + 1 / sd_f, -np.abs(b) * 2 - 1 / sd_f))
        t_new = np.where(inside, newton, fallback)
        if np.all(np.abs(k1 - sf) <= 1e-9 * sd_f):
            break
        t = t_new
    k, k1, k2 = sub.cgf(t)
    w2 = np.maximum(2.0 * (t * sf - k), 0.0)
    w = np.copysign(np.sqrt(w2), t)
    u = t * np.sqrt(np.maximum(k2, 1e-300))
    phi = np.exp(-0.5 * w2) / math.sqrt(2 * math.pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = phi * (1.0 / u - 1.0 / w)
    tail = np.where(up, _norm_sf_v(w) + corr, _norm_sf_v(-w) - corr)
    tail = np.where(np.isfinite(tail), tail, _norm_sf_v(np.abs(z_f)))
    beyond = np.where(up, sf > hi, sf < lo)
    tail = np.where(beyond, 0.0, np.clip(tail, 0.0, 1.0))
    p[far] = np.minimum(1.0, 2.0 * tail)
    return np.maximum(p, P_FLOOR)


# ---- binomial tails (dealer error rates, collusion) ---------------------------------------------------


def binom_sf(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed in log space from k upward (exact to float precision)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    mode = (n + 1) * p
    lp, lq = math.log(p), math.log1p(-p)

    def logpmf(j: np.ndarray) -> np.ndarray:
        from math import lgamma

        lg = np.vectorize(lgamma)
        return lg(n + 1.0) - lg(j + 1.0) - lg(n - j + 1.0) + j * lp + (n - j) * lq

    if k > mode:
        j = np.arange(k, n + 1, dtype=float)
        return float(min(1.0, np.exp(logpmf(j)).sum()))
    j = np.arange(0, k, dtype=float)
    return float(min(1.0, max(0.0, 1.0 - np.exp(logpmf(j)).sum())))


# ---- the joint outcome of a baccarat round (the hold detector: a round's wagers share its cards) --------

#: a round's outcome: result class (0 Player, 1 Tie, 2 Banker, 3 Banker on 6 with two cards, 4 with three)
#: x Player Pair x Banker Pair, indexed ``class * 4 + player_pair * 2 + banker_pair``
OUTCOMES = 20


def joint_outcome_probabilities(decks: int, deal_order: tuple[str, ...] = ("player", "banker", "player", "banker")) -> np.ndarray:
    """P(class, player pair, banker pair) of a fresh shoe, by the same exact enumeration of the first six cards
    as ``rulebook.baccarat.odds.result_weights`` (weights summed as floats: these are probabilities, not money)."""
    return _joint(int(decks), tuple(deal_order))


@lru_cache(maxsize=16)
def _joint(decks: int, deal_order: tuple[str, ...]) -> np.ndarray:
    from rulebook.baccarat import vector as V
    from rulebook.baccarat.odds import _sequence_weights

    tail = np.indices((13,) * 5, dtype=np.int8).reshape(5, -1).T
    out = np.zeros(OUTCOMES)
    for first in range(13):
        seq = np.empty((len(tail), 6), dtype=np.int8)
        seq[:, 0] = first
        seq[:, 1:] = tail
        w = _sequence_weights(seq, decks).astype(float)
        coups = V.resolve(seq * 4, deal_order=deal_order)
        cls = V.result_class(coups).astype(int)
        idx = cls * 4 + (coups.player_pair == 1).astype(int) * 2 + (coups.banker_pair == 1).astype(int)
        out += np.bincount(idx, weights=w, minlength=OUTCOMES)
    return out / out.sum()


@lru_cache(maxsize=64)
def unit_nets_by_outcome(ruleset_name: str, ruleset_version: str) -> dict[str, np.ndarray]:
    """Per bet: its net per unit wagered on each of the OUTCOMES (the rule set's pay and settlement tables)."""
    from rulebook.baccarat import vector as V

    params = ruleset_of(ruleset_name, ruleset_version).params
    effect, num, den = V.payout_table(params)
    main = V._main_table(params)

    def net(reason) -> float:
        e = int(effect[reason])
        return int(num[reason]) / int(den[reason]) if e == 1 else (-1.0 if e == -1 else 0.0)

    out: dict[str, np.ndarray] = {}
    cls = np.repeat(np.arange(5), 4)
    pp = np.tile([0, 0, 1, 1], 5)
    bp = np.tile([0, 1, 0, 1], 5)
    for bet, code in V.BET_CODES.items():
        if code == V.BET_PLAYER_PAIR:
            out[bet] = np.where(pp == 1, net(V.Reason.PLAYER_PAIR_WINS), -1.0)
        elif code == V.BET_BANKER_PAIR:
            out[bet] = np.where(bp == 1, net(V.Reason.BANKER_PAIR_WINS), -1.0)
        else:
            out[bet] = np.array([net(V.Reason(int(main[code, c]))) for c in cls])
    return out
