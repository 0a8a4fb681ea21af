"""Which card went to which hand: the rule set's deal procedure applied to the device's card events.

The device records cards in the order they left it, with burns marked, but not where each went
(docs/formats.md). The deal procedure of the rule set (``params.shoe_deal`` / ``device_deal``,
HTB-4.11, 4.12.1, MBS-3.6, 3.6.1) says it: this module walks the events along the procedure and
keeps what it sees -- a burn missing where the procedure has one (HTB-7.8), a burn where it has
none, cards short or left over -- as evidence for the engine to judge, never as an exception.

:func:`layout` gives the same procedure as fixed positions for a clean round of ``n`` seats,
which is what the vectorised settlement (``vector.py``) gathers from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rulebook.cards import card_text
from rulebook.round import DeviceCard, Irregularity, Step

# community index -> its name (HTB-2.2.12, 2.2.22, 2.2.18)
COMMUNITY_NAMES = ("flop card 1", "flop card 2", "flop card 3", "turn card", "river card")


@dataclass(frozen=True, slots=True)
class DealProblem:
    """A burn out of place: ``kind`` is ``missing_burn`` or ``unexpected_burn``; ``position`` the event index."""

    kind: str
    position: int
    clause: str
    detail: str


@dataclass(frozen=True, slots=True)
class Deal:
    """The hands as the procedure assigns the device's cards (codes per rulebook.cards, possibly negative)."""

    seats: tuple[int, ...]  # the seats dealt, in dealing order (seats with an Ante, HTB-4.11.1)
    hole: tuple[tuple[int, ...], ...]  # per dealt seat: its hole cards (fewer than two if the cards ran out)
    community: tuple[int, ...]  # flop, turn, river in order (fewer than five if the cards ran out)
    dealer: tuple[int, ...]
    burns: tuple[int, ...]
    steps: tuple[Step, ...]
    # per step, where its card went: "burn", "seat", "community", "dealer" or "beyond" (past the procedure);
    # ``engine.in_play_order`` places the seats' decisions among the steps by it
    dealt_to: tuple[str, ...]
    problems: tuple[DealProblem, ...]
    missing: int  # cards the procedure still needed when the events ran out
    excess: int  # card (non-burn) events left after the procedure was complete
    stopped_at_step_boundary: bool  # the events ran out between two steps, not inside one

    @property
    def complete(self) -> bool:
        return self.missing == 0 and self.excess == 0

    @property
    def all_hole_cards_dealt(self) -> bool:
        return all(len(h) == 2 for h in self.hole)


def _parse_step(step: str) -> tuple[str, int]:
    kind, _, count = step.partition(":")
    return kind, int(count or 1)


def reconstruct(
    procedure: tuple[str, ...],
    clauses: tuple[str, ...],
    seats: tuple[int, ...],
    cards: tuple[DeviceCard, ...],
    missing_burn_clause: str,
    unexpected_burn_clause: str,
) -> Deal:
    """Assign the card events of one round to the hands, step by step, with a clause per step."""
    hole: dict[int, list[int]] = {s: [] for s in seats}
    community: list[int] = []
    dealer: list[int] = []
    burns: list[int] = []
    steps: list[Step] = []
    dealt_to: list[str] = []
    problems: list[DealProblem] = []
    i = 0

    def add(step: Step, to: str) -> None:
        steps.append(step)
        dealt_to.append(to)

    n = len(cards)
    boundary = True

    def take_unexpected_burns(clause: str) -> None:
        # a burn where the procedure deals a card: the burned card goes to no hand (cited to the step's clause)
        nonlocal i
        while i < n and cards[i].is_burn:
            text = card_text(cards[i].code) or "unread"
            problems.append(
                DealProblem(
                    "unexpected_burn",
                    i,
                    clause,
                    f"event {i + 1} is a burn ({text}) where the deal procedure ({clause}) has no burn",
                )
            )
            burns.append(cards[i].code)
            add(Step(f"burn (out of procedure): {text}", clause), "burn")
            i += 1

    for step, clause in zip(procedure, clauses):
        kind, count = _parse_step(step)
        if kind == "burn":
            if i < n and cards[i].is_burn:
                text = card_text(cards[i].code) or "unread"
                burns.append(cards[i].code)
                add(Step(f"burn: {text}", clause), "burn")
                i += 1
            elif i < n:
                problems.append(
                    DealProblem(
                        "missing_burn",
                        i,
                        missing_burn_clause,
                        f"no burn before event {i + 1} ({card_text(cards[i].code) or 'empty'}) where the procedure burns a card ({clause})",
                    )
                )
            continue
        targets: list[tuple[str, int]] = []  # (hand, seat or index)
        if kind == "seats":
            for seat in seats:
                targets.extend(("seat", seat) for _ in range(count))
        elif kind == "community":
            targets = [("community", len(community) + k) for k in range(count)]
        else:
            targets = [("dealer", len(dealer) + k) for k in range(count)]
        for t, (hand, key) in enumerate(targets):
            take_unexpected_burns(clause)
            if i >= n:
                if t:
                    boundary = False
                break
            code = cards[i].code
            i += 1
            if hand == "seat":
                hole[key].append(code)
                add(Step(f"seat {key} hole card {len(hole[key])}: {card_text(code)}", clause), "seat")
            elif hand == "community":
                community.append(code)
                add(Step(f"{COMMUNITY_NAMES[key] if key < 5 else 'community card'}: {card_text(code)}", clause), "community")
            else:
                dealer.append(code)
                add(Step(f"dealer hole card {len(dealer)}: {card_text(code)}", clause), "dealer")
    excess = 0
    while i < n:
        if cards[i].is_burn:
            take_unexpected_burns(unexpected_burn_clause)
            continue
        excess += 1
        add(Step(f"card beyond the deal procedure: {card_text(cards[i].code)}", clauses[-1] if clauses else ""), "beyond")
        i += 1
    dealt = sum(len(h) for h in hole.values()) + len(community) + len(dealer)
    needed = 2 * len(seats) + 5 + 2
    missing = needed - dealt
    return Deal(
        seats=tuple(seats),
        hole=tuple(tuple(hole[s]) for s in seats),
        community=tuple(community),
        dealer=tuple(dealer),
        burns=tuple(burns),
        steps=tuple(steps),
        dealt_to=tuple(dealt_to),
        problems=tuple(problems),
        missing=missing,
        excess=excess,
        stopped_at_step_boundary=boundary,
    )


def problems_as_irregularities(deal: Deal) -> tuple[Irregularity, ...]:
    """Burns out of place are card-integrity findings (HTB-7.8 for a missing one)."""
    return tuple(Irregularity("card_integrity", p.clause, p.detail) for p in deal.problems)


@dataclass(frozen=True, slots=True)
class Layout:
    """Positions of every hand's cards in the event list of a clean round with ``n_seats`` seats."""

    length: int
    is_burn: np.ndarray  # (length,) bool: where the procedure burns
    hole: np.ndarray  # (n_seats, 2) event positions of each seat's hole cards
    community: np.ndarray  # (5,)
    dealer: np.ndarray  # (2,)
    step_clause: tuple[str, ...]  # the clause of each event position


def layout(procedure: tuple[str, ...], clauses: tuple[str, ...], n_seats: int) -> Layout:
    """The procedure as fixed positions (used to gather many clean rounds at once)."""
    burn: list[bool] = []
    hole = [[] for _ in range(n_seats)]
    community: list[int] = []
    dealer: list[int] = []
    step_clause: list[str] = []
    for step, clause in zip(procedure, clauses):
        kind, count = _parse_step(step)
        if kind == "burn":
            burn.append(True)
            step_clause.append(clause)
            continue
        if kind == "seats":
            for s in range(n_seats):
                for _ in range(count):
                    hole[s].append(len(burn))
                    burn.append(False)
                    step_clause.append(clause)
        else:
            target = community if kind == "community" else dealer
            for _ in range(count):
                target.append(len(burn))
                burn.append(False)
                step_clause.append(clause)
    return Layout(
        length=len(burn),
        is_burn=np.array(burn, dtype=bool),
        hole=np.array(hole, dtype=np.intp).reshape(n_seats, 2),
        community=np.array(community, dtype=np.intp),
        dealer=np.array(dealer, dtype=np.intp),
        step_clause=tuple(step_clause),
    )


def deal_events(
    procedure: tuple[str, ...],
    hole: list[tuple[int, int]],
    community: tuple[int, ...],
    dealer: tuple[int, ...],
    burns: tuple[int, ...] = (),
) -> tuple[DeviceCard, ...]:
    """The card events a correct deal of these hands produces (the inverse of :func:`reconstruct`).

    ``hole`` is per seat in seat order; ``burns`` gives the burn cards in order (missing ones are
    written as unread burns). Used by the simulator, the benchmarks and the property tests.
    """
    events: list[DeviceCard] = []
    served = [0] * len(hole)
    c = d = b = 0
    for step in procedure:
        kind, count = _parse_step(step)
        if kind == "burn":
            events.append(DeviceCard(burns[b] if b < len(burns) else -3, True))
            b += 1
        elif kind == "seats":
            for s, cards in enumerate(hole):
                for _ in range(count):
                    events.append(DeviceCard(cards[served[s]]))
                    served[s] += 1
        elif kind == "community":
            events.extend(DeviceCard(x) for x in community[c : c + count])
            c += count
        else:
            events.extend(DeviceCard(x) for x in dealer[d : d + count])
            d += count
    return tuple(events)


def early_stops(procedure: tuple[str, ...], n_seats: int) -> tuple[int, ...]:
    """Event counts at which a deal may stop short after every seat folded: the step boundaries after the
    last hole card, before the end (the scalar engine's "the deal stopped after every seat folded")."""
    total = 0
    ends: list[int] = []
    last_seats = -1
    for k, step in enumerate(procedure):
        kind, count = _parse_step(step)
        total += n_seats * count if kind == "seats" else count
        ends.append(total)
        if kind == "seats":
            last_seats = k
    if last_seats < 0:
        return ()
    return tuple(e for e in ends[last_seats:] if e < total)
