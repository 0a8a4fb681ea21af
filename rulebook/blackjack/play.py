"""Play a round forward on the state machine: a policy makes the decisions, the shoe gives the cards.

This is how a round is *generated* (the simulator, the property tests, the odds cross-check), as
opposed to how a recorded round is *checked* (``engine.settle_round``). It returns the decisions
in the table log's ``actions`` form and the cards the round used in device order, so the round
can be written out and replayed; replaying it must settle exactly as it was played.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rulebook.blackjack import decisions as D
from rulebook.blackjack.dealer import deal_dealer
from rulebook.blackjack.params import BlackjackParams
from rulebook.blackjack.state import PLAY, BlackjackState, Hand, advance, deal_initial, open_round
from rulebook.blackjack.strategy import basic_action
from rulebook.round import Action, Wager


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision on the hand in turn: ``action`` of decisions.DECISIONS, for ``wager_ids`` (None:
    the controlling wager) and ``amount`` (None: the full wager)."""

    action: str
    amount: int | None = None
    wager_ids: tuple[str, ...] | None = None


Policy = Callable[[BlackjackState, Hand, set[str]], Decision]
# after the initial deal: the insurance wagers placed and the even-money decisions taken
BeforePlay = Callable[[BlackjackState], tuple[Sequence[Wager], Sequence[Action]]]


def basic_policy(state: BlackjackState, hand: Hand, allowed: set[str]) -> Decision:
    """The controlling player follows basic strategy; back bettors follow the hand."""
    return Decision(basic_action(hand.cards, state.up_card, allowed))


@dataclass(frozen=True, slots=True)
class PlayedRound:
    state: BlackjackState  # the final state: dealer complete, ready for settle.settle
    wagers: tuple[Wager, ...]  # as placed, insurance included
    actions: tuple[Action, ...]  # the decisions in the table log's form, in order
    cards: tuple[int, ...]  # the cards the round used, device order


def play_round(
    params: BlackjackParams,
    shoe: Iterable[int],
    wagers: Sequence[Wager],
    policy: Policy = basic_policy,
    before_play: BeforePlay | None = None,
    table_min: int | None = None,
) -> PlayedRound:
    """Deal from ``shoe`` (enough cards for the round; the rest are left) and play to the end."""
    state = deal_initial(open_round(params, shoe, [w for w in wagers if w.bet != "insurance"], table_min))
    all_wagers = list(wagers)
    actions: list[Action] = []
    if before_play is not None:
        more, early = before_play(state)
        for w in more:
            state = D.insurance(state, w)
            all_wagers.append(w)
            actions.append(Action(w.seat, 1, "insurance", w.amount))
        for a in early:
            state = D.even_money(state, a.seat, a.wager_ids)
            actions.append(a)
    state = advance(state)
    while state.phase == PLAY:
        hand = state.turn_hand()
        assert hand is not None
        if hand.controlling() is None:  # a seat with a pair wager only: nobody decides, it stands
            state = D.stand(state, hand.seat, hand.number)
        else:
            dec = policy(state, hand, D.allowed_decisions(state))
            state = _apply(state, hand, dec)
            actions.append(Action(hand.seat, hand.number, dec.action, dec.amount, dec.wager_ids))
        state = advance(state)
    state = deal_dealer(state)
    return PlayedRound(state, tuple(all_wagers), tuple(actions), state.shoe[: state.taken])


def _apply(state: BlackjackState, hand: Hand, dec: Decision) -> BlackjackState:
    seat, number = hand.key
    if dec.action == "hit":
        return D.hit(state, seat, number)
    if dec.action == "stand":
        return D.stand(state, seat, number)
    if dec.action == "double":
        return D.double(state, seat, number, dec.amount, dec.wager_ids)
    if dec.action == "split":
        return D.split(state, seat, number, dec.amount, dec.wager_ids)
    if dec.action == "surrender":
        return D.surrender(state, seat, number, dec.wager_ids)
    raise ValueError(f"unknown decision {dec.action!r}")
