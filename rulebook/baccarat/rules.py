"""The drawing rules of Tiger Baccarat as small pure functions, one per clause.

These are written to read like the rule text (TBAC-4.11 to 4.16), not to be fast: the scalar
engine (the reference a dispute review reads) and the audit's helpers use them. The vectorised
form (``rulebook.baccarat.vector``) keeps its own lookup tables and is proved equal to these by
tests, so a slip in either shows up as a disagreement.

Every function takes card codes of ``rulebook.cards`` (valid codes only, 0..51) or point counts.
"""

from __future__ import annotations

from collections.abc import Sequence

from rulebook.cards import is_valid, rank_of

# Rank indices of rulebook.cards: A = 0 .. 9 = 8, T = 9, J = 10, Q = 11, K = 12.
_TEN = 9


def card_value(code: int) -> int:
    """The point value of a card: Ace to Nine at face value (TBAC-4.11.1), Ten and court cards 0 (4.11.2)."""
    rank = rank_of(code)
    return rank + 1 if rank < _TEN else 0


def hand_points(codes: Sequence[int]) -> int:
    """The point count of a hand: the total's last digit (TBAC-4.12.1, 4.12.2)."""
    return sum(card_value(c) for c in codes) % 10


def is_pair(first: int, second: int) -> bool:
    """Two cards form a pair when their faces match: K-K is a pair, K-Q is not (TBAC-4.11.2.1, 6.2.1.1)."""
    return rank_of(first) == rank_of(second)


def is_natural(points: int) -> bool:
    """Eight or nine on the initial deal (TBAC-2.2.9, 4.13)."""
    return points >= 8


def player_draws(player_points: int) -> bool:
    """Table One (TBAC-4.14): the Player's hand draws on 0-5 and stands on 6-7 (naturals never reach here)."""
    if not 0 <= player_points <= 7:
        raise ValueError(f"Table One applies to 0-7 points, got {player_points}")
    return player_points <= 5


def banker_draws_after_player_draw(banker_points: int, player_third_value: int) -> bool:
    """Table Two (TBAC-4.15): whether the Banker draws, given the value of the Player's third card.

    Transcribed row by row from the table; ``player_third_value`` is the card's point value, so a
    Ten or a court card is 0 (written "10" in the table).
    """
    third = player_third_value
    if banker_points in (0, 1, 2):
        return True  # any card
    if banker_points == 3:
        return third != 8  # draws on 1-7, 9, 10; stands on 8
    if banker_points == 4:
        return third in (2, 3, 4, 5, 6, 7)  # stands on 1, 8, 9, 10
    if banker_points == 5:
        return third in (4, 5, 6, 7)  # stands on 1, 2, 3, 8, 9, 10
    if banker_points == 6:
        return third in (6, 7)  # stands on 1-5, 8, 9, 10
    if banker_points == 7:
        return False
    raise ValueError(f"Table Two applies to 0-7 points, got {banker_points}")


def banker_draws_after_player_stands(banker_points: int) -> bool:
    """TBAC-4.16: when the Player's hand stands, the Banker draws on 0-5."""
    if not 0 <= banker_points <= 7:
        raise ValueError(f"TBAC-4.16 applies to 0-7 points, got {banker_points}")
    return banker_points <= 5


PLAYER_FIRST: tuple[str, ...] = ("player", "banker", "player", "banker")  # TBAC-4.9.1


def initial_hands(first_four: Sequence[int], deal_order: Sequence[str] = PLAYER_FIRST) -> tuple[list[int], list[int]]:
    """The Player's and the Banker's first two cards from the first four dealt (TBAC-4.9.1)."""
    player = [c for c, hand in zip(first_four, deal_order) if hand == "player"]
    banker = [c for c, hand in zip(first_four, deal_order) if hand == "banker"]
    return player, banker


def required_card_count(cards: Sequence[int], deal_order: Sequence[str] = PLAYER_FIRST) -> int | None:
    """How many cards the drawing rules make this round use (4, 5 or 6), from its cards in device order.

    ``cards`` are the round's non-burn card codes in the order the device dealt them; the first
    four go to the hands as ``deal_order`` says (TBAC-4.9.1: Player, Banker, Player, Banker), the
    fifth and sixth are the third cards, the Player's first (TBAC-4.14, 4.15). ``None`` when the count cannot be
    known from these cards: one of the first four is missing or unreadable, or the Player drew and
    the Banker's decision hangs on a third card that is missing or unreadable. The audit compares
    this with the number of cards dealt (a withheld or an extra card is a drawing-rule finding).
    """
    first = list(cards[:4])
    if len(first) < 4 or not all(is_valid(c) for c in first):
        return None
    player_cards, banker_cards = initial_hands(first, deal_order)
    player = hand_points(player_cards)
    banker = hand_points(banker_cards)
    if is_natural(player) or is_natural(banker):
        return 4
    if not player_draws(player):
        return 5 if banker_draws_after_player_stands(banker) else 4
    if banker in (0, 1, 2):
        return 6
    if banker == 7:
        return 5
    if len(cards) < 5 or not is_valid(cards[4]):
        return None
    return 6 if banker_draws_after_player_draw(banker, card_value(cards[4])) else 5
