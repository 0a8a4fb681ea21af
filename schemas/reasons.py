"""Quarantine reasons: a stable code and a short human text for each.

The code is what programs match on (``core_quarantine.reason_code``); the text is what an auditor
reads (``core_quarantine.reason``, the summary of ``pitaudit ingest``). Both are part of the
output contract: change a text only with a note in docs/ingest.md. The order of this mapping is the
priority when one line fails several checks: the first reason is the line's reason, the others are
kept in ``detail``.
"""

from __future__ import annotations

from typing import Final

REASONS: Final[dict[str, str]] = {
    # the line itself
    "not_utf8": "not valid UTF-8",
    "blank_line": "blank line",
    "line_too_long": "line too long",
    "csv_unparseable": "unparseable CSV line",
    "csv_column_count": "wrong number of columns",
    "json_unparseable": "unparseable JSON",
    "json_not_object": "JSON line is not an object",
    "duplicate_key": "duplicate JSON key",
    "element_not_object": "list element is not an object",
    # fields
    "missing_field": "missing required field",
    "non_integer_amount": "non-integer amount",
    "wrong_type": "wrong type",
    "negative_amount": "negative amount",
    "out_of_range": "value out of range",
    "amount_beyond_bound": "amount beyond the bound",
    "empty_text": "empty text field",
    "control_character": "control or invisible character in text",
    "bad_timestamp": "not a timestamp",
    "ts_no_offset": "timestamp without an offset",
    "bad_currency": "not a currency code",
    # vocabulary
    "unknown_game": "unknown game",
    "unknown_ruleset": "unknown rule set",
    "ruleset_game_mismatch": "rule set of another game",
    "unknown_bet": "unknown bet type for the game",
    "unknown_action": "unknown action for the game",
    "unknown_event": "unknown event",
    "unknown_status": "unknown round status",
    "unknown_deal_mode": "unknown deal mode",
    # within a line or across lines
    "card_without_round": "card event without round_no",
    "duplicate_wager_id": "wager_id repeated in the round",
    "seq_backwards": "event_seq goes backwards",
    # the canonical contract (should never fire: the input checks come first)
    "contract_violation": "canonical contract violated",
}


def reason_text(code: str) -> str:
    """The human text of a reason code (a KeyError for an unknown code is a programming error)."""
    return REASONS[code]


PRIORITY: Final[dict[str, int]] = {code: i for i, code in enumerate(REASONS)}

# Why a whole file was not loaded (core_source_files.reason_code; quarantine.csv shows each such file as a row
# with an empty source_line): the file, not one of its lines, is at fault.
FILE_REASONS: Final[dict[str, str]] = {
    "file_unreadable": "file cannot be read",
    "file_not_text": "file is not UTF-8 text",
    "csv_no_header": "CSV file without its header",
    "symlink_outside_input": "symbolic link leading outside the input folder",
    "file_load_failed": "file could not be loaded",
}
