"""Hold'em Bonus odds: the exact Bonus figure against an independent count, the simulated main game
against the scalar engine, the progressive's exact return against hand-written formulas."""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from rulebook.catalogue import builtin
from rulebook.holdem_bonus import odds
from rulebook.holdem_bonus.engine import settle_round
from rulebook.odds import house_edges
from rulebook.round import Action, DeviceCard, RoundInput, Wager

HOIANA = builtin().latest("hoiana-holdem-bonus")
MBS = builtin().latest("mbs-holdem-bonus-progressive")
GUIDE = builtin().latest("guide-holdem-bonus-progressive")


def bonus_ev_by_rank_classes(table: dict[str, Fraction]) -> Fraction:
    """The Bonus expectation counted by hand, by rank class of the two hole cards (independent of the
    enumeration in odds.py): combinations out of C(52, 2), and, for A-A, the dealer's A-A out of C(50, 2)."""
    hands = comb(52, 2)
    pair = comb(4, 2)  # 6 ways to hold a given pair
    counts = {
        "aa": pair,
        "ak_suited": 4,
        "aq_aj_suited": 2 * 4,
        "ak_offsuit": 4 * 3,
        "kk_qq_jj": 3 * pair,
        "aq_aj_offsuit": 2 * 4 * 3,
        "pair_2_to_10": 9 * pair,
    }
    winners = sum(counts.values())
    ev = Fraction(0)
    for hand, n in counts.items():
        if hand == "aa" and "aa_vs_dealer_aa" in table:
            p_dealer_aa = Fraction(comb(2, 2), comb(50, 2))  # the two other aces among the dealer's 50 choose 2
            ev += Fraction(n, hands) * (p_dealer_aa * table["aa_vs_dealer_aa"] + (1 - p_dealer_aa) * table["aa"])
        else:
            ev += Fraction(n, hands) * table[hand]
    return ev - Fraction(hands - winners, hands)


def table_of(rs) -> dict[str, Fraction]:
    return {l.hand: Fraction(*map(int, l.odds.split(":"))) for l in rs.params.bonus_pay_table}


def test_bonus_with_the_1000_to_1_line_is_8_54_percent_exactly_HTB_6_1_2():
    ev, p_win = odds.bonus_expectation(HOIANA.params)
    assert ev == Fraction(-13873, 162435)  # house edge 8.5406 %
    assert round(float(-ev) * 100, 4) == 8.5406
    assert ev == bonus_ev_by_rank_classes(table_of(HOIANA))
    assert p_win == Fraction(126, 1326)
    assert odds.bonus_expectation(MBS.params)[0] == ev  # MBS-4.1.1 has the same table


def test_guide_bonus_without_the_1000_to_1_line_THB_G_BONUS():
    ev, _ = odds.bonus_expectation(GUIDE.params)
    assert ev == Fraction(-59, 663)  # 8.8989 %
    assert ev == bonus_ev_by_rank_classes(table_of(GUIDE))


def test_enumeration_holds_every_holding_once():
    player, dealer = odds.all_holdings()
    assert len(player) == 1326 * 1225 == 1_624_350
    cards = np.concatenate([player, dealer], axis=1)
    assert (np.sort(cards, axis=1)[:, 1:] != np.sort(cards, axis=1)[:, :-1]).all()
    # the A-A against A-A holdings, brute force: 6 player pairs x 1 dealer pair
    counts, total = odds.bonus_line_counts(HOIANA.params)
    aces = [c for c in range(4)]
    brute = sum(1 for p in itertools.combinations(aces, 2) for d in itertools.combinations(aces, 2) if not set(p) & set(d))
    assert counts["aa_vs_dealer_aa"] == brute == 6
    assert counts["aa"] == 6 * 1225 - 6


def basic_decisions(c: list[int]) -> tuple[bool, bool, bool]:
    """The "basic" strategy's words, applied to one round by hand: (fold, bet the turn, bet the river)."""
    from rulebook import poker

    ranks, suits = [x // 4 for x in c], [x % 4 for x in c]
    values = sorted(13 if r == 0 else r for r in ranks[:2])  # the ace high; a two is 1
    fold = values[0] == 1 and 2 <= values[1] <= 6 and suits[0] != suits[1]  # 2-3 .. 2-7 unsuited (a pair of twos plays)
    paired_flop = ranks[0] == ranks[1] or bool({ranks[0], ranks[1]} & set(ranks[2:5]))
    paired_turn = ranks[0] == ranks[1] or bool({ranks[0], ranks[1]} & set(ranks[2:6]))
    straight_or_better = lambda cards: poker.category(poker.evaluate_hand(cards)) >= poker.STRAIGHT  # noqa: E731
    four_suited = any(suits[:5].count(suits[k]) >= 4 for k in (0, 1))
    return fold, paired_flop or straight_or_better(c[:5]) or four_suited, paired_turn or straight_or_better(c[:6])


@pytest.mark.parametrize("strategy", ["basic", "pair_with_hole"])
def test_main_game_simulation_equals_the_scalar_engine_round_by_round(strategy):
    """The simulation settles by the array kernel: replay its first rounds through settle_round."""
    rng = np.random.default_rng(7)
    cards = odds.deal_cards(rng, 400)
    nets, p, d = next(odds.simulate_main_game(HOIANA.params, 400, 7, strategy, chunk=400))
    folds = 0
    for k in range(400):
        c = [int(x) for x in cards[k]]
        hole, community, dealer = c[:2], c[2:7], c[7:9]
        ranks = [x // 4 for x in c]
        if strategy == "basic":
            fold, turn, river = basic_decisions(c)
        else:
            fold = False
            turn = ranks[0] == ranks[1] or bool({ranks[0], ranks[1]} & set(ranks[2:5]))
            river = ranks[0] == ranks[1] or bool({ranks[0], ranks[1]} & set(ranks[2:6]))
        wagers = [Wager("a", 1, "ante", 1)]
        if fold:
            actions = [Action(1, 1, "fold")]
            folds += 1
        else:
            wagers.append(Wager("f", 1, "flop", 2))
            actions = [Action(1, 1, "flop"), Action(1, 1, "turn" if turn else "check"), Action(1, 1, "river" if river else "check")]
            if turn:
                wagers.append(Wager("t", 1, "turn", 1))
            if river:
                wagers.append(Wager("r", 1, "river", 1))
        events = tuple(DeviceCard(x) for x in community + hole + dealer)  # device order (HTB-4.12.1)
        r = settle_round(RoundInput(HOIANA, events, tuple(wagers), tuple(actions), deal_mode="device"))
        assert not r.unsettled and not r.irregularities
        assert sum(s.net for s in r.settlements.values()) == nets[k]
    assert strategy != "basic" or 0 < folds < 40


def test_main_game_edge_is_stated_with_its_interval_and_the_flush_qualifier_costs_the_player():
    hoiana = odds.ante_odds(HOIANA.params, 200_000, 3, "basic")
    guide = odds.ante_odds(GUIDE.params, 200_000, 3, "basic")  # same seed: the same cards
    assert hoiana.method == "simulation" and hoiana.ci95[0] < hoiana.house_edge < hoiana.ci95[1]
    assert guide.house_edge > hoiana.house_edge  # an Ante paid on fewer hands (THB-G-SETTLEMENT vs HTB-5.2)
    # optimal play gives about 2.04 % (straight) and 5.59 % (flush) (Wizard of Odds); a simple strategy does worse
    assert 0.02 < hoiana.house_edge < 0.07 and 0.055 < guide.house_edge < 0.11
    pairs_only = odds.ante_odds(HOIANA.params, 200_000, 3, "pair_with_hole")
    checking = odds.ante_odds(HOIANA.params, 200_000, 3, "check")
    assert checking.house_edge > pairs_only.house_edge + 0.1 > hoiana.house_edge + 0.1  # never betting a made hand is much worse


def test_guide_progressive_return_by_hand_THB_G_JACKPOT():
    meter, wager = 9_000_000, 100
    expected = Fraction(
        4 * max(5_000_000, meter) + 36 * max(500_000, meter // 10) + 624 * 50_000 + 3744 * 15_000 + 5108 * 10_000,
        comb(52, 5) * wager,
    )
    ret, p_win, _ = odds.progressive_return(GUIDE.params, meter, wager)
    assert ret == expected
    assert p_win == Fraction(4 + 36 + 624 + 3744 + 5108, comb(52, 5))


def test_mbs_royal_position_classes_by_the_engine_MBS_4_1_2():
    """A royal in seven cards lies at 5 of the 7 positions: 1 set pays 100 %, 5 pay 25 %, 14 pay 5 %,
    1 (the community) the fixed $10,000 -- checked by settling a round for each of the 21 sets."""
    royal = [0 * 4 + 3, 12 * 4 + 3, 11 * 4 + 3, 10 * 4 + 3, 9 * 4 + 3]  # As Ks Qs Js Ts
    others = [2 * 4, 5 * 4 + 1]  # 3c 6d: no straight flush or quads with the royal
    seen = {}
    for positions in itertools.combinations(range(7), 5):
        it_royal, it_other = iter(royal), iter(others)
        seven = [next(it_royal) if k in positions else next(it_other) for k in range(7)]
        hole, community = seven[:2], seven[2:]
        events = (DeviceCard(hole[0]), DeviceCard(7 * 4 + 2), DeviceCard(hole[1]), DeviceCard(8 * 4 + 2),
                  *(DeviceCard(c) for c in community), DeviceCard(4 * 4), DeviceCard(4 * 4 + 1))
        wagers = (Wager("a1", 1, "ante", 100), Wager("f1", 1, "flop", 200), Wager("p1", 1, "progressive", 100), Wager("a2", 2, "ante", 100))
        r = settle_round(RoundInput(MBS, events, wagers, (Action(1, 1, "flop"), Action(2, 1, "fold")),
                                    deal_mode="shoe", jackpot_meter=100_000_000, currency="SGD"))
        net = r.settlements["p1"].net + 100
        seen[net] = seen.get(net, 0) + 1
    assert seen == {100_000_000: 1, 25_000_000: 5, 5_000_000: 14, 1_000_000: 1}
    ret, p_win, _ = odds.progressive_return(MBS.params, 100_000_000, 100)
    by_hand = (
        Fraction(4, comb(52, 5)) * (100_000_000 + 5 * 25_000_000 + 14 * 5_000_000 + 1_000_000)
        + Fraction(37260, comb(52, 7)) * 150_000
        + Fraction(224848, comb(52, 7)) * 30_000
    ) / 100
    assert ret == by_hand
    assert odds.progressive_return(MBS.params, 1_000_000, 100) is None  # below 20 x $1,500 the count is not exact


def test_house_edges_report_for_every_rule_set():
    for rs, bets in ((HOIANA, {"bonus", "ante"}), (MBS, {"bonus", "ante"}), (GUIDE, {"bonus", "ante"})):
        report = house_edges(rs, None, rounds=20_000, seed=1, strategy="basic")
        assert set(report.bets) == bets
        assert report.bets["bonus"].method == "exact" and report.bets["ante"].method == "simulation"
        assert "never folds" in report.bets["bonus"].notes
        ante = report.as_json()["bets"]["ante"]
        assert ante["ci95"] and ante["strategy"]["name"] == "basic" and "fold 2-3 to 2-7" in ante["strategy"]["description"]
        assert 0 < ante["standard_error"] < 0.05
        # the shipped progressive rule sets leave the jackpot stake unstated: no figure, and why
        if rs.params.progressive is not None:
            assert "stake is not stated" in report.as_json()["omitted"]["progressive"]
    with pytest.raises(ValueError, match="one deck"):
        house_edges(HOIANA, 6)


def with_stake(rs, stake):
    prog = dataclasses.replace(rs.params.progressive, stake=stake)
    return dataclasses.replace(rs, params=dataclasses.replace(rs.params, progressive=prog))


def test_progressive_odds_use_the_rule_sets_stake_MBS_1_1_12():
    # at S$1 a 100,000-dollar meter would return 1.39 per unit staked (a 39 % player advantage); the
    # figure is the stake's: S$5 returns a fifth of it per unit
    one = house_edges(with_stake(MBS, 100), strategy="basic", rounds=20_000).bets["progressive"]
    five = house_edges(with_stake(MBS, 500), strategy="basic", rounds=20_000).bets["progressive"]
    ret_one, ret_five = 1 - one.house_edge, 1 - five.house_edge
    assert ret_one == pytest.approx(5 * ret_five, rel=1e-12)
    ret, _, _ = odds.progressive_return(MBS.params, odds.DEFAULT_METER, 500)
    assert five.house_edge == pytest.approx(float(1 - ret), abs=1e-15)
    assert "stake 500" in five.notes and five.strategy.name == "never_fold" and five.standard_error == 0.0


def test_optimal_strategy_turn_and_river_values_equal_a_brute_force_count():
    """The per-flop count against an independent one: every turn, river and dealer hand of three
    holdings enumerated one by one with the evaluator, the decisions taken from the counts."""
    from rulebook import poker
    from rulebook.holdem_bonus.strategy import _IU, _JU, flop_values

    flop = np.array([5, 22, 47], dtype=np.uint8)  # 2s 7h Qs
    fv = flop_values(flop, poker.STRAIGHT)
    for k in (0, 777):
        a, b = int(fv.cards[_IU[k]]), int(fv.cards[_JU[k]])
        rest = [c for c in range(52) if c not in (*flop, a, b)]
        per_turn = []
        for t in rest:
            edges, antes = [], []
            for r in (c for c in rest if c != t):
                board = [*flop, t, r]
                dealers = np.array(list(itertools.combinations([c for c in rest if c not in (t, r)], 2)))
                d = poker.evaluate7(np.column_stack([dealers, np.tile(board, (len(dealers), 1))]).astype(np.uint8))
                p = poker.evaluate7(np.array([[a, b, *board]], dtype=np.uint8))[0]
                win, lose = (p > d).mean(), (p < d).mean()
                edges.append(win - lose)
                antes.append(win * (poker.category(np.array([p]))[0] >= poker.STRAIGHT) - lose)
            per_turn.append((np.mean(edges), np.mean(antes)))
        turn = np.mean([e for e, _ in per_turn])
        ante = np.mean([x for _, x in per_turn])
        river = np.mean([max(e, 0) for e, _ in per_turn])  # bet the river when ahead after that turn card
        assert fv.play_ev[k] == pytest.approx(ante + 2 * turn + max(turn, 0) + river, abs=1e-12)
        assert bool(fv.turn_bet[k]) == (turn > 0)


def test_a_river_bet_worth_exactly_nothing_is_not_placed():
    """The River bet is placed when the hand wins more often than it loses (``P(win) > P(lose)``), counted
    in whole hands. On 2h Ts Js with 6h 6s, the turn cards 8h and Kh leave wins and losses exactly equal over
    the 46 rivers and 990 dealer hands each: no bet. A count summed in fractions placed one of them by rounding."""
    from rulebook import poker
    from rulebook.holdem_bonus.strategy import _IU, _JU, flop_values

    flop = (6, 39, 43)
    fv = flop_values(flop, poker.STRAIGHT)
    k = 798
    a, b = int(fv.cards[_IU[k]]), int(fv.cards[_JU[k]])
    assert {a, b} == {22, 23}  # 6h 6s
    rest = [c for c in range(52) if c not in (*flop, a, b)]
    net_after_turn = {}
    for t in rest:
        net = 0
        for r in (c for c in rest if c != t):
            board = [*flop, t, r]
            dealers = np.array(list(itertools.combinations([c for c in rest if c not in (t, r)], 2)))
            d = poker.evaluate7(np.column_stack([dealers, np.tile(board, (len(dealers), 1))]).astype(np.uint8))
            p = poker.evaluate7(np.array([[a, b, *board]], dtype=np.uint8))[0]
            net += int((p > d).sum()) - int((p < d).sum())
        net_after_turn[t] = net
    assert sorted(t for t, n in net_after_turn.items() if n == 0) == [30, 50]  # 8h, Kh
    assert fv.river_rate[k] * 47 == pytest.approx(sum(n > 0 for n in net_after_turn.values()), abs=1e-9)


def _direct_counts(board: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reference: every holding of the 47 cards left on a full board evaluated, and compared with every other
    holding that shares no card with it (wins, ties, category per holding, in ``board_counts``' order)."""
    from rulebook import poker

    rest = np.setdiff1d(np.arange(52), board)
    i, j = np.triu_indices(47, 1)
    s = poker.evaluate7(np.column_stack([np.tile(board, (len(i), 1)), rest[i], rest[j]]).astype(np.uint8))
    cards = np.zeros((len(i), 47), dtype=bool)
    cards[np.arange(len(i)), i] = cards[np.arange(len(i)), j] = True
    disjoint = ~(cards.astype(np.int64) @ cards.T.astype(np.int64)).astype(bool)
    wins = ((s[None, :] < s[:, None]) & disjoint).sum(axis=1)
    ties = ((s[None, :] == s[:, None]) & disjoint).sum(axis=1)
    return wins, ties, poker.category(s)


def test_a_board_class_is_counted_once_and_every_flop_reads_a_direct_count_of_its_boards():
    """Every full board is read from the counts of its class of boards equal but for suits (``board_counts``).
    The classes the monotone flop Ac 2c 3c meets, by Burnside's lemma over the 6 suit permutations that keep it: the
    identity fixes the 1,176 boards, each of the 3 swaps of two other suits 253 + 13 (both cards of the two suits it
    leaves alone, or one rank in the two it swaps), each of the 2 three-cycles the 45 pairs of the 10 clubs left:
    (1,176 + 3 x 266 + 2 x 45) / 6 = 344. Each flop's boards, read, equal a direct count (every holding compared with
    every disjoint one), on a monotone, a two-tone, a paired and a rainbow flop; and a flop's values do not depend on
    which flops the counts met before."""
    from rulebook import poker
    from rulebook.holdem_bonus import strategy
    from rulebook.holdem_bonus.board_counts import BoardCounts

    monotone, two_tone, paired, rainbow = (0, 4, 8), (6, 39, 43), (0, 1, 20), (5, 22, 47)
    fresh = BoardCounts()
    strategy.flop_values(monotone, poker.STRAIGHT, counts=fresh)
    assert len(fresh) == 344
    rng = np.random.default_rng(5)
    for flop in (monotone, two_tone, paired, rainbow):
        rest = np.setdiff1d(np.arange(52), flop)
        pairs = [tuple(rng.choice(rest, 2, replace=False)) for _ in range(4)]
        boards = np.array([[*flop, *p] for p in pairs], dtype=np.int64)
        wins, losses, category = fresh.holdings(boards, np.arange(52), np.triu_indices(52, 1))
        for b, board in enumerate(boards):
            w, t, c = _direct_counts(board)
            left = np.setdiff1d(np.arange(52), board)
            at = np.array([x * 52 - x * (x + 1) // 2 + y - x - 1 for x, y in itertools.combinations(left.tolist(), 2)])
            assert np.array_equal(wins[b, at], w) and np.array_equal(losses[b, at], 990 - w - t), (flop, board)
            assert np.array_equal(category[b, at], c)
    first = strategy.flop_values(two_tone, poker.FLUSH, counts=BoardCounts())
    met_before = strategy.flop_values(two_tone, poker.FLUSH, counts=fresh)  # its classes in other rows, some met
    for name in ("ev", "play_ev", "folded", "turn_bet", "river_rate", "win", "tie"):
        assert np.array_equal(getattr(first, name), getattr(met_before, name)), name


def test_the_count_tells_its_progress_after_each_chunk_and_the_bar_draws_it_only_when_there_is_a_count(monkeypatch):
    """The exact count takes minutes: ``main_game_value`` tells ``progress(done, total)`` after each chunk of flops,
    the odds pass it on, and the console's bar draws it (a figure without a count draws none, off a terminal nothing)."""
    import io

    from rich.console import Console

    from pipelines.console import count_progress
    from rulebook import poker
    from rulebook.holdem_bonus import strategy

    told: list[tuple[int, int]] = []
    v = strategy.main_game_value(poker.STRAIGHT, flops=3, seed=4, progress=lambda done, total: told.append((done, total)))
    assert told == [(3, 3)] and v.flops == 3  # one chunk of 45 flops or fewer
    monkeypatch.setattr(strategy, "_CHUNK_FLOPS", 1)
    told.clear()
    assert strategy.main_game_value(poker.STRAIGHT, flops=3, seed=4, progress=lambda d, t: told.append((d, t))) == v
    assert told == [(1, 3), (2, 3), (3, 3)]
    terminal = Console(file=io.StringIO(), force_terminal=True, width=120)
    with count_progress("Hold'em main game, flops counted", show=True, console=terminal) as progress:
        report = house_edges(HOIANA, flops=2, seed=4, progress=progress)
    assert report.bets["ante"].method == "sampled flops"
    assert "Hold'em main game, flops counted" in terminal.file.getvalue() and "2/2" in terminal.file.getvalue()
    quiet = Console(file=io.StringIO(), force_terminal=True, width=120)
    with count_progress("nothing to count", show=True, console=quiet):
        house_edges(builtin().latest("hoiana-tiger-baccarat/commission"))
    assert quiet.file.getvalue() == ""
    with count_progress("not a terminal", show=False) as progress:
        progress(1, 2)  # does nothing, prints nothing


def test_the_count_spread_over_two_processes_is_the_count_in_one_to_the_last_bit(monkeypatch):
    """``pitaudit odds`` spreads the flops' chunks over a pool of spawned processes (``chunks_on_cores``); the chunks
    come back in order and are summed in it, so the figures are the single process's exactly: four sampled flops as
    four chunks, and one flop's values by starting hand (what the exact count sums) from a worker and from here."""
    from pipelines.chunks_on_cores import chunks_on_cores
    from rulebook import poker
    from rulebook.holdem_bonus import strategy

    monkeypatch.setattr(strategy, "_CHUNK_FLOPS", 1)  # the chunks are cut here, in the caller's process
    alone = strategy.main_game_value(poker.STRAIGHT, flops=4, seed=9)
    job = (np.array([[0, 4, 8]], dtype=np.uint8), poker.STRAIGHT, strategy.PREFLOP_FOLD, True)
    here = strategy.count_flops(job)
    with chunks_on_cores(2) as map_chunks:
        spread = strategy.main_game_value(poker.STRAIGHT, flops=4, seed=9, map_chunks=map_chunks)
        [there, _] = list(map_chunks(strategy.count_flops, [job, job]))
    assert spread == alone and spread.flops == 4
    assert np.array_equal(there.per_flop, here.per_flop) and there.classes == here.classes
    assert len(here.classes[0][0]) == 169 and sum(here.classes[0][2]) == 1176  # every starting hand, every holding


def _workers_of(pid: int) -> list[str]:
    import subprocess

    return subprocess.run(["pgrep", "-P", str(pid), "-f", "multiprocessing.spawn"], capture_output=True,
                          text=True).stdout.split()


def test_ctrl_c_ends_the_cores_pool_at_once_not_after_the_chunks_in_hand():
    """``chunks_on_cores`` on Ctrl-C (the terminal's whole process group): its workers ignore the signal, and leaving
    the pool ends them at once. Each chunk here is a minute's sleep: ended after the chunks in hand, it would take a
    minute; it takes seconds."""
    import os
    import signal
    import subprocess
    import sys
    import time

    code = ("import time\nfrom pipelines.chunks_on_cores import chunks_on_cores\n"
            "with chunks_on_cores(2) as map_chunks:\n    list(map_chunks(time.sleep, [60, 60]))\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(_workers_of(proc.pid)) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-2000:]
            time.sleep(0.2)
        pids = _workers_of(proc.pid)
        time.sleep(1)  # each asleep in its chunk
        os.killpg(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=90)
        assert time.monotonic() - sent < 8 and b"KeyboardInterrupt" in err
        time.sleep(0.5)
        assert not [p for p in pids if os.path.exists(f"/proc/{p}")], "a worker outlived its pool"
    finally:  # a failed run leaves nothing behind: the command's group, its workers with it (they end with it too)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_ctrl_c_during_the_spread_count_ends_the_command_and_its_workers():
    """``pitaudit odds`` as a user runs it, the count spread over two processes: Ctrl-C reaches the terminal's whole
    process group, the command ends its pool (at once: the test above) and exits 130, leaving no process behind."""
    import os
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "odds", "--ruleset", "hoiana-holdem-bonus",
                             "--processes", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)

    deadline = time.monotonic() + 120
    while len(_workers_of(proc.pid)) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-2000:]
        time.sleep(0.2)
    pids = _workers_of(proc.pid)
    time.sleep(1)  # at work on their first chunks
    os.killpg(proc.pid, signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    time.sleep(0.5)
    assert not [p for p in pids if os.path.exists(f"/proc/{p}")], "a worker outlived the command"


def test_pitaudit_odds_draws_the_count_on_a_terminals_stderr_and_leaves_the_json_on_stdout_alone():
    """``pitaudit odds`` as a user runs it, stderr a terminal (a pseudo-terminal) and stdout a pipe: the bar names the
    count and reaches 2/2; stdout is the JSON alone."""
    import json
    import os
    import pty
    import subprocess
    import sys
    import threading

    leader, follower = pty.openpty()
    drawn = bytearray()

    def read() -> None:  # as the child writes (a full terminal buffer would stop it)
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed
                return
            if not chunk:
                return
            drawn.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        done = subprocess.run([sys.executable, "-m", "pipelines.cli", "odds", "--ruleset", "hoiana-holdem-bonus",
                               "--flops", "2", "--json"], stdout=subprocess.PIPE, stderr=follower, timeout=600)
    finally:
        os.close(follower)
    reader.join(timeout=30)
    os.close(leader)
    assert done.returncode == 0, bytes(drawn)[-2000:]
    assert json.loads(done.stdout)["bets"]["ante"]["method"] == "sampled flops"
    text = bytes(drawn).decode("utf-8", "replace")
    assert "Hold'em main game, flops counted" in text and "2/2" in text, text[-2000:]


def test_optimal_strategy_on_sampled_flops_states_its_strategy_and_standard_error():
    report = house_edges(HOIANA, flops=6, seed=2)
    ante = report.bets["ante"]
    assert ante.method == "sampled flops" and ante.strategy.name == "optimal" and ante.standard_error > 0
    assert ante.ci95[0] < ante.house_edge < ante.ci95[1]
    assert report.as_json()["bets"]["ante"]["strategy"]["name"] == "optimal"


@pytest.mark.slow
def test_standard_game_ante_edge_under_the_optimal_strategy_is_the_published_2_0_to_2_2_percent():
    """Every flop class counted exactly (about a CPU-minute): the figure has no sampling error, so it
    lies in the published range (Wizard of Odds: 2.04 % under optimal play) or the strategy is wrong.
    It also checks the pre-flop fold list: exactly the folded hands are worth less than the lost Ante."""
    from rulebook import poker
    from rulebook.holdem_bonus.strategy import PREFLOP_FOLD, main_game_value, shared_board_counts

    v = main_game_value(poker.STRAIGHT)
    assert v.exact and v.standard_error == 0.0 and v.flops == 1755
    # every class of full boards met, each counted once: 134,459 boards equal but for suits of the 2,598,960
    assert len(shared_board_counts()) == 134_459
    assert 0.020 <= -v.expectation <= 0.022
    assert {h for h, ev in v.starting_hands.items() if ev < -1} == set(PREFLOP_FOLD)
    assert len(v.starting_hands) == 169
