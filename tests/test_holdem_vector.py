"""The vectorised Hold'em Bonus settlement equals the scalar reference engine, round for round.

Rounds are drawn at random from all three rule sets and both deal modes, with planted jackpot
hands and planted faults (unread, foreign, missing, extra cards, illegal actions, missing wagers),
so that both the array path and its hand-over to the scalar engine are exercised.
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rulebook.cards import FOREIGN, UNREADABLE
from rulebook.catalogue import builtin
from rulebook.holdem_bonus import engine, vector
from rulebook.holdem_bonus.deal import deal_events
from rulebook.round import Action, DeviceCard, RoundInput, Wager

NAMES = ["hoiana-holdem-bonus", "mbs-holdem-bonus-progressive", "guide-holdem-bonus-progressive"]


def _corner(rng: random.Random, hole, community, dealer, burns, spare, undealt):
    """The same cards with a rare corner swapped into place (no card twice): the first seat's A-A against the dealer's
    A-A (the Bonus' 1000:1 line, HTB-6.1.2; a random deal meets it once in ~270,000 hands), or a board that plays for
    every hand (an A-K-Q-J-T straight in three suits: every hand ties the dealer's, HTB-5.4, and the Ante's straight
    qualifies it under the Hoiana text, HTB-5.2, not under the guide's flush), or trips on the board (the kickers
    decide, HTB-5.3)."""
    n = len(hole)
    cards = [c for h in hole for c in h] + list(community) + list(dealer) + list(burns) + [spare] + list(undealt)
    kind = rng.choice(["aces", "board", "trips"])
    if kind == "aces":
        aces = rng.sample(range(4), 4)
        want = {0: aces[0], 1: aces[1], 2 * n + 5: aces[2], 2 * n + 6: aces[3]}
    elif kind == "board":
        suits = rng.sample([0, 0, 1, 1, 2, 2, 3, 3], 5)
        want = {2 * n + k: rank * 4 + suit for k, (rank, suit) in enumerate(zip([0, 12, 11, 10, 9], suits))}
    else:
        rank = rng.randrange(13)
        want = {2 * n + k: rank * 4 + suit for k, suit in enumerate(rng.sample(range(4), 3))}
    for at, card in want.items():
        j = cards.index(card)
        cards[at], cards[j] = cards[j], cards[at]
    hole = [tuple(cards[2 * k: 2 * k + 2]) for k in range(n)]
    return hole, tuple(cards[2 * n: 2 * n + 5]), tuple(cards[2 * n + 5: 2 * n + 7]), tuple(cards[2 * n + 7: 2 * n + 11]), cards[2 * n + 11]


def random_round(rng: random.Random, faults: bool = True, plant: float = 0.15) -> RoundInput:
    rs = builtin().latest(rng.choice(NAMES))
    p = rs.params
    mode = rng.choice(["shoe", "device"])
    seats = sorted(rng.sample(range(1, 8), rng.randint(1, 5)))
    deck = list(range(52))
    rng.shuffle(deck)
    if rng.random() < plant:  # a royal or straight flush on the first seat's hole cards and the flop
        suit, top = rng.randrange(4), rng.choice([0, 12, 8, 5])
        ranks = [0, 12, 11, 10, 9] if top == 0 else [top - k for k in range(5)]
        made = [r * 4 + suit for r in ranks]
        rest = [c for c in deck if c not in made]
        hole = [tuple(made[:2])] + [tuple(rest[2 * k: 2 * k + 2]) for k in range(len(seats) - 1)]
        rest = rest[2 * (len(seats) - 1):]
        community, rest = tuple(made[2:] + rest[:2]), rest[2:]
    else:
        hole = [tuple(deck[2 * k: 2 * k + 2]) for k in range(len(seats))]
        rest = deck[2 * len(seats):]
        community, rest = tuple(rest[:5]), rest[5:]
    dealer, burns, spare = tuple(rest[:2]), tuple(rest[2:6]), rest[6]
    if plant and rng.random() < plant:
        hole, community, dealer, burns, spare = _corner(rng, hole, community, dealer, burns, spare, rest[7:])
    procedure = p.shoe_deal if mode == "shoe" else p.device_deal
    events = list(deal_events(procedure, hole, community, dealer, burns))
    wagers: list[Wager] = []
    actions: list[Action] = []
    decks = None

    def wager(seat: int, bet: str, amount: int) -> None:
        wagers.append(Wager(f"W{len(wagers) + 1}", seat, bet, amount))

    for s in seats:
        ante = rng.choice([100, 250, 1000, 2500, 3])
        wager(s, "ante", ante)
        if rng.random() < 0.5:
            wager(s, "bonus", rng.choice([100, 500, 7]))
        if p.progressive and rng.random() < 0.5:
            wager(s, "progressive", rng.choice([100, 500]))
        if rng.random() < 0.25:
            actions.append(Action(s, 1, "fold"))
            continue
        actions.append(Action(s, 1, "flop"))
        wager(s, "flop", 2 * ante)
        for street in ("turn", "river"):
            if rng.random() < 0.5:
                actions.append(Action(s, 1, street))
                wager(s, street, ante)
            else:
                actions.append(Action(s, 1, "check"))
        if p.showdown.concede and rng.random() < 0.05:
            actions.append(Action(s, 1, "concede"))
    if faults and rng.random() < 0.3:
        fault = rng.randrange(10)
        if fault == 0:
            events[rng.randrange(len(events))] = DeviceCard(UNREADABLE, False)
        elif fault == 1:
            i = rng.randrange(len(events))
            events[i] = DeviceCard(FOREIGN, events[i].is_burn)
        elif fault == 2:
            events.pop(rng.randrange(len(events)))
        elif fault == 3:
            events.append(DeviceCard(spare))
        elif fault == 4:
            actions.append(Action(seats[0], 1, rng.choice(["turn", "flop", "check", "fold", "concede", "river", "hit"])))
        elif fault == 5:
            wagers.pop(rng.randrange(len(wagers)))
        elif fault == 6 and rng.random() < 0.2:  # two unread cards (the scalar engine enumerates both)
            for _ in range(2):
                events[rng.randrange(len(events))] = DeviceCard(UNREADABLE, False)
        elif fault == 7:
            actions = [a for a in actions if rng.random() < 0.5]
        elif fault == 8:
            wager(rng.randrange(1, 8), rng.choice(["bonus", "turn", "side", "progressive"]), 100)
        elif fault == 9:  # a device that loaded two decks (a flag, HTB-4.1): a card may come twice, even in one hand
            decks = 2
            i, j = rng.sample(range(len(events)), 2)
            events[j] = DeviceCard(events[i].code, events[j].is_burn)
    meter = rng.choice([None, 5_000_000, 123_456_789])
    currency = rng.choice([p.progressive.currency if p.progressive else "USD", "USD", None])
    return RoundInput(rs, tuple(events), tuple(wagers), tuple(actions), deal_mode=mode, jackpot_meter=meter, currency=currency,
                      decks=decks)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=1, max_value=25))
def test_vector_equals_scalar_on_random_rounds(seed, n):
    rng = random.Random(seed)
    rounds = [random_round(rng) for _ in range(n)]
    expected = [engine.settle_round(r) for r in rounds]
    assert vector.settle_many(rounds, with_steps=True) == expected
    # without steps, everything else is the same
    light = vector.settle_many(rounds)
    assert [(r.settlements, r.unsettled, r.irregularities, r.void, r.outcome) for r in light] == [
        (r.settlements, r.unsettled, r.irregularities, r.void, r.outcome) for r in expected
    ]


def test_clean_rounds_take_the_array_path(monkeypatch):
    """The equality above must not come from every round being handed to the scalar engine."""
    rng = random.Random(11)
    rounds = [random_round(rng, faults=False, plant=0.0) for _ in range(400)]
    expected = [engine.settle_round(r) for r in rounds]
    handed_over = []
    real = engine.settle_round
    monkeypatch.setattr(vector.engine, "settle_round", lambda ri: handed_over.append(ri) or real(ri))
    assert vector.settle_many(rounds, with_steps=True) == expected
    # only rounds with a jackpot hand (a hole-and-flop flush under the guide, say) go to the scalar engine
    assert len(handed_over) < 0.05 * len(rounds)
    assert all(any(w.bet == "progressive" for w in ri.wagers) for ri in handed_over)


def test_array_kernels_on_hand_made_cases():
    """main_game and bonus read the rule set's tables: HTB-5.2-5.4, 6.1.2; the guide's flush qualifier."""
    from rulebook import poker
    from rulebook.cards import parse_card

    hoiana = builtin().latest("hoiana-holdem-bonus").params
    guide = builtin().latest("guide-holdem-bonus-progressive").params

    def s(text):
        return poker.evaluate_hand([parse_card(c) for c in text.split()])

    straight, two_pair, pair = s("9c Td Js Qh 8d 2c 3h"), s("Kc Kd Qs Qh 2d 3c 7h"), s("Ac Ad 2s 5h 9d Jc Kh")
    bet = np.array([0, 0, 2, 3, 4, 0])
    status = np.array([0, 0, 0, 0, 0, 1])
    player = np.array([straight, two_pair, two_pair, pair, pair, straight])
    dealer = np.array([pair, pair, pair, two_pair, pair, pair])
    amount = np.array([100, 100, 200, 100, 100, 100])
    net, kind = vector.main_game(hoiana, bet, status, player, dealer, amount)
    assert net.tolist() == [100, 0, 200, -100, 0, -100]
    assert kind.tolist() == [vector.WIN, vector.ANTE_STAND_OFF, vector.WIN, vector.LOSE, vector.STAND_OFF, vector.FOLD]
    net, _ = vector.main_game(guide, bet[:1], status[:1], player[:1], dealer[:1], amount[:1])
    assert net.tolist() == [0]  # a straight does not qualify the Ante under the guide
    hole = np.array([[parse_card("As"), parse_card("Ad")], [parse_card("Ks"), parse_card("As")], [parse_card("2c"), parse_card("7d")]])
    dealer_cards = np.array([[parse_card("Ah"), parse_card("Ac")]] * 3)
    net, kind, line = vector.bonus(hoiana, np.zeros(3, dtype=int), hole, dealer_cards, np.array([10, 10, 10]))
    assert net.tolist() == [10_000, 250, -10]
    net, _, _ = vector.bonus(guide, np.zeros(3, dtype=int), hole, dealer_cards, np.array([10, 10, 10]))
    assert net.tolist() == [300, 250, -10]


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(NAMES),
    mode=st.sampled_from(["shoe", "device", None, "auto"]),
    events=st.lists(st.tuples(st.integers(min_value=-3, max_value=51), st.booleans()), max_size=30),
    wagers=st.lists(
        st.tuples(st.integers(min_value=0, max_value=8), st.sampled_from(["ante", "bonus", "flop", "turn", "river", "progressive", "tie"]),
                  st.integers(min_value=-5, max_value=10_000)),
        max_size=12,
    ),
    actions=st.lists(st.tuples(st.integers(min_value=0, max_value=8), st.sampled_from(["fold", "flop", "check", "turn", "river", "concede", "hit"])), max_size=12),
    meter=st.none() | st.integers(min_value=-10, max_value=10**9),
    currency=st.sampled_from([None, "SGD", "AUD", "VND"]),
    decks=st.none() | st.integers(min_value=1, max_value=8),
)
def test_any_input_is_settled_or_explained_never_raised(name, mode, events, wagers, actions, meter, currency, decks):
    """Bad input gets a reason, never a traceback: every wager ends in settlements or unsettled, once."""
    ri = RoundInput(
        builtin().latest(name),
        tuple(DeviceCard(c, b) for c, b in events),
        tuple(Wager(f"W{k}", s, b, a) for k, (s, b, a) in enumerate(wagers)),
        tuple(Action(s, 1, a) for s, a in actions),
        deal_mode=mode, jackpot_meter=meter, currency=currency, decks=decks,
    )
    for r in (engine.settle_round(ri), vector.settle_many([ri], with_steps=True)[0]):
        ids = [w.wager_id for w in ri.wagers]
        assert sorted([*r.settlements, *r.unsettled]) == sorted(ids)
        assert not set(r.settlements) & set(r.unsettled)
        assert all(isinstance(s.net, int) and s.clause for s in r.settlements.values())
        if r.void:
            assert all(s.net == 0 for s in r.settlements.values())


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(NAMES),
    rows=st.lists(
        st.tuples(st.sampled_from(["ante", "flop", "turn", "river"]), st.integers(1, 7462), st.integers(1, 7462),
                  st.integers(0, 10**9)),
        min_size=1, max_size=40,
    ),
)
def test_main_game_kernel_equals_the_scalar_showdown_HTB_5_2_to_5_4(name, rows):
    """The table-driven kernel nets each wager of a hand in play as the scalar engine's ``_main_game`` does (a win at
    the bet's odds, the Ante's stand-off below the qualifier, a loss, a tie); a fold or concession loses the wager."""
    p = builtin().latest(name).params
    bet = np.array([vector.BET_CODES[b] for b, _, _, _ in rows])
    player = np.array([r[1] for r in rows])
    dealer = np.array([r[2] if k % 3 else r[1] for k, r in enumerate(rows)])  # every third a tie
    amount = np.array([r[3] for r in rows])
    net, _ = vector.main_game(p, bet, np.zeros(len(rows), dtype=np.int64), player, dealer, amount)
    expected = [engine._main_game(p, Wager(wager_id="w", seat=1, bet=b, amount=int(a), player_id=None), int(pl), int(dl)).net
                for (b, _, _, _), pl, dl, a in zip(rows, player, dealer, amount)]
    assert net.tolist() == expected
    for status in (1, 2):
        net, _ = vector.main_game(p, bet, np.full(len(rows), status), player, dealer, amount)
        assert net.tolist() == (-amount).tolist()
