"""quarantine.checked: pandera, run on the failing rows with only the columns and row rules that fail there, names
every failure exactly as the whole model does (same rows, columns, reason codes, values, order, details).

The frames are the ones the parsers hand ``checked`` for real lines (captured), their cells then overwritten at
random with hostile values of the column's type.
"""

from __future__ import annotations

from collections import defaultdict

import duckdb
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pipelines.ingest.quarantine as quarantine
from pipelines.ingest import rounds_jsonl, shoe_csv
from pipelines.ingest.lines import LineChunk
from pipelines.ingest.quarantine import from_validation
from schemas.pandera_models import model, validate_frame
from schemas.rules import with_parsed_timestamps

LINES = [
    '{"table_id": "BAC-01", "game": "baccarat", "ruleset": "hoiana-tiger-baccarat/commission", "round_no": 1, '
    '"shoe_id": "S1", "dealer_id": "D1", "currency": "USD", "deal_mode": null, "limits": {"min": 500, "max": 9000, '
    '"differential": 20000, "side_min": 100, "side_max": 2000}, "bets_open_at": "2026-11-24T06:11:30+07:00", '
    '"bets_closed_at": "2026-11-24T06:11:57+07:00", "settled_at": "2026-11-24T06:12:17+07:00", "status": "settled", '
    '"recorded_result": {"winner": "banker"}, "jackpot_meter": null, "wagers": [{"wager_id": "W1", "seat": 5, '
    '"player_id": null, "bet": "player", "amount": 1000, "placed_at": "2026-11-24T06:11:32+07:00", "net": -1000}], '
    '"actions": [{"seat": 5, "hand": 1, "action": "hit", "amount": null, "ts": "2026-11-24T06:11:40+07:00"}]}',
]
CSV = ["ADD-1,BAC-01,S1,1,2026-11-24T06:06:37.733+07:00,shoe_start,,,8",
       "ADD-1,BAC-01,S1,2,2026-11-24T06:06:38.133+07:00,card,1,3s,"]
TEXT = st.one_of(st.none(), st.sampled_from([
    "", " ", "x", "5", "-5", "0", "1001", "1.5", "1e3", "99999999999999999999", "-0", "string", "integer", "number",
    "object", "array", "boolean", "array of non-strings", "baccarat", "blackjack", "player", "banker", "hit", "card",
    "burn", "settled", "void", "shoe", "device", "hoiana-tiger-baccarat/commission", "2026-11-24T06:11:30",
    "2026-11-24T06:11:30+07:00", "2026-11-24T06:11:30Z", "2026-02-30T06:11:30+07:00", "[\"W1\"]", "[1]", "{}"]))


def _captured() -> dict[str, list[pl.DataFrame]]:
    """The frames each model's check receives when the parsers read LINES and CSV."""
    seen: dict[str, list[pl.DataFrame]] = defaultdict(list)
    real = quarantine.checked

    def spy(frame, table, *a, **k):
        seen[table.name].append(frame)
        return real(frame, table, *a, **k)

    con = duckdb.connect()
    try:
        rounds_jsonl.checked, shoe_csv.checked = spy, spy
        rounds_jsonl.RoundsParser(con, "rounds_x.jsonl", 360).parse(LineChunk(1, pl.Series("raw", LINES)))
        shoe_csv.ShoeParser("shoe_x.csv", list(shoe_csv.SHOE_CSV_COLUMNS)).parse(LineChunk(2, pl.Series("raw", CSV)))
    finally:
        rounds_jsonl.checked, shoe_csv.checked = real, real
        con.close()
    return seen


FRAMES = {name: frames[0] for name, frames in _captured().items() if name.startswith("input_") and len(frames[0])}


def _table(name: str):
    from schemas.inputs import INPUT_TABLES

    return next(t for t in INPUT_TABLES if t.name == name)


@st.composite
def mutated(draw):
    name = draw(st.sampled_from(sorted(FRAMES)))
    base = FRAMES[name]
    rows = draw(st.integers(1, 6))
    frame = pl.concat([base.head(1)] * rows).with_columns(pl.int_range(1, rows + 1, dtype=pl.Int64).alias("source_line"))
    columns = {}
    for col, dtype in frame.schema.items():
        if col == "source_line" or col.endswith("__utc"):
            continue
        values = frame[col].to_list()
        for r in range(rows):
            if draw(st.integers(0, 6)) == 0:
                if dtype == pl.String:
                    values[r] = draw(TEXT)
                elif dtype == pl.Boolean:
                    values[r] = draw(st.one_of(st.none(), st.booleans()))
                elif dtype.is_integer():
                    values[r] = draw(st.one_of(st.none(), st.integers(-5, 2**40)))
        columns[col] = pl.Series(col, values, dtype=dtype)
    frame = frame.with_columns(**columns)
    stamps = [c.removesuffix("__utc") for c in frame.columns if c.endswith("__utc")]
    frame = with_parsed_timestamps(frame, stamps).select(base.columns)
    return name, frame


def _where_rows_sit(name: str):
    """The model's table, and the list and position column its rows sit at in a round line (the details name them)."""
    order = "wager_order" if name == "input_wager" else "action_order" if name == "input_action" else None
    prefix = "wagers" if order == "wager_order" else "actions" if order else ""
    return _table(name), prefix, order


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_the_narrowed_model_names_every_failure_as_the_whole_model(case) -> None:
    name, frame = case
    table, prefix, order = _where_rows_sit(name)
    whole = from_validation(validate_frame(frame, model(name)), frame, table, prefix, order)
    narrowed = quarantine.checked(frame, table, prefix, order)
    assert narrowed.to_dicts() == whole.to_dicts()


def test_every_input_model_was_captured() -> None:
    assert set(FRAMES) == {"input_rounds_jsonl", "input_wager", "input_action", "input_shoe_csv"}


def _details_one_by_one(fc: pl.DataFrame, frame: pl.DataFrame, table, prefix: str = "", order_col=None) -> list:
    """The reference: each failure's detail written string by string, as the contract's examples read."""
    from schemas.reasons import REASONS

    def short(value, limit=80):
        text = "null" if value is None else str(value)
        return text if len(text) <= limit else text[: limit - 1] + "…"

    rule_cols = {r.code: r.columns for r in table.row_rules}
    out = []
    for row, col, code, value in fc.select("row", "column", "code", "value").iter_rows():
        where = f"{prefix}[{frame[order_col][row]}]." if order_col else ""
        if col == table.name or col is None:
            shown = ", ".join(f"{where}{c}={short(frame[c][row])}" for c in rule_cols.get(code, ()))
            detail = f"{REASONS.get(code, code)} ({shown})"
        else:
            detail = f"{where}{col.removesuffix('__json')}: {REASONS.get(code, code)} ({short(value)})"
        out.append((int(frame["source_line"][row]), code if code in REASONS else "contract_violation", detail))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_the_details_built_as_columns_read_as_written_one_by_one(case) -> None:
    name, frame = case
    table, prefix, order = _where_rows_sit(name)
    fc = validate_frame(frame, model(name))
    got = from_validation(fc, frame, table, prefix, order)
    assert list(got.iter_rows()) == _details_one_by_one(fc, frame, table, prefix, order)


def test_a_long_value_is_cut_to_eighty_characters_and_a_missing_one_reads_null() -> None:
    frame = FRAMES["input_rounds_jsonl"].with_columns(
        pl.lit("é" * 100).alias("game"), pl.lit(None, dtype=pl.String).alias("table_id"))
    table = _table("input_rounds_jsonl")
    fc = validate_frame(frame, model("input_rounds_jsonl"))
    details = dict(zip(fc["column"], from_validation(fc, frame, table)["detail"]))
    assert details["game"].endswith("(" + "é" * 79 + "…)")
    assert details["table_id"] == "table_id: missing required field (null)"
    assert list(from_validation(fc, frame, table).iter_rows()) == _details_one_by_one(fc, frame, table)
