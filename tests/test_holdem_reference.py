"""The main game and the Bonus cross-checked against an independent settlement built on a public
evaluator (treys): random clean rounds, every wager's net compared (HTB-5.2-5.4, 6.1.1, 6.1.2;
the guide's Flush qualifier)."""

from __future__ import annotations

import dataclasses
import random

import pytest
from treys import Card, Evaluator

from rulebook.cards import card_text
from rulebook.catalogue import builtin
from rulebook.holdem_bonus.deal import deal_events
from rulebook.holdem_bonus.engine import settle_round
from rulebook.round import Action, RoundInput, Wager

EVALUATOR = Evaluator()
BONUS_ODDS = {"AA": 30, "AKs": 25, "AQs": 20, "AJs": 20, "AKo": 15, "KK": 10, "QQ": 10, "JJ": 10, "AQo": 5, "AJo": 5}


def treys_rank(cards: list[int]) -> int:
    """treys: 1 is the best hand (a royal flush), 7462 the worst."""
    t = [Card.new(card_text(c)) for c in cards]
    return EVALUATOR.evaluate(t[2:], t[:2])


def bonus_multiple(hole: list[int], dealer: list[int], with_1000: bool) -> int | None:
    """Written from the pay table's words, by the rank letters: the odds won, or None."""
    r = sorted((card_text(c)[0] for c in hole), key="AKQJT98765432".index)
    suited = card_text(hole[0])[1] == card_text(hole[1])[1]
    if r[0] == r[1]:
        if r[0] == "A" and with_1000 and all(card_text(c)[0] == "A" for c in dealer):
            return 1000
        return BONUS_ODDS.get(r[0] * 2, 3)
    return BONUS_ODDS.get(r[0] + r[1] + ("s" if suited else "o"))


@pytest.mark.parametrize("name", ["hoiana-holdem-bonus", "guide-holdem-bonus-progressive"])
def test_engine_agrees_with_an_independent_settlement_on_treys(name):
    rs = builtin().latest(name)
    qualifier_class = 5 if rs.params.ante_qualifier == "straight" else 4  # treys classes: 0 royal .. 5 straight, 4 flush
    rng = random.Random(2026)
    checked = 0
    for _ in range(400):
        seats = sorted(rng.sample(range(1, 8), rng.randint(1, 4)))
        deck = rng.sample(range(52), 2 * len(seats) + 13)
        hole = [deck[2 * k: 2 * k + 2] for k in range(len(seats))]
        rest = deck[2 * len(seats):]
        community, dealer, burns = rest[:5], rest[5:7], rest[7:11]
        events = deal_events(rs.params.shoe_deal, [tuple(h) for h in hole], tuple(community), tuple(dealer), tuple(burns))
        wagers, actions, expected = [], [], {}
        d_rank = treys_rank(dealer + community)
        for s, h in zip(seats, hole):
            ante = rng.choice([100, 300])
            ids = {b: f"{s}{b}" for b in ("ante", "bonus", "flop", "turn", "river")}
            wagers += [Wager(ids["ante"], s, "ante", ante), Wager(ids["bonus"], s, "bonus", 10)]
            fold = rng.random() < 0.2
            mult = bonus_multiple(h, dealer, with_1000=name.startswith("hoiana"))
            if fold:
                actions.append(Action(s, 1, "fold"))
                expected[ids["ante"]], expected[ids["bonus"]] = -ante, -10
                continue
            expected[ids["bonus"]] = 10 * mult if mult else -10
            actions.append(Action(s, 1, "flop"))
            wagers.append(Wager(ids["flop"], s, "flop", 2 * ante))
            bets = {"flop": 2 * ante}
            for street in ("turn", "river"):
                if rng.random() < 0.5:
                    actions.append(Action(s, 1, street))
                    wagers.append(Wager(ids[street], s, street, ante))
                    bets[street] = ante
                else:
                    actions.append(Action(s, 1, "check"))
            p_rank = treys_rank(h + community)
            if p_rank < d_rank:  # the player's hand is higher
                qualifies = EVALUATOR.get_rank_class(p_rank) <= qualifier_class
                expected[ids["ante"]] = ante if qualifies else 0
                expected.update({ids[b]: a for b, a in bets.items()})
            elif p_rank > d_rank:
                expected[ids["ante"]] = -ante
                expected.update({ids[b]: -a for b, a in bets.items()})
            else:
                expected[ids["ante"]] = 0
                expected.update({ids[b]: 0 for b in bets})
        r = settle_round(RoundInput(rs, events, tuple(wagers), tuple(actions), deal_mode="shoe"))
        assert not r.unsettled and not r.irregularities
        assert {k: s.net for k, s in r.settlements.items()} == expected
        checked += len(expected)
    assert checked > 1500


# --- the jackpots, read from the texts' words on treys -----------------------------------------------------
# A deck of sixteen cards (ace to eight of hearts and spades, the other two nines and tens) makes the rare hands
# common: royal and straight flushes, fours of a kind and full houses, on the flop, the turn, the river and the
# board alone.

JACKPOT_DECK = [r + s for r in "AKQJT98" for s in "hs"] + ["9c", "9d", "Tc", "Td"]
ENVY = {0: 2_000_00, 1: 250_00}  # a Bonus Jackpot for a royal flush and a straight flush won at the table
METER = 12_345_67  # in cents: the percentage lines round down (5 % = 61,728.35 -> 61,728)


def treys_class(cards: list[str]) -> int:
    """treys' rank class of the best five of 5, 6 or 7 cards: 0 royal flush, 1 straight flush, 2 four of a kind,
    3 full house, 4 flush, ... (the royal is its own class in treys)."""
    t = [Card.new(c) for c in cards]
    return EVALUATOR.get_rank_class(EVALUATOR.evaluate(t[:2], t[2:]))


def mbs_jackpot(hole: list[str], board: list[str], folded: bool) -> int:
    """MBS-4.1.2 and 4.1.3 as written, the largest line a hand meets (one jackpot per wager); a folded hand only
    the community lines (MBS-3.7.1)."""
    seven, community = treys_class(hole + board), treys_class(board)
    paid = [0]
    if not folded:
        if treys_class(hole + board[:3]) == 0:  # "Royal Flush on the Flop (after 5 cards)"
            paid.append(METER)
        if treys_class(hole + board[:4]) == 0:  # "on the Turn (after 6 cards)"
            paid.append(METER * 25 // 100)
        if seven == 0 and community != 0:  # "on the River (after 7 cards) ... at least 1 Hole Card"
            paid.append(METER * 5 // 100)
        paid.append({1: 1_500_00, 2: 300_00}.get(seven, 0))  # best of 7 cards
    paid.append({0: 10_000_00, 1: 1_500_00, 2: 300_00}.get(community, 0))  # the 5 community cards
    return max(paid)


def guide_jackpot(hole: list[str], board: list[str]) -> int:
    """The guide's jackpot on the hole cards plus the flop, folded or not: the greater of the fixed amount and the
    meter's share for the royal and the straight flush, fixed amounts below."""
    c = treys_class(hole + board[:3])
    return {0: max(50_000_00, METER), 1: max(5_000_00, METER * 10 // 100), 2: 500_00, 3: 150_00, 4: 100_00}.get(c, 0)


@pytest.mark.parametrize("name", ["mbs-holdem-bonus-progressive", "guide-holdem-bonus-progressive"])
def test_jackpot_agrees_with_an_independent_reading_on_treys(name):
    from rulebook.cards import parse_card

    rs = builtin().latest(name)
    if name.startswith("guide"):  # its Bonus Jackpot (envy) stated, as a casino would (the text names no amount)
        prog = dataclasses.replace(rs.params.progressive, envy_royal_flush=ENVY[0], envy_straight_flush=ENVY[1])
        rs = dataclasses.replace(rs, params=dataclasses.replace(rs.params, progressive=prog))
    currency = rs.params.progressive.currency
    rng = random.Random(2027)
    wins, lines = 0, set()
    for _ in range(2000):
        seats = sorted(rng.sample(range(1, 8), rng.randint(1, 3)))
        deck = rng.sample(JACKPOT_DECK, 2 * len(seats) + 7)
        if rng.random() < 0.05:  # a board that is itself a royal or a straight flush (MBS-4.1.3)
            made = [r + rng.choice("hs") for r in rng.choice(["AKQJT", "KQJT9"])]
            made = [c[0] + made[0][1] for c in made]
            rest = [c for c in JACKPOT_DECK if c not in made]
            rng.shuffle(rest)
            deck = rest[: 2 * len(seats)] + made + rest[2 * len(seats): 2 * len(seats) + 2]
        hole = [deck[2 * k: 2 * k + 2] for k in range(len(seats))]
        board, dealer = deck[2 * len(seats): 2 * len(seats) + 5], deck[-2:]
        code = lambda cs: tuple(parse_card(c) for c in cs)  # noqa: E731
        events = deal_events(rs.params.device_deal, [code(h) for h in hole], code(board), code(dealer), ())
        wagers, actions, expected = [], [], {}
        folds = {s: rng.random() < 0.3 for s in seats}
        for s, h in zip(seats, hole):
            wagers += [Wager(f"{s}a", s, "ante", 100), Wager(f"{s}p", s, "progressive", 100)]
            if folds[s]:
                actions.append(Action(s, 1, "fold"))
            else:
                wagers.append(Wager(f"{s}f", s, "flop", 200))
                actions += [Action(s, 1, "flop"), Action(s, 1, "check"), Action(s, 1, "check")]
            payout = mbs_jackpot(h, board, folds[s]) if name.startswith("mbs") else guide_jackpot(h, board)
            expected[f"{s}p"] = payout - 100 if payout else -100
        if not name.startswith("mbs"):
            # THB-G-BONUS-JACKPOT: every other jackpot wager at a table where a royal (straight) flush is won is paid
            # the Bonus Jackpot, the larger one if both; the winner is not
            won = [treys_class(h + board[:3]) for h in hole]
            envy = max([ENVY[c] for c in won if c in ENVY] + [0])
            for s, c in zip(seats, won):
                if c not in ENVY and envy:
                    expected[f"{s}p"] = (expected[f"{s}p"] + 100 if expected[f"{s}p"] > 0 else 0) + envy - 100
        r = settle_round(RoundInput(rs, events, tuple(wagers), tuple(actions), deal_mode="device",
                                    jackpot_meter=METER, currency=currency))
        assert not r.unsettled, r.unsettled
        got = {k: s.net for k, s in r.settlements.items() if k.endswith("p")}
        assert got == expected, (hole, board, [folds[s] for s in seats])
        wins += sum(v > 0 for v in expected.values())
        lines.update(s.clause + ":" + str(s.net) for k, s in r.settlements.items() if k.endswith("p") and s.net > 0)
    assert wins > (150 if name.startswith("mbs") else 50), wins
    assert len(lines) >= (8 if name.startswith("mbs") else 6), lines  # most lines of the table met at least once
