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
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

P_FLOOR = 1e-12
SADDLE_BEYOND = 1.5  # standard deviations: nearer the mean the normal tail is used (p >= 0.13)
#: an atom of a draw is a jump (``jump_atoms``) when it is rarer than this per draw and farther from the draw's mean, in
#: money, than ``JUMP_SDS`` standard deviations of its entity's whole sum: the Hold'em Bonus's 1000:1 line
JUMP_PROB = 1e-4
JUMP_SDS = 3.0


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


#: the probability a sum may have outside the span ``sum_distribution`` computes (a Bernstein bound)
SPAN_MASS = 1e-18


def sum_distribution(parts: list[tuple[Payout, int]]) -> tuple[int, np.ndarray]:
    """The distribution of the sum of ``n`` independent wagers of each (payout, n) part, on a common grid.

    Returns ``(offset, pmf)``: ``pmf[j]`` is P(sum = (j + offset) / grid) with grid the LCM of the parts'.
    One FFT of the product of the parts' characteristic polynomials (each raised to its n).

    The sum's support grows with n (a Banker bet spans 39 steps of 1/20 unit per wager) but its mass does not
    leave the mean by much more than a few standard deviations: the FFT is taken over the span around the mean
    outside which Bernstein's inequality leaves less than ``SPAN_MASS`` (a circular convolution folds that
    mass onto the span; below ``P_FLOOR`` by six orders), the whole support when that is shorter. A 30-night
    window's Banker bets need an eighth of the support's FFT.
    """
    parts = [(p, n) for p, n in parts if n > 0]
    if not parts:
        return 0, np.ones(1)
    grid = math.lcm(*(p.grid for p, _ in parts))
    parts = [(_on_grid(p, grid), n) for p, n in parts]
    offset = sum(min(p.values) * n for p, n in parts)
    size = sum((max(p.values) - min(p.values)) * n for p, n in parts) + 1
    start, length = _span(parts, offset, size)
    nfft = _fast_length(length)
    spectrum = np.ones(nfft // 2 + 1, dtype=complex)
    for p, n in parts:
        spectrum *= _part_power(p, nfft, n)
    pmf = np.fft.irfft(spectrum, nfft)
    pmf = np.roll(pmf, -(start % nfft))[:length] if length < size else pmf[:size]
    return offset + start, np.clip(pmf, 0.0, None)


#: the part spectra and their logarithms kept (``_part_spectrum``, ``_part_log_spectrum``), and the bytes they may hold
_SPECTRA: dict[tuple[str, Payout, int], np.ndarray] = {}
SPECTRA_BYTES = 32 << 20
_SPECTRA_HELD = [0]
#: from this power on, a part's spectrum is raised as ``exp(n log z)`` from its kept logarithm; below it, by ``**``
POWER_BY_LOG = 100


def _part_power(p: Payout, nfft: int, n: int) -> np.ndarray:
    """The spectrum of ``n`` wagers of ``p`` on ``nfft`` points: one wager's spectrum to the ``n``-th power.

    numpy raises a complex array to an integer power of 100 or more through the C library's ``cpow``, which is
    ``exp(n * log z)`` with the logarithm taken anew for every entity; from the kept logarithm the same product is
    the same numbers (tested) for a third of the time. The luck tests of a 1,000,000-round night raise 2,887 spectra
    of a part with 100 wagers or more (2.9 of their 3.5 s of convolutions). Below 100, numpy squares repeatedly,
    which is faster than ``exp`` and is kept."""
    if n < POWER_BY_LOG:
        return _part_spectrum(p, nfft) ** n
    with np.errstate(invalid="ignore"):  # a zero's -inf times n has an undefined angle; its exp is 0 all the same
        return np.exp(n * _part_log_spectrum(p, nfft))


def _part_spectrum(p: Payout, nfft: int) -> np.ndarray:
    """The FFT of one wager's distribution on ``nfft`` points: kept (up to ``SPECTRA_BYTES``, then forgotten at once),
    since a night's players share FFT lengths and each entity's sum multiplies the spectra of its parts."""
    return _kept(("spectrum", p, nfft), lambda: _one_wager_spectrum(p, nfft))


def _part_log_spectrum(p: Payout, nfft: int) -> np.ndarray:
    """The logarithm of ``_part_spectrum`` (kept alike); a zero of the spectrum is ``-inf``, whose power is 0."""
    def make() -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(_part_spectrum(p, nfft))

    return _kept(("log", p, nfft), make)


def _one_wager_spectrum(p: Payout, nfft: int) -> np.ndarray:
    lo = min(p.values)
    base = np.zeros(nfft)
    for v, q in zip(p.values, p.probs):
        base[(v - lo) % nfft] += q
    return np.fft.rfft(base)


def _kept(key: tuple, make: Callable[[], np.ndarray]) -> np.ndarray:
    """``_SPECTRA[key]``, made by ``make`` when missing; read-only, within ``SPECTRA_BYTES`` (past it, all forgotten)."""
    array = _SPECTRA.get(key)
    if array is None:
        array = make()
        array.flags.writeable = False
        if _SPECTRA_HELD[0] + array.nbytes > SPECTRA_BYTES:
            _SPECTRA.clear()
            _SPECTRA_HELD[0] = 0
        _SPECTRA[key] = array
        _SPECTRA_HELD[0] += array.nbytes
    return array


def _span(parts: list[tuple[Payout, int]], offset: int, size: int) -> tuple[int, int]:
    """(first index, length) of the part of the support ``0..size-1`` holding all but ``SPAN_MASS`` of the sum.

    Bernstein: P(|S - E S| >= u) <= 2 exp(-u^2 / (2 (var + b u / 3))) with ``b`` the largest distance of one
    wager's value from its mean; ``u`` solves the bound = ``SPAN_MASS``."""
    mean = var = 0.0
    b = 0.0
    for p, n in parts:
        m, v, far = _wager_moments(p)
        mean += n * m
        var += n * v
        b = max(b, far)
    log_term = math.log(2.0 / SPAN_MASS)
    u = (2 * log_term * b / 3 + math.sqrt((2 * log_term * b / 3) ** 2 + 8 * log_term * var)) / 2
    first = max(0, math.floor(mean - offset - u) - 1)
    last = min(size - 1, math.ceil(mean - offset + u) + 1)
    return first, last - first + 1


@lru_cache(maxsize=256)
def _on_grid(p: Payout, grid: int) -> Payout:
    return p.on_grid(grid)


@lru_cache(maxsize=256)
def _wager_moments(p: Payout) -> tuple[float, float, float]:
    """(mean, variance, largest distance from the mean) of one wager on its grid (``_span``; kept per payout)."""
    v = np.asarray(p.values, dtype=float)
    q = np.asarray(p.probs, dtype=float)
    m = float(v @ q)
    return m, float(((v - m) ** 2) @ q), float(np.abs(v - m).max())


@lru_cache(maxsize=4096)
def _fast_length(n: int) -> int:
    """The smallest length >= n (and >= 2) whose prime factors are 2, 3 and 5: FFTs of it are fast."""
    n = max(2, n)
    best = 1 << (n - 1).bit_length()
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            m = p35
            while m < n:
                m *= 2
            best = min(best, m)
            p35 *= 3
        p5 *= 5
    return best


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

    def edge_tails(self, up: np.ndarray) -> np.ndarray:
        """P(S = its largest value) where ``up`` (every draw at its largest value), else P(S = its smallest): the
        exact tail of a sum at the edge of its support, the product of each draw's chance of its extreme value."""
        up_row = up[self.ent]
        ext = np.where(self.p > 0, np.where(up_row[:, None], self.x, -self.x), -np.inf)
        # the tolerance's scale from the atoms a draw can take: a padded atom (probability 0) is -inf, which would make
        # the tolerance infinite and every atom extreme (a tail of 1 for an entity whose every draw is at its edge)
        scale = np.abs(np.where(np.isfinite(ext), ext, 0.0)).max(axis=1, keepdims=True)
        at = ext >= ext.max(axis=1, keepdims=True) - 1e-12 * np.maximum(scale, 1.0)
        with np.errstate(divide="ignore"):
            log_p = np.log(np.where(at, self.p, 0.0).sum(axis=1))
        return np.exp(self._sum(self.c * log_p))

    def subset(self, keep: np.ndarray) -> "MoneySums":
        """Only the entities in boolean ``keep`` (renumbered in order). The rows are not copied when every one is kept
        (a window reads the rows of the kept entities only: a 30-day window's are hundreds of MB)."""
        new = np.cumsum(keep) - 1
        rows = keep[self.ent]
        if rows.all():
            return MoneySums(new[self.ent], self.x, self.p, self.a, self.c, int(keep.sum()))
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


#: the denominators a draw's net per unit may have (19/20 a commission Banker, 1/2 a no-commission Banker on 6)
LATTICE_GRIDS = (1, 2, 4, 5, 8, 10, 20, 40, 100, 200, 1000)


def lattice_spans(ms: MoneySums) -> np.ndarray:
    """Per entity the span ``d`` of the lattice its sum lives on (S is its smallest value plus a multiple of ``d``),
    0 where there is none to speak of (a draw's values not all multiples of ``1/G`` of money for a ``G`` of
    ``LATTICE_GRIDS``: the games' correlated seats).

    Each draw's values less its smallest are taken in the entity's own scale (the power of ten of its smallest step,
    so stakes of 10^15 units find the lattice they have at 10^3); times ``G`` they are integers, and their greatest
    common divisor over the entity's draws, divided by ``G`` and put back in scale, is the span (equal stakes of 100
    on a Tie: 900; a Banker bet of 100 beside them: 5).

    One draw that fits no grid leaves its entity without a lattice, whatever its other draws: every
    ``LATTICE_PROBE``-th row is tried first, and the other rows of an entity found so are not tried (a 30-day window's
    Hold'em and blackjack tables and dealers, whose round of several seats fits none, were two-fifths of the rows and,
    tried at every grid, most of the time). Each other row is tried as before, so every span is the same."""
    out = np.zeros(ms.n)
    if ms.n == 0 or len(ms.ent) == 0:
        return out
    dead = ~(ms.p > 0)
    # each row's values less its smallest live one, 0 at its dead atoms (in one matrix, worked in place)
    diff = ms.a[:, None] * ms.x
    np.copyto(diff, np.inf, where=dead)
    diff -= diff.min(axis=1, keepdims=True)
    np.copyto(diff, 0.0, where=dead)
    smallest = np.full(ms.n, np.inf)
    np.minimum.at(smallest, ms.ent, np.where(diff > 0, diff, np.inf).min(axis=1))
    scale = np.where(np.isfinite(smallest) & (smallest > 0), 10.0 ** np.floor(np.log10(np.where(smallest > 0, smallest, 1.0))), 1.0)
    bad = np.zeros(ms.n, dtype=bool)
    probe = np.arange(0, len(ms.ent), LATTICE_PROBE)
    bad[ms.ent[probe[_row_grids(diff[probe] / scale[ms.ent[probe]][:, None]) == 0]]] = True
    if bad[ms.ent].any():
        rows = np.flatnonzero(~bad[ms.ent])
        ent, diff = ms.ent[rows], diff[rows]
    else:
        ent = ms.ent
    diff /= scale[ent][:, None]
    grid = _row_grids(diff)
    ent_grid = np.ones(ms.n, dtype=np.int64)
    np.lcm.at(ent_grid, ent, np.maximum(grid, 1))
    bad[ent[grid == 0]] = True
    ints = np.round(diff * ent_grid[ent][:, None])
    ok = np.all(ints < 2.0 ** 62, axis=1)
    bad[ent[~ok]] = True
    row_gcd = np.gcd.reduce(np.where(ok[:, None], ints, 0).astype(np.int64), axis=1)
    span = np.zeros(ms.n, dtype=np.int64)
    np.gcd.at(span, ent, row_gcd)
    return np.where(bad | (span == 0), 0.0, span / ent_grid * scale)


#: ``lattice_spans`` tries every this many-th row first (an entity with a row off every grid has no lattice)
LATTICE_PROBE = 16


def _row_grids(diff: np.ndarray) -> np.ndarray:
    """Each row's first grid of ``LATTICE_GRIDS`` its values (in the entity's scale) are whole multiples of, 0 for none."""
    grid = np.zeros(len(diff), dtype=np.int64)
    todo, rest = np.arange(len(diff)), diff  # a row takes the first grid it fits: the next grids try the others only
    for g in LATTICE_GRIDS:
        scaled = rest * g
        fits = np.all((np.abs(scaled - np.round(scaled)) <= 1e-6) & (scaled < 2.0 ** 52), axis=1)
        grid[todo[fits]] = g
        todo, rest = todo[~fits], rest[~fits]
        if not len(todo):
            break
    return grid


def batch_two_sided(ms: MoneySums, s: np.ndarray, saddle_beyond: float = SADDLE_BEYOND, iterations: int = 60,
                    moments: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Two-sided tail probability of each entity's observed sum ``s``.

    Entities within ``saddle_beyond`` standard deviations of their mean get the normal figure (p >= 0.13:
    never near a flag); the others the Lugannani-Rice saddle point, solved by a safeguarded Newton
    iteration vectorised over the entities. An entity leaves the iteration once its saddle point is found
    (``K'(t)`` within 1e-9 standard deviations of ``s``), and one whose ``s`` lies beyond the support never
    enters it (its tail is 0), so the rows of the sums are visited only for the entities still moving.

    A sum that lives on a lattice (``lattice_spans``: equal stakes on a Tie, a Big Tiger) gets the lattice form of
    the formula (Daniels 1987, the second continuity correction: the saddle point at half a step inside the observed
    value, ``u = 2 sinh(t d / 2) sqrt(K'') / d``); the continuous form is off by a factor of 2-3 there, too small a
    p-value. A sum at the edge of its support (every wager won, or every wager lost) has its exact tail, the product
    of each draw's chance of its extreme value: the formula breaks down there (it gave p = 1 to 30 Big Tiger bets
    all won).

    A sum with jumps (``jump_atoms``: rare atoms far larger than the sum's spread, the Bonus's 1000:1 line at a large
    stake) is a mixture the saddle point cannot follow: tilted towards the observed sum, the rare atom takes over, and
    the formula gave a negative tail (p < 1e-12 where the chance is 0.12) or one up to sixty times too large. Such an
    entity's tail is bounded through its body, the draws without their jumps: with ``P0`` the chance that no draw
    jumps, ``P(S >= s) = P0 P(body >= s) + (1 - P0) P(S >= s | a jump) <= P0 P(body >= s) + 1 - P0`` (and the same
    below), the body's tail by the saddle point, which follows it. The bound is never below the chance it stands for;
    it is above it by at most ``1 - P0``, the chance of any jump (0.13 % for 345 Bonus wagers at 5 to 1,000 USD).
    A tail the formula still gives outside [0, 1] is replaced by the saddle point's Chernoff bound ``exp(-w^2/2)``,
    which holds for any law: never a small p-value from a formula that has broken down.
    """
    mean, var, _ = moments if moments is not None else ms.moments()
    sd = np.sqrt(np.maximum(var, 1e-300))
    z = (s - mean) / sd
    p = np.minimum(1.0, 2.0 * _norm_sf_v(np.abs(z)))
    far = np.abs(z) > saddle_beyond
    if not far.any():
        return np.maximum(p, P_FLOOR)
    sub = ms.subset(far)
    sf, sd_f, mean_f, z_f = s[far], sd[far], mean[far], z[far]
    jumps = jump_atoms(sub, sd_f)
    no_jump = np.ones(len(sf))  # P0, the chance that no draw of the entity jumps
    if jumps.any():
        sub, log_p0 = without_jumps(sub, jumps)
        no_jump = np.exp(log_p0)
        body_mean, body_var, _ = sub.moments()
        has = log_p0 < 0
        mean_f = np.where(has, body_mean, mean_f)
        sd_f = np.where(has, np.sqrt(np.maximum(body_var, 1e-300)), sd_f)
        z_f = (sf - mean_f) / sd_f
    lo, hi = sub.bounds()
    up = sf > mean_f
    # on a lattice of span d the tail P(S >= s) is P(S >= the first lattice point at or above s): the saddle point is
    # taken half a step below it (above it for the lower tail); off a lattice (d = 0) at s itself
    d = lattice_spans(sub)
    on = d > 0
    dd = np.where(on, d, 1.0)
    steps = (sf - lo) / dd
    s_lat = np.where(on, lo + np.where(up, np.ceil(steps - 1e-9), np.floor(steps + 1e-9)) * dd, sf)
    target = np.where(on, s_lat - np.where(up, 0.5, -0.5) * d, sf)
    tol = np.where(on, 0.25 * dd, 1e-9 * sd_f)
    edge = np.where(up, np.abs(s_lat - hi) <= tol, np.abs(s_lat - lo) <= tol)
    beyond = ~edge & np.where(up, s_lat > hi, s_lat < lo)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # a jumps-only sum's body can have no spread
        t = (target - mean_f) / sd_f ** 2
    rising = target > mean_f  # the saddle point's side of 0 (the lattice step can move a small sum across its mean)
    a = np.where(rising, 0.0, -np.inf)
    b = np.where(rising, np.inf, 0.0)
    # a body near its own mean (an entity far from its whole mean only through its jumps' share of it): the normal tail
    near = (np.abs(z_f) <= saddle_beyond) & ~beyond & ~edge
    moving = ~beyond & ~edge & ~near
    t = np.where(moving, t, 0.0)  # no saddle point is solved for the others (their tails are set below)
    rows = _TiltRows(sub)
    for _ in range(iterations):
        idx = np.flatnonzero(moving)
        if not len(idx):
            break
        k, k1, k2 = rows.cgf(t, moving)
        k1, k2 = k1[idx], k2[idx]
        found = np.abs(k1 - target[idx]) <= 1e-9 * sd_f[idx]
        below = k1 < target[idx]
        ai, bi, ti = a[idx], b[idx], t[idx]
        ai = np.where(below, np.maximum(ai, ti), ai)
        bi = np.where(below, bi, np.minimum(bi, ti))
        # where the tilted variance is too small for a finite Newton step (t far out, the tilted law on one atom),
        # no step: the bisection fallback below moves t (dividing by a floor of 1e-300 overflowed to inf)
        finite = np.abs(k1 - target[idx]) * 1e-300 < k2
        newton = ti - np.divide(k1 - target[idx], k2, out=np.full_like(ti, np.nan), where=finite)
        inside = (newton > ai) & (newton < bi)
        fallback = np.where(np.isfinite(ai) & np.isfinite(bi), 0.5 * (ai + bi),
                            np.where(np.isfinite(ai), np.abs(ai) * 2 + 1 / sd_f[idx], -np.abs(bi) * 2 - 1 / sd_f[idx]))
        a[idx], b[idx] = ai, bi
        t[idx] = np.where(found, ti, np.where(inside, newton, fallback))  # a found saddle point stays where it is
        moving[idx[found]] = False
    k, k1, k2 = rows.cgf(t, ~beyond & ~edge & ~near)
    w2 = np.maximum(2.0 * (t * target - k), 0.0)
    w = np.copysign(np.sqrt(w2), t)
    with np.errstate(over="ignore", invalid="ignore"):
        u = np.where(on, 2.0 * np.sinh(0.5 * t * dd) / dd, t) * np.sqrt(np.maximum(k2, 1e-300))
    phi = np.exp(-0.5 * w2) / math.sqrt(2 * math.pi)
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = phi * (1.0 / u - 1.0 / w)
        tail = np.where(up, _norm_sf_v(w) + corr, _norm_sf_v(-w) - corr)
    tail = np.where(np.isfinite(tail), tail, _norm_sf_v(np.abs(z_f)))
    # broken down (outside [0, 1]): the Chernoff bound at the saddle point, P(S >= s) <= exp(K(t) - t s) = exp(-w^2/2)
    tail = np.where((tail < 0.0) | (tail > 1.0), np.exp(-0.5 * w2), tail)
    tail = np.where(near, _norm_sf_v(np.abs(z_f)), tail)
    at_edge = np.zeros(len(tail))
    if edge.any():  # the edge's exact tails of those entities' rows alone (each entity's product is of its own rows)
        at_edge[edge] = sub.subset(edge).edge_tails(up[edge])
    tail = np.where(edge, at_edge, np.where(beyond, 0.0, np.clip(tail, 0.0, 1.0)))
    tail = no_jump * tail + (1.0 - no_jump)  # the jumps' mixture bound (the docstring); 1 - P0 is 0 without jumps
    p[far] = np.minimum(1.0, 2.0 * tail)
    return np.maximum(p, P_FLOOR)


def jump_atoms(ms: MoneySums, sd: np.ndarray) -> np.ndarray:
    """Which atoms of each row are jumps (``batch_two_sided``): rarer than ``JUMP_PROB`` a draw, and farther from the
    draw's mean, in money, than ``JUMP_SDS`` times ``sd``, the standard deviation of the row's entity's whole sum."""
    rare = (ms.p > 0) & (ms.p < JUMP_PROB)
    if not rare.any():
        return rare
    m1 = (ms.p * ms.x).sum(axis=1)
    far = np.abs(ms.a[:, None] * (ms.x - m1[:, None])) > JUMP_SDS * sd[ms.ent][:, None]
    return rare & far


def body_moments(ms: MoneySums, moments: tuple[np.ndarray, np.ndarray, np.ndarray]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each entity's mean, variance and third cumulant of its body (``without_jumps``) where its sum has jumps, else
    ``moments`` (its whole sum's): what its quantiles are taken from. A jump's chance (the Bonus's 1000:1 line: 3.7 in
    a million a wager) is far below a band's 2.5 %, while its size is most of the whole sum's skew: quantiles from the
    whole moments put a 95 % band of hold at -227 % to -87 % where the sum's own quantiles give -68 % to +58 %."""
    mean, var, k3 = moments
    jumps = jump_atoms(ms, np.sqrt(np.maximum(var, 0.0)))
    if not jumps.any():
        return moments
    body, log_p0 = without_jumps(ms, jumps)
    has = log_p0 < 0
    return tuple(np.where(has, b, w) for b, w in zip(body.moments(), moments))


def without_jumps(ms: MoneySums, jumps: np.ndarray) -> tuple[MoneySums, np.ndarray]:
    """The body of each draw, its law given that it does not jump (its jumps' atoms at probability 0, the others
    scaled up), and per entity the log of the chance ``P0`` that none of its draws jumps."""
    q = np.where(jumps, ms.p, 0.0).sum(axis=1)
    body = np.where(jumps, 0.0, ms.p) / (1.0 - q)[:, None]
    log_p0 = np.bincount(ms.ent, weights=ms.c * np.log1p(-q), minlength=ms.n)
    return MoneySums(ms.ent, ms.x, body, ms.a, ms.c, ms.n), log_p0


class _TiltRows:
    """The rows of a ``MoneySums`` prepared for repeated cumulant evaluations at tilts ``t``: each row's outcome
    values in money (``a x``) and log-probabilities are computed once, and the rows of entities no longer wanted
    are dropped as their number falls (a third fewer at a time), so late iterations touch few rows."""

    def __init__(self, ms: MoneySums):
        self.n = ms.n
        with np.errstate(divide="ignore"):  # log 0 = -inf: an atom of probability 0 weighs nothing
            logp = np.log(ms.p)
        self._all = (ms.ent, ms.a[:, None] * ms.x, logp, ms.c)
        self._rows, self._kept = self._all, np.ones(ms.n, dtype=bool)
        self._scratch: np.ndarray | None = None

    def cgf(self, t: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """K, K', K'' of every entity at ``t`` (exact for the ``wanted`` ones; the others' figures are not used)."""
        ent, ax, logp, c = self._rows
        if (~wanted & self._kept).sum() * 3 > self._kept.sum():  # drop the rows of a third or more of the entities
            ent0, ax0, logp0, c0 = self._all
            keep = wanted[ent0]
            self._rows = ent, ax, logp, c = ent0[keep], ax0[keep], logp0[keep], c0[keep]
            self._kept = wanted.copy()
        elif (wanted & ~self._kept).any():  # an entity dropped earlier is wanted again: all rows
            self._rows = ent, ax, logp, c = self._all
            self._kept = np.ones(self.n, dtype=bool)
        # the same products and sums as ``t a x + log p``, ``w = exp(. - max)``, ``w a x``, ``w (a x)^2``, in one scratch
        # matrix (a 30-night window's far rows are hundreds of MB of temporaries otherwise, each one new memory)
        if self._scratch is None or self._scratch.shape[0] < len(ent):
            self._scratch = np.empty(ax.shape)
        zt = self._scratch[:len(ent)]
        np.multiply(t[ent][:, None], ax, out=zt)
        zt += logp
        zmax = zt.max(axis=1, keepdims=True)
        zt -= zmax
        w = np.exp(zt, out=zt)
        s0 = w.sum(axis=1)
        wax = np.multiply(w, ax, out=zt)
        s1 = wax.sum(axis=1) / s0
        s2 = np.multiply(wax, ax, out=zt).sum(axis=1) / s0

        def total(v: np.ndarray) -> np.ndarray:
            return np.bincount(ent, weights=v, minlength=self.n)

        return total(c * (np.log(s0) + zmax[:, 0])), total(c * s1), total(c * (s2 - s1 * s1))


# ---- binomial tails (dealer error rates, collusion) ---------------------------------------------------


TINY = float(np.finfo(float).tiny)  # the smallest normal float: a tail too small for a float is said as this


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

        def lg(v: np.ndarray) -> np.ndarray:  # math.lgamma of each (np.vectorize cost more than the sum)
            return np.fromiter(map(lgamma, v.tolist()), dtype=float, count=len(v))

        return lgamma(n + 1.0) - lg(j + 1.0) - lg(n - j + 1.0) + j * lp + (n - j) * lq

    if k > mode:
        j = np.arange(k, n + 1, dtype=float)
        # beyond a float's range (a dealer with 200 errors in 300 rounds against 5 per 1,000) the sum underflows to 0: a
        # possible count has a positive chance, so the smallest normal float is said, never "p = 0"
        return float(min(1.0, max(np.exp(logpmf(j)).sum(), TINY)))
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
    """The frozen record when there is one (``enumerations_frozen``: the same floats, 0.45 CPU s less per deck count
    in every audit), else the enumeration."""
    from pipelines.stats.enumerations_frozen import JOINT

    frozen = JOINT.get((decks, deal_order))
    return np.array(frozen, dtype=np.float64) if frozen is not None else joint_enumerated(decks, deal_order)


def joint_enumerated(decks: int, deal_order: tuple[str, ...]) -> np.ndarray:
    """``joint_outcome_probabilities`` by the enumeration (``_joint`` takes the frozen record of it when it has one)."""
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


def tail_at(sf: np.ndarray, j: int) -> float:
    """P(S >= offset + j) from a survival array ``sf`` over S - offset: 1 at or below the support, the floor
    beyond it, and never below ``P_FLOOR`` (a float's tail is no finer than that)."""
    if j <= 0:
        return 1.0
    if j >= len(sf):
        return P_FLOOR
    return float(min(1.0, max(P_FLOOR, sf[j])))
