"""What one table produces in one gaming day, before it is written: round records and device events.

Rounds are small mutable records (the planted faults edit them: a net, a status, a timestamp);
device events are columns of numpy arrays (a table deals thousands of cards a day), which the
faults edit by masks and insertions. Instants are integer milliseconds (``clock``); cards are
``rulebook.cards`` codes, with extra negative codes for the foreign texts the faults plant.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rulebook.cards import NO_CARD, UNREADABLE, card_text

# device event kinds, in the formats contract's words
SHOE_START, BURN, CARD, SHOE_END = 0, 1, 2, 3
EVENT_NAMES = ("shoe_start", "burn", "card", "shoe_end")

#: Foreign cards the faults plant, by code (codes -10 and below): what a device writes for a card
#: that belongs to no deck in use (formats: "anything else is a foreign card").
FOREIGN_TEXTS = ("JK", "XX", "1s", "Ah5")
FOREIGN_BASE = -10


def foreign_code(k: int) -> int:
    return FOREIGN_BASE - (k % len(FOREIGN_TEXTS))


def card_texts() -> np.ndarray:
    """Lookup array: text of every code from the lowest foreign code up to 51 (index = code - offset)."""
    lowest = FOREIGN_BASE - len(FOREIGN_TEXTS) + 1
    texts = []
    for code in range(lowest, 52):
        if code >= 0:
            texts.append(card_text(code))
        elif code == UNREADABLE:
            texts.append("??")
        elif code == NO_CARD:
            texts.append("")
        elif code <= FOREIGN_BASE:
            texts.append(FOREIGN_TEXTS[FOREIGN_BASE - code])
        else:
            texts.append("")
    return np.array(texts, dtype=object), -lowest


@dataclass(slots=True)
class WagerRec:
    wager_id: str
    seat: int
    player_id: str | None
    bet: str
    amount: int
    placed_ms: int
    net: int  # what the table system records
    expected: int  # what the rules engine says (kept for the ground truth's detail)


@dataclass(slots=True)
class ActionRec:
    seat: int
    hand: int
    action: str
    amount: int | None
    ts_ms: int
    wager_ids: tuple[str, ...] | None = None


@dataclass(slots=True)
class RoundRec:
    round_no: int
    shoe_id: str
    dealer_id: str
    open_ms: int
    close_ms: int
    settled_ms: int
    status: str = "settled"
    recorded_result: dict | None = None
    jackpot_meter: int | None = None
    wagers: list[WagerRec] = field(default_factory=list)
    actions: list[ActionRec] = field(default_factory=list)
    first_card_ms: int = 0
    faulted: bool = False  # a fault or a behaviour already touched this round


@dataclass(slots=True)
class Events:
    """A device's events for one gaming day, in order (columns of equal length)."""

    ts: np.ndarray  # int64 ms
    kind: np.ndarray  # int8 SHOE_START..SHOE_END
    round_no: np.ndarray  # int64, -1 = empty
    card: np.ndarray  # int16 code, NO_CARD = empty
    shoe: np.ndarray  # int32 index into shoe_ids
    decks: np.ndarray  # int16, 0 = empty
    shoe_ids: list[str]

    @classmethod
    def empty(cls) -> "Events":
        return cls(
            np.zeros(0, np.int64), np.zeros(0, np.int8), np.zeros(0, np.int64), np.zeros(0, np.int16),
            np.zeros(0, np.int32), np.zeros(0, np.int16), [],
        )

    def __len__(self) -> int:
        return len(self.ts)

    def take(self, keep: np.ndarray) -> "Events":
        """The events where ``keep`` is true (a boolean mask or an index array)."""
        return Events(self.ts[keep], self.kind[keep], self.round_no[keep], self.card[keep], self.shoe[keep],
                      self.decks[keep], self.shoe_ids)

    def insert(self, at: int, ts: int, kind: int, round_no: int, card: int, shoe: int, decks: int = 0) -> "Events":
        """A copy with one event inserted before position ``at``."""
        return Events(
            np.insert(self.ts, at, ts), np.insert(self.kind, at, kind), np.insert(self.round_no, at, round_no),
            np.insert(self.card, at, card), np.insert(self.shoe, at, shoe), np.insert(self.decks, at, decks),
            self.shoe_ids,
        )


class EventBuffer:
    """Collects events a game module emits one by one or in blocks, then freezes them into ``Events``."""

    def __init__(self) -> None:
        self._ts: list[np.ndarray] = []
        self._kind: list[np.ndarray] = []
        self._round: list[np.ndarray] = []
        self._card: list[np.ndarray] = []
        self._shoe: list[np.ndarray] = []
        self._decks: list[np.ndarray] = []
        self.shoe_ids: list[str] = []
        self._cols: tuple[list[int], ...] = ([], [], [], [], [], [])  # events added one by one, not yet in a block

    def one(self, ts: int, kind: int, round_no: int, card: int, shoe: int, decks: int = 0) -> None:
        """Add one event (cheap: kept in Python lists until the next block or the freeze)."""
        c = self._cols
        c[0].append(ts)
        c[1].append(kind)
        c[2].append(round_no)
        c[3].append(card)
        c[4].append(shoe)
        c[5].append(decks)

    def many(self, ts: list[int], kind: int, round_no: int, cards: list[int], shoe: int) -> None:
        """Add several events of one kind and round (Python lists)."""
        n = len(ts)
        c = self._cols
        c[0].extend(ts)
        c[1].extend([kind] * n)
        c[2].extend([round_no] * n)
        c[3].extend(cards)
        c[4].extend([shoe] * n)
        c[5].extend([0] * n)

    def _flush(self) -> None:
        c = self._cols
        if c[0]:
            self._append(np.array(c[0], dtype=np.int64), np.array(c[1], dtype=np.int8), np.array(c[2], dtype=np.int64),
                         np.array(c[3], dtype=np.int16), np.array(c[4], dtype=np.int32), np.array(c[5], dtype=np.int16))
            self._cols = ([], [], [], [], [], [])

    def _append(self, ts, kind, rnd, card, shoe, decks) -> None:
        self._ts.append(ts)
        self._kind.append(kind)
        self._round.append(rnd)
        self._card.append(card)
        self._shoe.append(shoe)
        self._decks.append(decks)

    def new_shoe(self, shoe_id: str) -> int:
        self.shoe_ids.append(shoe_id)
        return len(self.shoe_ids) - 1

    def add(self, ts, kind, round_no, card, shoe: int, decks=0) -> None:
        self._flush()
        ts = np.atleast_1d(np.asarray(ts, dtype=np.int64))
        n = len(ts)
        self._append(ts, np.broadcast_to(np.asarray(kind, dtype=np.int8), (n,)),
                     np.broadcast_to(np.asarray(round_no, dtype=np.int64), (n,)),
                     np.broadcast_to(np.asarray(card, dtype=np.int16), (n,)), np.full(n, shoe, dtype=np.int32),
                     np.broadcast_to(np.asarray(decks, dtype=np.int16), (n,)))

    def freeze(self) -> Events:
        self._flush()
        if not self._ts:
            ev = Events.empty()
            ev.shoe_ids = self.shoe_ids
            return ev
        return Events(
            np.concatenate(self._ts), np.concatenate(self._kind), np.concatenate(self._round),
            np.concatenate(self._card), np.concatenate(self._shoe), np.concatenate(self._decks), self.shoe_ids,
        )


@dataclass(slots=True)
class TableDay:
    """Everything one table produced in one gaming day."""

    rounds: list[RoundRec]
    events: Events
    seq_start: int  # the device's event_seq of its first event this day
