"""Card findings: what the engine calls irregular in a round's cards and decisions, and excess cards in a shoe.

The engine names each irregularity with its finding kind (``card_integrity``,
``drawing_rule_violation``, ``illegal_action``, ...) and clause; they become findings as they are.
A card seen more often in one shoe than the shoe's decks hold it needs the whole shoe, which the
engine never sees: the audit counts copies itself (pipelines.audit.reconstruct.annotate_events)
and cites the rule text's clause for extra cards (TBAC-7.1, HTB-7.1.3, BJ-7.14, MBS-5.2).
Procedure findings: ``medium``.
"""

from __future__ import annotations

import polars as pl

from pipelines.audit.clauses import CLAUSES
from pipelines.audit.findings import with_ids
from rulebook.cards import card_text

# irregularities about the cards cite the device's line; decisions cite the table system's
DEVICE_KINDS = ("card_integrity", "drawing_rule_violation")


def detect_cards(recon: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    return pl.concat([_engine_irregularities(rounds), _excess_cards(recon, rounds)], how="diagonal_relaxed")


def _engine_irregularities(rounds: pl.DataFrame) -> pl.DataFrame:
    if "irregularities" not in rounds.columns or rounds.height == 0:
        return pl.DataFrame()
    r = rounds.filter(pl.col("irregularities").list.len() > 0)
    if r.height == 0:
        return pl.DataFrame()
    x = r.with_columns(pl.int_ranges(pl.col("irregularities").list.len()).alias("_i")).explode(["irregularities", "_i"])
    x = x.with_columns(
        pl.col("irregularities").struct.field("kind").alias("kind"),
        pl.col("irregularities").struct.field("clause").alias("rule_ref"),
        pl.col("irregularities").struct.field("detail").alias("detail"),
        pl.lit("medium").alias("severity"),
    )
    device = pl.col("kind").is_in(list(DEVICE_KINDS)) & pl.col("device_source_file").is_not_null()
    x = x.with_columns(
        pl.when(device).then(pl.col("device_source_file")).otherwise(pl.col("source_file")).alias("source_file"),
        pl.when(device).then(pl.col("device_source_line")).otherwise(pl.col("source_line")).alias("source_line"),
        pl.lit(None, dtype=pl.String).alias("wager_id"),
    )
    return with_ids(x, pl.format("{}#{}", pl.col("rule_ref"), pl.col("_i")))


def _excess_cards(recon: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    r = recon.filter(pl.col("excess_cards").list.len().fill_null(0) > 0)
    if r.height == 0:
        return pl.DataFrame()
    info = rounds.select(
        "table_id", "round_no", "dealer_id", "game", "ruleset", "ruleset_version", "currency", "clause_prefix"
    )
    r = r.join(info, on=["table_id", "round_no"], how="left")
    rows = []
    for row in r.iter_rows(named=True):
        clauses = CLAUSES.get(row["clause_prefix"] or "")
        cards = ", ".join(card_text(int(c)) for c in row["excess_cards"])
        decks = row["decks"]
        if clauses is None:
            ref, void = "", None
        else:
            ref, void = clauses.excess_card, clauses.excess_card_void
        consequence = (
            f"; the rules void a round when extra cards are discovered during it ({void}): found only now, "
            "the round is judged as dealt" if void else "; the rule text names no consequence"
        )
        rows.append({
            "kind": "card_integrity",
            "severity": "medium",
            "gaming_day": row["gaming_day"],
            "table_id": row["table_id"],
            "round_no": row["round_no"],
            "wager_id": None,
            "dealer_id": row["dealer_id"],
            "game": row["game"],
            "ruleset": row["ruleset"],
            "ruleset_version": row["ruleset_version"],
            "currency": row["currency"],
            "device_id": row["device_id"],
            "rule_ref": ref,
            "detail": (
                f"{cards} seen more often in shoe {row['device_shoe_id']} than its {decks} deck(s) hold: "
                f"a card that does not belong to the decks in use ({ref}){consequence}"
            ),
            "source_file": row["device_source_file"],
            "source_line": row["device_source_line"],
        })
    return with_ids(pl.DataFrame(rows), pl.lit("excess"))
