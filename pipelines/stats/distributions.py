"""Exact payout distributions of single wagers, and the tail probabilities of their sums.

A wager of a bet nets one of a few multiples of its amount (a Tie: -1 or +8; a Tiger: -1, +12 or
+20); the probabilities are the rules engine's exact enumeration of the shoe
(``rulebook.baccarat.odds.result_weights``) through the rule set's own settlement and pay tables,
so a pay-table change changes them. Two tails are needed:

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


def _payout(bet: str, outcomes: dict[Fraction, Fraction]) -> Payout:
    outcomes = {k: p for k, p in outcomes.items() if p > 0}
    grid = math.lcm(*(k.denominator for k in outcomes))
    keys = sorted(outcomes)
    return Payout(bet, grid, tuple(int(k * grid) for k in keys), tuple(float(outcomes[k]) for k in keys))


@lru_cache(maxsize=64)
def baccarat_payouts(ruleset_name: str, ruleset_version: str, decks: int) -> dict[str, Payout]:
    """Every bet of a Tiger Baccarat rule-set version with ``decks`` decks, exactly (cached: ~0.5 s each)."""
    from rulebook.baccarat import vector as V

    rs = ruleset_of(ruleset_name, ruleset_version)
    params = rs.params
    weights = _result_weights(decks, tuple(params.deal_order))
    p_class = [weights.probability(w) for w in weights.by_class]
    effect, num, den = V.payout_table(params)
    main = V._main_table(params)

    def net_of(reason) -> Fraction:
        e = int(effect[reason])
        return Fraction(int(num[reason]), int(den[reason])) if e == 1 else Fraction(-1 if e == -1 else 0)

    out: dict[str, Payout] = {}
    for bet, code in V.BET_CODES.items():
        outcomes: dict[Fraction, Fraction] = {}
        if code in (V.BET_PLAYER_PAIR, V.BET_BANKER_PAIR):
            pw = weights.player_pair if code == V.BET_PLAYER_PAIR else weights.banker_pair
            p = weights.probability(pw)
            win = V.Reason.PLAYER_PAIR_WINS if code == V.BET_PLAYER_PAIR else V.Reason.BANKER_PAIR_WINS
            outcomes = {net_of(win): p, Fraction(-1): 1 - p}
        else:
            for c, p in enumerate(p_class):
                k = net_of(V.Reason(int(main[code, c])))
                outcomes[k] = outcomes.get(k, Fraction(0)) + p
        out[bet] = _payout(bet, outcomes)
    return out


@lru_cache(maxsize=16)
def _result_weights(decks: int, deal_order: tuple[str, ...]):
    """The shoe's exact first-six-card weights: one enumeration (~1 s) per deck count, shared by the rule sets."""
    from rulebook.baccarat.odds import result_weights

    return result_weights(decks, deal_order)


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


@dataclass(frozen=True, slots=True)
class MoneySum:
    """Independent wagers: for each of ``m`` groups, a payout (values x in units, probs) and amounts.

    Arrays: ``x`` (m, k) outcomes per unit (padded with probability-0 rows), ``p`` (m, k), ``a`` (m,)
    the amount, ``c`` (m,) how many wagers of that amount and payout.
    """

    x: np.ndarray
    p: np.ndarray
    a: np.ndarray
    c: np.ndarray

    @property
    def mean(self) -> float:
        return float(np.sum(self.c * self.a * (self.p * self.x).sum(axis=1)))

    @property
    def variance(self) -> float:
        m1 = (self.p * self.x).sum(axis=1)
        m2 = (self.p * self.x * self.x).sum(axis=1)
        return float(np.sum(self.c * self.a ** 2 * (m2 - m1 ** 2)))

    @property
    def third_cumulant(self) -> float:
        m1 = (self.p * self.x).sum(axis=1)
        d = self.x - m1[:, None]
        return float(np.sum(self.c * self.a ** 3 * (self.p * d ** 3).sum(axis=1)))

    def cgf(self, t: float) -> tuple[float, float, float]:
        """K(t), K'(t), K''(t) of the sum (log-sum-exp for stability)."""
        z = t * self.a[:, None] * self.x
        z = np.where(self.p > 0, z, -np.inf)
        zmax = z.max(axis=1, keepdims=True)
        w = self.p * np.exp(z - zmax)
        s0 = w.sum(axis=1)
        ax = self.a[:, None] * self.x
        s1 = (w * ax).sum(axis=1) / s0
        s2 = (w * ax * ax).sum(axis=1) / s0
        k = np.sum(self.c * (np.log(s0) + zmax[:, 0]))
        return float(k), float(np.sum(self.c * s1)), float(np.sum(self.c * (s2 - s1 * s1)))

    def bounds(self) -> tuple[float, float]:
        xs = np.where(self.p > 0, self.x, np.nan)
        return (float(np.sum(self.c * self.a * np.nanmin(xs, axis=1))),
                float(np.sum(self.c * self.a * np.nanmax(xs, axis=1))))


def _norm_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def saddle_tail(ms: MoneySum, s: float, upper: bool = True) -> float:
    """P(sum >= s) (``upper``) or P(sum <= s) by the Lugannani-Rice formula; normal within 0.05 sd of the mean."""
    mean, var = ms.mean, ms.variance
    if var <= 0:
        return 1.0
    sd = math.sqrt(var)
    lo, hi = ms.bounds()
    if (upper and s > hi) or (not upper and s < lo):
        return 0.0
    if (upper and s <= lo) or (not upper and s >= hi):
        return 1.0
    z = (s - mean) / sd
    if abs(z) < 0.05:
        return _norm_sf(z) if upper else _norm_sf(-z)
    # Newton on K'(t) = s, in scaled t (t * sd is of order z), safeguarded by bisection on a bracket
    t = z / sd
    a, b = (0.0, None) if s > mean else (None, 0.0)
    for _ in range(200):
        k, k1, k2 = ms.cgf(t)
        if abs(k1 - s) <= 1e-10 * sd:
            break
        if k1 < s:
            a = t
        else:
            b = t
        step = t - (k1 - s) / max(k2, 1e-300)
        if a is not None and b is not None and not (a < step < b):
            step = 0.5 * (a + b)
        elif a is not None and b is None and step <= a:
            step = a * 2 if a > 0 else a + 1 / sd
        elif b is not None and a is None and step >= b:
            step = b * 2 if b < 0 else b - 1 / sd
        t = step
    k, k1, k2 = ms.cgf(t)
    w2 = 2.0 * (t * s - k)
    if w2 <= 0 or k2 <= 0:
        return _norm_sf(z) if upper else _norm_sf(-z)
    w = math.copysign(math.sqrt(w2), t)
    u = t * math.sqrt(k2)
    phi = math.exp(-0.5 * w * w) / math.sqrt(2 * math.pi)
    correction = phi * (1.0 / u - 1.0 / w)
    tail = _norm_sf(w) + correction if upper else _norm_sf(-w) - correction  # each tail computed directly
    return min(1.0, max(0.0, tail))


def two_sided(ms: MoneySum, s: float) -> float:
    return float(min(1.0, max(P_FLOOR, 2.0 * min(saddle_tail(ms, s, True), saddle_tail(ms, s, False)))))


def cornish_fisher(ms: MoneySum, z: float) -> float:
    """The sum's quantile at standard-normal ``z`` with the skew corrected (Cornish-Fisher, first term)."""
    sd = math.sqrt(max(ms.variance, 0.0))
    if sd == 0:
        return ms.mean
    g = ms.third_cumulant / sd ** 3
    return ms.mean + sd * (z + (z * z - 1) * g / 6.0)


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
        var = (self.p * d * d).sum(axis=1)
        k3 = (self.p * d ** 3).sum(axis=1)
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


def batch_two_sided(ms: MoneySums, s: np.ndarray, saddle_beyond: float = 1.5, iterations: int = 60) -> np.ndarray:
    """Two-sided tail probability of each entity's observed sum ``s``.

    Entities within ``saddle_beyond`` standard deviations of their mean get the normal figure (p >= 0.13:
    never near a flag); the others the Lugannani-Rice saddle point, solved by a safeguarded Newton
    iteration vectorised over the entities.
    """
    mean, var, _ = ms.moments()
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
        newton = t - (k1 - sf) / np.maximum(k2, 1e-300)
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
