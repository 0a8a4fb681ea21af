"""The engine's view of one round, and what it says back.

These records are the only contract between the pipeline (or the simulator) and the game
modules: the pipeline builds a :class:`RoundInput` from the device's card events and the table
system's round record; :func:`rulebook.engine.settle_round` returns a :class:`RoundResult`.
All are frozen: a dispute review can keep them as evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rulebook.ruleset import RuleSet
from rulebook.settlement import Settlement


@dataclass(frozen=True, slots=True)
class DeviceCard:
    """One card event of the round as the device saw it, in order. ``code`` per rulebook.cards."""

    code: int
    is_burn: bool = False


@dataclass(frozen=True, slots=True)
class Wager:
    wager_id: str
    seat: int
    bet: str  # the formats contract's bet names, e.g. banker, main, ante
    amount: int  # smallest currency unit
    player_id: str | None = None
    # blackjack: the hand (numbered as ``Action.hand``) a Pair wager placed when splitting belongs to
    # (BJ-4.10.1.2); None for a wager placed before the deal (docs/formats.md, ``wagers[].hand``)
    hand: int | None = None


@dataclass(frozen=True, slots=True)
class Action:
    """A decision from the table system's ``actions``, in the order it happened."""

    seat: int
    hand: int  # 1-based, hands formed by splits
    action: str
    amount: int | None = None
    wager_ids: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Limits:
    min: int | None = None
    max: int | None = None
    differential: int | None = None
    side_min: int | None = None
    side_max: int | None = None


@dataclass(frozen=True, slots=True)
class RoundInput:
    ruleset: RuleSet
    cards: tuple[DeviceCard, ...]  # every card/burn event of the round, device order
    wagers: tuple[Wager, ...]  # in the order they were placed
    actions: tuple[Action, ...] = ()
    deal_mode: str | None = None  # hold'em: "shoe" | "device"
    decks: int | None = None  # from the shoe_start event; None = the rule set's default
    jackpot_meter: int | None = None
    currency: str | None = None
    limits: Limits = field(default_factory=Limits)
    # False: the caller does not read the card-by-card narrative (the nightly audit), so an engine may
    # leave ``RoundResult.steps`` empty and save writing it; every other field of the result is the same
    with_steps: bool = True

    @property
    def logged_decks(self) -> int | None:
        """The decks the device says it loaded, or None when it says nothing: no count, or a count below one (the
        engines then play the rule set's decks, as the audit's array paths do)."""
        return self.decks if self.decks is not None and self.decks > 0 else None


@dataclass(frozen=True, slots=True)
class Step:
    """One step of the reconstruction (a card to a hand, a draw decision, a payout), with its clause."""

    what: str
    clause: str


@dataclass(frozen=True, slots=True)
class Irregularity:
    """Something in the cards or the decisions the rules treat as an irregularity.

    ``kind`` is a finding kind of the output contract (card_integrity, drawing_rule_violation, ...);
    ``voids_round`` says whether the rule cited makes the round void (then every wager is returned).
    """

    kind: str
    clause: str
    detail: str
    voids_round: bool = False


@dataclass(frozen=True, slots=True)
class RoundResult:
    settlements: dict[str, Settlement]  # by wager_id: what the rules say each wager nets
    # wagers the rules cannot settle from this evidence (by wager_id: the reason, with its clause)
    unsettled: dict[str, str]
    steps: tuple[Step, ...]  # the reconstruction, card by card, for dispute review
    irregularities: tuple[Irregularity, ...] = ()
    void: bool = False
    # the game's result in the table system's `recorded_result` vocabulary, for result_mismatch checks
    # (baccarat: winner, player_points, banker_points; others: whatever the game module documents)
    outcome: dict[str, object] = field(default_factory=dict)
