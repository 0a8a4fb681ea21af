"""The full findings table's data: one JSON document inside the report, read by report.js.

Columnar and dictionary-encoded (a night of 13,000 findings repeats a few hundred tables, dealers and
players), so the file stays small and the browser parses it at once. Amounts travel as strings of the
integer in the smallest unit (exact beyond 2**53, where a JavaScript number is not) with each currency's
ISO 4217 decimals beside them; the script formats them and never writes a value as HTML (``textContent``).
The JSON is gzipped and base64-encoded (:func:`pack`; 13,000 findings of a 1,000,000-round night are
3.5 MB of JSON and a few hundred kB packed) in a ``<script type="application/octet-stream">`` element,
which base64 cannot close; the browser unpacks it with its own ``DecompressionStream`` (no library, no
request). :func:`script_json` is for JSON written into a page as is.
"""

from __future__ import annotations

import base64
import gzip
import json
import shlex

import polars as pl

from pipelines.report.links import evidence_href, evidence_relpath
from pipelines.currency import minor_units
from pipelines.stats.distributions import P_FLOOR

# (key in the payload, column of the findings frame, how it is encoded)
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("sev", "severity", "dict"), ("kind", "kind", "dict"), ("day", "gaming_day", "dict"),
    ("table", "table_id", "dict"), ("round", "round_no", "int"), ("time", "closed_local", "str"),
    ("game", "game", "dict"), ("dealer", "dealer_id", "dict"), ("player", "player_id", "dict"),
    ("seat", "seat", "int"), ("wager", "wager_id", "str"), ("cur", "currency", "dict"),
    ("exp", "expected_net", "money"), ("rec", "recorded_net", "money"), ("diff", "difference", "money"),
    ("rule", "rule_ref", "dict"), ("p", "p_value", "float"), ("q", "q_value", "float"),
    ("detail", "detail", "str"), ("file", "source_file", "dict"), ("line", "source_line", "int"),
    ("id", "finding_id", "str"),
)


def script_json(obj) -> str:
    """JSON safe inside a <script> element (and in HTML at large): no raw <, > or &."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace(
        "\u2028", "\\u2028").replace("\u2029", "\\u2029")


def pack(obj) -> str:
    """``obj`` as JSON, gzipped (no timestamp: the same data gives the same text) and base64-encoded."""
    raw = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def unpack(text: str):
    """The inverse of :func:`pack` (for tests and tools that read a report's data)."""
    return json.loads(gzip.decompress(base64.b64decode(text)).decode("utf-8"))


def _column(series: pl.Series, how: str) -> dict:
    if how == "dict":
        values = series.cast(pl.String)
        uniq = sorted(values.drop_nulls().unique().to_list())
        index = {v: i for i, v in enumerate(uniq)}
        return {"d": uniq, "v": [-1 if v is None else index[v] for v in values.to_list()]}
    if how == "money":
        return {"v": [None if v is None else str(int(v)) for v in series.to_list()]}
    if how == "float":
        return {"v": [None if v is None or v != v else float(f"{v:.3g}") for v in series.cast(pl.Float64).to_list()]}
    if how == "int":
        return {"v": series.cast(pl.Int64).to_list()}
    return {"v": series.cast(pl.String).to_list()}


def findings_payload(findings: pl.DataFrame, database: str = "pitaudit.duckdb", packs=None,
                     investigations: dict[str, str] | None = None) -> dict:
    """The findings (sorted as published; with ``closed_local`` and optional ``p_value``/``q_value``) as the table's data.

    ``packs`` (:class:`pipelines.evidence.batch.PackIndex`, when the audit wrote the packs) adds ``pack`` (1: the
    round's pack was written, 0: not; the page then shows the command instead of a link); ``investigations``
    (finding_id -> link) adds ``inv``, the investigation page of a statistical finding's subject."""
    cols = {}
    for key, name, how in COLUMNS:
        if name in findings.columns:
            cols[key] = _column(findings[name], how)
    if packs is not None:
        cols["pack"] = {"v": [int(packs.has_pack(t, r, d)) for t, r, d in zip(
            findings["table_id"].to_list(), findings["round_no"].to_list(), findings["gaming_day"].to_list())]}
    if investigations:
        cols["inv"] = _column(pl.Series([investigations.get(f) for f in findings["finding_id"].to_list()], dtype=pl.String),
                              "dict")
    tables = sorted(findings["table_id"].drop_nulls().unique().to_list()) if findings.height else []
    rounds = findings.filter(pl.col("table_id").is_not_null() & pl.col("round_no").is_not_null())
    # per table: [the link to its packs' folder, the command before the round number, after it]: report.js appends
    # the round to each (the round is an integer; the rest is quoted here, once)
    links = {}
    for t in tables:
        folder = evidence_relpath(t, 0).parent.as_posix() + "/"
        links[t] = [evidence_href(t, 0).rsplit("/0/", 1)[0] + "/",
                    f"pitaudit evidence --db {shlex.quote(database)} --table {shlex.quote(t)} --round ",
                    f" --out {shlex.quote(folder)}"]
    currencies = sorted(findings["currency"].drop_nulls().unique().to_list()) if findings.height else []
    return {
        "n": findings.height,
        "cols": cols,
        "links": links,
        "with_round": rounds.height,
        "decimals": {c: minor_units(c) for c in currencies},
        "p_floor": P_FLOOR,  # a p-value at it was floored there, not computed: shown "< 1e-12"
    }
