"""Card codes as the devices write them, and the one integer encoding every game module uses.

A card is ``rank * 4 + suit`` (0..51) with ranks in the order of the formats contract,
``A23456789TJQK`` (A = 0, K = 12), and suits ``cdhs``. Three negative codes keep the evidence the
audit needs instead of failing on it: an unreadable card (``??``), a foreign card (any other
text), and no card at all (an empty field, e.g. a burn the device did not read).
"""

from __future__ import annotations

from typing import Final

import numpy as np

RANKS: Final = "A23456789TJQK"
SUITS: Final = "cdhs"

UNREADABLE: Final = -1
FOREIGN: Final = -2
NO_CARD: Final = -3

_CODE_BY_TEXT: Final[dict[str, int]] = {
    r + s: ri * 4 + si for ri, r in enumerate(RANKS) for si, s in enumerate(SUITS)
}
_TEXT_BY_CODE: Final[tuple[str, ...]] = tuple(r + s for r in RANKS for s in SUITS)


def parse_card(text: str | None) -> int:
    """The code of a card as read by a device; never raises (a bad read is evidence, not an error)."""
    if text is None or text == "":
        return NO_CARD
    if text == "??":
        return UNREADABLE
    return _CODE_BY_TEXT.get(text, FOREIGN)


def card_text(code: int) -> str:
    """The two-character form of a valid card code (``As``); ``??``/``XX``/empty for the special codes."""
    if 0 <= code < 52:
        return _TEXT_BY_CODE[code]
    return {UNREADABLE: "??", FOREIGN: "XX", NO_CARD: ""}[code]


def parse_cards(texts: list[str | None]) -> np.ndarray:
    """Vector form of :func:`parse_card`, as ``int8``."""
    return np.fromiter((parse_card(t) for t in texts), dtype=np.int8, count=len(texts))


def is_valid(code: int) -> bool:
    return 0 <= code < 52


def rank_of(code: int) -> int:
    """Rank index, A = 0 .. K = 12 (meaningful for valid codes only)."""
    return code // 4


def suit_of(code: int) -> int:
    return code % 4


def face(code: int) -> str:
    """The rank character, used where the rules compare cards 'by face value' (pairs)."""
    return RANKS[code // 4]
