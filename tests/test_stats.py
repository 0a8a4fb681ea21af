"""The statistical detectors (pipelines.stats): each statistic against a hand calculation or a known
distribution, and the detectors on simulated floors: uniform p-values and few flags when fair, the
planted behaviours found when not."""

from __future__ import annotations

import datetime as dt
import itertools
import math

import numpy as np
import polars as pl
import pytest

from pipelines.stats.advantage import stratified_rank_z
from pipelines.stats.config import StatsParams
from pipelines.stats.counts import counts_before_rounds, pair_probability_before_rounds
from pipelines.stats.distributions import (
    MoneySums, Payout, baccarat_payouts, batch_two_sided, binom_sf, lattice_spans, sum_distribution, upper_tail,
)
from pipelines.stats.fdr import bh_adjust, bh_reject
from pipelines.stats.load import StatsInputs
from pipelines.stats.run import detect_all, findings_of, with_fdr
from pipelines.stats.synthetic import Floor, night, nights
from rulebook.cards import parse_card

DAY = dt.date(2026, 11, 24)
COMMISSION = "hoiana-tiger-baccarat/commission"


def test_binomial_tail_against_a_hand_calculation():
    # P(X >= 3), X ~ Bin(10, 0.1) = 1 - (0.9^10 + 10 * 0.1 * 0.9^9 + 45 * 0.01 * 0.9^8)
    by_hand = 1 - (0.9 ** 10 + 10 * 0.1 * 0.9 ** 9 + 45 * 0.01 * 0.9 ** 8)
    assert binom_sf(3, 10, 0.1) == pytest.approx(by_hand, rel=1e-12)
    # far in the tail (summed upward, no cancellation): P(X >= 9), X ~ Bin(10, 0.1) = 10 * 0.1^9 * 0.9 + 0.1^10
    assert binom_sf(9, 10, 0.1) == pytest.approx(10 * 0.1 ** 9 * 0.9 + 0.1 ** 10, rel=1e-9)
    assert binom_sf(0, 10, 0.1) == 1.0 and binom_sf(11, 10, 0.1) == 0.0


def test_a_binomial_tail_beyond_a_floats_range_is_never_zero():
    """200 or 300 errors in 300 rounds against 5 per 1,000: P = 1e-440 and less, below what a float holds. It summed to
    p = 0.0 (a finding and the report said "p 0", as if the count were impossible); it is the smallest normal float."""
    assert binom_sf(300, 300, 0.005) == binom_sf(200, 300, 0.005) == np.finfo(float).tiny
    assert binom_sf(120, 300, 0.005) == pytest.approx(7.0025e-191, rel=1e-4)  # within range: as before
    assert binom_sf(301, 300, 0.005) == 0.0  # more errors than rounds: impossible


def test_exact_convolution_of_a_two_line_pay_table_against_enumeration():
    """A Tiger-like bet: loses 1, pays 12 or 20. Two wagers by hand, three by enumerating every outcome."""
    tiger = Payout("tiger", 1, (-1, 12, 20), (0.9, 0.07, 0.03))
    offset, pmf = sum_distribution([(tiger, 2)])
    got = {offset + j: q for j, q in enumerate(pmf) if q > 1e-15}
    by_hand = {-2: 0.81, 11: 2 * 0.9 * 0.07, 19: 2 * 0.9 * 0.03, 24: 0.07 ** 2, 32: 2 * 0.07 * 0.03, 40: 0.03 ** 2}
    assert got.keys() == by_hand.keys()
    for k, q in by_hand.items():
        assert got[k] == pytest.approx(q, abs=1e-14)
    enumerated: dict[int, float] = {}
    for outcome in itertools.product(range(3), repeat=3):
        s = sum(tiger.values[i] for i in outcome)
        enumerated[s] = enumerated.get(s, 0.0) + math.prod(tiger.probs[i] for i in outcome)
    for s in sorted(enumerated):
        tail = sum(q for k, q in enumerated.items() if k >= s)
        assert upper_tail([(tiger, 3)], s, 1) == pytest.approx(max(tail, 1e-12), rel=1e-9)


def test_tie_bet_sum_tail_is_the_binomial_tail():
    """n Tie bets (-1 or +8): S = 9 k - n, so P(S >= 9 k - n) is the binomial tail of k wins."""
    tie = baccarat_payouts(COMMISSION, "01/01.10.2024", 8)["tie"]
    p_win = tie.probs[tie.values.index(8)]
    for n, k in ((50, 5), (200, 30), (300, 60)):
        assert upper_tail([(tie, n)], 9 * k - n, 1) == pytest.approx(binom_sf(k, n, p_win), rel=1e-6)


def test_a_sum_of_many_wagers_per_part_is_the_product_of_the_parts_spectra_raised_to_their_counts():
    """From 100 wagers of a part on, its spectrum is raised as exp(n log z) from a kept logarithm: the same pmf as
    every spectrum raised by numpy's own power (the reference here), for parts below, at and above 100 wagers, and
    the luck test's tail the same."""
    from pipelines.stats import distributions as d

    bets = baccarat_payouts(COMMISSION, "01/01.10.2024", 8)
    for counts in ({"big_tiger": 250, "tie": 120, "banker": 40}, {"tie": 100}, {"big_tiger": 99, "tie": 1000}):
        parts = [(bets[b], n) for b, n in counts.items()]
        offset, pmf = sum_distribution(parts)
        grid = math.lcm(*(p.grid for p, _ in parts))
        on_grid = [(p.on_grid(grid), n) for p, n in parts]
        size = sum((max(p.values) - min(p.values)) * n for p, n in on_grid) + 1
        start, length = d._span(on_grid, sum(min(p.values) * n for p, n in on_grid), size)
        nfft = d._fast_length(length)
        spectrum = np.ones(nfft // 2 + 1, dtype=complex)
        for p, n in on_grid:
            base = np.zeros(nfft)
            for v, q in zip(p.values, p.probs):
                base[(v - min(p.values)) % nfft] += q
            spectrum *= np.fft.rfft(base) ** n
        reference = np.clip(np.roll(np.fft.irfft(spectrum, nfft), -(start % nfft))[:length] if length < size
                            else np.fft.irfft(spectrum, nfft)[:size], 0.0, None)
        assert offset == sum(min(p.values) * n for p, n in on_grid) + start
        assert np.abs(pmf - reference).max() <= 1e-16
        for j in (len(pmf) // 3, len(pmf) // 2, 2 * len(pmf) // 3):
            assert pmf[j:].sum() == pytest.approx(reference[j:].sum(), rel=1e-12, abs=1e-300)


def test_a_fair_coins_sum_over_many_wagers_is_binomial_and_raises_no_warning():
    """A +-1 wager at even odds, 101 and 400 times: S = 2k - n exactly (math.comb), and a spectrum's exact zero (101
    wagers take an FFT of 216 points, where the coin's spectrum is 0 at a quarter of the length: a -inf logarithm)
    raises no floating-point warning."""
    import warnings

    from pipelines.stats import distributions as d

    coin = Payout("coin", 1, (-1, 1), (0.5, 0.5))
    for n in (101, 400):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            offset, pmf = sum_distribution([(coin, n)])
        if n == 101:
            assert np.isneginf(d._SPECTRA[("log", coin, 216)].real).any()  # the zero was met
        for k in (n // 2 - 20, n // 2, n // 2 + 7, n // 2 + 25):  # the span is the mean +- a Bernstein bound
            assert pmf[2 * k - n - offset] == pytest.approx(math.comb(n, k) / 2 ** n, rel=1e-9, abs=1e-15)


def test_payouts_agree_with_the_rules_engines_house_edges():
    from rulebook.catalogue import builtin
    from rulebook.odds import house_edges

    for name in (COMMISSION, "hoiana-tiger-baccarat/no-commission"):
        rs = builtin().latest(name)
        report = house_edges(rs, 8)
        payouts = baccarat_payouts(name, rs.version, 8)
        for bet, odds in report.bets.items():
            assert payouts[bet].house_edge == pytest.approx(odds.house_edge, abs=1e-12), (name, bet)
            assert sum(payouts[bet].probs) == pytest.approx(1.0, abs=1e-12)


def test_saddle_point_tail_against_the_exact_convolution_with_two_stakes():
    """300 Tie bets of 1 and 100 of 3 (the 3-unit bet is the payout scaled): the money sum's exact tail from
    the convolution, against the saddle point the hold detector uses (continuity-corrected at half a unit)."""
    tie = baccarat_payouts(COMMISSION, "01/01.10.2024", 8)["tie"]
    big = Payout("tie3", 1, tuple(3 * v for v in tie.values), tie.probs)
    offset, pmf = sum_distribution([(tie, 300), (big, 100)])
    x = np.array([tie.units, tie.units])
    p = np.array([tie.probs, tie.probs])
    ms = MoneySums(np.array([0, 0]), x, p, np.array([1.0, 3.0]), np.array([300.0, 100.0]), 1)
    mean = 300 * tie.mean + 300 * tie.mean
    for s in (150, 250, 350):
        exact = pmf[s - offset:].sum()
        assert 1e-8 < exact < 1e-2
        saddle = batch_two_sided(ms, np.array([s - 0.5]))[0] / 2
        assert saddle == pytest.approx(exact, rel=0.10), (s, exact, saddle)
    # the lower tail too (the house winning far more than theory)
    s = int(mean - 180)
    exact = pmf[: s - offset + 1].sum()
    saddle = batch_two_sided(ms, np.array([s + 0.5]))[0] / 2
    assert saddle == pytest.approx(exact, rel=0.10)


def _equal_stakes(bet: str, n: int, amount: float = 100.0) -> tuple[MoneySums, Payout]:
    pay = baccarat_payouts(COMMISSION, "01/01.10.2024", 8)[bet]
    return MoneySums(np.zeros(1, dtype=np.int64), np.array([pay.units]), np.array([pay.probs]), np.array([amount]),
                     np.array([float(n)]), 1), pay


@pytest.mark.parametrize("n, wins", [(60, 15), (60, 20), (200, 30), (200, 40), (300, 50), (1000, 130)])
def test_hold_tail_of_equal_stakes_is_the_binomial_tail(n, wins):
    """n Tie bets of 100 (a table's Tie bets at one stake): the money sum is 900 x wins - 100 n, on a lattice of
    span 900, and its exact two-sided tail is the binomial's. The saddle point without the lattice correction
    gave about half the exact p-value at (60, 15) and (200, 40): a flag the cards do not support."""
    ms, tie = _equal_stakes("tie", n)
    p_win = tie.probs[tie.values.index(8)]
    exact = min(1.0, 2 * min(binom_sf(wins, n, p_win), 1 - binom_sf(wins + 1, n, p_win)))
    assert batch_two_sided(ms, np.array([100.0 * (9 * wins - n)]))[0] == pytest.approx(exact, rel=0.01)


def test_hold_tail_of_two_stakes_against_the_exact_convolution_at_the_observed_sum():
    """110 Tie bets of 1 and 90 of 2, the observed sum passed as it is (no hand correction, as the detector passes
    it): both tails within 3 % of the convolution's. Before, 16-33 % too small."""
    tie = baccarat_payouts(COMMISSION, "01/01.10.2024", 8)["tie"]
    two = Payout("tie2", 1, tuple(2 * v for v in tie.values), tie.probs)
    offset, pmf = sum_distribution([(tie, 110), (two, 90)])
    ms = MoneySums(np.array([0, 0]), np.array([tie.units] * 2), np.array([tie.probs] * 2), np.array([1.0, 2.0]),
                   np.array([110.0, 90.0]), 1)
    mean, sd = 290 * tie.mean, math.sqrt((110 + 4 * 90) * tie.variance)
    for z in (2.5, 3.5, 4.5, -2.5, -3.0):
        j = int(round(mean + z * sd)) - offset
        support = np.flatnonzero(pmf > 1e-300)
        j = support[support >= j][0] if z > 0 else support[support <= j][-1]
        exact = 2 * (pmf[j:].sum() if z > 0 else pmf[:j + 1].sum())
        assert batch_two_sided(ms, np.array([float(j + offset)]))[0] == pytest.approx(exact, rel=0.03), z


@pytest.mark.parametrize("bet, n, extreme", [("tie", 3, "won"), ("big_tiger", 3, "won"), ("big_tiger", 10, "won"),
                                             ("tie", 60, "lost"), ("tie", 200, "lost"), ("big_tiger", 300, "lost")])
def test_hold_tail_of_every_wager_won_or_every_wager_lost_is_exact(bet, n, extreme):
    """At the edge of the support (every wager of the entity won, or every one lost) the tail is the product of the
    wagers' chances of that extreme: 3 Tie bets all won 2 x 0.095^3 = 0.0017, 60 all lost 2 x 0.905^60 = 0.005.
    The saddle point's formula breaks down there: it gave p = 1 to 3 Tie bets all won, 10 Big Tigers all won and
    60 Tie bets all lost, and 400 times the exact figure to 200 Tie bets all lost."""
    ms, pay = _equal_stakes(bet, n)
    won = extreme == "won"
    s = 100.0 * n * (max(pay.values) if won else min(pay.values)) / pay.grid
    q = pay.probs[-1] if won else pay.probs[0]
    assert batch_two_sided(ms, np.array([s]))[0] == pytest.approx(max(1e-12, min(1.0, 2 * q ** n)), rel=1e-6)


def test_hold_tail_at_the_edge_with_unequal_stakes():
    """Tie bets of 100, 100 and 1, all won: 1,608, the most the three can net (no common stake: not on the lattice of
    one stake's steps). Before, p = 0.19 (the formula at the edge) against 2 x 0.095^3 = 0.0017."""
    tie = baccarat_payouts(COMMISSION, "01/01.10.2024", 8)["tie"]
    p_win = tie.probs[tie.values.index(8)]
    ms = MoneySums(np.zeros(3, dtype=np.int64), np.array([tie.units] * 3), np.array([tie.probs] * 3),
                   np.array([100.0, 100.0, 1.0]), np.ones(3), 1)
    assert batch_two_sided(ms, np.array([1608.0]))[0] == pytest.approx(2 * p_win ** 3, rel=1e-6)


def test_entities_at_the_edge_beside_others_get_the_tails_they_get_alone():
    """Tie bettors tested together, some at the edge of their support (every Tie won, every Tie lost), some in the
    saddle point's range, some near their mean: each entity's p-value is the one it gets tested alone, to the bit (the
    edge's exact tails are worked out on the edge entities' rows only)."""
    tie = baccarat_payouts(COMMISSION, "01/01.10.2024", 8)["tie"]
    entities = [(3, 100.0, 3 * 800.0), (400, 50.0, -2500.0), (60, 100.0, -6000.0), (200, 10.0, 900.0),
                (300, 20.0, -900.0), (10, 100.0, 10 * 800.0), (2, 100.0, -200.0)]

    def sums(chosen):
        return MoneySums(np.arange(len(chosen)), np.array([tie.units] * len(chosen)),
                         np.array([tie.probs] * len(chosen)), np.array([c[1] for c in chosen]),
                         np.array([float(c[0]) for c in chosen]), len(chosen))

    together = batch_two_sided(sums(entities), np.array([e[2] for e in entities]))
    alone = [batch_two_sided(sums([e]), np.array([e[2]]))[0] for e in entities]
    assert together.tolist() == alone
    p_win = tie.probs[tie.values.index(8)]
    assert together[0] == pytest.approx(2 * p_win ** 3, rel=1e-9) and together[2] == pytest.approx(2 * (1 - p_win) ** 60, rel=1e-9)


def test_lattice_spans_of_draws_needing_different_grids_by_hand():
    """Each draw finds the first grid its steps fit (a Tie's whole units at 1, a commission Banker's 0.95 at 20, a
    no-commission Banker's 0.5 at 2, none for a spread of sqrt 2), and each entity's span is the greatest common
    divisor of its draws' steps: Tie stakes of 100 900; a Banker of 100 beside them 5; a no-commission Banker of 10
    beside a Tie of 100 5; a draw on no grid 0 for its entity; Tie stakes of 10^15 9 x 10^15."""
    pays = baccarat_payouts(COMMISSION, "01/01.10.2024", 8)
    nc = baccarat_payouts("hoiana-tiger-baccarat/no-commission", "01/01.10.2024", 8)
    tie, banker, banker_nc = pays["tie"], pays["banker"], nc["banker"]
    width = max(len(tie.values), len(banker.values), len(banker_nc.values), 3)

    def row(pay):
        x, q = np.zeros(width), np.zeros(width)
        x[:len(pay.values)], q[:len(pay.probs)] = pay.units, pay.probs
        return x, q

    odd = (np.array([-1.0, 0.0, math.sqrt(2.0)] + [0.0] * (width - 3)), np.array([0.3, 0.3, 0.4] + [0.0] * (width - 3)))
    draws = [(0, row(tie), 100.0), (0, row(tie), 100.0), (1, row(tie), 100.0), (1, row(banker), 100.0),
             (2, row(tie), 100.0), (2, row(banker_nc), 10.0), (3, row(tie), 100.0), (3, odd, 100.0),
             (4, row(tie), 1e15)]
    ms = MoneySums(np.array([d[0] for d in draws]), np.array([d[1][0] for d in draws]),
                   np.array([d[1][1] for d in draws]), np.array([d[2] for d in draws]), np.ones(len(draws)), 5)
    assert lattice_spans(ms).tolist() == [900.0, 5.0, 5.0, 0.0, 9e15]


def _spans_row_by_row(ms: MoneySums) -> list[float]:
    """Each entity's lattice span worked out from every one of its rows, one entity at a time: the reference for
    ``lattice_spans``, which tries a sample of the rows first and skips the other rows of an entity found off-grid."""
    out = []
    for e in range(ms.n):
        mine = ms.ent == e
        if not mine.any():
            out.append(0.0)
            continue
        live = ms.p[mine] > 0
        v = np.where(live, ms.a[mine][:, None] * ms.x[mine], np.inf)
        diff = np.where(live, v - v.min(axis=1, keepdims=True), 0.0)
        positive = diff[diff > 0]
        scale = 10.0 ** math.floor(math.log10(positive.min())) if positive.size else 1.0
        diff = diff / scale
        grids = []
        for r in diff:
            fit = [g for g in (1, 2, 4, 5, 8, 10, 20, 40, 100, 200, 1000)
                   if np.all((np.abs(r * g - np.round(r * g)) <= 1e-6) & (r * g < 2.0 ** 52))]
            grids.append(fit[0] if fit else 0)
        if 0 in grids:
            out.append(0.0)
            continue
        grid = math.lcm(*grids)
        ints = np.round(diff * grid)
        if not np.all(ints < 2.0 ** 62):
            out.append(0.0)
            continue
        span = math.gcd(*(int(i) for i in ints.ravel()))
        out.append(0.0 if span == 0 else span / grid * scale)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_lattice_spans_with_the_probe_equal_every_row_tried(seed):
    """``lattice_spans`` tries every ``LATTICE_PROBE``-th row first and leaves out the other rows of an entity one of
    whose rows fits no grid: the spans are those of every row tried, whether the off-grid row is a probed one or not
    (entities of many on-grid rows and one off-grid row anywhere among them, of on-grid rows only, of off-grid rows
    only, and one without rows)."""
    from pipelines.stats import distributions

    rng = np.random.default_rng(seed)
    pays = baccarat_payouts(COMMISSION, "01/01.10.2024", 8)
    on_grid = [pays[b] for b in ("tie", "banker", "player")]
    width = max(len(p.values) for p in on_grid) + 1
    ents, xs, ps, stakes = [], [], [], []
    n = 12
    for e in range(n - 1):
        rows = int(rng.integers(1, 60))
        odd_at = int(rng.integers(0, rows)) if e % 3 == 1 else -1  # one off-grid draw somewhere
        for r in range(rows):
            x, q = np.zeros(width), np.zeros(width)
            if r == odd_at or e % 3 == 2:
                x[:3], q[:3] = [-1.0, 0.0, math.sqrt(2.0) * rng.uniform(0.5, 2.0)], [0.3, 0.3, 0.4]
            else:
                pay = on_grid[int(rng.integers(0, len(on_grid)))]
                x[:len(pay.values)], q[:len(pay.probs)] = pay.units, pay.probs
            ents.append(e), xs.append(x), ps.append(q), stakes.append(float(rng.choice([10.0, 25.0, 100.0, 1e12])))
    order = rng.permutation(len(ents)) if seed % 2 else np.argsort(ents, kind="stable")
    ms = MoneySums(np.array(ents)[order], np.array(xs)[order], np.array(ps)[order], np.array(stakes)[order],
                   np.ones(len(ents)), n)
    expected = _spans_row_by_row(ms)
    assert lattice_spans(ms).tolist() == expected
    assert any(s > 0 for s in expected) and any(s == 0 for s in expected[:-1])
    for probe in (1, 3, 1000):  # a probe of every row, of some, of none but the first
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(distributions, "LATTICE_PROBE", probe)
            assert lattice_spans(ms).tolist() == expected


def test_benjamini_hochberg_on_the_papers_example():
    """Benjamini & Hochberg (1995), section 4: 15 p-values, FDR 0.05: the four smallest are rejected."""
    p = np.array([0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262,
                  0.5719, 0.6528, 0.7590, 1.000])
    rejected = bh_reject(p, 0.05)
    assert rejected.tolist() == [True] * 4 + [False] * 11
    q = bh_adjust(p)
    assert q[3] == pytest.approx(0.0095 * 15 / 4)  # 0.035625 <= 0.05
    assert q[4] == pytest.approx(min(0.0201 * 15 / 5, 0.0278 * 15 / 6, 0.0298 * 15 / 7, 0.0344 * 15 / 8, 0.0459 * 15 / 9))
    assert (np.diff(q[np.argsort(p)]) >= 0).all()


def _cards(rounds: list[list[str]], decks: int) -> pl.DataFrame:
    rows, seq = [], 0
    for r, texts in enumerate(rounds, start=1):
        for text in texts:
            seq += 1
            rows.append(("BJ-01", "S-1", seq, r, parse_card(text), decks))
    return pl.DataFrame(rows, schema={"table_id": pl.String, "shoe_id": pl.String, "event_seq": pl.Int64,
                                      "round_no": pl.Int64, "card_code": pl.Int16, "decks": pl.Int64}, orient="row")


def test_hi_lo_and_ko_running_counts_on_a_short_sequence():
    # round 1: 2 5 K A (Hi-Lo +1 +1 -1 -1 = 0; KO the same); round 2: 3 4 6 7 (Hi-Lo +3, KO +4); round 3: T T 9
    cards = _cards([["2c", "5d", "Kh", "As"], ["3c", "4d", "6h", "7s"], ["Tc", "Td", "9h"], ["2s"]], decks=2)
    c = counts_before_rounds(cards).sort("round_no")
    assert c["hilo_rc"].to_list() == [0, 0, 3, 1]
    assert c["ko_rc"].to_list() == [-4, -4, 0, -2]  # KO starts at 4 - 4 * decks
    assert c["seen"].to_list() == [0, 4, 8, 11]
    assert c["true_count"][2] == pytest.approx(3 / ((104 - 8) / 52))
    assert c["round_in_shoe"].to_list() == [0, 1, 2, 3]


def test_pair_probability_of_the_shoe_left():
    # one deck; after round 1 took both black aces and the 2c: aces 2 left, deuces 3, others 4 each, 49 cards
    cards = _cards([["Ac", "As", "2c"], ["5h", "9d"]], decks=1)
    p = pair_probability_before_rounds(cards).sort("round_no")["p_pair"].to_list()
    assert p[0] == pytest.approx(13 * 4 * 3 / (52 * 51))
    assert p[1] == pytest.approx((2 * 1 + 3 * 2 + 11 * 4 * 3) / (49 * 48))


def test_stratified_rank_statistic_has_the_permutation_variance():
    """Within one stratum of five, every permutation of y: T's mean is 0 and its variance the formula's."""
    x = np.array([1.0, 2.0, 2.0, 5.0, 9.0])  # a tie, as bets have
    zs = []
    for perm in itertools.permutations([0.3, -1.0, 2.5, 4.0, 1.1]):
        zs.append(stratified_rank_z(x, np.array(perm), np.zeros(5, dtype=int))[1])
    zs = np.array(zs)
    assert zs.mean() == pytest.approx(0.0, abs=1e-12)
    assert zs.var() == pytest.approx(1.0, rel=1e-9)
    rho, z = stratified_rank_z(np.arange(10.0), np.arange(10.0), np.zeros(10, dtype=int))
    assert rho == pytest.approx(1.0) and z == pytest.approx(3.0)  # rho * sqrt(n - 1)


def _ks_upper(p: np.ndarray) -> float:
    """One-sided Kolmogorov-Smirnov D+ = max(F_n(x) - x): how far the p-values are below uniform."""
    p = np.sort(p)
    n = len(p)
    return float(np.max(np.arange(1, n + 1) / n - p))


def _ks_two_sided(p: np.ndarray) -> float:
    p = np.sort(p)
    n = len(p)
    return float(max(np.max(np.arange(1, n + 1) / n - p), np.max(p - np.arange(0, n) / n)))


@pytest.fixture(scope="module")
def fair_tests():
    floor = Floor(baccarat_tables=4, baccarat_rounds=400, blackjack_tables=2, blackjack_rounds=300, players=60,
                  holdem_tables=2, holdem_rounds=300, blackjack_side=True)
    parts = []
    for seed in range(4):
        w, c, e = night(floor, DAY, 100 + seed)
        t, _, _ = detect_all(StatsInputs(w, e, c, DAY, DAY), StatsParams(), 1)
        parts.append(with_fdr(t, StatsParams()).with_columns(pl.lit(seed).alias("night")))
    return pl.concat(parts)


def test_fair_nights_p_values_are_uniform_and_few_entities_are_flagged(fair_tests):
    t = fair_tests
    assert t.height > 1000
    # the continuous statistics: two-sided KS, at the 1 % critical value 1.63 / sqrt(n) (tables, dealers and
    # shoes overlap, so the p-values are not independent; the check is that they are not far from uniform)
    # the Hold'em and blackjack main games are tested one-sided (players beating the stated strategy): apart
    one_sided = ((pl.col("game") != "baccarat") & pl.col("bet").is_in(["main", "bonus"])
                 & pl.col("test").str.starts_with("hold_"))  # the Bonus too: a fold loses it (HTB-4.11.2.i)
    for test in ("hold_table", "hold_dealer", "hold_shoe", "bet_vs_count"):
        p = t.filter((pl.col("test") == test) & ~one_sided)["p_value"].to_numpy()
        assert len(p) >= 20, test
        assert _ks_two_sided(p) < 1.63 / math.sqrt(len(p)) * 1.5, (test, len(p), _ks_two_sided(p))
    assert t.filter((pl.col("test") == "hold_table") & (pl.col("game") == "holdem_bonus") & (pl.col("bet") == "bonus")).height >= 4
    # the discrete ones (luck, collusion, error rates) and the one-sided main games: conservative, never below uniform
    for test in ("luck", "overpaid_pair", "dealer_error_rate", "main games"):
        p = t.filter(one_sided if test == "main games" else pl.col("test") == test)["p_value"].to_numpy()
        assert len(p) >= 20, test
        assert _ks_upper(p) < 1.52 / math.sqrt(len(p)), (test, len(p), _ks_upper(p))
    assert t.filter((pl.col("test") == "luck") & (pl.col("game") == "holdem_bonus")).height >= 20
    flagged = t.filter(pl.col("flagged"))
    assert flagged.height <= 0.01 * t.height, flagged.select("test", "entity", "p_value", "q_value")


def test_planted_behaviours_are_found_and_named(tmp_path):
    floor = Floor(baccarat_tables=3, baccarat_rounds=300, blackjack_tables=1, blackjack_rounds=200,
                  counter_units=8, counter_hands=500, luck_multiple=5, luck_bets=300, drift=0.35, drift_rounds=1200)
    w, c, e = night(floor, DAY, 7)
    t = with_fdr(detect_all(StatsInputs(w, e, c, DAY, DAY), StatsParams(), 1)[0], StatsParams())
    flagged = t.filter(pl.col("flagged"))
    assert flagged.filter((pl.col("test") == "bet_vs_count") & (pl.col("player_id") == "P-COUNTER")).height == 1
    assert flagged.filter((pl.col("test") == "luck") & (pl.col("player_id") == "P-LUCKY")
                          & (pl.col("bet") == "big_tiger")).height == 1
    drift_table = f"BAC-{floor.baccarat_tables + 1:02d}"
    assert flagged.filter((pl.col("test") == "hold_table") & (pl.col("table_id") == drift_table)
                          & (pl.col("bet") == "all")).height == 1
    findings = findings_of(t, StatsParams())
    assert set(findings["kind"]) >= {"advantage_play", "player_luck_anomaly", "hold_anomaly"}
    lucky = findings.filter(pl.col("player_id") == "P-LUCKY").row(0, named=True)
    assert lucky["detail"].startswith("P-LUCKY won ") and " of 300 Big Tiger bets" in lucky["detail"]
    assert lucky["p_value"] <= lucky["q_value"] <= 0.01
    assert '"fdr_level":0.01' in lucky["detail"]  # the parameters are in the detail


def test_a_colluding_dealer_over_a_week():
    floor = Floor(baccarat_tables=3, baccarat_rounds=250, blackjack_tables=0, colluder=True, collusion_rate=0.05)
    w, c, e = nights(floor, DAY, 7, seed=3)
    t = with_fdr(detect_all(StatsInputs(w, e, c, DAY, DAY + dt.timedelta(days=6)), StatsParams(), 7)[0], StatsParams())
    hit = t.filter(pl.col("flagged") & (pl.col("test") == "overpaid_pair"))
    assert hit.select("dealer_id", "player_id").rows() == [("D-COLLUDER", "P-COLLUDER")]


def test_statistics_are_written_once_per_night_and_read_back_for_reports(tmp_path):
    """write_statistics replaces the night's rows (a re-run leaves the same rows); the report functions read them."""
    from pipelines.db import open_reader, open_writer
    from pipelines.stats.run import (
        StatsOutcome, dealer_player_frame, funnel_curves_frame, funnel_frame, write_statistics,
    )

    db = tmp_path / "a.duckdb"
    open_writer(db).close()
    floor = Floor(baccarat_tables=2, baccarat_rounds=300, blackjack_tables=0, colluder=True, collusion_rate=0.3)
    w, c, e = night(floor, DAY, 5)
    tests, funnel, graph = detect_all(StatsInputs(w, e, c, DAY, DAY), StatsParams(), 1)
    tests = with_fdr(tests, StatsParams())
    outcome = StatsOutcome(DAY, tests, findings_of(tests, StatsParams()), funnel, graph)
    assert outcome.findings.height >= 1
    for _ in range(2):
        write_statistics(db, [outcome])
    con = open_reader(db)
    try:
        stored = con.sql("SELECT * FROM out_findings ORDER BY finding_id").pl()
        assert stored.height == outcome.findings.height
        assert stored["q_value"].max() <= 0.01 and stored["p_value"].null_count() == 0
        assert funnel_frame(con, DAY).height == funnel.height > 0
        curves = funnel_curves_frame(con, DAY)
        assert (curves["low_95"] < curves["theoretical_hold"]).all() and (curves["high_997"] > curves["high_95"]).all()
        pairs = dealer_player_frame(con, DAY)
        assert pairs.height == graph.height
        colluder = pairs.filter((pl.col("dealer_id") == "D-COLLUDER") & (pl.col("player_id") == "P-COLLUDER")).row(0, named=True)
        assert colluder["overpaid_rounds"] > 10 and colluder["p_value"] < 1e-6
        assert con.execute("SELECT count(*) FROM out_stat_tests").fetchall()[0][0] == tests.height
    finally:
        con.close()


def test_tiger_ev_of_a_full_shoe_is_the_rules_engines_and_the_effect_of_removal_tracks_the_exact_ev():
    """The Tiger bets' EV of a full 8-deck shoe equals `pitaudit odds`; on depleted shoes the linear
    effect-of-removal estimate stays within 15 % of the exact change where the shoe moves the bets a lot
    (5 to 12 points of EV), within 0.002 where it moves them little."""
    from rulebook.catalogue import builtin
    from rulebook.odds import house_edges
    from pipelines.stats.tiger_count import TIGER_BETS, estimated_ev, exact_ev

    rs = builtin().latest(COMMISSION)
    full = np.full(13, 32.0)
    ev = exact_ev(full, COMMISSION, rs.version)
    edges = house_edges(rs, 8).bets
    for bet in TIGER_BETS:
        assert ev[bet] == pytest.approx(-edges[bet].house_edge, abs=1e-12)
    # sixes gone (bad for the Tigers), sevens and eights gone (good), a quarter of the tens gone (small)
    for removed, rel, tol in (({5: 12}, 0.15, 0.0), ({6: 12, 7: 12}, 0.15, 0.0), ({9: 6, 10: 6, 11: 6, 12: 6}, 0.0, 0.002)):
        comp = full.copy()
        for rank, k in removed.items():
            comp[rank] -= k
        exact = exact_ev(comp, COMMISSION, rs.version)
        est = estimated_ev(comp[None, :], 8, COMMISSION, rs.version)[0]
        for i, bet in enumerate(TIGER_BETS):
            change = exact[bet] - ev[bet]
            assert est[i] - ev[bet] == pytest.approx(change, rel=rel, abs=tol), (removed, bet, change, est[i] - ev[bet])


def test_rolling_windows_skip_a_window_that_holds_no_more_nights():
    """Three nights in the database: tonight (1 day) and the 7-day window are tested; the 30-day window holds the
    same three nights as the 7-day one and is not tested twice. Tonight's tests see tonight's rounds only."""
    from pipelines.stats.run import run_windows

    floor = Floor(baccarat_tables=2, baccarat_rounds=250, blackjack_tables=0)
    w, c, e = nights(floor, DAY, 3, seed=9)
    last = DAY + dt.timedelta(days=2)
    tests, funnel, graph = run_windows(StatsInputs(w, e, c, DAY, last), last, [DAY, DAY + dt.timedelta(days=1), last], StatsParams())
    assert set(tests["window_days"]) == {1, 7}
    tonight = tests.filter(pl.col("window_days") == 1)
    assert (tonight["first_day"] == last).all() and (tonight["last_day"] == last).all()
    week = tests.filter((pl.col("window_days") == 7) & (pl.col("test") == "hold_table") & (pl.col("bet") == "all"))
    day = tonight.filter((pl.col("test") == "hold_table") & (pl.col("bet") == "all"))
    assert week["rounds"].sum() == 3 * day["rounds"].sum()
    assert set(funnel["window_days"]) == {1, 7} and set(graph["window_days"]) == {1, 7}


def test_a_windows_findings_belong_to_the_night_it_ends_with_not_to_its_entitys_last_day():
    """A 7-day window ending tomorrow on a table seen only today (no rounds tomorrow) is tomorrow's finding: filed
    under the entity's last day of data, a re-run of tomorrow (which replaces tomorrow's rows) left it behind, and a
    backfill of today published it among today's findings (tests/test_nights.py). Same window, other night: other id.
    (A night's run now writes no finding for a table with no rounds that night: ``new_evidence_only``,
    tests/test_stats_new_evidence.py; the filing rule holds for every finding it writes.)"""
    floor = Floor(baccarat_tables=2, baccarat_rounds=300, blackjack_tables=0, drift=0.35, drift_rounds=1200)
    w, c, e = night(floor, DAY, 7)
    t = with_fdr(detect_all(StatsInputs(w, e, c, DAY, DAY), StatsParams(), 7)[0], StatsParams())
    tomorrow = DAY + dt.timedelta(days=1)
    def of(end):  # the window's end, as run_windows marks it
        return findings_of(t.with_columns(pl.lit(end).alias("window_end")), StatsParams())

    today, later = of(DAY), of(tomorrow)
    assert today.height == later.height > 0
    assert set(today["gaming_day"]) == {DAY} and set(later["gaming_day"]) == {tomorrow}
    assert set(today["finding_id"]).isdisjoint(later["finding_id"])
    assert all(f"(7 gaming days to {tomorrow})" in d for d in later["detail"])
    assert of(DAY).equals(today)  # the same data, the same rows


def test_a_p_value_at_the_floor_reads_p_below_it_in_the_sentence_and_the_finding():
    """A dealer with 47 errors in 96 rounds against a floor of 5.7 per 1,000: p and q are far below 1e-12. The
    sentence and the finding said "p = < 1e-12; q = < 1e-12"; they say "p < 1e-12" and "q < 1e-12", and a p-value
    above the floor keeps its "p = ..."."""
    from pipelines.stats.hold import dealer_error_rows

    d = pl.DataFrame({"dealer_id": ["D1", "D2", "D3"], "rounds": [96, 8000, 9000], "errors": [47, 50, 45],
                      "first_day": [DAY] * 3, "last_day": [DAY] * 3})
    t = with_fdr(dealer_error_rows(d, StatsParams()), StatsParams())
    by = dict(zip(t["dealer_id"], t["sentence"]))
    assert by["D1"].endswith("; p < 1e-12") and "= <" not in by["D1"]
    assert "; p = " in by["D2"] and "; p = " in by["D3"]
    finding = findings_of(t, StatsParams()).filter(pl.col("dealer_id") == "D1")["detail"].item()
    # p is the floor, so q (three tests) is three times it
    assert "p < 1e-12; q = 3.0e-12 (1 gaming day" in finding and "= <" not in finding


def test_a_p_value_below_the_floor_is_the_floor_in_every_detector():
    """p below 1e-12 is reported as 1e-12 (formats.md, interpretations/statistics.md): the dealer error rate and the
    dealer-player pairs wrote the binomial tail as it came (findings.csv: p_value 3.72751e-18 and 1.49004e-28 beside a
    detail saying "p < 1e-12"; the report's column 1.5e-28), finer than a float's tail honestly resolves."""
    from pipelines.stats.collusion import collusion_tests
    from pipelines.stats.distributions import P_FLOOR
    from pipelines.stats.hold import dealer_error_rows

    d = pl.DataFrame({"dealer_id": ["D1", "D2", "D3"], "rounds": [96, 8000, 9000], "errors": [47, 50, 45],
                      "first_day": [DAY] * 3, "last_day": [DAY] * 3})
    errors = dealer_error_rows(d, StatsParams())
    assert errors.filter(pl.col("dealer_id") == "D1")["p_value"].item() == P_FLOOR
    assert errors.filter(pl.col("dealer_id") != "D1")["p_value"].min() > P_FLOOR
    pairs = [("D1", "P-1", 31, 13), ("D1", "P-2", 400, 1), ("D2", "P-1", 900, 2), ("D2", "P-2", 800, 1)]
    n = len(pairs)
    graph = pl.DataFrame({
        "dealer_id": [x[0] for x in pairs], "player_id": [x[1] for x in pairs], "currency": ["USD"] * n,
        "rounds": [x[2] for x in pairs], "wagers": [x[2] for x in pairs], "overpaid_wagers": [x[3] for x in pairs],
        "overpaid_rounds": [x[3] for x in pairs], "overpaid_amount": [100 * x[3] for x in pairs],
        "underpaid_wagers": [0] * n, "underpaid_amount": [0] * n, "wagered": [1000 * x[2] for x in pairs],
        "expected_net": [0] * n, "recorded_net": [100 * x[3] for x in pairs], "first_day": [DAY] * n,
        "last_day": [DAY] * n, "tables": [["BAC-01"]] * n, "game": ["baccarat"] * n,
        "ruleset": ["hoiana-tiger-baccarat/commission"] * n, "window_days": [1] * n})
    t = collusion_tests(graph, StatsParams())
    colluder = t.filter((pl.col("dealer_id") == "D1") & (pl.col("player_id") == "P-1"))
    assert colluder["p_value"].item() == P_FLOOR and colluder["sentence"].item().endswith("; p < 1e-12")


def test_a_luck_findings_bets_add_up_to_its_sentence_when_the_player_plays_two_rule_sets():
    """P-1 bets the Tie 25 times at a commission table and 25 times at a no-commission one (two parts of one bet):
    the evidence's ``by_bet`` says 50 Tie wagers and the net of all 50, as the sentence does. It kept the last part
    only (25), so a side-bet finding's bets summed to fewer wagers than its sentence counted (67 of 106)."""
    import json

    from pipelines.stats.luck import baccarat_luck

    rows = []
    for t, (table, ruleset) in enumerate((("BAC-01", COMMISSION), ("NCB-01", "hoiana-tiger-baccarat/no-commission"))):
        for i in range(25):
            won = i % 3 == 0  # 9 of 25 won at each table
            rows.append({"gaming_day": DAY, "table_id": table, "round_no": i, "wager_id": f"W-{t}-{i}", "player_id": "P-1",
                         "game": "baccarat", "ruleset": ruleset, "ruleset_version": "01/01.10.2024", "currency": "USD",
                         "status": "settled", "bet": "tie", "amount": 1000, "cards_net": 8000 if won else -1000,
                         "recorded_net": 8000 if won else -1000, "adjustment": None, "decks": 8})
    w = pl.DataFrame(rows, schema_overrides={"adjustment": pl.String})
    t = baccarat_luck(w, StatsParams())
    tie = t.filter(pl.col("bet") == "tie").row(0, named=True)
    assert tie["wagers"] == 50 and "won 18 of 50 Tie bets" in tie["sentence"]
    assert json.loads(tie["evidence"])["by_bet"] == {"tie": {"wagers": 50, "net_units": 18 * 8 - 32}}
    side = json.loads(t.filter(pl.col("bet") == "side_bets").row(0, named=True)["evidence"])["by_bet"]
    assert sum(b["wagers"] for b in side.values()) == 50


def test_the_dealer_player_graphs_money_is_numbers_in_the_database_and_earlier_nights_blobs_become_numbers(tmp_path):
    """docs/formats.md: out_dealer_player holds each pair's overpaid and underpaid amounts, wagered and nets. They
    reached DuckDB as the 16 raw bytes polars writes for an Int128 (a BLOB no query can add up); now DECIMAL(38,0),
    and a database written the old way has its earlier nights' rows turned into the same numbers, not dropped."""
    import duckdb

    from pipelines.db import open_reader, open_writer
    from pipelines.stats.run import StatsOutcome, dealer_player_frame, write_statistics

    db = tmp_path / "a.duckdb"
    open_writer(db).close()
    floor = Floor(baccarat_tables=2, baccarat_rounds=300, blackjack_tables=0, colluder=True, collusion_rate=0.3)
    w, c, e = night(floor, DAY, 5)
    tests, funnel, graph = detect_all(StatsInputs(w, e, c, DAY, DAY), StatsParams(), 1)
    money = ["overpaid_amount", "underpaid_amount", "wagered", "expected_net", "recorded_net"]
    # the audit's windows add the stored summaries' totals as Int128 (``summary_windows``); the frames' path, Int64
    graph = graph.with_columns(pl.col(m).cast(pl.Int128) for m in money)
    assert graph.height > 0
    # the night before, as the earlier code stored it: its scratch Parquet straight from polars
    before = DAY - dt.timedelta(days=1)
    old = tmp_path / "old.parquet"
    graph.with_columns(pl.col("tables").list.join(",")).select(pl.lit(before).alias("night"), pl.all()).write_parquet(old)
    con = duckdb.connect(str(db))
    con.execute(f"CREATE TABLE out_dealer_player AS SELECT * FROM read_parquet('{old}')")
    assert {r[1] for r in con.execute("DESCRIBE out_dealer_player").fetchall() if r[0] in money} == {"BLOB"}
    con.close()
    tests = with_fdr(tests, StatsParams())
    write_statistics(db, [StatsOutcome(DAY, tests, findings_of(tests, StatsParams()), funnel, graph)])
    con = open_reader(db)
    try:
        kinds = {r[0]: r[1] for r in con.execute("DESCRIBE out_dealer_player").fetchall()}
        assert {kinds[m] for m in money} == {"DECIMAL(38,0)"}
        want = graph.sort("dealer_id", "player_id", "currency").select(money)
        for day in (before, DAY):
            got = dealer_player_frame(con, day).sort("dealer_id", "player_id", "currency").select(money)
            assert got.cast({m: pl.Int128 for m in money}).equals(want)
        total = con.execute("SELECT sum(wagered) FROM out_dealer_player WHERE night = ?", [DAY]).fetchall()[0][0]
        assert total == graph["wagered"].sum() > 0
    finally:
        con.close()
