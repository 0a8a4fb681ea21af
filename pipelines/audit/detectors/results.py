"""``result_mismatch``: the table system announced a result the cards do not give (TBAC-7.16: the cards stand).

Only what both sides state is compared: the table's ``recorded_result`` may be partial, and the
engine's outcome omits what the cards cannot decide. Baccarat's winner and points are compared as
columns over every round at once; other games' outcomes key by key. A void round has no result
(TBAC-2.2.20) and is not compared. Procedure finding: ``medium``; the wagers' money is judged by
the cards either way (payout_mismatch).
"""

from __future__ import annotations

import json

import orjson
import polars as pl

from pipelines.audit.clauses import CLAUSES
from pipelines.audit.findings import with_ids

_COLUMN_PAIRS = (
    ("recorded_winner", "out_winner", "winner"),
    ("recorded_player_points", "out_player_points", "player_points"),
    ("recorded_banker_points", "out_banker_points", "banker_points"),
)


def _result_stands(prefix: str | None) -> str:
    c = CLAUSES.get(prefix or "")
    return c.result_stands if c else ""


def _describe(values: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in values.items())


def detect_result_mismatch(rounds: pl.DataFrame) -> pl.DataFrame:
    if rounds.height == 0 or "outcome" not in rounds.columns:
        return pl.DataFrame()
    r = rounds.filter(
        pl.col("outcome").is_not_null() & (pl.col("status") != "void") & ~pl.col("rules_void").fill_null(False)
    )
    columnar = r.filter(pl.col("out_winner").is_not_null())
    differs = pl.lit(False)
    for rec, out, _ in _COLUMN_PAIRS:
        differs = differs | (pl.col(rec).is_not_null() & pl.col(out).is_not_null() & (pl.col(rec).cast(pl.String) != pl.col(out).cast(pl.String)))
    candidates = pl.concat([
        columnar.filter(differs),
        r.filter(pl.col("out_winner").is_null() & pl.col("recorded_result").is_not_null()),
    ])
    rows = []
    # only the columns read below: a night's 230,000 blackjack and hold'em rounds are all candidates
    used = ["outcome", "out_winner", "recorded_result", "clause_prefix", *(rec for rec, _, _ in _COLUMN_PAIRS), *_FINDING_COLUMNS]
    for row in candidates.select(list(dict.fromkeys(used))).iter_rows(named=True):
        outcome = _read(row["outcome"])
        if row["out_winner"] is not None:
            recorded = {k: row[rec] for rec, _, k in _COLUMN_PAIRS if row[rec] is not None}
        else:
            try:
                recorded = _read(row["recorded_result"])
            except (TypeError, ValueError):
                continue
            if not isinstance(recorded, dict):
                continue
        both = [k for k in recorded if k in outcome and recorded[k] is not None and outcome[k] is not None]
        if _has_float([[recorded[k] for k in both], [outcome[k] for k in both]]):
            # a value orjson may read otherwise than the standard library (_read): both read by json.loads
            outcome = json.loads(row["outcome"])
            if row["out_winner"] is None:
                try:
                    recorded = json.loads(row["recorded_result"])
                except ValueError:
                    continue
                if not isinstance(recorded, dict):
                    continue
            both = [k for k in recorded if k in outcome and recorded[k] is not None and outcome[k] is not None]
        if all(recorded[k] == outcome[k] for k in both):
            continue  # equal values: nothing the comparison below could call wrong (most rounds)
        # what the cards leave unknown (an unread card shows as ??) is not compared
        common = [k for k in both if not _unknown(outcome[k])]
        wrong = [k for k in common if _norm(recorded[k]) != _norm(outcome[k])]
        if not wrong:
            continue
        ref = _result_stands(row["clause_prefix"])
        rows.append({
            **{k: row[k] for k in _FINDING_COLUMNS},
            "kind": "result_mismatch",
            "severity": "medium",
            "wager_id": None,
            "rule_ref": ref,
            "detail": (
                f"the table announced {_describe({k: recorded[k] for k in common})}; "
                f"the cards give {_describe({k: outcome[k] for k in common})} ({ref}: the cards stand)"
            ),
        })
    return with_ids(pl.DataFrame(rows)) if rows else pl.DataFrame()


_FINDING_COLUMNS = ("gaming_day", "table_id", "round_no", "dealer_id", "game", "ruleset", "ruleset_version", "currency",
                    "source_file", "source_line")


def _read(text):
    """``json.loads(text)``, through orjson, several times faster, wherever orjson reads the text: it gives the same
    text, integers, booleans, null, lists and objects (in the same key order, a repeated key's last value). What it
    refuses (a lone surrogate, NaN, not text) goes to the standard library, which decides as before. A float is the one
    value the two may read apart (orjson reads an integer beyond 64 bits as a float): the caller reads the document again
    with ``json.loads`` when a value it compares holds one (``tests/test_fast_paths_equal.py``). Only those values are
    checked, not the whole document: an engine's hold'em outcome lists every seat's hands, which no announced result
    states."""
    try:
        return orjson.loads(text)
    except (orjson.JSONDecodeError, TypeError):
        return json.loads(text)


def _has_float(v: object) -> bool:
    stack = [v]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is float:
            return True
        if t is dict:
            stack.extend(x.values())
        elif t is list:
            stack.extend(x)
    return False


def _unknown(v: object) -> bool:
    if isinstance(v, str):
        return "??" in v
    if isinstance(v, (list, tuple)):
        return any(_unknown(x) for x in v)
    if isinstance(v, dict):
        return any(_unknown(x) for x in v.values())
    return False


def _norm(v: object) -> object:
    if isinstance(v, str):
        return v.strip().lower()
    return v
