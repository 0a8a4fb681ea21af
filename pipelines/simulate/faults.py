"""The faults every game shares, planted on a day's finished rounds and device events.

Game-specific mistakes (a wrong payout, a breach, a card drawn in error) are planted by the game
modules, which know the cards; what is left is the same at every table: a foreign or unreadable
card in the device log, a round the table voided and settled anyway, a late wager, lost device
events, a round only one side of the logs knows, and malformed lines (spliced in by the writer).
Each planted fault adds its ground-truth row; a round carries at most one fault.
"""

from __future__ import annotations

import numpy as np

from pipelines.simulate import records as R
from pipelines.simulate.catalogue import Ticket
from pipelines.simulate.context import DayContext
from pipelines.simulate.records import Events
from pipelines.simulate.writer import Garble
from rulebook.cards import UNREADABLE, card_text

ROUND_LEVEL = (
    "foreign_card_voided",
    "foreign_card_settled",
    "unreadable_card",
    "void_status_but_settled",
    "placed_after_close",
    "table_record_without_cards",
    "cards_without_table_record",
)
JSON_GARBLES = ("truncated_json_line", "float_amount", "timestamp_without_offset")
CSV_GARBLES = ("csv_wrong_column_count", "csv_unknown_event", "csv_bad_timestamp")


def _candidates(ctx: DayContext, events: Events) -> tuple[list[int], set[int]]:
    """Rounds a round-level fault may take (settled, with wagers, untouched), and the round numbers with cards."""
    with_cards = set(np.unique(events.round_no[events.kind == R.CARD]).tolist())
    out = [i for i, r in enumerate(ctx.rounds) if r.status == "settled" and not r.faulted and r.wagers]
    return out, with_cards


def _round_card_rows(events: Events, round_no: int) -> np.ndarray:
    return np.flatnonzero((events.round_no == round_no) & (events.kind == R.CARD))


def plant_round_faults(ctx: DayContext, events: Events, tickets: list[Ticket]) -> Events:
    """Plant the round-level tickets; returns the (possibly edited) events."""
    rng = ctx.rng
    removed: list[int] = []
    cand, with_cards = _candidates(ctx, events)
    for t in tickets:
        v = t.variant
        need_cards = v in ("foreign_card_voided", "foreign_card_settled", "unreadable_card",
                           "table_record_without_cards", "cards_without_table_record")
        i = None
        for _ in range(200):
            if not cand:
                break
            k = int(rng.integers(len(cand)))
            r = ctx.rounds[cand[k]]
            if r.faulted or r.status != "settled":
                cand[k] = cand[-1]  # taken since: never a candidate again
                cand.pop()
                continue
            if (not need_cards or r.round_no in with_cards) and (
                    v != "void_status_but_settled" or any(w.net != 0 for w in r.wagers)):
                i = cand[k]
                break
        if i is None:
            ctx.count("unplaced_" + v)
            continue
        rec = ctx.rounds[i]
        rec.faulted = True
        if v in ("foreign_card_voided", "foreign_card_settled"):
            rows = _round_card_rows(events, rec.round_no)
            k = int(rng.integers(1, len(rows) + 1))  # after the k-th card of the round
            at = int(rows[k - 1]) + 1
            before = int(events.ts[at - 1])
            after = int(events.ts[at]) if at < len(events) else before + 2000
            ts = before + max(1, min(700, (after - before) // 2))
            code = R.foreign_code(int(rng.integers(len(R.FOREIGN_TEXTS))))
            events = events.insert(at, ts, R.CARD, rec.round_no, code, int(events.shoe[at - 1]))
            text = R.FOREIGN_TEXTS[R.FOREIGN_BASE - code]
            if v == "foreign_card_voided":
                rec.status = "void"
                rec.recorded_result = None
                for w in rec.wagers:
                    w.net = 0
                ctx.add_truth("card_integrity", rec, f"foreign_card_voided: foreign card {text!r} after card {k} of the round; "
                              f"the table voided the round and returned every wager")
            else:
                ctx.add_truth("card_integrity", rec, f"foreign_card_settled: foreign card {text!r} after card {k} of the round")
                ctx.add_truth("void_not_honoured", rec, f"foreign_card_settled: a foreign card voids the round "
                              f"(TBAC-7.1, BJ-7.14, HTB-7.1.1, MBS-5.1) but the table settled {len(rec.wagers)} wager(s)")
        elif v == "unreadable_card":
            rows = _round_card_rows(events, rec.round_no)
            j = int(rows[int(rng.integers(len(rows)))])
            was = card_text(int(events.card[j]))
            events.card[j] = UNREADABLE
            ctx.add_truth("card_integrity", rec, f"unreadable_card: card {int(np.searchsorted(rows, j)) + 1} of the round "
                          f"({was}) written as ??; the table settled from the physical card")
        elif v == "void_status_but_settled":
            rec.status = "void"
            rec.recorded_result = None
            paid = sum(1 for w in rec.wagers if w.net != 0)
            ctx.add_truth("void_not_honoured", rec, f"void_status_but_settled: status void, yet {paid} wager(s) carry a "
                          f"non-zero net")
        elif v == "placed_after_close":
            w = rec.wagers[int(rng.integers(len(rec.wagers)))]
            w.placed_ms = rec.close_ms + int(rng.integers(1, 5)) * 1000
            ctx.add_truth("late_wager", rec, f"placed_after_close: {w.bet} {w.amount} placed "
                          f"{(w.placed_ms - rec.close_ms) // 1000} s after bets closed", wager=w)
        elif v == "table_record_without_cards":
            if ctx.table.game == "holdem_bonus":  # a fresh deck per round: the whole shoe is unseen
                shoe = int(events.shoe[_round_card_rows(events, rec.round_no)[0]])
                gone = events.shoe == shoe
            else:
                gone = (events.round_no == rec.round_no) & ((events.kind == R.CARD) | (events.kind == R.BURN))
            events = events.take(~gone)
            ctx.add_truth("unmatched_round", rec, "table_record_without_cards: the table settled the round; the device "
                          "logged no card for it")
        elif v == "cards_without_table_record":
            removed.append(i)
            ctx.add_truth("unmatched_round", rec, f"cards_without_table_record: the device dealt round {rec.round_no}; "
                          f"the table system has no record of it ({len(rec.wagers)} wager(s) lost)")
    for i in sorted(removed, reverse=True):
        del ctx.rounds[i]
    return events


def plant_lost_events(ctx: DayContext, events: Events, seq: np.ndarray, tickets: list[Ticket]) -> tuple[Events, np.ndarray]:
    """Drop events (after numbering them) so that ``event_seq`` jumps: shoe ends or burns before a shoe's first round."""
    rng = ctx.rng
    keep = np.ones(len(events), dtype=bool)
    n = len(events)
    for _ in tickets:
        cand = np.flatnonzero(
            keep & (np.arange(n) > 0) & (np.arange(n) < n - 1)
            & ((events.kind == R.SHOE_END) | ((events.kind == R.BURN) & (events.round_no < 0)))
        )
        cand = cand[keep[np.minimum(cand + 1, n - 1)] & keep[cand - 1]]
        if len(cand) == 0:
            ctx.count("unplaced_lost_events")
            continue
        j = int(cand[int(rng.integers(len(cand)))])
        run = [j]
        if events.kind[j] == R.BURN:
            for _ in range(int(rng.integers(0, 3))):
                nxt = run[-1] + 1
                if nxt < n - 1 and events.kind[nxt] == R.BURN and events.round_no[nxt] < 0 and keep[nxt + 1]:
                    run.append(nxt)
        keep[run] = False
        names = ", ".join(R.EVENT_NAMES[int(events.kind[k])] for k in run)
        ctx.truth.append(_gap_row(ctx, int(seq[run[0]]), int(seq[run[-1]]), names))
    return events.take(keep), seq[keep]


def _gap_row(ctx: DayContext, first: int, last: int, names: str):
    from pipelines.simulate.ground_truth import TruthRow

    span = f"{first}" if first == last else f"{first}-{last}"
    return TruthRow("sequence_gap", ctx.table.table_id, None, None, None, None,
                    f"lost_events: event_seq {span} missing from device {ctx.table.device_id} ({names})")


def choose_garbles(ctx: DayContext, events: Events, tickets: list[Ticket]) -> tuple[list[Garble], list[Garble]]:
    """Targets for the malformed lines: a round line (JSON) or a device line (CSV) to garble a copy of."""
    rng = ctx.rng
    json_g, csv_g = [], []
    for t in tickets:
        if t.variant in JSON_GARBLES and ctx.rounds:
            k = int(rng.integers(len(ctx.rounds)))
            if t.variant == "float_amount":  # a decimal amount needs a wager to put it on
                with_wagers = [i for i, r in enumerate(ctx.rounds) if r.wagers]
                if not with_wagers:
                    ctx.count("unplaced_" + t.variant)
                    continue
                k = with_wagers[k % len(with_wagers)]
            json_g.append(Garble(t.variant, k))
        elif t.variant in CSV_GARBLES and len(events):
            csv_g.append(Garble(t.variant, int(rng.integers(len(events)))))
        else:
            ctx.count("unplaced_" + t.variant)
    return json_g, csv_g
