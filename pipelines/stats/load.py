"""What the statistical detectors read from the database, for a range of gaming days (read-only).

Four frames: the re-settled wagers (``out_settlements`` with each round's shoe and the shoe's decks
from the device's ``shoe_start``), the deterministic findings that are dealer errors, the rounds
dealt per dealer, and the device's card sequence of the shoes the counting detectors need.
Everything is bound as SQL parameters.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import polars as pl

WAGER_COLUMNS = (
    "gaming_day", "table_id", "round_no", "wager_id", "wager_order", "seat", "player_id", "dealer_id", "game",
    "ruleset", "ruleset_version", "currency", "status", "bet", "amount", "settled_amount", "cards_net",
    "expected_net", "recorded_net", "difference", "adjustment", "source_file", "source_line",
)

# deterministic kinds that are a dealer's error at the table (a wrong settlement or a wrong procedure)
DEALER_ERROR_KINDS = ("payout_mismatch", "drawing_rule_violation", "void_not_honoured", "free_hand_wager",
                      "late_wager", "result_mismatch", "illegal_action")


@dataclass(frozen=True)
class StatsInputs:
    wagers: pl.DataFrame  # WAGER_COLUMNS + shoe_id, decks
    dealer_errors: pl.DataFrame  # gaming_day, table_id, round_no, dealer_id, kind (one row per round and kind)
    cards: pl.DataFrame  # table_id, shoe_id, event_seq, round_no, card_code, decks (card events only, device order)
    first_day: dt.date
    last_day: dt.date


def load_inputs(con, first_day: dt.date, last_day: dt.date, games: tuple[str, ...] = ("baccarat", "blackjack", "holdem_bonus")) -> StatsInputs:
    """The frames of gaming days ``first_day..last_day`` from an open (read-only) DuckDB connection."""
    cols = ", ".join(f"s.{c}" for c in WAGER_COLUMNS)
    marks = ", ".join("?" for _ in games)
    wagers = con.sql(f"""
        WITH decks AS (SELECT shoe_id, max(decks) AS decks FROM core_device_events
                       WHERE event = 'shoe_start' GROUP BY shoe_id)
        SELECT {cols}, r.shoe_id, d.decks
        FROM out_settlements s
        LEFT JOIN core_rounds r ON r.table_id = s.table_id AND r.round_no = s.round_no AND r.gaming_day = s.gaming_day
        LEFT JOIN decks d ON d.shoe_id = r.shoe_id
        WHERE s.gaming_day BETWEEN ? AND ? AND s.game IN ({marks})
        ORDER BY s.gaming_day, s.table_id, s.round_no, s.wager_order""", params=[first_day, last_day, *games]).pl()
    kinds = ", ".join("?" for _ in DEALER_ERROR_KINDS)
    errors = con.sql(f"""
        SELECT DISTINCT gaming_day, table_id, round_no, dealer_id, kind FROM out_findings
        WHERE gaming_day BETWEEN ? AND ? AND kind IN ({kinds}) AND dealer_id IS NOT NULL AND round_no IS NOT NULL""",
                     params=[first_day, last_day, *DEALER_ERROR_KINDS]).pl()
    cards = con.sql(f"""
        WITH shoes AS (SELECT DISTINCT r.table_id, r.shoe_id FROM core_rounds r
                       WHERE r.gaming_day BETWEEN ? AND ? AND r.game IN ({marks})),
             decks AS (SELECT shoe_id, max(decks) AS decks FROM core_device_events
                       WHERE event = 'shoe_start' GROUP BY shoe_id)
        SELECT e.table_id, e.shoe_id, e.event_seq, e.round_no, e.card_code, d.decks
        FROM core_device_events e JOIN shoes USING (table_id, shoe_id) LEFT JOIN decks d ON d.shoe_id = e.shoe_id
        WHERE e.event = 'card'
        ORDER BY e.table_id, e.shoe_id, e.event_seq""", params=[first_day, last_day, *games]).pl()
    return StatsInputs(wagers, errors, cards, first_day, last_day)


def gaming_days(con, first_day: dt.date | None = None, last_day: dt.date | None = None) -> list[dt.date]:
    """The gaming days (of ``first_day..last_day``, default all) the database holds settlements for, in order."""
    lo, hi = first_day or dt.date.min, last_day or dt.date.max
    return [r[0] for r in con.execute("SELECT DISTINCT gaming_day FROM out_settlements WHERE gaming_day BETWEEN ? AND ? "
                                      "ORDER BY 1", [lo, hi]).fetchall()]
