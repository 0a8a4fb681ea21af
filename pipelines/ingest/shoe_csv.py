"""Input 1, the card device log (``shoe_*.csv``): lines -> fields as read -> checked -> core_device_events.

The fields are split by polars (``str.split(',')``) over the whole chunk; only lines holding a
double quote go through Python's csv module (the devices do not quote, so that path is rare).
A line with too few or too many fields is quarantined before any field is judged. The fields as
read are validated by the ``input_shoe_csv`` model; the lines that pass become canonical rows,
validated again by the ``core_device_events`` model.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field

import duckdb
import polars as pl

from pipelines.ingest.lines import LineChunk, UnreadableFile, screen
from pipelines.ingest.quarantine import checked, empty_failures, failures_at
from pipelines.ingest.timestamps import with_utc_instants
from rulebook.cards import FOREIGN, NO_CARD, RANKS, SUITS, UNREADABLE
from schemas.inputs import INPUT_SHOE_CSV, SHOE_CSV_COLUMNS
from schemas.pandera_models import polars_schema
from schemas.rules import INT_TEXT, passes_all, row_expr, with_parsed_timestamps
from schemas.vocabulary import builtin_vocabulary
from schemas.tables import CORE_DEVICE_EVENTS

KIND = "shoe_csv"
CARD_CODES: dict[str, int] = {r + s: ri * 4 + si for ri, r in enumerate(RANKS) for si, s in enumerate(SUITS)}
CARD_CODES["??"] = UNREADABLE
EVENTS_WITH_CARD = ("card", "burn")
AS_READ_SCHEMA = polars_schema(INPUT_SHOE_CSV)
_SEQ_RULE = pl.all_horizontal([row_expr(r, builtin_vocabulary()) for r in INPUT_SHOE_CSV.row_rules
                               if r.code == "seq_backwards"])
CORE_SCHEMA = polars_schema(CORE_DEVICE_EVENTS)


def read_header(line: str) -> list[str]:
    """The header's column order; :class:`UnreadableFile` unless it names exactly the nine columns."""
    names = [c.strip().strip('"').strip() for c in line.split(",")]
    if sorted(names) != sorted(SHOE_CSV_COLUMNS):
        shown = line if len(line) <= 120 else line[:119] + "…"
        raise UnreadableFile(f"first line is not the shoe CSV header ({','.join(SHOE_CSV_COLUMNS)}): {shown!r}")
    return names


@dataclass
class ShoeParser:
    """Parses the chunks of one file (keeping the highest event_seq seen per device across chunks),
    or, in one call, a batch of files with the same header: ``file_starts`` holds the first line
    number of each file, so that a device's sequence is judged within its own file."""

    source_file: str
    header: list[str]
    max_seq: dict[str, int] = field(default_factory=dict)
    file_starts: pl.Series | None = None
    con: duckdb.DuckDBPyConnection | None = None  # reads the common timestamp shape (``timestamps``); polars without

    def parse(self, chunk: LineChunk) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        """One chunk -> (canonical events, failures, raw lines (source_line, raw))."""
        raw, failures, frame = screen(chunk)

        # a chunk is copied by a filter only where some line needs it (a quote, a wrong number of fields: rare)
        quotes = frame["raw"].str.contains('"', literal=True)
        quoted = frame.filter(quotes) if quotes.any() else frame.clear()
        plain = frame.filter(~quotes) if not quoted.is_empty() else frame
        # the fields counted by their commas, then cut at them in one pass (split_exact: no list per line)
        count = plain.select(pl.col("raw").str.count_matches(",", literal=True) + 1).to_series()
        nine = count == len(SHOE_CSV_COLUMNS)
        if not nine.all():
            wrong = plain.filter(~nine)
            failures.append(failures_at(wrong["source_line"], "csv_column_count",
                                        "expected 9 fields, got " + count.filter(~nine).cast(pl.String)))
            plain = plain.filter(nine)
        fields = plain.select(
            "source_line",
            pl.col("raw").str.split_exact(",", len(SHOE_CSV_COLUMNS) - 1).struct.rename_fields(self.header).alias("_f"),
        ).unnest("_f")
        if not quoted.is_empty():
            qf, qfail = self._parse_quoted(quoted)
            failures.append(qfail)
            fields = pl.concat([fields, qf]).sort("source_line")
        fields = fields.with_columns([
            pl.when(pl.col(c) == "").then(None).otherwise(pl.col(c)).alias(c) for c in SHOE_CSV_COLUMNS
        ])
        stamped = with_parsed_timestamps(fields, ["ts"]) if self.con is None else with_utc_instants(self.con, fields, ["ts"])
        as_read = self._with_prev_max(stamped, chunk.controls)
        # every check but the sequence's was judged for the sequence: the rows passing all are those and the sequence
        passing = as_read["_valid"] & as_read.select(_SEQ_RULE).to_series()
        as_read = as_read.select(list(AS_READ_SCHEMA))
        failures.append(checked(as_read, INPUT_SHOE_CSV, passing=passing))
        all_failures = pl.concat(failures)
        # a filter, not an anti join (a hash join of every accepted row): the same rows in the same order
        accepted = as_read.filter(~pl.col("source_line").is_in(all_failures["source_line"].implode()))
        events = self._canonical(accepted)
        bad2 = checked(events, CORE_DEVICE_EVENTS)
        if not bad2.is_empty():  # never expected: the input checks guard every conversion
            bad2 = bad2.with_columns(code=pl.lit("contract_violation"))
            all_failures = pl.concat([all_failures, bad2])
            events = events.join(bad2.select("source_line").unique(), on="source_line", how="anti")
        return events, all_failures, raw

    def _parse_quoted(self, quoted: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        rows, fails = [], []
        for line_no, text in quoted.select("source_line", "raw").iter_rows():
            try:
                parsed = next(csv.reader([text], strict=True))
            except (csv.Error, StopIteration) as exc:
                fails.append((line_no, "csv_unparseable", str(exc)))
                continue
            if len(parsed) != len(SHOE_CSV_COLUMNS):
                fails.append((line_no, "csv_column_count", f"expected 9 fields, got {len(parsed)}"))
                continue
            rows.append({"source_line": line_no, **dict(zip(self.header, parsed))})
        schema = {"source_line": pl.Int64, **{c: pl.String for c in self.header}}
        frame = pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
        failure_frame = pl.DataFrame(fails, schema={"source_line": pl.Int64, "code": pl.String, "detail": pl.String},
                                     orient="row") if fails else empty_failures()
        return frame.select("source_line", *self.header), failure_frame

    def _with_prev_max(self, fields: pl.DataFrame, controls: bool = True) -> pl.DataFrame:
        """Add ``prev_max_event_seq``: the highest event_seq of the device on an earlier line that
        passes every other check. A line set aside (say a mistyped event the device then sent
        again with the same event_seq) is not evidence of the sequence. ``controls=False``: the
        chunk's bytes hold no control or invisible character (``LineChunk.controls``), so that
        check, which would pass every line, is not run (the models' check reuses this pass)."""
        skip = ("seq_backwards",) if controls else ("seq_backwards", "control_character")
        valid = passes_all(INPUT_SHOE_CSV, builtin_vocabulary(), skip_codes=skip)
        seq = (pl.when(pl.col("event_seq").str.contains(INT_TEXT) & pl.col("_valid"))
               .then(pl.col("event_seq").str.to_integer(strict=False)))
        window = ["device_id"]
        out = fields
        if self.file_starts is not None:
            out = out.with_columns(self.file_starts.search_sorted(out["source_line"], side="right").alias("_file"))
            window = ["_file", "device_id"]
        # one lazy query: the checks' shared parses (event_seq's integer) computed once
        out = out.lazy().with_columns(valid.alias("_valid")).with_columns(seq.alias("_seq")).with_columns(
            pl.col("_seq").cum_max().forward_fill().shift(1).over(window).alias("prev_max_event_seq")
        ).collect()
        if self.file_starts is not None:  # a batch is parsed in one call: nothing to carry
            return out.drop("_seq", "_file")
        if self.max_seq:
            carried = pl.DataFrame({"device_id": list(self.max_seq), "_carried": list(self.max_seq.values())},
                                   schema={"device_id": pl.String, "_carried": pl.Int64})
            out = out.join(carried, on="device_id", how="left", maintain_order="left").with_columns(
                pl.max_horizontal("prev_max_event_seq", "_carried").alias("prev_max_event_seq")
            ).drop("_carried")
        latest = out.filter(pl.col("device_id").is_not_null()).group_by("device_id").agg(pl.col("_seq").max())
        for device, top in latest.iter_rows():
            if top is not None:
                self.max_seq[device] = max(top, self.max_seq.get(device, top))
        return out.drop("_seq")

    def _canonical(self, accepted: pl.DataFrame) -> pl.DataFrame:
        with_card = pl.col("event").is_in(EVENTS_WITH_CARD)
        code = (
            pl.when(~with_card).then(None)
            .when(pl.col("card").is_null()).then(pl.lit(NO_CARD))
            .otherwise(pl.col("card").replace_strict(CARD_CODES, default=FOREIGN, return_dtype=pl.Int16))
        )
        return accepted.select(
            pl.lit(self.source_file).alias("source_file"),
            pl.col("source_line"),
            "device_id", "table_id", "shoe_id",
            pl.col("event_seq").str.to_integer().cast(pl.Int64),
            pl.col("ts__utc").alias("ts"),
            "event",
            pl.col("round_no").str.to_integer(strict=False).cast(pl.Int64),
            "card",
            code.cast(pl.Int16).alias("card_code"),
            pl.col("decks").str.to_integer(strict=False).cast(pl.Int16),
        ).select(list(CORE_SCHEMA)).cast(CORE_SCHEMA)
