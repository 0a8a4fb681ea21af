"""The canonical tables (``core_*``): every column's name, type, meaning and checks, in one place.

The audit codes against these names. ``schemas.ddl`` turns them into DuckDB DDL (with the
descriptions as column comments) and ``schemas.pandera_models`` into the pandera models the loader
validates every frame with before it writes. Money is BIGINT in the currency's smallest unit.
"""

from __future__ import annotations

from schemas.metadata import Field, Rule, RowRule, Table
from schemas.vocabulary import DEVICE_EVENTS, FILE_STATUSES, GAMES, ROUND_STATUSES, SOURCE_KINDS, DEAL_MODES

SOURCE_FILE = Field(
    "source_file", "text",
    "Path of the input file relative to the input folder, with '/' separators.", required=True,
    rules=(Rule("nonempty", "empty_text"),),
)


def _source_line(required: bool = True) -> Field:
    return Field(
        "source_line", "bigint",
        "1-based physical line number in the source file (the CSV header is line 1).",
        required=required, rules=(Rule("ge", "out_of_range", 1),),
    )


def _nonempty(name: str, description: str, required: bool = True) -> Field:
    return Field(name, "text", description, required=required, rules=(Rule("nonempty", "empty_text"),))


def _money(name: str, description: str, required: bool = False, signed: bool = False) -> Field:
    rules = () if signed else (Rule("ge", "negative_amount", 0),)
    return Field(name, "bigint", description + " Integer, smallest unit of the round's currency.",
                 required=required, rules=rules)


CORE_SOURCE_FILES = Table(
    "core_source_files",
    "One row per read of an input file (a load): what was read, and how every one of its lines was accounted for. "
    "A file is known by its content: a file whose SHA-256 is loaded is not read again, whatever its name; a file "
    "that grew since it was read (its first prefix_bytes hash to a load's prefix_sha256) is read from there on; a "
    "file that could not be read is recorded with its reason and read again when it can be.",
    (
        SOURCE_FILE,
        Field("kind", "text", "Which input format: shoe_csv (card device log) or rounds_jsonl (table system log); "
              "null for a linked folder that was refused.", rules=(Rule("isin", "out_of_range", SOURCE_KINDS),)),
        Field("sha256", "text", "SHA-256 of the file's bytes as read, lowercase hex ('' when it could not be read); "
              "a file with a loaded hash is not read again.", required=True),
        Field("size_bytes", "bigint", "Size of the file in bytes, as read.", required=True,
              rules=(Rule("ge", "out_of_range", 0),)),
        Field("first_line", "bigint", "The first physical line this load read: 1, or the line after the part of a "
              "grown file that an earlier load read.", required=True, rules=(Rule("ge", "out_of_range", 1),)),
        Field("start_byte", "bigint", "Where this load started reading (0, or the end of the part read before).",
              required=True, rules=(Rule("ge", "out_of_range", 0),)),
        Field("prefix_sha256", "text", "SHA-256 of the file's bytes up to its last line end, as read: a later, "
              "longer file of the same name that starts with these bytes is read from prefix_bytes on."),
        Field("prefix_bytes", "bigint", "Length of that prefix.", rules=(Rule("ge", "out_of_range", 0),)),
        Field("prefix_lines", "bigint", "Physical lines in that prefix (the CSV header included).",
              rules=(Rule("ge", "out_of_range", 0),)),
        Field("lines_read", "bigint",
              "Rows read by this load: data lines for a CSV (the header is not a row), round lines for a JSONL. "
              "Always equals rows_accepted + rows_quarantined.",
              required=True, rules=(Rule("ge", "out_of_range", 0),)),
        Field("rows_accepted", "bigint",
              "Lines accepted: stored in the core tables, or identical to a row already there (also counted in "
              "rows_duplicate), or a version replaced by a later one (core_source_changes).",
              required=True, rules=(Rule("ge", "out_of_range", 0),)),
        Field("rows_quarantined", "bigint", "Lines set aside in core_quarantine, each with a reason.",
              required=True, rules=(Rule("ge", "out_of_range", 0),)),
        Field("rows_duplicate", "bigint",
              "Accepted lines identical to the row already loaded (from this or another file), not stored twice; "
              "each is listed in core_duplicate_lines.",
              required=True, rules=(Rule("ge", "out_of_range", 0),)),
        Field("ingested_at", "timestamptz", "When the load's transaction committed (UTC).", required=True),
        Field("status", "text", "loaded; unreadable (the file could not be read: see reason_code, error); refused "
              "(a symbolic link leading outside the input folder, not followed).",
              required=True, rules=(Rule("isin", "out_of_range", FILE_STATUSES),)),
        Field("reason_code", "text", "Why the file was not loaded (schemas.reasons.FILE_REASONS); null when loaded."),
        Field("error", "text", "The one-line reason a person reads; null when loaded."),
        Field("input_root", "text", "Absolute path of the input folder the file was read from (to re-read a line later)."),
    ),
)

CORE_DEVICE_EVENTS = Table(
    "core_device_events",
    "Every accepted card-device event (input shoe_*.csv), one row per data line, in device order.",
    (
        SOURCE_FILE,
        _source_line(),
        _nonempty("device_id", "The smart shoe or automated dealing device, e.g. AE-0107."),
        _nonempty("table_id", "The table the device serves, e.g. BAC-07."),
        _nonempty("shoe_id", "One loading of shuffled cards; a new shuffle is a new shoe_id."),
        Field("event_seq", "bigint", "Device event counter: +1 per event per device; a gap means lost events.",
              required=True, rules=(Rule("ge", "out_of_range", 0),)),
        Field("ts", "timestamptz", "When the device saw the event (UTC instant; the input carried an offset).",
              required=True),
        Field("event", "text", "shoe_start, burn, card or shoe_end.", required=True,
              rules=(Rule("isin", "unknown_event", DEVICE_EVENTS),)),
        Field("round_no", "bigint", "The table's game number the card belongs to; null for shoe_start/shoe_end "
              "and for burns before the first round.", rules=(Rule("ge", "out_of_range", 0),)),
        Field("card", "text", "The card exactly as the device wrote it (e.g. As, ??, a foreign code); null if empty."),
        Field("card_code", "smallint", "rulebook.cards.parse_card of card: 0..51 a card, -1 unreadable (??), "
              "-2 foreign, -3 empty; null for shoe_start/shoe_end.",
              rules=(Rule("between", "out_of_range", (-3, 51)),)),
        Field("decks", "smallint", "Decks loaded (shoe_start only).", rules=(Rule("between", "out_of_range", (1, 64)),)),
    ),
)

CORE_ROUNDS = Table(
    "core_rounds",
    "Every accepted round of the table system log (input rounds_*.jsonl), one row per round.",
    (
        _nonempty("table_id", "The table, e.g. BAC-07."),
        Field("round_no", "bigint", "The table's game number.", required=True, rules=(Rule("ge", "out_of_range", 0),)),
        Field("game", "text", "baccarat, blackjack or holdem_bonus.", required=True,
              rules=(Rule("isin", "unknown_game", GAMES),)),
        Field("ruleset", "text", "Rule-set name (see pitaudit rulesets); the version in force is chosen by the round's date.",
              required=True, rules=(Rule("ruleset", "unknown_ruleset"),)),
        Field("shoe_id", "text", "The shoe the round was dealt from, as the table system recorded it."),
        Field("dealer_id", "text", "The dealer on the table."),
        _nonempty("currency", "Currency of every amount of the round (ISO code, e.g. USD)."),
        Field("deal_mode", "text", "Hold'em bonus: shoe or device (automated dealing device); null otherwise.",
              rules=(Rule("isin", "unknown_deal_mode", DEAL_MODES),)),
        _money("limit_min", "Table minimum per wager (limits.min)."),
        _money("limit_max", "Table maximum per wager (limits.max)."),
        _money("limit_differential", "Baccarat: maximum difference between banker and player totals (limits.differential, TBAC-2.2.17)."),
        _money("limit_side_min", "Side-bet minimum (limits.side_min)."),
        _money("limit_side_max", "Side-bet maximum (limits.side_max)."),
        Field("bets_open_at", "timestamptz", "When betting opened."),
        Field("bets_closed_at", "timestamptz", "When betting closed; decides the gaming day.", required=True),
        Field("settled_at", "timestamptz", "When the round was settled."),
        Field("status", "text", "settled, void (declared void by the table) or free_hand (TBAC-7.5-7.8).",
              required=True, rules=(Rule("isin", "unknown_status", ROUND_STATUSES),)),
        Field("recorded_winner", "text", "recorded_result.winner when it is a string (what the table announced)."),
        Field("recorded_player_points", "smallint", "recorded_result.player_points when it is an integer."),
        Field("recorded_banker_points", "smallint", "recorded_result.banker_points when it is an integer."),
        Field("recorded_result", "json", "recorded_result as given (JSON text), game-specific, may be partial; null if absent."),
        _money("jackpot_meter", "Progressive meter at the round's close."),
        Field("gaming_day", "date", "Accounting day: the local date of bets_closed_at shifted back by the gaming-day start "
              "(06:00 by default).", required=True),
        Field("utc_offset_minutes", "smallint", "UTC offset of bets_closed_at as written, in minutes (local = UTC + offset).",
              required=True, rules=(Rule("between", "out_of_range", (-1080, 1080)),)),
        Field("wager_count", "integer", "Number of wagers in the round's list.", required=True, rules=(Rule("ge", "out_of_range", 0),)),
        Field("action_count", "integer", "Number of actions in the round's list.", required=True, rules=(Rule("ge", "out_of_range", 0),)),
        Field("content_hash", "text", "MD5 of the round's canonical content (round, wagers, actions; not the source, "
              "not the gaming day), filled when the copy stored was compared with another (a later version, or "
              "repeated within its file); null otherwise: two copies are identical exactly when their hashes are equal."),
        SOURCE_FILE,
        _source_line(),
    ),
    unique=(("table_id", "round_no"),),
    row_rules=(RowRule("ruleset belongs to game", "pair_isin", "ruleset_game_mismatch", ("ruleset", "game"), "ruleset_game"),),
)

CORE_WAGERS = Table(
    "core_wagers",
    "Every wager of every accepted round, in the order of the round's list.",
    (
        _nonempty("table_id", "The round's table."),
        Field("round_no", "bigint", "The round's game number.", required=True, rules=(Rule("ge", "out_of_range", 0),)),
        Field("wager_order", "integer", "Position in the round's wagers list, from 1 (placing order).", required=True,
              rules=(Rule("ge", "out_of_range", 1),)),
        _nonempty("wager_id", "The table system's wager id; unique within the round."),
        Field("seat", "smallint", "Seat, numbered from the dealer's left from 1.", required=True, rules=(Rule("ge", "out_of_range", 1),)),
        Field("player_id", "text", "The rated player; null for unrated play."),
        _nonempty("bet", "Bet type, one of the game's bets (shared/formats.md)."),
        _money("amount", "The amount wagered.", required=True),
        Field("placed_at", "timestamptz", "When the wager was placed.", required=True),
        _money("net", "What the table settled: paid to the player (positive), 0 stand-off/returned, minus the amount collected.",
               required=True, signed=True),
        Field("hand", "smallint", "Blackjack: the hand, from 1, a Pair wager placed when splitting belongs to "
              "(BJ-4.10.1.2); null for a wager placed before the deal (docs/formats.md).",
              rules=(Rule("ge", "out_of_range", 1),)),
        SOURCE_FILE,
        _source_line(),
    ),
)

CORE_ACTIONS = Table(
    "core_actions",
    "Every player decision of every accepted round (blackjack, hold'em bonus), in the order they happened.",
    (
        _nonempty("table_id", "The round's table."),
        Field("round_no", "bigint", "The round's game number.", required=True, rules=(Rule("ge", "out_of_range", 0),)),
        Field("action_order", "integer", "Position in the round's actions list, from 1.", required=True,
              rules=(Rule("ge", "out_of_range", 1),)),
        Field("seat", "smallint", "Seat the decision was made on.", required=True, rules=(Rule("ge", "out_of_range", 1),)),
        Field("hand", "smallint", "Hand number on the seat, from 1 (hands formed by splits).", required=True,
              rules=(Rule("ge", "out_of_range", 1),)),
        _nonempty("action", "The decision (hit, stand, double, split, surrender, insurance, even_money; fold, flop, check, turn, river, concede)."),
        _money("amount", "Amount added by the decision (double, split, insurance; hold'em flop/turn/river), null if none."),
        Field("ts", "timestamptz", "When the decision was made, if recorded."),
        Field("wager_ids", "text[]", "The wagers on the seat the decision applies to, when the table system said so (BJ-4.9.4, 4.12.2)."),
        SOURCE_FILE,
        _source_line(),
    ),
)

CORE_QUARANTINE = Table(
    "core_quarantine",
    "Every input line that was not accepted, with why. Lines read = accepted + quarantined, per file.",
    (
        SOURCE_FILE,
        _source_line(),
        Field("kind", "text", "The input format of the file (shoe_csv or rounds_jsonl).", required=True,
              rules=(Rule("isin", "out_of_range", SOURCE_KINDS),)),
        _nonempty("reason", "Short, stable, human reason (schemas.reasons); the summary groups by it."),
        _nonempty("reason_code", "Machine code of the reason (schemas.reasons.REASONS keys)."),
        Field("detail", "text", "Which field and value failed, and any further reasons of the same line."),
        Field("raw", "text", "The line as read (decoded as UTF-8 with replacement characters if it was not UTF-8), "
              "without its line end.", required=True),
    ),
)

CORE_SOURCE_CHANGES = Table(
    "core_source_changes",
    "A round or device event that arrived again with different content (a re-export that altered it): both "
    "versions, with their sources. The core tables hold the later version (the audit settles it, with a "
    "source_changed finding); the earlier one is kept here, whole, as canonical JSON. One row per change.",
    (
        Field("kind", "text", "rounds_jsonl (a round, with its wagers and actions) or shoe_csv (a device event).",
              required=True, rules=(Rule("isin", "out_of_range", SOURCE_KINDS),)),
        _nonempty("row_key", "table_id/round_no of the round, or device_id/event_seq of the device event."),
        _nonempty("table_id", "The round's table (of the later version, for a device event)."),
        Field("round_no", "bigint", "The round's number (null for a device event without one)."),
        Field("device_id", "text", "The device, for a device event."),
        Field("event_seq", "bigint", "The device's event counter, for a device event."),
        Field("gaming_day", "date", "The later version's gaming day (a round); null for a device event."),
        Field("earlier_source_file", "text", "Where the earlier version came from.", required=True),
        Field("earlier_source_line", "bigint", "Its line.", required=True),
        Field("earlier_content", "text", "The earlier version's canonical content, as JSON.", required=True),
        Field("later_source_file", "text", "Where the later version came from.", required=True),
        Field("later_source_line", "bigint", "Its line.", required=True),
        Field("later_content", "text", "The later version's canonical content, as JSON.", required=True),
    ),
)

CORE_DUPLICATE_LINES = Table(
    "core_duplicate_lines",
    "Accepted lines identical to a row already loaded: kept once, listed here so every line stays traceable.",
    (
        SOURCE_FILE,
        _source_line(),
        Field("kind", "text", "shoe_csv or rounds_jsonl.", required=True, rules=(Rule("isin", "out_of_range", SOURCE_KINDS),)),
        _nonempty("row_key", "table_id/round_no of the round, or device_id/event_seq of the device event."),
        Field("kept_source_file", "text", "Where the copy that was kept came from.", required=True),
        Field("kept_source_line", "bigint", "Line of the copy that was kept.", required=True),
    ),
)

CANONICAL_TABLES: tuple[Table, ...] = (
    CORE_SOURCE_FILES, CORE_DEVICE_EVENTS, CORE_ROUNDS, CORE_WAGERS, CORE_ACTIONS,
    CORE_QUARANTINE, CORE_SOURCE_CHANGES, CORE_DUPLICATE_LINES,
)

TABLES_BY_NAME: dict[str, Table] = {t.name: t for t in CANONICAL_TABLES}
