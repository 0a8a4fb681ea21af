"""Sums with jumps: Hold'em Bonus wagers, whose 1000:1 line (HTB-6.1.2, A-A against the dealer's A-A: 3.7 in a
million) is worth a hundred times a large stake. The saddle point could not follow such a sum (a dealer's 345 Bonus
wagers of 5 to 1,000 USD, the players 1.5 standard deviations ahead: p < 1e-12 where the chance is 0.12, and a 95 %
band of hold from -227 % to -87 % around a theory of +8.5 %). The reference here is exact: the sum's law on its
lattice by convolution, truncated where no later draw can bring it back (``_exact_upper_tail``)."""

import numpy as np
import pytest

from pipelines.stats.distributions import (
    MoneySums, P_FLOOR, batch_two_sided, body_moments, jump_atoms, without_jumps,
)
from pipelines.stats.games import distribution_of
from pipelines.stats.hold import Z95, Z997, sum_quantile

BONUS = distribution_of("hoiana-holdem-bonus", "01/01.05.2025", 1, "bonus")
VALUES = np.array([float(v) for v in BONUS.values])
PROBS = np.array([float(p) for p in BONUS.probs])
STEP = 500  # every stake below is a multiple of 5.00: the sum lives on a lattice of 500 minor units


def _stakes() -> np.ndarray:
    """60 Bonus wagers: 40 of 5.00, 12 of 50.00 and 8 of 500.00 (in minor units)."""
    return np.array([500] * 40 + [5_000] * 12 + [50_000] * 8, dtype=float)


def _table_stakes() -> np.ndarray:
    """150 Bonus wagers of 5.00 to 500.00 in steps of 5.00, as a table's players stake them (no stake is most of it)."""
    return np.array([STEP * (1 + (7 * i) % 100) for i in range(150)], dtype=float)


def _sums(stakes: np.ndarray) -> MoneySums:
    n = len(stakes)
    return MoneySums(np.zeros(n, dtype=np.int64), np.tile(VALUES, (n, 1)), np.tile(PROBS, (n, 1)), stakes,
                     np.ones(n), 1)


def _exact_law(stakes: np.ndarray, bins: int) -> np.ndarray:
    """P(S' = k) for k < ``bins`` and, last, P(S' >= bins), of S' = (S + sum of stakes) / STEP >= 0: each wager's net
    shifted by its stake is never negative, so mass at or beyond ``bins`` never comes back and is kept as one figure."""
    law = np.zeros(bins + 1)
    law[0] = 1.0
    for a in stakes:
        steps = np.round(a * (VALUES + 1) / STEP).astype(np.int64)
        nxt = np.zeros(bins + 1)
        nxt[bins] = law[bins]
        for k, p in zip(steps, PROBS):
            if k >= bins:
                nxt[bins] += p * law[:bins].sum()
            else:
                nxt[k:bins] += p * law[:bins - k]
                nxt[bins] += p * law[bins - k:bins].sum()
        law = nxt
    return law


def _exact_upper_tail(stakes: np.ndarray, s: float) -> float:
    k = int(np.ceil((s + stakes.sum()) / STEP - 1e-9))
    return float(_exact_law(stakes, k)[k])


def test_the_bonus_1000_line_is_a_jump_only_where_it_dwarfs_the_sum():
    ms = _sums(_stakes())
    sd = np.sqrt(ms.moments()[1])
    jumps = jump_atoms(ms, sd)
    top = VALUES.argmax()
    assert VALUES[top] == 1000 and PROBS[top] < 1e-5
    # the sum's standard deviation is about 5,850.00: 1000 x 500.00 is 85 of them and 1000 x 50.00 eight and a half,
    # 1000 x 5.00 under one: a jump at the two larger stakes only
    assert 5_500_00 < sd[0] < 6_200_00
    assert jumps[:, top].tolist() == [False] * 40 + [True] * 20
    assert jumps.sum() == 20  # no other line is rare enough
    body, log_p0 = without_jumps(ms, jumps)
    assert np.allclose(body.p.sum(axis=1), 1.0)
    assert np.isclose(np.exp(log_p0[0]), (1 - PROBS[top]) ** 20, rtol=1e-12)


@pytest.mark.parametrize("z", [1.6, 2.0, 3.0, 4.0, 6.0, 10.0])
def test_p_value_of_a_sum_with_jumps_is_never_below_the_exact_one_nor_far_above_it(z):
    stakes = _stakes()
    ms = _sums(stakes)
    mean, var, _ = ms.moments()
    s = np.round((mean + z * np.sqrt(var)) / STEP) * STEP  # players ahead by z standard deviations, on the lattice
    exact = 2 * _exact_upper_tail(stakes, s[0])
    got = batch_two_sided(ms, s)[0]
    jump_chance = 1 - (1 - PROBS.min()) ** 20
    # the body's tail is the saddle point's, an approximation (within 7 % of the exact figure on this lumpy sum of
    # three stakes); the jumps add at most their chance
    assert got >= exact / 1.15, (z, got, exact)
    assert got <= max(1.5 * exact, exact + 2 * jump_chance + 1e-4), (z, got, exact)
    assert got > P_FLOOR


def test_the_saddle_point_alone_broke_down_on_this_sum():
    """What the bound is for: the same sum through the saddle point with no jump taken out (the old code's path)."""
    import pipelines.stats.distributions as d

    stakes = _stakes()
    ms = _sums(stakes)
    mean, var, _ = ms.moments()
    s = np.round((mean + 2.0 * np.sqrt(var)) / STEP) * STEP
    exact = 2 * _exact_upper_tail(stakes, s[0])
    saved = d.JUMP_PROB
    try:
        d.JUMP_PROB = 0.0  # no atom is a jump
        plain = batch_two_sided(ms, s)[0]
    finally:
        d.JUMP_PROB = saved
    assert exact > 0.01
    assert not (exact / 3 <= plain <= exact * 3), (plain, exact)  # far off either way


def test_the_band_of_a_sum_with_jumps_holds_its_exact_quantiles():
    stakes = _table_stakes()
    ms = _sums(stakes)
    moments = ms.moments()
    bm = body_moments(ms, moments)
    assert not np.allclose(bm[1], moments[1])  # the body is not the whole sum
    law = _exact_law(stakes, int(10 * stakes.sum() / STEP))
    assert law[-1] < 0.01  # the truncated mass: beyond the quantiles asked for
    cdf = np.cumsum(law[:-1])
    sums = np.arange(len(cdf)) * STEP - stakes.sum()
    handle = stakes.sum()
    off_whole = []
    for z in (Z95, -Z95):
        want = sums[np.searchsorted(cdf, 0.5 + 0.5 * np.sign(z) * 0.95)]  # the 97.5 % (z > 0) or 2.5 % quantile of S
        sd = np.sqrt(bm[1])
        got = sum_quantile(bm[0], sd, bm[2] / sd ** 3, z)[0]
        assert abs(got - want) / handle < 0.05, (z, got, want)  # within 5 % of the handle, in hold
        whole_sd = np.sqrt(moments[1])
        whole = sum_quantile(moments[0], whole_sd, moments[2] / whole_sd ** 3, z)[0]
        off_whole.append(abs(whole - want) / handle)
    assert max(off_whole) > 0.08, off_whole  # the whole sum's moments put a side of the band far off


def test_quantiles_rise_with_z_at_any_skew_and_are_cornish_fisher_at_a_small_one():
    zs = np.array([-Z997, -Z95, 0.0, Z95, Z997])
    for g in (-12.0, -3.0, -1.2, 0.0, 0.3, 1.2, 3.0, 12.0):
        q = np.array([sum_quantile(np.array([0.0]), np.array([1.0]), np.array([g]), z)[0] for z in zs])
        assert np.all(np.diff(q) >= 0), (g, q)
    for g in (-0.05, 0.02, 0.05):
        for z in zs:
            cf = z + (z * z - 1) * g / 6
            assert abs(sum_quantile(np.array([0.0]), np.array([1.0]), np.array([g]), z)[0] - cf) < 2e-3


def test_no_quantile_passes_the_least_value_the_sum_can_take():
    # five Big Tiger wagers of 1 unit (50:1, else -1): a skewed sum whose shifted gamma reaches below -5
    least = np.array([-5.0])
    mean, sd, g = np.array([-0.3]), np.array([np.sqrt(5 * 2500 * 0.0166)]), np.array([3.0])
    # the sum's low quantile (players' net; the hold's high band) is at -z
    assert sum_quantile(mean, sd, g, -Z997)[0] < -5  # the gamma's support is not the sum's
    assert sum_quantile(mean, sd, g, -Z997, least)[0] == -5
    assert sum_quantile(mean, sd, g, Z997, least)[0] == sum_quantile(mean, sd, g, Z997)[0]


def test_a_fair_floors_bands_hold_no_more_than_every_stake_and_rise_from_95_to_997():
    """Every bet of these floors loses at most its stake but the main games (a double, a split, Hold'em's Flop, Turn
    and River bets beside the Ante): no band of hold passes 100 % for them, and each 99.7 % band holds its 95 %."""
    import datetime as dt

    from pipelines.stats.config import StatsParams
    from pipelines.stats.load import StatsInputs
    from pipelines.stats.run import detect_all
    from pipelines.stats.synthetic import Floor, night

    day = dt.date(2026, 11, 24)
    floor = Floor(baccarat_tables=3, baccarat_rounds=150, blackjack_tables=1, blackjack_rounds=150, players=30,
                  holdem_tables=2, holdem_rounds=200, blackjack_side=True, side_share=0.6)
    w, c, e = night(floor, day, 5)
    funnel = detect_all(StatsInputs(w, e, c, day, day), StatsParams(hold_min_wagers=5), 1)[1]
    assert funnel.height > 50 and funnel.filter(funnel["bet"] == "big_tiger").height > 0
    stake_bound = funnel.filter(funnel["bet"] != "main")
    assert (stake_bound["hold_high_997"] <= 1 + 1e-12).all()
    assert (funnel["hold_low_997"] <= funnel["hold_low_95"] + 1e-12).all()
    assert (funnel["hold_high_997"] >= funnel["hold_high_95"] - 1e-12).all()


def test_a_sum_whose_body_has_no_spread_gets_the_chance_of_a_jump():
    """A lottery line (+5,000 with 5 in 100,000, else -1) on 20 wagers of 100: every atom but the loss is a jump, so the
    body is the sure loss of 2,000. One win is beyond the body: its two-sided p is twice the chance of any win, exact;
    a single Bonus wager of 1,000.00 that hits the 1000:1 line: twice that line's chance. No overflow on the way."""
    import warnings

    lottery = MoneySums(np.zeros(1, dtype=np.int64), np.array([[-1.0, 5000.0]]), np.array([[0.99995, 0.00005]]),
                        np.array([100.0]), np.array([20.0]), 1)
    one_bonus = MoneySums(np.zeros(1, dtype=np.int64), VALUES[None, :], PROBS[None, :], np.array([100_000.0]),
                          np.array([1.0]), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        win = batch_two_sided(lottery, np.array([498_000.0]))[0]
        jackpot = batch_two_sided(one_bonus, np.array([1000 * 100_000.0]))[0]
    assert win == pytest.approx(2 * (1 - 0.99995 ** 20), rel=1e-9)
    assert jackpot == pytest.approx(2 * PROBS[VALUES.argmax()], rel=1e-9)
