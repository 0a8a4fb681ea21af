"""What the engine says about one wager: the net it should have been settled at, and why.

``net`` follows the formats contract: the amount paid to the player (positive), 0 for a stand-off
or a returned wager, minus the amount collected (negative). ``clause`` is the rule text's clause
id (``TBAC-5.1.3``); ``detail`` is one sentence an investigator can read aloud in a dispute.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Settlement:
    net: int
    clause: str
    detail: str

    def __post_init__(self) -> None:
        if not isinstance(self.net, int) or isinstance(self.net, bool):
            raise TypeError(f"a settlement's net must be an int, got {type(self.net).__name__}")


class RuleViolation(ValueError):
    """A decision or a card sequence the rule set does not allow; ``clause`` says which rule."""

    def __init__(self, message: str, clause: str):
        super().__init__(f"{message} ({clause})")
        self.reason = message
        self.clause = clause
