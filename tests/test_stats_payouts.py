"""Issue 11 beyond baccarat: the payout distributions of the Hold'em Bonus, the jackpot, and blackjack's
Pair, Insurance and main wager (``pipelines.stats.payouts.bet_distribution``), each against a hand
calculation or a published figure and the rules engine's own odds; luck and hold over them on simulated
floors (a hand-calculated case per game, a planted lucky Bonus bettor, fair floors)."""

from __future__ import annotations

import datetime as dt
import itertools
import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

from pipelines.stats.config import StatsParams
from pipelines.stats.distributions import binom_sf
from pipelines.stats.load import StatsInputs
from pipelines.stats.luck_games import games_luck_p_value, rarity_scores
from pipelines.stats.payouts import Untestable, bet_distribution, jackpot_hit_distribution
from pipelines.stats.run import detect_all, with_fdr
from pipelines.stats.synthetic import Floor, night
from rulebook.catalogue import builtin
from rulebook.odds import house_edges

DAY = dt.date(2026, 11, 24)
HOIANA_HB, MBS, GUIDE, BJ = ("hoiana-holdem-bonus", "mbs-holdem-bonus-progressive", "guide-holdem-bonus-progressive",
                             "hoiana-blackjack")


def rs(name):
    return builtin().latest(name)


def test_bonus_distribution_is_the_hand_count_of_each_line_and_the_engines_edge():
    """HTB-6.1.2: of the 1,326 two-card hands, AA is 6, AK suited 4, AQ/AJ suited 8, AK offsuit 12, KK/QQ/JJ 18,
    AQ/AJ offsuit 24, 2-2 to 10-10 54; the dealer's two of the 1,225 left are both aces in 1 way when the player
    holds two aces (the 1000:1 line)."""
    d = bet_distribution(rs(HOIANA_HB), "bonus")
    hands, dealer = 1326, 1225
    by_hand = {Fraction(1000): Fraction(6, hands) * Fraction(1, dealer), Fraction(30): Fraction(6, hands) * Fraction(1224, dealer),
               Fraction(25): Fraction(4, hands), Fraction(20): Fraction(8, hands), Fraction(15): Fraction(12, hands),
               Fraction(10): Fraction(18, hands), Fraction(5): Fraction(24, hands), Fraction(3): Fraction(54, hands)}
    by_hand[Fraction(-1)] = 1 - sum(by_hand.values())
    assert dict(zip(d.values, d.probs)) == by_hand
    assert d.method == "exact" and d.standard_error == 0
    assert d.house_edge == pytest.approx(house_edges(rs(HOIANA_HB), flops=2).bets["bonus"].house_edge, abs=1e-15)
    assert d.house_edge == pytest.approx(138730 / 1624350)  # 8.54 %: (1,331,270 won - 1,470,000 lost) / 1,624,350
    # the guide's table has no 1000:1 line: AA vs AA pays 30:1
    g = bet_distribution(rs(GUIDE), "bonus")
    assert Fraction(1000) not in g.values and dict(zip(g.values, g.probs))[Fraction(30)] == Fraction(6, hands)


@pytest.mark.parametrize("decks", [6, 8])
def test_blackjack_pair_and_insurance_by_hand_and_against_the_engines_odds(decks):
    """BJ-6.3, 5.1: a pair (same face) is (4d-1)/(52d-1), paid 11:1; insurance (BJ-4.11, 5.1) wins on a ten-value
    under the ace, 16d/(52d-1), paid 2:1. In 8 decks: 31/415 and 128/415, edges 43/415 = 10.36 % and 31/415 = 7.47 %."""
    odds = house_edges(rs(BJ), decks, rounds=1000)
    pair = bet_distribution(rs(BJ), "pair", decks)
    assert pair.values == (Fraction(-1), Fraction(11))
    assert pair.probs[1] == Fraction(4 * decks - 1, 52 * decks - 1)
    assert pair.house_edge == pytest.approx(odds.bets["pair"].house_edge, abs=1e-15)
    ins = bet_distribution(rs(BJ), "insurance", decks)
    assert ins.values == (Fraction(-1), Fraction(2)) and ins.probs[1] == Fraction(16 * decks, 52 * decks - 1)
    assert ins.house_edge == pytest.approx(odds.bets["insurance"].house_edge, abs=1e-15)
    if decks == 8:
        assert pair.house_edge == pytest.approx(43 / 415) and ins.house_edge == pytest.approx(31 / 415)


def test_blackjack_main_is_the_engines_simulation_of_basic_strategy():
    """The frozen counts are the engine's own rounds: the same mean and spread as ``pitaudit odds`` (seed
    20261125, 2,000,000 rounds), and near the infinite-shoe value of the same rules (``ev.py``)."""
    from rulebook.blackjack.ev import Rules, round_value
    from rulebook.blackjack.simulate import simulate_main

    d = bet_distribution(rs(BJ), "main", 8)
    assert d.method == "simulation" and d.one_sided
    assert all((2 * v).denominator == 1 for v in d.values)  # the 1/2 grid: 3:2 blackjacks, half surrenders
    assert sum(d.probs) == 1
    sim = simulate_main(rs(BJ).params, 8, 2_000_000, seed=20261125)
    assert d.mean == pytest.approx(sim.mean, abs=1e-12)
    assert math.sqrt(d.variance) == pytest.approx(sim.sd, rel=1e-9)
    assert d.mean == pytest.approx(round_value(Rules.of(rs(BJ).params)), abs=4 * d.standard_error + 0.001)


def test_holdem_main_game_distribution():
    """Per unit of Ante: a fold loses 1; a played hand loses 3, 4 or 5 (Ante, Flop, and the Turn and River bet) or
    wins up to 5 (the Ante stands off below a straight, HTB-5.2). The engine's basic rule folds 2-3 to 2-7 offsuit, a pair of twos played: 60 of 1,326 hands."""
    d = bet_distribution(rs(HOIANA_HB), "main")
    probs = dict(zip(d.values, d.probs))
    assert set(d.values) <= {Fraction(v) for v in (-5, -4, -3, -1, 0, 2, 3, 4, 5)}
    fold = 60 / 1326
    assert float(probs[Fraction(-1)]) == pytest.approx(fold, abs=4 * math.sqrt(fold * (1 - fold) / 2_000_000))
    assert d.one_sided and d.method == "simulation"
    # the guide's flush qualifier stands the Ante off more often: the same losses, fewer +5 and more +2
    g = dict(zip(*(lambda x: (x.values, x.probs))(bet_distribution(rs(GUIDE), "main"))))
    assert g[Fraction(-3)] == probs[Fraction(-3)] and g[Fraction(5)] < probs[Fraction(5)] and g[Fraction(2)] > probs[Fraction(2)]


@pytest.mark.slow
def test_frozen_records_are_reproduced_and_the_holdem_main_mean_is_the_engines():
    from pipelines.stats import payouts_frozen
    from pipelines.stats.freeze_payouts import blackjack_records, blackjack_seat_pairs, holdem_records, holdem_seat_pairs
    from rulebook.holdem_bonus.odds import ante_odds

    assert blackjack_records() == payouts_frozen.BLACKJACK_MAIN
    assert holdem_records() == payouts_frozen.HOLDEM_MAIN
    assert holdem_seat_pairs() == payouts_frozen.HOLDEM_SEAT_PAIRS
    assert blackjack_seat_pairs() == payouts_frozen.BLACKJACK_SEAT_PAIRS
    d = bet_distribution(rs(HOIANA_HB), "main")
    assert -d.mean == pytest.approx(ante_odds(rs(HOIANA_HB).params, 2_000_000, 20261125, "basic").house_edge, abs=1e-12)


def test_frozen_shoe_enumerations_are_the_enumerations_bit_for_bit_and_are_what_the_detectors_use():
    """The frozen fresh-shoe probabilities and Tiger effects of removal (``enumerations_frozen``) are the enumerations'
    own floats; the detectors' functions return them; a combination not frozen is still enumerated."""
    from pipelines.stats import enumerations_frozen as frozen
    from pipelines.stats.distributions import _joint, joint_enumerated, joint_outcome_probabilities
    from pipelines.stats.freeze_enumerations import joint_records, removal_records
    from pipelines.stats.tiger_count import _removal_classes, removal_enumerated

    assert joint_records() == frozen.JOINT and removal_records() == frozen.REMOVAL
    pbpb = ("player", "banker", "player", "banker")
    for decks in (6, 8):
        assert np.array_equal(joint_outcome_probabilities(decks), joint_enumerated(decks, pbpb))
        p0, removed = _removal_classes(decks, pbpb)
        q0, q = removal_enumerated(decks, pbpb)
        assert np.array_equal(p0, q0) and np.array_equal(removed, q) and removed.shape == (13, 5)
    assert (4, pbpb) not in frozen.JOINT
    _joint.cache_clear()
    four = joint_outcome_probabilities(4)
    assert four.shape == (20,) and math.isclose(four.sum(), 1.0) and not np.array_equal(four, joint_outcome_probabilities(8))


def test_jackpot_hit_probabilities_are_the_published_poker_frequencies_and_the_stake_is_never_invented():
    """Five-card hands (Wikipedia, "Poker probability"): 4 royal, 36 straight flushes, 624 fours, 3,744 full houses,
    5,108 flushes of 2,598,960; seven cards: 4,324 royal, 37,260 straight flushes, 224,848 fours of 133,784,560."""
    p, how = jackpot_hit_distribution(rs(GUIDE))
    assert p == Fraction(4 + 36 + 624 + 3744 + 5108, 2598960) and "after a fold" in how
    p, _ = jackpot_hit_distribution(rs(MBS))
    assert p == Fraction(4324 + 37260 + 224848, 133784560)
    for name, clause in ((MBS, "MBS-1.1.12"), (GUIDE, "THB-G-JACKPOT")):
        with pytest.raises(Untestable, match=clause):
            bet_distribution(rs(name), "progressive")
    with pytest.raises(Untestable, match="one bet 'main'"):
        bet_distribution(rs(HOIANA_HB), "turn")


def test_bonus_luck_p_value_against_enumeration_of_three_wagers():
    """P(S >= s) for three Bonus wagers, S the sum of rarity scores, by enumerating all 9^3 outcomes."""
    d = bet_distribution(rs(HOIANA_HB), "bonus")
    score, _ = rarity_scores(HOIANA_HB, rs(HOIANA_HB).version, 1, "bonus")
    assert score[-1] == 0 and score[1000] == 18 and score[3] == 4  # log2(0.905 / 4.07 %) = 4.5 -> 4
    atoms = [(score[int(v)], float(p)) for v, p in zip(d.values, d.probs)]
    part = ((HOIANA_HB, rs(HOIANA_HB).version, 1, "bonus", 3),)
    for s in (4, 8, 13, 20, 40):
        exact = sum(a[1] * b[1] * c[1] for a, b, c in itertools.product(atoms, repeat=3) if a[0] + b[0] + c[0] >= s)
        assert games_luck_p_value(part, s) == pytest.approx(exact, rel=1e-9), s


def test_pair_luck_is_the_binomial_tail():
    """Two-line bets: the score counts wins, so P(S >= s) is the binomial tail of the wins."""
    v = rs(BJ).version
    score, _ = rarity_scores(BJ, v, 8, "pair")
    w = score[11]
    for wins in (3, 6, 10):
        assert games_luck_p_value(((BJ, v, 8, "pair", 40),), wins * w) == pytest.approx(binom_sf(wins, 40, 31 / 415), rel=1e-9)


def _run(floor, seed):
    w, c, e = night(floor, DAY, seed)
    return with_fdr(detect_all(StatsInputs(w, e, c, DAY, DAY), StatsParams(), 1)[0], StatsParams())


def test_a_lucky_bonus_bettor_is_found_and_the_fair_tables_are_not():
    floor = Floor(baccarat_tables=1, baccarat_rounds=200, blackjack_tables=2, blackjack_rounds=300, players=60,
                  holdem_tables=2, holdem_rounds=300, blackjack_side=True, holdem_luck_bets=300, holdem_luck_multiple=3)
    t = _run(floor, 5)
    flagged = t.filter(pl.col("flagged"))
    lucky = flagged.filter((pl.col("player_id") == "P-LUCKY-HB") & (pl.col("test") == "luck"))
    assert lucky.height == 1 and lucky["bet"][0] == "bonus" and lucky["game"][0] == "holdem_bonus"
    assert " of 300 Hold'em Bonus bets" in lucky["sentence"][0]
    others = flagged.filter(~pl.col("entity").str.contains("LUCKY") & ~pl.col("entity").str.contains("HB-99"))
    assert others.height == 0, others.select("test", "entity", "p_value")
    # hold was tested on every game and bet type
    tested = set(t.filter(pl.col("test") == "hold_table").select("game", "bet").unique().rows())
    assert {("holdem_bonus", "bonus"), ("holdem_bonus", "main"), ("blackjack", "main"), ("blackjack", "pair")} <= tested


def _ks_upper(p: np.ndarray) -> float:
    p = np.sort(p)
    return float(np.max(np.arange(1, len(p) + 1) / len(p) - p))


@pytest.fixture(scope="module")
def fair_games():
    floor = Floor(baccarat_tables=0, blackjack_tables=3, blackjack_rounds=400, players=40, holdem_tables=3,
                  holdem_rounds=400, blackjack_side=True, side_share=0.6)
    params = StatsParams(hold_min_wagers=100, luck_min_wagers=15)
    parts = []
    for seed in range(6):
        w, c, e = night(floor, DAY, 300 + seed)
        t = detect_all(StatsInputs(w, e, c, DAY, DAY), params, 1)[0]
        parts.append(with_fdr(t, params))
    return pl.concat(parts).filter(pl.col("game").is_in(["holdem_bonus", "blackjack"]))


def test_fair_holdem_and_blackjack_floors_are_uniform_or_conservative_and_rarely_flagged(fair_games):
    t = fair_games
    # exact per-wager draws with no decision in them (Pair, Insurance): two-sided hold p-values near uniform
    exact = t.filter(pl.col("test").str.starts_with("hold_") & pl.col("bet").is_in(["pair", "insurance"]))["p_value"].to_numpy()
    assert len(exact) >= 20
    p = np.sort(exact)
    n = len(p)
    ks = max(np.max(np.arange(1, n + 1) / n - p), np.max(p - np.arange(0, n) / n))
    assert ks < 1.63 / math.sqrt(n) * 1.5, (n, ks)
    # the one-sided main games and Bonus (a fold loses the Bonus: HTB-4.11.2.i) and the discrete luck tests: never
    # below uniform
    for name, rows in (("main", t.filter(pl.col("test").str.starts_with("hold_") & (pl.col("bet") == "main"))),
                       ("bonus", t.filter(pl.col("test").str.starts_with("hold_") & (pl.col("bet") == "bonus"))),
                       ("luck", t.filter(pl.col("test") == "luck"))):
        q = rows["p_value"].to_numpy()
        assert len(q) >= 10, name
        assert _ks_upper(q) < 1.52 / math.sqrt(len(q)), (name, len(q), _ks_upper(q))
    assert t.filter(pl.col("flagged")).height <= 0.01 * t.height


def test_the_bonus_is_tested_one_sided_because_a_fold_loses_it():
    """HTB-4.11.2.i (MBS-3.7.1, the guide): a folded hand's Bonus loses, whatever it holds. The count is the return of a
    player who never folds a paying hand (no stated strategy does); a player who folds 2-2 to 10-10 gives the house
    more, which is no anomaly: only players winning more than the count allows are tested (as for the main game)."""
    for name in (HOIANA_HB, MBS, GUIDE):
        ruleset = rs(name)
        assert ruleset.params.folded_bonus_loses
        d = bet_distribution(ruleset, "bonus")
        assert d.one_sided and d.method == "exact" and "fold" in d.source


def test_hold_of_a_handle_beyond_64_bits_is_summed_exactly():
    """The handle of a table wagering 10**15-unit stakes passes 2**63 - 1: a 64-bit sum wrapped to a negative handle
    (``RuntimeWarning: invalid value encountered in sqrt`` in the funnel, and holds of the wrong sign). Summed in 128
    bits, the holds and p-values are those of the same night at ordinary stakes (hold is scale-free)."""
    import warnings

    from pipelines.stats.hold import hold_tests

    floor = Floor(baccarat_tables=2, baccarat_rounds=400, blackjack_tables=0, players=40)
    w, _, _ = night(floor, DAY, 11)
    scale = 10**12
    big = w.with_columns(*[(pl.col(c) * scale) for c in ("amount", "settled_amount", "cards_net", "expected_net", "recorded_net")])
    assert big.filter(pl.col("table_id") == "BAC-01")["amount"].cast(pl.Int128).sum() > 2**63 - 1
    small_t, small_f = hold_tests(w, StatsParams())
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        big_t, big_f = hold_tests(big, StatsParams())
    key = ["entity_type", "entity", "bet"]
    both = small_f.join(big_f, on=key, suffix="_big")
    assert both.height == small_f.height > 0
    assert np.allclose(both["hold"], both["hold_big"], rtol=1e-9) and (both["hold_big"].abs() < 1).all()
    assert np.allclose(both["p_value"], both["p_value_big"], rtol=1e-6)
    beyond = both.filter(pl.col("handle").cast(pl.Int128) * scale > 2**63 - 1)
    assert beyond.height > 0 and beyond["handle_big"].null_count() == beyond.height  # not representable in BIGINT: null


def test_a_holdem_seat_with_a_main_wager_off_the_pay_table_is_left_out_whole():
    """A seat's Ante, Flop, Turn and River are one bet: when one of them was adjusted or voided, the others alone are
    not a draw of the main game's distribution (an Ante alone would pass for a fold)."""
    from pipelines.stats.games import settled_games

    floor = Floor(baccarat_tables=0, blackjack_tables=0, holdem_tables=1, holdem_rounds=60)
    w, _, _ = night(floor, DAY, 3)
    mains = settled_games(w).filter(pl.col("bet") == "main")
    played = w.filter((pl.col("bet") == "flop")).row(0, named=True)
    seat = [pl.col(k) == played[k] for k in ("table_id", "round_no", "seat")]
    adjusted = w.with_columns(pl.when(pl.all_horizontal(seat) & (pl.col("bet") == "flop")).then(pl.lit("limit"))
                              .otherwise(pl.col("adjustment")).alias("adjustment"))
    after = settled_games(adjusted).filter(pl.col("bet") == "main")
    assert after.height == mains.height - 1
    assert after.filter(pl.all_horizontal(seat)).height == 0
    assert set(mains["k"].to_list()) <= {-5, -4, -3, -1, 0, 2, 3, 4, 5}


def test_a_rounds_seats_have_the_variance_of_their_correlation():
    """One Hold'em round with two seats at Antes of 100 and 200: its net's variance is s2 (100^2 + 200^2) +
    2 c 100 200 with s2 the main game's variance and c the two seats' covariance (the engine's two-seat
    simulation); its mean 300 mu. Two Insurance wagers of one round: one draw of 300 (correlation 1). Two Bonus
    wagers: independent."""
    from pipelines.stats.hold_games import _draw_rows, _draws, seat_correlation
    from pipelines.stats.payouts_holdem import seat_covariance

    hb, bj = rs(HOIANA_HB), rs(BJ)
    main = bet_distribution(hb, "main")
    cov, _ = seat_covariance(hb.name, hb.version)
    assert 0.2 < cov / main.variance < 0.4
    assert seat_correlation(bj.name, bj.version, 8, "insurance") == 1 == seat_correlation(bj.name, bj.version, 3, "main")
    assert 0.3 < seat_correlation(bj.name, bj.version, 8, "main") < 0.42  # two seats on the engine's state machine
    assert seat_correlation(hb.name, hb.version, 1, "bonus") == 0
    rows = [(hb, "main", 1, 100), (hb, "main", 1, 200), (bj, "insurance", 8, 100), (bj, "insurance", 8, 200),
            (hb, "bonus", 1, 100), (hb, "bonus", 1, 200)]
    base = pl.DataFrame([{"key": "T", "currency": "USD", "game": r.game, "bet": b, "ruleset": r.name, "ruleset_version": r.version,
                          "decks": d, "amount": a, "rid": 1, "gaming_day": dt.date(2026, 11, 1), "grouping": "table_id"}
                         for r, b, d, a in rows])
    summary = pl.DataFrame({"key": ["T"] * 3, "currency": ["USD"] * 3, "game": ["holdem_bonus", "blackjack", "holdem_bonus"],
                            "level": ["main", "insurance", "bonus"], "ent": [0, 1, 2]})
    mean, var, _ = _draws(_draw_rows(base), summary).moments()
    assert mean[0] == pytest.approx(300 * main.mean) and var[0] == pytest.approx(main.variance * (100**2 + 200**2) + 2 * cov * 100 * 200)
    ins = bet_distribution(bj, "insurance", 8)
    assert var[1] == pytest.approx(ins.variance * 300**2)
    bonus = bet_distribution(hb, "bonus")
    assert var[2] == pytest.approx(bonus.variance * (100**2 + 200**2)) and mean[2] == pytest.approx(300 * bonus.mean)


def test_a_one_sided_entity_below_its_mean_gets_p_1_without_a_saddle_point(monkeypatch):
    """The main games and the Bonus are tested one-sided (players winning more than the stated strategy allows): a table
    whose players lose far more than theory has p = 1, so its tail is not solved (the saddle point is asked for only
    at a sum above its mean). Over 30 nights most Hold'em and blackjack entities lie below their mean (the players'
    decisions): their saddle points were solved only to be replaced by 1."""
    import pipelines.stats.hold_games as hold_games
    from pipelines.stats.distributions import SADDLE_BEYOND

    floor = Floor(baccarat_tables=0, blackjack_tables=1, blackjack_rounds=300, players=30, holdem_tables=2,
                  holdem_rounds=300)
    w, c, e = night(floor, DAY, 11)
    # every main-game wager of one Hold'em table (Ante, Flop, Turn, River) lost whole: the players' net far below what
    # the strategy gives
    w = w.with_columns(pl.when((pl.col("table_id") == "HB-01") & pl.col("bet").is_in(["ante", "flop", "turn", "river"]))
                       .then(-pl.col("amount")).otherwise(pl.col("recorded_net")).alias("recorded_net"))
    below = []  # per call: the entities asked for their tail beyond SADDLE_BEYOND sd below their mean
    solve = hold_games.batch_two_sided

    def recording(ms, s, *args, moments, **kwargs):
        mean, var, _ = moments
        below.append(int(((mean - s) / np.sqrt(np.maximum(var, 1e-300)) > SADDLE_BEYOND).sum()))
        return solve(ms, s, *args, moments=moments, **kwargs)

    monkeypatch.setattr(hold_games, "batch_two_sided", recording)
    t = detect_all(StatsInputs(w, e, c, DAY, DAY), StatsParams(hold_min_wagers=100), 1)[0]
    lost = t.filter((pl.col("test") == "hold_table") & (pl.col("table_id") == "HB-01") & (pl.col("bet") == "main"))
    assert lost.height == 1 and lost["recorded_net"][0] < 5 * lost["expected_net"][0] < 0
    assert lost["p_value"][0] == 1.0
    # every games' hold entity below its mean is one-sided here (main games, the Bonus), and none was solved
    games = t.filter(pl.col("test").str.starts_with("hold_") & pl.col("game").is_in(["holdem_bonus", "blackjack"]))
    assert games.filter(pl.col("recorded_net") < pl.col("expected_net"))["p_value"].to_list() == \
        [1.0] * games.filter(pl.col("recorded_net") < pl.col("expected_net")).height
    assert below and sum(below) == 0
