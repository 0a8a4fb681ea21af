"""The scalar Tiger Baccarat engine: one round, card by card, every step with its clause.

This is the reference the dispute review reads and the vectorised form is proved against. It
takes the round's device card events in order (burns excluded from the hands), deals them to the
hands as the rules say (TBAC-4.9.1, 4.13-4.16), notes every irregularity the rules name, and
settles each wager by the rule set's pay table. Judgements where the text is silent are written
in docs/interpretations/baccarat.md; the short form:

- a foreign card anywhere in the round voids it (TBAC-7.1): every wager nets 0;
- an unreadable card (``??``) the hands use leaves the result unverifiable: the wagers it decides go
  to ``unsettled`` (pairs on two readable cards are still settled, TBAC-4.9.1.3);
- fewer than four cards is a card-integrity finding; a third card the rules require but the device
  never saw is a drawing-rule finding; neither can be settled from the cards;
- a card beyond what the rules require was dealt in error: it begins the next hand, a Free Hand
  (TBAC-7.6, 7.7, 7.8), and this round is settled on the cards the rules give it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rulebook.baccarat import clauses as C
from rulebook.baccarat.params import BaccaratParams, Variant
from rulebook.baccarat.rules import (
    banker_draws_after_player_draw,
    banker_draws_after_player_stands,
    card_value,
    hand_points,
    is_natural,
    is_pair,
    player_draws,
)
from rulebook.cards import FOREIGN, NO_CARD, UNREADABLE, card_text, is_valid
from rulebook.payout import Payout
from rulebook.round import DeviceCard, Irregularity, RoundInput, RoundResult, Step, Wager
from rulebook.settlement import Settlement

PLAYER, BANKER, TIE = "player", "banker", "tie"


@dataclass(frozen=True, slots=True)
class Unknown:
    """Why part of the result cannot be known from the device's cards, and the clause involved."""

    reason: str
    clause: str

    def __str__(self) -> str:
        return f"{self.reason} ({self.clause})"


@dataclass(frozen=True, slots=True)
class Coup:
    """One round as the drawing rules reconstruct it from the device's cards.

    ``winner`` is None when the cards cannot decide (``unknown`` says why); a pair flag is None
    when its two cards are not both readable (``*_pair_unknown`` says why). ``required`` is the
    number of cards the drawing rules give this round (None when it cannot be known).
    """

    player: tuple[int, ...]
    banker: tuple[int, ...]
    player_points: int | None
    banker_points: int | None
    winner: str | None
    unknown: Unknown | None
    player_pair: bool | None
    banker_pair: bool | None
    player_pair_unknown: Unknown | None
    banker_pair_unknown: Unknown | None
    required: int | None
    void: bool
    steps: tuple[Step, ...]
    irregularities: tuple[Irregularity, ...]
    # the cards beyond those the drawing rules give the round: dealt in error, they begin the next
    # hand, a Free Hand (TBAC-7.6, 7.7, 7.8)
    in_error: tuple[int, ...] = ()

    def outcome(self) -> dict[str, object]:
        """The result in the table log's ``recorded_result`` vocabulary; partial when the cards cannot decide all of it."""
        if self.void:
            return {}  # TBAC-2.2.20: void means no result
        out: dict[str, object] = {}
        if self.winner is not None:
            out.update(
                winner=self.winner,
                player_points=self.player_points,
                banker_points=self.banker_points,
                banker_cards=len(self.banker),
            )
        if self.player_pair is not None:
            out["player_pair"] = self.player_pair
        if self.banker_pair is not None:
            out["banker_pair"] = self.banker_pair
        return out


def settle_round(round_input: RoundInput) -> RoundResult:
    """Reconstruct the round from its cards and settle every wager (TBAC-4.9 to 6.5, 7.1, 7.6-7.8)."""
    params: BaccaratParams = round_input.ruleset.params
    coup = reconstruct(round_input.cards, params.deal_order)
    settlements: dict[str, Settlement] = {}
    unsettled: dict[str, str] = {}
    steps = list(coup.steps)
    for wager in round_input.wagers:
        result = settle_wager(wager, coup, params)
        if isinstance(result, Settlement):
            settlements[wager.wager_id] = result
            steps.append(Step(f"Wager {wager.wager_id} ({wager.bet} {wager.amount}): {result.detail}, net {result.net}", result.clause))
        else:
            unsettled[wager.wager_id] = str(result)
            steps.append(Step(f"Wager {wager.wager_id} ({wager.bet} {wager.amount}): not settled: {result.reason}", result.clause))
    return RoundResult(
        settlements=settlements,
        unsettled=unsettled,
        steps=tuple(steps),
        irregularities=coup.irregularities,
        void=coup.void,
        outcome=coup.outcome(),
    )


# --------------------------------------------------------------------------------------------
# Reconstruction


def _show(code: int) -> str:
    if is_valid(code):
        return card_text(code)
    if code in (UNREADABLE, NO_CARD):
        return "?? (not read)"
    return "a foreign card"


def _is_foreign(code: int) -> bool:
    """Any code that is neither a card of the decks nor a failed read (TBAC-7.1)."""
    return not is_valid(code) and code not in (UNREADABLE, NO_CARD)


def _hand_name(hand: str) -> str:
    return "Player" if hand == PLAYER else "Banker"


def reconstruct(events: Sequence[DeviceCard], deal_order: Sequence[str] = ("player", "banker", "player", "banker")) -> Coup:
    """Deal the round's cards to the hands as the rules say, and note every irregularity.

    ``events`` are the round's device events in order; burns are out of play (TBAC-2.2.2).
    """
    steps: list[Step] = []
    irregular: list[Irregularity] = []
    dealt = [e.code for e in events if not e.is_burn]
    n = len(dealt)

    for e in events:
        if e.is_burn:
            steps.append(Step(f"Burn {_show(e.code)}: out of play, part of neither hand", C.BURN))

    foreign = [i + 1 for i, c in enumerate(dealt) if _is_foreign(c)]
    foreign_burn = any(e.is_burn and _is_foreign(e.code) for e in events)
    void = bool(foreign) or foreign_burn
    if void:
        where = f"card(s) {', '.join(map(str, foreign))}" if foreign else "a burn card"
        irregular.append(Irregularity(
            C.CARD_INTEGRITY, C.VOID_FOREIGN,
            f"{where} of the round do not belong to the decks in use: the round is void, every wager is returned (TBAC-7.1.1)",
            voids_round=True,
        ))
    unread = [i + 1 for i, c in enumerate(dealt) if c in (UNREADABLE, NO_CARD)]
    if unread:
        irregular.append(Irregularity(
            C.CARD_INTEGRITY, C.CARD_VALUES,
            f"card(s) {', '.join(map(str, unread))} of the round were not read by the device (??)",
        ))

    def known(i: int) -> bool:
        return i < n and is_valid(dealt[i])

    # ---- the initial deal, TBAC-4.9.1
    for i in range(min(n, 4)):
        hand = deal_order[i]
        clause = C.DEAL_PLAYER if hand == PLAYER else C.DEAL_BANKER
        steps.append(Step(f"Card {i + 1} {_show(dealt[i])} to the {_hand_name(hand)}", clause))
    player_pos = [i for i in range(4) if deal_order[i] == PLAYER]
    banker_pos = [i for i in range(4) if deal_order[i] == BANKER]

    def pair_of(positions: list[int], hand: str) -> tuple[bool | None, Unknown | None]:
        name = _hand_name(hand)
        if max(positions) >= n:
            return None, Unknown(f"the {name}'s first two cards are not both in the device record", C.INITIAL_DEAL)
        if not all(known(i) for i in positions):
            return None, Unknown(f"the {name}'s first two cards include one the device could not read", C.CARD_VALUES)
        return is_pair(dealt[positions[0]], dealt[positions[1]]), None

    player_pair, player_pair_unknown = pair_of(player_pos, PLAYER)
    banker_pair, banker_pair_unknown = pair_of(banker_pos, BANKER)

    unknown: Unknown | None = None
    player: list[int] = [dealt[i] for i in player_pos if i < n]
    banker: list[int] = [dealt[i] for i in banker_pos if i < n]
    player_points = banker_points = None
    player_drew: bool | None = None  # None: cannot be known
    lo, hi = 4, 6  # bounds on the number of cards the rules give this round

    if n < 4:
        unknown = Unknown(f"the device recorded {n} card(s) for the round; the initial deal is four", C.INITIAL_DEAL)
        irregular.append(Irregularity(
            C.CARD_INTEGRITY, C.INITIAL_DEAL,
            f"the device recorded {n} card(s) for the round; the initial deal is four (TBAC-4.9.1): "
            "cards missing from the record, or the round was not completed",
        ))
    elif not all(known(i) for i in range(4)):
        bad = next(i for i in range(4) if not known(i))
        unknown = Unknown(f"card {bad + 1} of the initial deal could not be valued from the device record", C.CARD_VALUES)
    else:
        p2 = hand_points(player)
        b2 = hand_points(banker)
        steps.append(Step(f"Player {' '.join(map(card_text, player))}: {p2} points", C.POINT_COUNT))
        steps.append(Step(f"Banker {' '.join(map(card_text, banker))}: {b2} points", C.POINT_COUNT))
        banker_draws: bool | None
        if is_natural(p2) or is_natural(b2):
            who = " and ".join(name for name, pts in (("Player", p2), ("Banker", b2)) if is_natural(pts))
            steps.append(Step(f"Natural ({who}): no more cards to either hand", C.NATURAL))
            player_drew, banker_draws = False, False
        elif not player_draws(p2):
            steps.append(Step(f"Player 2 cards {p2} points: stands", C.TABLE_ONE))
            player_drew = False
            banker_draws = banker_draws_after_player_stands(b2)
            steps.append(Step(
                f"Player stood, Banker 2 cards {b2} points: {'draws' if banker_draws else 'stands'}",
                C.BANKER_AFTER_PLAYER_STANDS,
            ))
        else:
            steps.append(Step(f"Player 2 cards {p2} points: draws", C.TABLE_ONE))
            player_drew = True
            if not known(4):
                if n <= 4:
                    unknown = Unknown("the Player's hand had to draw a third card the device did not record", C.TABLE_ONE)
                else:
                    unknown = Unknown("the Player's third card could not be valued from the device record", C.CARD_VALUES)
                # the Banker's decision is still known on 0-2 (draws on any card) and 7 (stands)
                banker_draws = True if b2 <= 2 else False if b2 == 7 else None
            else:
                third = dealt[4]
                player.append(third)
                steps.append(Step(f"Card 5 {card_text(third)} to the Player", C.TABLE_ONE))
                banker_draws = banker_draws_after_player_draw(b2, card_value(third))
                steps.append(Step(
                    f"Banker 2 cards {b2} points, Player's third card {card_value(third)}: "
                    f"{'draws' if banker_draws else 'stands'}",
                    C.TABLE_TWO,
                ))
        if banker_draws is not None:
            lo = hi = 4 + int(player_drew) + int(banker_draws)
        else:
            lo, hi = 5, 6
        if unknown is None and banker_draws:
            pos = 5 if player_drew else 4
            rule = C.TABLE_TWO if player_drew else C.BANKER_AFTER_PLAYER_STANDS
            if not known(pos):
                if n <= pos:
                    unknown = Unknown("the Banker's hand had to draw a third card the device did not record", rule)
                else:
                    unknown = Unknown("the Banker's third card could not be valued from the device record", C.CARD_VALUES)
            else:
                banker.append(dealt[pos])
                steps.append(Step(f"Card {pos + 1} {card_text(dealt[pos])} to the Banker", rule))
        if unknown is None:
            player_points = hand_points(player)
            banker_points = hand_points(banker)

    if 4 <= n < lo:  # a third card the rules require is not in the record: the first one missing is card n+1
        missing_clause = (C.TABLE_ONE if player_drew else C.BANKER_AFTER_PLAYER_STANDS) if n == 4 else C.TABLE_TWO
        hand = "Player" if missing_clause == C.TABLE_ONE else "Banker"
        irregular.append(Irregularity(
            C.DRAWING_RULE_VIOLATION, missing_clause,
            f"the {hand}'s hand had to draw a third card ({missing_clause}) but the device recorded "
            f"{n} card(s): a third card withheld, or lost from the record",
        ))
    if n > hi:
        clause = C.EXTRA_PLAYER_CARD if player_drew is False else C.EXTRA_BANKER_CARD
        extra = ", ".join(f"{i + 1} ({_show(dealt[i])})" for i in range(hi, n))
        needed = f"{hi}" if lo == hi else f"at most {hi}"
        irregular.append(Irregularity(
            C.DRAWING_RULE_VIOLATION, clause,
            f"card(s) {extra} beyond the {needed} the drawing rules give this round: dealt in error, "
            f"they begin the next hand, a Free Hand ({clause}, {C.FREE_HAND})",
        ))
        for i in range(hi, n):
            steps.append(Step(
                f"Card {i + 1} {_show(dealt[i])}: not authorised by the drawing rules; begins the next hand, a Free Hand",
                clause,
            ))

    if void:
        steps.append(Step("A card foreign to the decks in use: the round is void, every wager is returned", C.VOID_FOREIGN))
    winner = None
    if player_points is not None and banker_points is not None:
        if player_points > banker_points:
            winner = PLAYER
            steps.append(Step(f"Player {player_points} v Banker {banker_points}: the Player wins", C.PLAYER_WINS_HAND))
        elif banker_points > player_points:
            winner = BANKER
            steps.append(Step(
                f"Player {player_points} v Banker {banker_points} ({len(banker)} cards): the Banker wins",
                C.BANKER_WINS_HAND,
            ))
        else:
            winner = TIE
            steps.append(Step(f"Player {player_points} v Banker {banker_points}: a Tie", C.TIE_RESULT))

    return Coup(
        player=tuple(player),
        banker=tuple(banker),
        player_points=player_points,
        banker_points=banker_points,
        winner=winner,
        unknown=unknown,
        player_pair=player_pair,
        banker_pair=banker_pair,
        player_pair_unknown=player_pair_unknown,
        banker_pair_unknown=banker_pair_unknown,
        required=lo if lo == hi else None,
        void=void,
        steps=tuple(steps),
        irregularities=tuple(irregular),
        in_error=tuple(dealt[hi:]) if n > hi else (),
    )


def cards_dealt_in_error(events: Sequence[DeviceCard], deal_order: Sequence[str] = ("player", "banker", "player", "banker")) -> tuple[int, ...]:
    """The round's cards beyond those the drawing rules give it, in device order (TBAC-7.6, 7.7): they are the
    first cards of the next hand, a Free Hand (TBAC-7.8). Empty when there are none or the round is void (TBAC-7.1)."""
    coup = reconstruct(events, deal_order)
    return () if coup.void else coup.in_error


# --------------------------------------------------------------------------------------------
# Settlement


def _pay(payout: Payout, amount: int, params: BaccaratParams, why: str) -> Settlement:
    won = payout.odds.win(amount, params.rounding, params.rounding_unit)
    return Settlement(won, payout.clause, f"{why}: paid {payout.odds} = {won}")


def _lose(amount: int, clause: str, why: str) -> Settlement:
    return Settlement(-amount, clause, f"{why}: the wager loses")


def settle_wager(wager: Wager, coup: Coup, params: BaccaratParams) -> Settlement | Unknown:
    """What one wager nets by the cards alone, or why the cards cannot say (TBAC-5.1, 6.1-6.5, 7.1)."""
    table = params.pay_table
    amount = wager.amount
    if wager.bet not in C.BETS:
        return Unknown(f"{wager.bet!r} is not a bet of Tiger Baccarat (banker, player, tie, pairs, tigers)", C.BET_CLAUSE)
    if amount < 0:
        return Unknown(f"a wager of {amount} is not an amount that can be placed", C.NEGATIVE_AMOUNT)
    if coup.void:
        return Settlement(0, C.VOID_FOREIGN, "the round is void (a foreign card): the wager is returned")

    if wager.bet in ("player_pair", "banker_pair"):
        is_player = wager.bet == "player_pair"
        pair = coup.player_pair if is_player else coup.banker_pair
        if pair is None:
            return coup.player_pair_unknown if is_player else coup.banker_pair_unknown  # type: ignore[return-value]
        name = "Player" if is_player else "Banker"
        if pair:
            return _pay(table.player_pair if is_player else table.banker_pair, amount, params, f"{name} pair by face value")
        return _lose(amount, C.PAIR_LOSES, f"the {name}'s first two cards are not a pair")

    if coup.winner is None:
        assert coup.unknown is not None
        return coup.unknown
    winner, bp, banker_cards = coup.winner, coup.banker_points, len(coup.banker)
    banker_on_six = winner == BANKER and bp == 6
    score = f"Player {coup.player_points} v Banker {bp}"

    if wager.bet == "banker":
        if winner == BANKER:
            if params.variant is Variant.NO_COMMISSION and bp == 6:
                assert table.banker_wins_on_six is not None
                return _pay(table.banker_wins_on_six, amount, params, f"{score}: the Banker wins on 6")
            return _pay(table.banker, amount, params, f"{score}: the Banker wins")
        if winner == PLAYER:
            return _lose(amount, C.BANKER_LOSES, f"{score}: the Player wins")
        return Settlement(0, C.BANKER_STANDOFF, f"{score}: a Tie, the Banker wager stands off")
    if wager.bet == "player":
        if winner == PLAYER:
            return _pay(table.player, amount, params, f"{score}: the Player wins")
        if winner == BANKER:
            return _lose(amount, C.PLAYER_LOSES, f"{score}: the Banker wins")
        return Settlement(0, C.PLAYER_STANDOFF, f"{score}: a Tie, the Player wager stands off")
    if wager.bet == "tie":
        if winner == TIE:
            return _pay(table.tie, amount, params, f"{score}: a Tie")
        return _lose(amount, C.TIE_LOSES, f"{score}: not a Tie")
    if wager.bet == "tiger":
        if banker_on_six:
            line = table.tiger_two_cards if banker_cards == 2 else table.tiger_three_cards
            return _pay(line, amount, params, f"{score}: the Banker wins on 6 with {banker_cards} cards")
        return _lose(amount, C.TIGER_LOSES, f"{score}: the Banker does not win on 6")
    if wager.bet == "small_tiger":
        if banker_on_six and banker_cards == 2:
            return _pay(table.small_tiger, amount, params, f"{score}: the Banker wins on 6 with two cards")
        return _lose(amount, C.SMALL_TIGER_LOSES, f"{score}: the Banker does not win on 6 with two cards")
    # big_tiger
    if banker_on_six and banker_cards == 3:
        return _pay(table.big_tiger, amount, params, f"{score}: the Banker wins on 6 with three cards")
    return _lose(amount, C.BIG_TIGER_LOSES, f"{score}: the Banker does not win on 6 with three cards")
