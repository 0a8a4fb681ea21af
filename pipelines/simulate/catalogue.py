"""The planted faults: every way a dealer, a table system or a device goes wrong, by finding kind.

A *variant* is one concrete mistake (``commission_not_taken``) of one finding kind
(``payout_mismatch``), possible on some tables only (commission baccarat). The planner draws
tickets (one variant each) at the fault rate, first one of every variant the floor allows (so a
night big enough shows every kind), then at random; each table then plants its tickets on rounds
that meet the variant's conditions (``pipelines.simulate.faults``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pipelines.simulate.floor import Table


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    kind: str
    applies: Callable[[Table], bool]
    weight: float = 1.0
    doc: str = ""


def _game(*games: str) -> Callable[[Table], bool]:
    return lambda t: t.game in games


def _commission(t: Table) -> bool:
    return t.ruleset == "hoiana-tiger-baccarat/commission"


def _no_commission(t: Table) -> bool:
    return t.ruleset == "hoiana-tiger-baccarat/no-commission"


def _any(t: Table) -> bool:
    return True


def _foreign_card_voids(t: Table) -> bool:
    """Rule sets whose text voids a round with a foreign card (TBAC-7.1, BJ-7.14, HTB-7.1.1, MBS-5.1);
    the player's guide states no irregularity rule (its engine leaves such wagers unsettled)."""
    return t.ruleset != "guide-holdem-bonus-progressive"


BAC = _game("baccarat")
BJ = _game("blackjack")
HTB = _game("holdem_bonus")
SHOE_GAMES = _game("baccarat", "blackjack")

VARIANTS: tuple[Variant, ...] = (
    # wrong payouts (the table system records a net the rules do not give)
    Variant("commission_not_taken", "payout_mismatch", _commission, 2, "Banker win paid 1:1, the 5% commission not taken (TBAC-5.1.1)"),
    Variant("tiger_two_card_rate", "payout_mismatch", BAC, 1, "Tiger on a three-card Banker six paid 12:1 instead of 20:1 (TBAC-5.1.3)"),
    Variant("banker_six_paid_full", "payout_mismatch", _no_commission, 2, "no-commission Banker win on 6 paid 1:1 instead of 1:2 (TBAC-5.1.2)"),
    Variant("tie_main_collected", "payout_mismatch", BAC, 1, "Banker/Player wager collected on a Tie instead of standing off (TBAC-6.1.1.3, 6.1.2.3)"),
    Variant("pair_short_paid", "payout_mismatch", BAC, 1, "a winning pair paid 8:1 instead of 11:1 (TBAC-5.1.3)"),
    Variant("wrong_pro_rata", "payout_mismatch", lambda t: t.game == "baccarat" and t.limits.differential is not None, 1,
            "a box over the table differential settled in full instead of pro rata (TBAC-7.19); also a differential_breach"),
    Variant("blackjack_paid_even", "payout_mismatch", BJ, 2, "a blackjack paid 1:1 instead of 3:2 (BJ-5.1)"),
    Variant("double_lost_to_dealer_blackjack", "payout_mismatch", BJ, 1, "the doubled or split stake collected on a dealer blackjack (BJ-4.9.5, 4.10.8)"),
    Variant("surrender_collected_in_full", "payout_mismatch", BJ, 1, "a surrendered wager collected in full instead of half (BJ-4.12.1)"),
    Variant("ante_paid_below_qualifier", "payout_mismatch", HTB, 2, "the Ante paid on a win below the qualifier (HTB-5.2, MBS-3.8.1, guide: flush)"),
    Variant("folded_bonus_paid", "payout_mismatch", HTB, 1, "a Bonus paid on a folded hand (HTB-4.11.2.i, MBS-3.7.1)"),
    Variant("bonus_wrong_line", "payout_mismatch", HTB, 1, "a winning Bonus paid at the next lower line of the pay table"),
    # limits
    Variant("over_max", "limit_breach", BAC, 1, "a main wager above the table maximum, settled up to the maximum (TBAC-7.18)"),
    Variant("under_min", "limit_breach", _any, 1, "a main wager below the table minimum, settled in full (TBAC-7.17, HTB-7.10)"),
    Variant("pro_rata_settled", "differential_breach", lambda t: t.game == "baccarat" and t.limits.differential is not None, 1,
            "Banker and Player totals further apart than the table differential, settled pro rata (TBAC-7.19)"),
    # cards
    Variant("foreign_card_voided", "card_integrity", _any, 1, "a foreign card in the round; the table voided it"),
    Variant("unreadable_card", "card_integrity", _any, 1, "a card the device could not read (??); the table settled from the physical cards"),
    Variant("duplicate_in_shoe", "card_integrity", SHOE_GAMES, 1, "one card more copies in the shoe than its decks hold (TBAC-7.1, BJ-7.14); nobody noticed"),
    Variant("duplicate_in_deck", "card_integrity", HTB, 1, "the same card twice in a single-deck round; the table voided it (HTB-7.7, MBS-5.2)"),
    Variant("extra_third_card", "drawing_rule_violation", BAC, 1, "a third card drawn when the rules give none (TBAC-7.6, 7.7); settled on the right cards"),
    Variant("dealer_extra_card", "drawing_rule_violation", BJ, 1, "the dealer drew past a completed hand (BJ-4.14.3, 7.3); settled on the right cards"),
    Variant("wrong_winner_announced", "result_mismatch", BAC, 1, "the table recorded the other hand as the winner; the nets follow the cards (TBAC-7.16)"),
    # round status
    Variant("void_status_but_settled", "void_not_honoured", _any, 1, "the table declared the round void and settled its wagers anyway"),
    Variant("foreign_card_settled", "void_not_honoured", _foreign_card_voids, 1,
            "a foreign card voids the round, the table settled it anyway; also a card_integrity"),
    Variant("wager_on_free_hand", "free_hand_wager", BAC, 1, "wagers left on and settled in a Free Hand (TBAC-7.8)"),
    Variant("placed_after_close", "late_wager", _any, 1, "a wager placed after bets closed"),
    # the logs themselves
    Variant("lost_events", "sequence_gap", _any, 1, "device events lost: event_seq jumps"),
    Variant("table_record_without_cards", "unmatched_round", _any, 1, "a settled round the device never saw (a round with no cards)"),
    Variant("cards_without_table_record", "unmatched_round", _any, 1, "cards dealt for a round the table system has no record of (a missing round)"),
    Variant("truncated_json_line", "quarantine", _any, 0.5, "a partial write: the start of a round's JSON line, then the whole line"),
    Variant("float_amount", "quarantine", _any, 0.5, "a round line whose amount is a decimal, re-sent correctly on the next line"),
    Variant("timestamp_without_offset", "quarantine", _any, 0.5, "a round line whose timestamps lack the UTC offset, re-sent correctly"),
    Variant("csv_wrong_column_count", "quarantine", _any, 0.5, "a device line with a column missing, then the whole line"),
    Variant("csv_unknown_event", "quarantine", _any, 0.5, "a device line with a garbled event name, then the whole line"),
    Variant("csv_bad_timestamp", "quarantine", _any, 0.5, "a device line whose timestamp is not a timestamp, then the whole line"),
)

BY_NAME: dict[str, Variant] = {v.name: v for v in VARIANTS}


@dataclass(frozen=True, slots=True)
class Ticket:
    """One fault to plant on one table in one gaming day."""

    variant: str
    serial: int  # global order of the ticket (for stable ordering)


def draw_tickets(
    rng: np.random.Generator,
    units: list[tuple[Table, int, int]],  # (table, day number, rounds)
    fault_rate: float,
) -> dict[tuple[int, int], list[Ticket]]:
    """Tickets per (table index, day number): a binomial count per unit; one of every variant first."""
    if fault_rate <= 0 or not units:
        return {}
    counts = [int(rng.binomial(n, fault_rate)) if n > 0 else 0 for _, _, n in units]
    slots: list[list[str | None]] = [[None] * c for c in counts]
    free = np.array(counts, dtype=np.int64)
    rounds = np.array([n for _, _, n in units], dtype=np.float64)
    # coverage: one of each variant the floor allows, on a unit that has a free slot
    for v in VARIANTS:
        ok = np.array([v.applies(t) for t, _, _ in units]) & (free > 0)
        if not ok.any():
            continue
        w = np.where(ok, rounds, 0.0)
        u = int(rng.choice(len(units), p=w / w.sum()))
        slots[u][counts[u] - free[u]] = v.name
        free[u] -= 1
    # the rest: a variant the table allows, by weight
    for u, (table, _, _) in enumerate(units):
        if free[u] == 0:
            continue
        allowed = [v for v in VARIANTS if v.applies(table)]
        w = np.array([v.weight for v in allowed])
        picks = rng.choice(len(allowed), size=int(free[u]), p=w / w.sum())
        for k, p in enumerate(picks):
            slots[u][counts[u] - free[u] + k] = allowed[int(p)].name
        free[u] = 0
    out: dict[tuple[int, int], list[Ticket]] = {}
    serial = 0
    for u, (table, day, _) in enumerate(units):
        if slots[u]:
            out[(table.index, day)] = [Ticket(str(name), serial + k) for k, name in enumerate(slots[u])]
            serial += len(slots[u])
    return out
