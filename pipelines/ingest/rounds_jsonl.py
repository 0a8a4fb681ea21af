"""Input 2, the table system round log (``rounds_*.jsonl``): lines -> fields as read -> checked -> core.

Parsing is DuckDB's: ``try(from_json(raw, STRUCTURE))`` over the whole chunk, with every leaf of
the structure typed ``JSON``, so each value comes back as its JSON text and its kind is still
visible (``100`` vs ``100.0`` vs ``"100"``): a wrong type is caught, never silently converted. A
line that is not JSON becomes NULL under ``try`` and is quarantined as unparseable. (Measured: a
``json.loads`` per line is 3x to 5x slower than DuckDB on this machine; see docs/ingest.md.)

Then polars derives each field's kind and decoded text, the ``input_*`` pandera models judge the
round, its wagers and its actions, and every line with a failure anywhere (a bad wager included)
is quarantined whole: a round is one line, and a round without one of its wagers would be audited
wrongly. The lines that pass become ``core_rounds``, ``core_wagers`` and ``core_actions`` rows,
validated again by the canonical models.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import duckdb
import orjson
import polars as pl
import pyarrow as pa

from pipelines.ingest.lines import LineChunk, screen
from pipelines.ingest.duck import arrow, registered
from pipelines.ingest.quarantine import FAILURE_SCHEMA, checked, failures_at
from pipelines.ingest.timestamps import with_utc_instants
from schemas.inputs import INPUT_ACTION, INPUT_ROUNDS_JSONL, INPUT_WAGER
from schemas.pandera_models import polars_schema
from schemas.rules import INT_TEXT, json_kind, utc_offset_minutes
from schemas.tables import CORE_ACTIONS, CORE_ROUNDS, CORE_WAGERS

KIND = "rounds_jsonl"

ROUND_FIELDS = ("table_id", "game", "ruleset", "round_no", "shoe_id", "dealer_id", "currency", "deal_mode",
                "bets_open_at", "bets_closed_at", "settled_at", "status", "recorded_result", "jackpot_meter")
LIMIT_FIELDS = {"min": "limit_min", "max": "limit_max", "differential": "limit_differential",
                "side_min": "limit_side_min", "side_max": "limit_side_max"}
WAGER_FIELDS = ("wager_id", "seat", "player_id", "bet", "amount", "placed_at", "net", "hand")
ACTION_FIELDS = ("seat", "hand", "action", "amount", "ts", "wager_ids")

# fields whose contract kind is a JSON integer (the others are strings: any number is the wrong kind)
INTEGER_FIELDS = frozenset({"round_no", "jackpot_meter", "seat", "hand", "amount", "net", *LIMIT_FIELDS.values()})

STRUCTURE = json.dumps({
    **{f: "JSON" for f in ROUND_FIELDS},
    "limits": {k: "JSON" for k in LIMIT_FIELDS},
    "wagers": [{f: "JSON" for f in WAGER_FIELDS}],
    "actions": [{f: "JSON" for f in ACTION_FIELDS}],
})

# DuckDB json_type names -> the kinds of schemas.rules.json_kind
_DUCK_KINDS = {"OBJECT": "object", "ARRAY": "array", "VARCHAR": "string", "BIGINT": "integer",
               "UBIGINT": "integer", "DOUBLE": "number", "BOOLEAN": "boolean", "NULL": None}

ROUNDS_AS_READ = polars_schema(INPUT_ROUNDS_JSONL)
WAGERS_AS_READ = polars_schema(INPUT_WAGER)
ACTIONS_AS_READ = polars_schema(INPUT_ACTION)
CORE_ROUNDS_SCHEMA = polars_schema(CORE_ROUNDS)
CORE_WAGERS_SCHEMA = polars_schema(CORE_WAGERS)
CORE_ACTIONS_SCHEMA = polars_schema(CORE_ACTIONS)
_ALL_NULL_LIMITS = " AND ".join(f"j.limits.{k} IS NULL" for k in LIMIT_FIELDS)
# Only a line DuckDB's validator accepts is parsed: ``try`` re-runs a whole vector row by row once one row fails,
# so a few malformed lines in a chunk cost as much again as parsing it (measured: 0.7-1.2 CPU s of 285 MB)
PARSED = f"CASE WHEN json_valid(raw) THEN try(from_json(raw, '{STRUCTURE}')) END"
# The validator and ``try`` cost 40 % of the parse on lines that need neither (0.17 -> 0.10 CPU s for 52 MB of round
# lines, one thread). A line that looks whole (``{`` to ``}``: a cut line does not) is parsed without them; the rest as
# PARSED. When a line that looked whole is not JSON after all (a comma missing), that statement fails as a whole and
# the chunk is parsed again with PARSED: the verdicts are PARSED's either way (tests/test_ingest_parse_paths.py).
FAST_PARSED = (f"CASE WHEN raw LIKE '{{%}}' THEN from_json(raw, '{STRUCTURE}') "
               f"WHEN json_valid(raw) THEN try(from_json(raw, '{STRUCTURE}')) END")
STRING_ARRAY = r'^\[\s*("([^"\\]|\\.)*"\s*(,\s*"([^"\\]|\\.)*"\s*)*)?\]$'


def _kind_sql(expr: str) -> str:
    cases = " ".join(f"WHEN '{k}' THEN {('NULL' if v is None else repr(v))}" for k, v in _DUCK_KINDS.items())
    return f"CASE {expr} {cases} END"


def _python_kind(value) -> str | None:
    """The JSON kind of a value ``json.loads`` returned (the vocabulary of ``schemas.rules.json_kind``)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "integer", float: "number"}[type(value)]


def decoded(frame: pl.DataFrame, names: tuple[str, ...] | list[str], escapes: bool = True) -> pl.DataFrame:
    """For each JSON literal column: add ``<name>__json`` (its kind) and replace it by its text.

    A string's text is the decoded string (escapes resolved; the rare literal with a backslash is
    decoded by ``json.loads``); any other value keeps its JSON text (``100.0``, ``{...}``).
    ``escapes=False``: the caller knows no line of the frame holds a backslash (no value is looked at for one).
    """
    # a string without a backslash holds no quote, so stripping every quote at either end takes off exactly its own
    # two (one pass, not two); one with a backslash is decoded again from its JSON text below. One lazy query.
    out = frame.lazy().with_columns(
        [json_kind(pl.col(n), n in INTEGER_FIELDS).alias(f"{n}__json") for n in names]
    ).with_columns([
        pl.when(pl.col(f"{n}__json") == "string")
        .then(pl.col(n).str.strip_chars('"'))
        .otherwise(pl.col(n)).alias(n)
        for n in names
    ]).collect()
    if not escapes:
        return out
    for n in names:
        esc = (frame[n].str.contains("\\", literal=True) & (out[f"{n}__json"] == "string")).fill_null(False)
        if esc.any():
            idx = esc.arg_true()
            fixed = [json.loads(v) for v in frame[n].gather(idx).to_list()]
            out = out.with_columns(out[n].scatter(idx, fixed))
    return out


def _element_kind(raw: str, name: str, pos: int) -> str | None:
    """The JSON kind of element ``pos`` (from 1) of the line's list ``name``; "array" for one nested deeper than
    Python's parser reads (the line is quarantined as unparseable JSON before this kind is looked at)."""
    try:
        return _python_kind(json.loads(raw)[name][pos - 1])
    except RecursionError:
        return "array"


def _absent_if_empty(name: str) -> pl.Expr:
    """An optional identifier written ``""`` is absent, as an empty field of the device CSV is (formats.md,
    Conventions, Text): an exporter that writes ``""`` for unrated play made every unrated wager one player ``""``,
    tested by the statistics (its luck, its count) beside the rated players, and a dealer ``""`` likewise."""
    return pl.when(pl.col(name) != "").then(pl.col(name)).alias(name)


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return d


def _surely_unique(raw: str) -> bool:
    """Whether a line without a backslash surely repeats no key: orjson (C; it keeps one value per key) re-written
    holds as many colons as the line exactly when no object spelled a key twice. Without an escape, a colon of the
    line is either the one after a key or a character of a string (a key or a value), and the re-written line holds
    the same strings (orjson writes a colon as itself and never adds one); a key spelled twice leaves one pair
    fewer, and with it at least the colon after the key. (Counting one byte, not the ``":`` pairs: 0.26 -> 0.21 CPU
    s for 56 MB of round lines, and no count of key tokens in polars first.)"""
    try:
        return orjson.dumps(orjson.loads(raw)).count(b":") == raw.count(":")
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # beyond orjson (NaN, a trailing comma, nesting deeper
        return False  # than it writes, which DuckDB reads): the exact check decides


NESTING_LIMIT = 1000  # Python's recursion limit: its parser stops about there (the contract's objects nest 5 deep)


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON value")


def strict_json_failures(lines: pl.DataFrame) -> pl.DataFrame:
    """Failures of the lines (source_line, raw) DuckDB's parser took that strict JSON (RFC 8259) refuses: an object
    with a key twice (``duplicate_key``); a trailing comma, ``NaN`` or ``Infinity`` (``json_unparseable``: DuckDB's
    parser takes them, Python's and most others refuse the line, so it would mean different things to different
    readers, as a repeated key does).

    DuckDB's parser keeps the first of two values under one key, Python's and many others the last: such a
    line means two things, and is quarantined. No vectorised parser here reports the repeat. The exact check is
    ``json.loads`` with a hook that compares each object's keys with its pairs (7.6 ns a byte: 2.4 CPU s for the
    285 MB of round lines of a 200,000-round night). A screen clears most lines first at half that cost
    (:func:`_surely_unique`: orjson's parse re-written, its colons counted against the line's); a line
    with a backslash (an escape could hide a quote or spell a key twice) or that the screen does not clear goes
    through the exact check, which alone says why. Measured and not taken: grouping the key tokens of each line
    in polars (0.83 s per 80 MB), DuckDB's ``json_tree`` (11 s), pyarrow's JSON reader (it refuses a repeated key
    at any depth, but reads NaN, and costs more: 0.33-0.44 against this screen's 0.21 CPU s for 56 MB),
    ``json_keys`` of every object the contract places, one parse per line for all their paths, judged once per
    distinct layout (1.9 CPU s against this screen's 1.6 on the same night), DuckDB's ``MAP(VARCHAR, JSON)``
    transform, which refuses a repeated key (9 s), orjson over groups of lines joined into one array (slower than
    line by line beyond 200 lines a group);
    counting key tokens against the keys DuckDB's parse kept cannot stand in, since a JSON ``null`` and an absent
    key parse alike.
    """
    found: list[tuple[int, str]] = []
    raws = lines["raw"]
    plain = (~raws.str.contains("\\", literal=True)).to_list()
    surely = _surely_unique
    for line, raw, screenable in zip(lines["source_line"].to_list(), raws.to_list(), plain):
        if screenable and surely(raw):
            continue
        try:
            json.loads(raw, object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant)
        except _DuplicateKey as exc:
            found.append((line, "duplicate_key", f"key {exc.args[0]!r} appears twice in one object"))
        except json.JSONDecodeError as exc:  # strict JSON refuses what DuckDB's parser took (a trailing comma)
            found.append((line, "json_unparseable", f"not strict JSON: {exc.msg} at character {exc.pos + 1}"))
        except ValueError as exc:  # NaN, Infinity (_refuse_constant)
            found.append((line, "json_unparseable", f"not strict JSON: {exc}"))
        except RecursionError:  # RFC 8259 section 9 lets a parser limit nesting; DuckDB's has no limit, Python's does
            found.append((line, "json_unparseable", "not strict JSON: nested deeper than a strict parser reads "
                                                    f"(about {NESTING_LIMIT:,} levels)"))
    if not found:
        return failures_at(pl.Series([], dtype=pl.Int64), "duplicate_key")
    lines_, codes, details = zip(*found)
    return pl.DataFrame({"source_line": lines_, "code": codes, "detail": details}, schema=FAILURE_SCHEMA)


def recorded_by_path(recorded_result: pl.Series) -> pl.DataFrame:
    """``recorded_winner`` and the points of each ``recorded_result`` (JSON text as DuckDB re-wrote it), read by JSON
    path: the winner's text when the result is an object; a point where its value reads as an integer (a number or a
    string of digits, as ``json_path_match`` gives them), null where it does not or does not fit a SMALLINT."""
    rr = pl.col("recorded_result")
    is_obj = rr.str.starts_with("{")

    def rr_int(key: str) -> pl.Expr:
        v = rr.str.json_path_match(f"$.{key}")
        return (pl.when(is_obj & v.str.contains(INT_TEXT)).then(v.str.to_integer(strict=False))
                .cast(pl.Int16, strict=False))

    return recorded_result.alias("recorded_result").to_frame().select(
        pl.when(is_obj).then(rr.str.json_path_match("$.winner")).alias("recorded_winner"),
        rr_int("player_points").alias("recorded_player_points"),
        rr_int("banker_points").alias("recorded_banker_points"),
    )


# a baccarat result exactly as DuckDB re-writes it (no space, keys in this order, one-digit points): what
# :func:`recorded_by_path` reads from it is its three groups, as they are written
BACCARAT_RESULT = (r'^\{"winner":"(?P<recorded_winner>banker|player|tie)",'
                   r'"player_points":(?P<recorded_player_points>[0-9]),'
                   r'"banker_points":(?P<recorded_banker_points>[0-9])\}$')


def recorded_result_fields(recorded_result: pl.Series) -> pl.DataFrame:
    """What :func:`recorded_by_path` gives, read in one regex pass where a result has the common baccarat shape
    (:data:`BACCARAT_RESULT`; three quarters of a night's rounds) and by JSON path for the others: three
    ``json_path_match`` passes over every round were half of the canonical rows' cost (0.089 of 0.16 CPU s for
    84,000 rounds, against 0.015 for the regex; ``tests/test_ingest_recorded_result.py`` holds the two equal)."""
    fast = recorded_result.alias("rr").to_frame().select(pl.col("rr").str.extract_groups(BACCARAT_RESULT)).unnest("rr")
    out = fast.with_columns(pl.col("recorded_player_points", "recorded_banker_points").str.to_integer().cast(pl.Int16))
    rest = fast["recorded_winner"].is_null() & recorded_result.str.starts_with("{")
    if rest.any():
        idx = rest.arg_true()
        by_path = recorded_by_path(recorded_result.gather(idx))
        out = out.with_columns(out[c].scatter(idx, by_path[c]) for c in out.columns)
    return out


ROUND_MONEY = ("limit_min", "limit_max", "limit_differential", "limit_side_min", "limit_side_max", "jackpot_meter")


def beyond_bound(frame: pl.DataFrame, columns: tuple[str, ...], bound: int, prefix: str = "",
                 order_col: str | None = None) -> pl.DataFrame:
    """Failures (``amount_beyond_bound``) of the rows with a money value above ``bound`` or below ``-bound``."""
    parts = []
    for c in columns:
        bad = frame.filter(pl.col(c).is_not_null() & ((pl.col(c) > bound) | (pl.col(c) < -bound)))
        if bad.is_empty():
            continue
        where = (pl.lit(f"{prefix}[") + bad[order_col].cast(pl.String) + pl.lit(f"].{c}: ")) if order_col else pl.lit(f"{c}: ")
        detail = bad.select(where + bad[c].cast(pl.String) + pl.lit(f" beyond the bound {bound:,} (PITAUDIT_MAX_AMOUNT)"))
        parts.append(failures_at(bad["source_line"], "amount_beyond_bound", detail.to_series()))
    return pl.concat(parts) if parts else failures_at(pl.Series([], dtype=pl.Int64), "amount_beyond_bound")


@dataclass
class RoundsParser:
    """Parses the chunks of one file with a DuckDB connection holding no evidence (temporary views only)."""

    con: duckdb.DuckDBPyConnection
    source_file: str
    day_start_minutes: int
    max_amount: int = 10**12

    def parse(self, chunk: LineChunk) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        """One chunk -> (rounds, wagers, actions, failures, raw lines)."""
        raw, failures, todo = screen(chunk)

        rounds_lit, wagers_lit, actions_lit, line_fail = self._duck_parse(todo)
        failures.append(line_fail)
        failures.append(strict_json_failures(todo.join(rounds_lit.select("source_line"), on="source_line", how="semi")))

        escapes = bool(todo["raw"].str.contains("\\", literal=True).any())  # else no value needs json's decoding
        rounds_ar = self._rounds_as_read(rounds_lit, escapes)
        wagers_ar = self._elements_as_read(wagers_lit, rounds_ar, WAGER_FIELDS, "wager_order", WAGERS_AS_READ, escapes)
        wagers_ar = wagers_ar.with_columns(  # a hash of the pair, not a window per group (0.05 of 0.7 CPU s a batch)
            (~pl.struct("source_line", "wager_id").is_first_distinct()).alias("wager_id_repeated")
        ) if not wagers_ar.is_empty() else wagers_ar
        actions_ar = self._elements_as_read(actions_lit, rounds_ar, ACTION_FIELDS, "action_order", ACTIONS_AS_READ,
                                            escapes)
        if not actions_ar.is_empty():
            actions_ar = actions_ar.with_columns(
                pl.when(pl.col("wager_ids__json") == "array")
                .then(pl.when(pl.col("wager_ids").str.contains(STRING_ARRAY)).then(pl.lit("array")).otherwise(pl.lit("array of non-strings")))
                .otherwise(pl.col("wager_ids__json")).alias("wager_ids__json")
            )

        failures.append(checked(rounds_ar.select(list(ROUNDS_AS_READ)), INPUT_ROUNDS_JSONL))
        wagers_ar = wagers_ar.select(list(WAGERS_AS_READ))
        failures.append(checked(wagers_ar, INPUT_WAGER, "wagers", "wager_order"))
        actions_ar = actions_ar.select(list(ACTIONS_AS_READ))
        failures.append(checked(actions_ar, INPUT_ACTION, "actions", "action_order"))
        all_failures = pl.concat(failures)
        failed = all_failures.select("source_line").unique()
        ok_rounds = rounds_ar.join(failed, on="source_line", how="anti")
        rounds, wagers, actions = self._canonical(ok_rounds, wagers_ar, actions_ar)
        bound = pl.concat([beyond_bound(rounds, ROUND_MONEY, self.max_amount),
                           beyond_bound(wagers, ("amount", "net"), self.max_amount, "wagers", "wager_order"),
                           beyond_bound(actions, ("amount",), self.max_amount, "actions", "action_order")])
        if not bound.is_empty():
            all_failures = pl.concat([all_failures, bound])
            drop = bound.select("source_line").unique()
            rounds = rounds.join(drop, on="source_line", how="anti")
            wagers = wagers.join(drop, on="source_line", how="anti")
            actions = actions.join(drop, on="source_line", how="anti")

        contract = [checked(rounds, CORE_ROUNDS), checked(wagers, CORE_WAGERS), checked(actions, CORE_ACTIONS)]
        contract_fail = pl.concat(contract)
        if not contract_fail.is_empty():  # rule-set/game mismatch lands here; other checks never should
            contract_fail = contract_fail.with_columns(
                pl.when(pl.col("code") == "ruleset_game_mismatch").then(pl.col("code"))
                .otherwise(pl.lit("contract_violation")).alias("code"))
            all_failures = pl.concat([all_failures, contract_fail])
            drop = contract_fail.select("source_line").unique()
            rounds = rounds.join(drop, on="source_line", how="anti")
            wagers = wagers.join(drop, on="source_line", how="anti")
            actions = actions.join(drop, on="source_line", how="anti")
        return rounds, wagers, actions, all_failures, raw

    # -- parsing --------------------------------------------------------------------------------
    def _duck_parse(self, todo: pl.DataFrame):
        """DuckDB parses every line once; returns the literal frames and the line-level failures.

        One statement gives every line's verdict and values, its wagers and actions as lists (exploded in polars,
        which costs nothing): no temporary table written and read three times (0.32 -> 0.19 CPU s for 39 MB of
        round lines)."""
        table = arrow(todo)  # record batches of 20k lines: DuckDB parses them on every thread
        batches = table.to_batches(max_chunksize=20_000)
        src = pa.Table.from_batches(batches, schema=table.schema) if batches else table
        con = self.con
        limit_cols = ", ".join(f"j.limits.{k} AS {v}" for k, v in LIMIT_FIELDS.items())

        def query(parse: str) -> str:
            return f"""
                SELECT source_line,
                       CASE WHEN j IS NULL OR NOT looks_object THEN
                            CASE WHEN json_valid(raw) THEN lower(json_type(raw)) ELSE 'invalid' END END AS line_kind,
                       {", ".join(f"j.{f} AS {f}" for f in ROUND_FIELDS)}, {limit_cols},
                       CASE WHEN j IS NULL THEN NULL WHEN j.limits IS NULL OR ({_ALL_NULL_LIMITS})
                            THEN {_kind_sql("json_type(raw, '$.limits')")} ELSE 'object' END AS "limits__json",
                       CASE WHEN j IS NULL THEN NULL WHEN j.wagers IS NULL THEN {_kind_sql("json_type(raw, '$.wagers')")} ELSE 'array' END AS "wagers__json",
                       CASE WHEN j IS NULL THEN NULL WHEN j.actions IS NULL THEN {_kind_sql("json_type(raw, '$.actions')")} ELSE 'array' END AS "actions__json",
                       coalesce(len(j.wagers), 0)::INTEGER AS wager_count,
                       coalesce(len(j.actions), 0)::INTEGER AS action_count,
                       NULL::VARCHAR AS content_hash,
                       j.wagers AS _wagers, j.actions AS _actions
                FROM (SELECT source_line, raw, {parse} AS j,
                             ltrim(raw) LIKE '{{%' AS looks_object
                      FROM _ingest_lines)
            """
        with registered(con, "_ingest_lines", src):
            try:
                parsed = con.sql(query(FAST_PARSED)).pl() if FAST_PARSED else None
            except duckdb.Error:  # a line that looked whole is not JSON: every line through the validator
                parsed = None
            if parsed is None:
                parsed = con.sql(query(PARSED)).pl()
        failed = pl.col("line_kind").is_not_null()
        lf = parsed.filter(failed)
        unparseable = lf.filter(pl.col("line_kind") == "invalid")
        not_object = lf.filter(pl.col("line_kind") != "invalid")
        line_fail = pl.concat([
            failures_at(unparseable["source_line"], "json_unparseable"),
            failures_at(not_object["source_line"], "json_not_object", "a JSON " + not_object["line_kind"].cast(pl.String)),
        ])
        # the lists are filtered once each, with the rows they are exploded from, not copied with the rounds first
        # (a copy of every wager's struct: 1.02-1.10 -> 0.83-0.93 CPU s for 99 MB of round lines, one thread)
        rounds = parsed.drop("_wagers", "_actions").filter(~failed).drop("line_kind")
        wagers = self._elements(parsed, "_wagers", WAGER_FIELDS, "wager_order", todo)
        actions = self._elements(parsed, "_actions", ACTION_FIELDS, "action_order", todo)
        return rounds, wagers, actions, line_fail

    @staticmethod
    def _elements(parsed: pl.DataFrame, column: str, fields: tuple[str, ...], order: str,
                  todo: pl.DataFrame) -> pl.DataFrame:
        """One row per list element of the lines parsed as objects (``line_kind`` null), numbered from 1. An element
        that is not an object comes back with every field null; only for those (rare) rows is the element's JSON kind
        looked up, from the raw line."""
        name = column.removeprefix("_")
        lists = parsed.select("source_line", column, "line_kind").filter(
            pl.col("line_kind").is_null() & (pl.col(column).list.len() > 0)).drop("line_kind")
        out = lists.select(
            "source_line",
            pl.int_ranges(1, pl.col(column).list.len() + 1, dtype=pl.Int64).alias(order), column,
        ).explode([order, column]).unnest(column)
        if out.is_empty():  # an empty list gives no struct fields to unnest into: the columns by name
            out = pl.DataFrame(schema={"source_line": pl.Int64, order: pl.Int64, **{f: pl.String for f in fields}})
        out = out.select("source_line", order, *fields)
        empty = out.select(pl.all_horizontal([pl.col(f).is_null() for f in fields])).to_series()
        kinds = pl.Series("element__json", ["object"] * len(out), dtype=pl.String)
        if empty.any():
            idx = empty.arg_true()
            suspects = out.select("source_line", order).gather(idx)
            raw = dict(todo.join(suspects.select("source_line").unique(), on="source_line").iter_rows())
            found = [_element_kind(raw[line], name, pos) for line, pos in suspects.iter_rows()]
            kinds = kinds.scatter(idx, found)
        return out.with_columns(kinds)

    # -- as read --------------------------------------------------------------------------------
    def _rounds_as_read(self, lit: pl.DataFrame, escapes: bool = True) -> pl.DataFrame:
        names = [f for f in ROUND_FIELDS if f != "recorded_result"] + list(LIMIT_FIELDS.values())
        out = with_utc_instants(self.con, decoded(lit, names, escapes), ["bets_open_at", "bets_closed_at", "settled_at"])
        return out.with_columns(pl.col("source_line").cast(pl.Int64))

    def _elements_as_read(self, lit: pl.DataFrame, rounds_ar: pl.DataFrame, fields: tuple[str, ...], order: str,
                          schema: dict, escapes: bool = True) -> pl.DataFrame:
        if lit.is_empty():
            return pl.DataFrame(schema=schema)
        names = [f for f in fields if f != "wager_ids"] if "wager_ids" in fields else list(fields)
        out = with_utc_instants(self.con, decoded(lit, names, escapes), [f for f in ("placed_at", "ts") if f in fields])
        if "wager_ids" in fields:
            out = out.with_columns(json_kind(pl.col("wager_ids")).alias("wager_ids__json"))
        games = rounds_ar.select("source_line", pl.when(pl.col("game__json") == "string").then(pl.col("game")).alias("game"))
        out = out.join(games, on="source_line", how="left", maintain_order="left")
        return out.with_columns(pl.col("source_line").cast(pl.Int64), pl.col(order).cast(pl.Int64))

    # -- canonical ------------------------------------------------------------------------------
    def _canonical(self, r: pl.DataFrame, w: pl.DataFrame, a: pl.DataFrame):
        closed_local = (pl.col("bets_closed_at__utc").dt.replace_time_zone(None)
                        + pl.duration(minutes=utc_offset_minutes(pl.col("bets_closed_at")).cast(pl.Int64)))
        recorded = recorded_result_fields(r["recorded_result"])
        rounds = r.select(
            "table_id",
            pl.col("round_no").str.to_integer().cast(pl.Int64),
            "game", "ruleset", _absent_if_empty("shoe_id"), _absent_if_empty("dealer_id"), "currency", "deal_mode",
            *[pl.col(c).str.to_integer(strict=False).cast(pl.Int64) for c in LIMIT_FIELDS.values()],
            pl.col("bets_open_at__utc").alias("bets_open_at"),
            pl.col("bets_closed_at__utc").alias("bets_closed_at"),
            pl.col("settled_at__utc").alias("settled_at"),
            "status",
            recorded["recorded_winner"], recorded["recorded_player_points"], recorded["recorded_banker_points"],
            "recorded_result",
            pl.col("jackpot_meter").str.to_integer(strict=False).cast(pl.Int64),
            (closed_local - pl.duration(minutes=self.day_start_minutes)).dt.date().alias("gaming_day"),
            utc_offset_minutes(pl.col("bets_closed_at")).alias("utc_offset_minutes"),
            "wager_count", "action_count", "content_hash",
            pl.lit(self.source_file).alias("source_file"),
            "source_line",
        ).cast(CORE_ROUNDS_SCHEMA).select(list(CORE_ROUNDS_SCHEMA))
        keys = rounds.select("source_line", "table_id", "round_no")
        wagers = w.join(keys, on="source_line", how="inner").select(
            "table_id", "round_no", pl.col("wager_order").cast(pl.Int32), "wager_id",
            pl.col("seat").str.to_integer().cast(pl.Int16), _absent_if_empty("player_id"), "bet",
            pl.col("amount").str.to_integer().cast(pl.Int64),
            pl.col("placed_at__utc").alias("placed_at"),
            pl.col("net").str.to_integer().cast(pl.Int64),
            pl.col("hand").str.to_integer(strict=False).cast(pl.Int16),
            pl.lit(self.source_file).alias("source_file"), "source_line",
        ).cast(CORE_WAGERS_SCHEMA).select(list(CORE_WAGERS_SCHEMA))
        actions = a.join(keys, on="source_line", how="inner").select(
            "table_id", "round_no", pl.col("action_order").cast(pl.Int32),
            pl.col("seat").str.to_integer().cast(pl.Int16),
            pl.col("hand").str.to_integer().cast(pl.Int16),
            "action",
            pl.col("amount").str.to_integer(strict=False).cast(pl.Int64),
            pl.col("ts__utc").alias("ts"),
            pl.col("wager_ids").str.json_decode(pl.List(pl.String)).alias("wager_ids"),
            pl.lit(self.source_file).alias("source_file"), "source_line",
        ).cast(CORE_ACTIONS_SCHEMA).select(list(CORE_ACTIONS_SCHEMA))
        return rounds, wagers, actions
