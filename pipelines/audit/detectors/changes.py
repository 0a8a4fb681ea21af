"""``source_changed``: a round or a device event that arrived again with different content.

A re-export that altered what was already loaded (a round's net corrected after the night, a card read again)
is not an error of the input but a fact the auditors must see: the ingest keeps both versions
(``core_source_changes``) and the core tables hold the later one, which the audit settles. Each change is one
finding naming both sources and what differs; ``high`` when a wager's amount or net changed (money recorded
again after the fact), else ``medium``. The finding lies in the partition where the round (or the event's
round) now is.
"""

from __future__ import annotations

import json

import duckdb
import polars as pl

from pipelines.audit.findings import finalize, with_ids
from pipelines.currency import format_money

RULE_REF = "FORMATS-NIGHT-AFTER-NIGHT"  # the contract's rule: data is identified by content, both versions kept
MONEY = {"amount", "net"}
#: a round's own amounts (formats.md: limits and jackpot_meter), beside its wagers' and actions' MONEY
ROUND_MONEY = {"limit_min", "limit_max", "limit_differential", "limit_side_min", "limit_side_max", "jackpot_meter"}


def _is_money(path: str) -> bool:
    return path in ROUND_MONEY or (path.startswith(("wagers[", "actions[")) and path.rsplit(".", 1)[-1] in MONEY)


def _shown(path: str, value: object, currency: object) -> str:
    """A value as the detail shows it: an amount in its currency's major units (formats.md, ``detail``), else as
    Python writes it."""
    if _is_money(path) and isinstance(value, int) and not isinstance(value, bool):
        return format_money(value, currency if isinstance(currency, str) else None)
    return repr(value)


def _flat(content: str) -> dict[str, object]:
    """Canonical JSON of a version (``{'r': round, 'w': wagers, 'a': actions}`` or an event's fields) flattened
    to ``path -> value`` (``wagers[2].net``)."""
    data = json.loads(content)
    out: dict[str, object] = {}
    if isinstance(data, dict) and set(data) == {"r", "w", "a"}:
        for k, v in (data["r"] or {}).items():
            out[k] = v
        for name, items in (("wagers", data["w"]), ("actions", data["a"])):
            for i, item in enumerate(items or [], start=1):
                for k, v in item.items():
                    out[f"{name}[{i}].{k}"] = v
            out[f"{name}.count"] = len(items or [])
        return out
    return dict(data) if isinstance(data, dict) else {"value": data}


def differences(earlier: str, later: str, limit: int = 3) -> tuple[list[str], bool]:
    """What changed, as ``path old -> new`` (at most ``limit``), and whether a wager's money did."""
    a, b = _flat(earlier), _flat(later)
    changed = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    money = any(k.startswith("wagers[") and k.rsplit(".", 1)[-1] in MONEY for k in changed)
    shown = [f"{k} {_shown(k, a.get(k), a.get('currency'))} -> {_shown(k, b.get(k), b.get('currency'))}"
             for k in changed[:limit]]
    if len(changed) > limit:
        shown.append(f"and {len(changed) - limit} more")
    return shown, money


def source_changed(changes: pl.DataFrame) -> pl.DataFrame:
    """Findings from :func:`pipelines.audit.load.load_source_changes`'s rows."""
    if changes.height == 0:
        return finalize([])
    details, severities = [], []
    for row in changes.iter_rows(named=True):
        shown, money = differences(row["earlier_content"], row["later_content"])
        what = f"round {row['row_key']}" if row["kind"] == "rounds_jsonl" else f"device event {row['row_key']}"
        earlier, later = row["earlier_source_file"], row["later_source_file"]
        # the next night's export may reuse the names: "X:4 then X:4" read as one line twice
        then = (f" then {later}:{row['later_source_line']}" if later != earlier else
                f", then line {row['later_source_line']} of a later file of that name")
        details.append(
            f"{what} arrived again with different content: {earlier}:{row['earlier_source_line']}{then} "
            f"({'; '.join(shown) or 'content'}); both versions are kept, the later one is audited")
        severities.append("high" if money else "medium")
    out = changes.with_columns(
        pl.lit("source_changed").alias("kind"),
        pl.Series("severity", severities, dtype=pl.String),
        pl.lit(None, dtype=pl.String).alias("wager_id"),
        pl.lit(RULE_REF).alias("rule_ref"),
        pl.Series("detail", details, dtype=pl.String),
        pl.col("later_source_file").alias("source_file"),
        pl.col("later_source_line").alias("source_line"),
    )
    key = pl.format("{}:{}>{}:{}", pl.col("earlier_source_file"), pl.col("earlier_source_line"),
                    pl.col("later_source_file"), pl.col("later_source_line"))
    return finalize([with_ids(out, pl.col("row_key") + pl.lit("|") + key)])


def source_changed_findings(con: duckdb.DuckDBPyConnection, day_start_minutes: int, keys=None) -> pl.DataFrame:
    """The ``source_changed`` findings of the partitions ``keys`` ((gaming_day, table_id) pairs; None: all), in
    the findings schema, read with any connection to the database (a read-only one will do)."""
    from pipelines.audit.load import load_source_changes

    return source_changed(load_source_changes(con, day_start_minutes, keys))
