"""The one shape every detector returns: one row per entity tested, flagged or not.

The FDR needs every test of the night, not only the flagged ones, so each detector hands back all
of its entities with a p-value; ``run`` adds the q-values and turns the rows under the FDR level
into findings. ``evidence`` is JSON (the rounds behind it, the ramp, the counts) for the detail.
"""

from __future__ import annotations

import json
import math

import polars as pl

TEST_SCHEMA: dict[str, pl.DataType] = {
    "kind": pl.String,  # a statistical finding kind
    "test": pl.String,  # which statistic: hold, dealer_error_rate, luck, bet_vs_count, pair_count, overpaid_pair
    "entity": pl.String,  # what was tested, readable: "table BAC-03 x banker", "P-606720 x side bets"
    "window_days": pl.Int64,
    "first_day": pl.Date,
    "last_day": pl.Date,
    "table_id": pl.String,
    "player_id": pl.String,
    "dealer_id": pl.String,
    "game": pl.String,
    "ruleset": pl.String,
    "currency": pl.String,
    "bet": pl.String,
    "rounds": pl.Int64,
    "wagers": pl.Int64,
    "expected_net": pl.Int64,  # theoretical net of the entity's wagers to the players (rounded half to even)
    "recorded_net": pl.Int64,  # actual net to the players, as recorded
    "p_value": pl.Float64,
    "sentence": pl.String,
    "evidence": pl.String,
}


def tests_frame(rows: list[dict] | pl.DataFrame) -> pl.DataFrame:
    df = rows if isinstance(rows, pl.DataFrame) else pl.DataFrame(rows, schema=TEST_SCHEMA) if rows else pl.DataFrame(schema=TEST_SCHEMA)
    return df.select([pl.col(c).cast(t) if c in df.columns else pl.lit(None, dtype=t).alias(c) for c, t in TEST_SCHEMA.items()]
                     ).with_columns(plain_floor(pl.col("sentence")))


#: what a sentence's "p = {fmt_p(p)}" reads at the floor, and what a person should read
_AT_FLOOR, _PLAIN = "= < 1e-12", "< 1e-12"


def plain_floor(sentence: pl.Expr) -> pl.Expr:
    """The sentences' ``p = {fmt_p(p)}`` at the floor reads "p = < 1e-12": written "p < 1e-12" (every detector's
    sentence passes through ``tests_frame`` or ``rows_frame``)."""
    return sentence.str.replace_all(_AT_FLOOR, _PLAIN, literal=True)


def plain_floor_text(text: str) -> str:
    """:func:`plain_floor` of one text (a finding's sentence and its q, ``run.findings_of``)."""
    return text.replace(_AT_FLOOR, _PLAIN)


def fmt_p(p: float) -> str:
    """A p-value for a sentence: two significant digits, ``< 1e-12`` at the floor."""
    from pipelines.stats.distributions import P_FLOOR

    if p <= P_FLOOR:
        return "< 1e-12"
    return f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}".replace("e-0", "e-")


def p_relation(p: float) -> str:
    """``fmt_p`` with its relation, for a label that reads "p " before it: "= 0.0031", or "< 1e-12" at the floor
    (a floored p written "= 1e-12" claims a figure no float tail gave)."""
    text = fmt_p(p)
    return text if text.startswith("<") else f"= {text}"


BET_LABEL = {
    "banker": "Banker", "player": "Player", "tie": "Tie", "banker_pair": "Banker Pair", "player_pair": "Player Pair",
    "tiger": "Tiger", "small_tiger": "Small Tiger", "big_tiger": "Big Tiger", "side_bets": "side",
    "all": "all", "main": "main", "pair": "Pair",
}


# ---- test rows built column by column ----------------------------------------------------------------
# A window tests tens of thousands of entities; only the flagged ones become findings, but every test row is
# written (``out_stat_tests``) with its sentence and evidence. The detectors build those columns from lists
# (one f-string per row, no dict per row) and their JSON with the helpers below, which write what
# ``json.dumps(value, default=str)`` writes, byte for byte (``tests/test_stats_rows.py``).


_QUOTED: dict[str, str] = {}


def json_value(v) -> str:
    """``json.dumps(v, default=str)`` for a scalar: null, true/false, an int, a float as ``float.__repr__`` (NaN,
    Infinity), a string quoted; anything else (a date) as its ``str`` quoted. A string's quoted form is kept (bet
    names and table ids come back hundreds of thousands of times a night)."""
    kind = type(v)
    if kind is str:
        quoted = _QUOTED.get(v)
        if quoted is None:
            quoted = json.dumps(v)
            if len(_QUOTED) < 100_000:
                _QUOTED[v] = quoted
        return quoted
    if kind is int:
        return int.__repr__(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return int.__repr__(v)
    if isinstance(v, float):
        if v != v:
            return "NaN"
        if v in (math.inf, -math.inf):
            return "Infinity" if v > 0 else "-Infinity"
        return float.__repr__(v)
    return json.dumps(v if isinstance(v, str) else str(v))


def json_list(values) -> str:
    """``json.dumps(values, default=str)`` of a list of scalars (a table list; None: null)."""
    if values is None:
        return "null"
    return "[" + ", ".join(json_value(v) for v in values) + "]"


class JsonLists:
    """``json_list`` kept per distinct list: most entities play at one or two tables, the same lists again."""

    def __init__(self):
        self._seen: dict[tuple, str] = {}

    def __call__(self, values) -> str:
        if values is None:
            return "null"
        key = tuple(values)
        out = self._seen.get(key)
        if out is None:
            out = self._seen[key] = json_list(values)
        return out


def fmt_ps(ps) -> list[str]:
    """``fmt_p`` of each p-value (kept per distinct value: many entities share p = 1)."""
    seen: dict[float, str] = {}
    out = []
    for p in ps:
        s = seen.get(p)
        if s is None:
            s = seen[p] = fmt_p(p)
        out.append(s)
    return out


def only_table(tables: list) -> list:
    """The table of each entity that played at one table only (None otherwise): its findings name that table."""
    return [t[0] if t is not None and len(t) == 1 else None for t in tables]


def rows_frame(n: int, columns: dict) -> pl.DataFrame:
    """``TEST_SCHEMA`` rows from columns: a list (or Series) of ``n`` values, or one value for every row."""
    data = {}
    for c, t in TEST_SCHEMA.items():
        v = columns.get(c)
        if isinstance(v, pl.Series):
            data[c] = v.cast(t).alias(c)
        elif isinstance(v, (list, tuple)):
            data[c] = pl.Series(c, v, dtype=t)
        else:
            data[c] = pl.Series(c, [v] * n, dtype=t)
    return pl.DataFrame(data).with_columns(plain_floor(pl.col("sentence"))) if n else pl.DataFrame(schema=TEST_SCHEMA)
