"""Integer money: payout odds as exact fractions and the rounding each rule set names.

Amounts are integers in the currency's smallest unit. Odds are ``num:den`` ("pays num to den"),
so 0.95 to 1 is ``19:20`` and 3 to 2 is ``3:2``; a win is ``amount * num / den``, rounded the way
the rule set says when that is not a whole unit. No float ever touches an amount.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Rounding(str, Enum):
    """How a fractional win is brought to a whole multiple of the rounding unit."""

    DOWN = "down"  # towards zero: the house keeps the fraction (commonly: to the smallest chip)
    UP = "up"
    HALF_UP = "half_up"


@dataclass(frozen=True, slots=True)
class Odds:
    """Payout odds ``num to den``."""

    num: int
    den: int

    def __post_init__(self) -> None:
        if self.num < 0 or self.den <= 0:
            raise ValueError(f"odds must be non-negative over a positive denominator, got {self}")

    @classmethod
    def parse(cls, text: str) -> "Odds":
        """``"19:20"`` -> Odds(19, 20)."""
        num, sep, den = text.partition(":")
        if not sep:
            raise ValueError(f"odds {text!r} must be written num:den, e.g. '19:20' for 0.95 to 1")
        return cls(int(num), int(den))

    def __str__(self) -> str:
        return f"{self.num}:{self.den}"

    def win(self, amount: int, rounding: Rounding = Rounding.DOWN, unit: int = 1) -> int:
        """The amount paid on a winning wager of ``amount`` at these odds."""
        return round_amount(amount * self.num, self.den, rounding, unit)


def round_amount(numerator: int, denominator: int, rounding: Rounding, unit: int = 1) -> int:
    """``numerator / denominator`` as a whole multiple of ``unit`` (for non-negative values)."""
    if numerator < 0:
        raise ValueError("round_amount takes non-negative amounts")
    step = denominator * unit
    whole, rest = divmod(numerator, step)
    if rest == 0 or rounding is Rounding.DOWN:
        return whole * unit
    if rounding is Rounding.UP:
        return (whole + 1) * unit
    return (whole + (1 if 2 * rest >= step else 0)) * unit
