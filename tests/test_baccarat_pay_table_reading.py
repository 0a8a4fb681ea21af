"""Both Tiger Baccarat engines against a second, independent reading of the text (TBAC-4.9.1, 4.13-4.16, 5.1, 6.1-6.5).

The reading below is written from the rule text alone, in the fewest lines that say it: who draws, who wins, what each
of the eight bets pays. Any round of four to six cards dealt by the rules, any amount, either version, and any rounding
the rule set may state must settle the same through the scalar engine (the reference) and the arrays; and no wager ever
nets more than its pay table's line allows nor loses more than its amount.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rulebook.baccarat import vector as V
from rulebook.baccarat.engine import settle_round
from rulebook.cards import NO_CARD
from rulebook.catalogue import builtin
from rulebook.money import Rounding
from rulebook.round import DeviceCard, RoundInput, Wager

VERSIONS = {
    "commission": builtin().latest("hoiana-tiger-baccarat/commission"),
    "no-commission": builtin().latest("hoiana-tiger-baccarat/no-commission"),
}
BETS = ("banker", "player", "tie", "banker_pair", "player_pair", "tiger", "small_tiger", "big_tiger")
# the side bets' pay table (TBAC-5.1.3) as printed: winning wager -> "N to 1"
SIDE = {"tie": 8, "pair": 11, "tiger_two": 12, "tiger_three": 20, "small_tiger": 22, "big_tiger": 50}


def value(code: int) -> int:
    """TBAC-4.11: Ace to Nine at face value, Ten and court cards nothing."""
    rank = code // 4
    return rank + 1 if rank < 9 else 0


def points(cards) -> int:
    return sum(value(c) for c in cards) % 10  # TBAC-4.12


def deal(shoe):
    """The hands as TBAC-4.9.1, 4.13-4.16 deal them from ``shoe``, and the number of cards used."""
    player, banker, rest = [shoe[0], shoe[2]], [shoe[1], shoe[3]], list(shoe[4:])
    p, b = points(player), points(banker)
    if p >= 8 or b >= 8:  # a Natural: no more cards (4.13)
        return player, banker
    if p <= 5:  # Table One (4.14)
        player.append(rest.pop(0))
        third = value(player[-1])
        # Table Two (4.15): the Player's third card on which the Banker draws, by the Banker's points
        draws_on = {0: range(10), 1: range(10), 2: range(10), 3: (0, 1, 2, 3, 4, 5, 6, 7, 9),
                    4: (2, 3, 4, 5, 6, 7), 5: (4, 5, 6, 7), 6: (6, 7), 7: ()}[b]
        if third in draws_on:
            banker.append(rest.pop(0))
    elif b <= 5:  # the Player stood (4.16)
        banker.append(rest.pop(0))
    return player, banker


def paid(amount: int, num: int, den: int, rounding: Rounding, unit: int) -> int:
    """``amount`` at ``num`` to ``den``, brought to a whole ``unit`` the way the rule set says."""
    whole, rest = divmod(amount * num, den * unit)
    if rest and (rounding is Rounding.UP or (rounding is Rounding.HALF_UP and 2 * rest >= den * unit)):
        whole += 1
    return whole * unit


def reading(version: str, shoe, bet: str, amount: int, rounding: Rounding, unit: int) -> int:
    """What ``bet`` nets by the text."""
    player, banker = deal(shoe)
    p, b = points(player), points(banker)

    def pays(num: int, den: int = 1) -> int:
        return paid(amount, num, den, rounding, unit)

    banker_on_six = b > p and b == 6
    if bet in ("banker", "player"):
        if p == b:
            return 0  # a stand-off (6.1.1.3, 6.1.2.3)
        if (bet == "banker") != (b > p):
            return -amount
        if bet == "player":
            return pays(1)
        if version == "commission":
            return pays(95, 100)  # 0.95 to 1 (5.1.1)
        return pays(1, 2) if b == 6 else pays(1)  # 5.1.2
    if bet == "tie":
        return pays(SIDE["tie"]) if p == b else -amount
    if bet in ("banker_pair", "player_pair"):
        first, second = (shoe[1], shoe[3]) if bet == "banker_pair" else (shoe[0], shoe[2])
        return pays(SIDE["pair"]) if first // 4 == second // 4 else -amount  # by face (4.11.2.1, 6.2.1.1)
    if bet == "tiger":
        return pays(SIDE["tiger_two"] if len(banker) == 2 else SIDE["tiger_three"]) if banker_on_six else -amount
    if bet == "small_tiger":
        return pays(SIDE["small_tiger"]) if banker_on_six and len(banker) == 2 else -amount
    return pays(SIDE["big_tiger"]) if banker_on_six and len(banker) == 3 else -amount


@settings(max_examples=300, deadline=None)
@given(
    version=st.sampled_from(sorted(VERSIONS)),
    rounding=st.sampled_from(list(Rounding)),
    unit=st.sampled_from([1, 5, 25, 100]),
    rounds=st.lists(
        st.tuples(st.lists(st.integers(0, 51), min_size=6, max_size=6),
                  st.one_of(st.integers(1, 40), st.integers(1, 10**9))),
        min_size=1, max_size=25,
    ),
)
def test_both_engines_settle_every_bet_as_the_text_reads(version, rounding, unit, rounds):
    base = VERSIONS[version]
    ruleset = dataclasses.replace(base, params=dataclasses.replace(base.params, rounding=rounding, rounding_unit=unit))
    # each round holds exactly the cards the rules deal from its shoe
    dealt = [shoe[: sum(map(len, deal(shoe)))] for shoe, _ in rounds]
    cards = np.full((len(rounds), 6), NO_CARD, dtype=np.int16)
    for i, d in enumerate(dealt):
        cards[i, : len(d)] = d
    coups = V.resolve(cards)
    ri = np.repeat(np.arange(len(rounds)), len(BETS))
    amounts = np.repeat([a for _, a in rounds], len(BETS))
    arrays, _ = V.settle(coups, ri, np.tile(np.arange(len(BETS)), len(rounds)), amounts, ruleset.params)
    largest = {"banker": 1, "player": 1, "tie": 8, "banker_pair": 11, "player_pair": 11, "tiger": 20,
               "small_tiger": 22, "big_tiger": 50}  # the pay table's line for each bet, at its best
    for i, ((shoe, amount), d) in enumerate(zip(rounds, dealt)):
        wagers = tuple(Wager(bet, 1, bet, amount) for bet in BETS)
        result = settle_round(RoundInput(ruleset=ruleset, cards=tuple(DeviceCard(c) for c in d), wagers=wagers))
        assert not result.irregularities and not result.unsettled
        for k, bet in enumerate(BETS):
            expected = reading(version, shoe, bet, amount, rounding, unit)
            assert result.settlements[bet].net == expected, (bet, d, amount)
            assert int(arrays[i * len(BETS) + k]) == expected, (bet, d, amount)
            # never more than the pay table's line for the bet (rounded up to the unit at most), never a loss beyond it
            assert -amount <= expected <= -(-largest[bet] * amount // unit) * unit
