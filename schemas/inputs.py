"""The inputs as read (``input_*``): every field of docs/formats.md, as text, with its checks.

A line is first split into fields without judging them (CSV: the text between commas, an empty
field is null; JSON: each value, strings decoded, other values as their JSON text, plus a
``<field>__json`` column with the value's JSON kind). These models then judge every field at
once, vectorised; each failure names a reason code (``schemas.reasons``) and sends its line to
quarantine. Only lines that pass are converted to the canonical tables (``schemas.tables``).
"""

from __future__ import annotations

from schemas.metadata import Field, Rule, RowRule, Table
from schemas.vocabulary import DEAL_MODES, DEVICE_EVENTS, GAMES, ROUND_STATUSES

SOURCE_LINE = Field("source_line", "bigint", "1-based physical line number in the file.", required=True)

# rule bundles -------------------------------------------------------------------------------
VISIBLE = (Rule("no_control", "control_character"),)
NONEMPTY = (Rule("nonempty", "empty_text"),) + VISIBLE
INT = (Rule("int_text", "wrong_type"), Rule("int_fits", "out_of_range"))
NONNEG_INT = INT + (Rule("not_negative_text", "out_of_range"),)
MONEY = INT + (Rule("not_negative_text", "negative_amount"),)
SIGNED_MONEY = INT
TS = (Rule("ts_parsed", "bad_timestamp"), Rule("ts_offset", "ts_no_offset"))


def _between(lo: int, hi: int) -> tuple[Rule, ...]:
    return INT + (Rule("int_between", "out_of_range", (lo, hi)),)


# Input 1: card device log (CSV) ----------------------------------------------------------------
SHOE_CSV_COLUMNS: tuple[str, ...] = (
    "device_id", "table_id", "shoe_id", "event_seq", "ts", "event", "round_no", "card", "decks",
)

INPUT_SHOE_CSV = Table(
    "input_shoe_csv",
    "A data line of a shoe_*.csv card device log, split into its nine fields (empty field = null).",
    (
        SOURCE_LINE,
        Field("device_id", "text", "The smart shoe or automated dealing device.", required=True, rules=NONEMPTY),
        Field("table_id", "text", "The table the device serves.", required=True, rules=NONEMPTY),
        Field("shoe_id", "text", "One loading of shuffled cards.", required=True, rules=NONEMPTY),
        Field("event_seq", "text", "Event counter per device: a non-negative integer.", required=True, rules=NONNEG_INT),
        Field("ts", "text", "When the device saw the event: ISO-8601 with a UTC offset.", required=True, rules=TS),
        Field("ts__utc", "timestamptz", "Derived: ts parsed as a UTC instant (null if it is not a timestamp with an offset)."),
        Field("event", "text", "shoe_start, burn, card or shoe_end.", required=True,
              rules=(Rule("isin", "unknown_event", DEVICE_EVENTS),)),
        Field("round_no", "text", "Game number the card belongs to (required on a card event).", rules=NONNEG_INT),
        Field("card", "text", "The card as read; any text is accepted (?? and foreign codes are evidence)."),
        Field("decks", "text", "Decks loaded, on shoe_start: an integer 1..64.", rules=_between(1, 64)),
        Field("prev_max_event_seq", "bigint",
              "Derived: the highest event_seq of the same device on an earlier line of the file (null if none)."),
    ),
    row_rules=(
        RowRule("card event has a round", "required_if", "card_without_round", ("round_no", "event"), "card"),
        RowRule("event_seq increases per device", "int_text_gt", "seq_backwards", ("event_seq", "prev_max_event_seq")),
    ),
)


# Input 2: table system round log (JSON Lines) -------------------------------------------------
def json_field(name: str, kinds: tuple[str, ...], description: str, required: bool = False,
               rules: tuple[Rule, ...] = (), kind_rules: tuple[Rule, ...] = ()) -> tuple[Field, Field]:
    """A JSON field as two columns: its value as text, and its JSON kind (which must be in ``kinds``)."""
    value = Field(name, "text", description, required=required, rules=rules)
    kind = Field(f"{name}__json", "text",
                 f"JSON kind of {name} (string, integer, number, boolean, object, array); must be one of {', '.join(kinds)}.",
                 required=required, rules=(Rule("json_kind", "wrong_type", kinds),) + kind_rules)
    return value, kind


def _str(name, description, required=False, rules=()):
    return json_field(name, ("string",), description, required, rules)


def _int(name, description, required=False, rules=INT):
    return json_field(name, ("integer",), description, required, rules)


def _money(name, description, required=False, signed=False):
    return json_field(name, ("integer", "number"), description + " An integer (a JSON 100.0 is not).", required,
                      SIGNED_MONEY if signed else MONEY, (Rule("json_not_number", "non_integer_amount"),))


def _ts(name, description, required=False):
    derived = Field(f"{name}__utc", "timestamptz", f"Derived: {name} parsed as a UTC instant (null if it is not a "
                    "timestamp with an offset).")
    return (*_str(name, description + " ISO-8601 with a UTC offset.", required, TS), derived)


INPUT_ROUNDS_JSONL = Table(
    "input_rounds_jsonl",
    "A line of a rounds_*.jsonl table system log: one JSON object per round, fields as read.",
    (
        SOURCE_LINE,
        *_str("table_id", "The table.", True, NONEMPTY),
        *_str("game", "baccarat, blackjack or holdem_bonus.", True, (Rule("isin", "unknown_game", GAMES),)),
        *_str("ruleset", "A rule set of the catalogue (pitaudit rulesets).", True, (Rule("ruleset", "unknown_ruleset"),)),
        *_int("round_no", "The table's game number: a non-negative integer.", True, NONNEG_INT),
        *_str("shoe_id", "The shoe the round was dealt from.", False, VISIBLE),
        *_str("dealer_id", "The dealer.", False, VISIBLE),
        *_str("currency", "Currency of every amount: an ISO 4217 code, three capital letters.", True,
              NONEMPTY + (Rule("currency_code", "bad_currency"),)),
        *_str("deal_mode", "Hold'em bonus: shoe or device; null otherwise.", False,
              (Rule("isin", "unknown_deal_mode", DEAL_MODES),)),
        Field("limits__json", "text", "JSON kind of limits; must be an object when present.",
              rules=(Rule("json_kind", "wrong_type", ("object",)),)),
        *_money("limit_min", "limits.min: minimum per wager."),
        *_money("limit_max", "limits.max: maximum per wager."),
        *_money("limit_differential", "limits.differential: baccarat banker/player difference limit."),
        *_money("limit_side_min", "limits.side_min."),
        *_money("limit_side_max", "limits.side_max."),
        *_ts("bets_open_at", "When betting opened."),
        *_ts("bets_closed_at", "When betting closed (decides the gaming day).", True),
        *_ts("settled_at", "When the round was settled."),
        *_str("status", "settled, void or free_hand.", True, (Rule("isin", "unknown_status", ROUND_STATUSES),)),
        Field("recorded_result", "text", "recorded_result as JSON text, kept as given (any kind; may be absent)."),
        *_money("jackpot_meter", "Progressive meter at the round's close."),
        Field("wagers__json", "text", "JSON kind of wagers: an array (possibly empty) is required.", required=True,
              rules=(Rule("json_kind", "wrong_type", ("array",)),)),
        Field("actions__json", "text", "JSON kind of actions: an array when present (absent = no actions).",
              rules=(Rule("json_kind", "wrong_type", ("array",)),)),
    ),
    row_rules=(RowRule("ruleset belongs to game", "pair_isin", "ruleset_game_mismatch", ("ruleset", "game"), "ruleset_game"),),
)

INPUT_WAGER = Table(
    "input_wager",
    "One element of a round line's wagers list, fields as read.",
    (
        SOURCE_LINE,
        Field("wager_order", "bigint", "Position in the list, from 1.", required=True),
        Field("game", "text", "Derived: the round's game (to check the bet against)."),
        Field("element__json", "text", "JSON kind of the list element: must be an object.", required=True,
              rules=(Rule("json_kind", "element_not_object", ("object",)),)),
        *_str("wager_id", "The table system's wager id.", True, NONEMPTY),
        *_int("seat", "Seat from the dealer's left, 1 upward.", True, _between(1, 1000)),
        *_str("player_id", "Rated player; null for unrated play.", False, VISIBLE),
        *_str("bet", "Bet type, one of the round's game's bets.", True),
        *_money("amount", "Amount wagered.", True),
        *_ts("placed_at", "When the wager was placed.", True),
        *_money("net", "What the table settled for the wager (signed).", True, signed=True),
        *_int("hand", "Blackjack: the hand (numbered as an action's hand, from 1) a Pair wager placed when splitting "
              "belongs to (BJ-4.10.1.2); absent or null for a wager placed before the deal.", False, _between(1, 100)),
        Field("wager_id_repeated", "boolean", "Derived: the same wager_id appears earlier in the round's list.",
              rules=(Rule("is_false", "duplicate_wager_id"),)),
    ),
    row_rules=(RowRule("bet exists in the game", "pair_isin", "unknown_bet", ("game", "bet"), "game_bet"),),
)

INPUT_ACTION = Table(
    "input_action",
    "One element of a round line's actions list, fields as read.",
    (
        SOURCE_LINE,
        Field("action_order", "bigint", "Position in the list, from 1.", required=True),
        Field("game", "text", "Derived: the round's game (to check the action against)."),
        Field("element__json", "text", "JSON kind of the list element: must be an object.", required=True,
              rules=(Rule("json_kind", "element_not_object", ("object",)),)),
        *_int("seat", "Seat of the decision.", True, _between(1, 1000)),
        *_int("hand", "Hand on the seat, from 1.", True, _between(1, 100)),
        *_str("action", "The decision, one of the round's game's actions.", True),
        *_money("amount", "Amount the decision adds (double, split, insurance, flop/turn/river)."),
        *_ts("ts", "When the decision was made."),
        Field("wager_ids", "text", "wager_ids as JSON text (an array of wager ids), when given."),
        Field("wager_ids__json", "text", "JSON kind of wager_ids: an array when present.",
              rules=(Rule("json_kind", "wrong_type", ("array",)),)),
    ),
    row_rules=(RowRule("action exists in the game", "pair_isin", "unknown_action", ("game", "action"), "game_action"),),
)

INPUT_TABLES: tuple[Table, ...] = (INPUT_SHOE_CSV, INPUT_ROUNDS_JSONL, INPUT_WAGER, INPUT_ACTION)
