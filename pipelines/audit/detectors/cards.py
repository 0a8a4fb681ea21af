"""Card findings: what the engine calls irregular in a round's cards and decisions, and excess cards in a shoe.

The engine names each irregularity with its finding kind (``card_integrity``,
``drawing_rule_violation``, ``illegal_action``, ...) and clause; they become findings as they are.
A card seen more often in one shoe than the shoe's decks hold it needs the whole shoe, which the
engine never sees: the audit counts copies itself (the loader's query, pipelines.audit.load)
and cites the rule text's clause for extra cards (TBAC-7.1, HTB-7.1.3, BJ-7.14, MBS-5.2).
Procedure findings: ``medium``.
"""

from __future__ import annotations

import polars as pl

from pipelines.audit.clauses import CLAUSES
from pipelines.audit.findings import with_ids
from rulebook.cards import NO_CARD, UNREADABLE, card_text

# irregularities about the cards cite the device's line; decisions cite the table system's
DEVICE_KINDS = ("card_integrity", "drawing_rule_violation")


def detect_cards(recon: pl.DataFrame, rounds: pl.DataFrame, irregularities: pl.DataFrame | None = None) -> pl.DataFrame:
    parts = [_excess_cards(recon, rounds), _unread_cards(recon, rounds, irregularities)]
    if irregularities is not None and irregularities.height:
        parts.insert(0, _engine_irregularities(irregularities, rounds))
    return pl.concat(parts, how="diagonal_relaxed")


def _unread_cards(recon: pl.DataFrame, rounds: pl.DataFrame, irregularities: pl.DataFrame | None) -> pl.DataFrame:
    """A dealt card the device did not read (``??`` or empty), where the engine named no card-integrity irregularity.

    Some engines leave an unread card to the wagers it decides (they stay unsettled) without an
    irregularity of their own; the device's failure to read a dealt card is still a finding.
    """
    r = recon.filter(pl.col("dealt").list.eval((pl.element() == UNREADABLE) | (pl.element() == NO_CARD)).list.any())
    if r.height == 0:
        return pl.DataFrame()
    if irregularities is not None and irregularities.height:
        named = irregularities.filter(pl.col("kind") == "card_integrity").select("table_id", "round_no").unique()
        r = r.join(named, on=["table_id", "round_no"], how="anti")
    info = rounds.select("table_id", "round_no", "dealer_id", "game", "ruleset", "ruleset_version", "currency", "clause_prefix")
    r = r.join(info, on=["table_id", "round_no"], how="left")
    rows = []
    for row in r.iter_rows(named=True):
        clauses = CLAUSES.get(row["clause_prefix"] or "")
        ref = clauses.unreadable_card if clauses else ""
        where = [str(i + 1) for i, c in enumerate(row["dealt"]) if c in (UNREADABLE, NO_CARD)]
        rows.append({
            "kind": "card_integrity", "severity": "medium", "gaming_day": row["gaming_day"], "table_id": row["table_id"],
            "round_no": row["round_no"], "wager_id": None, "dealer_id": row["dealer_id"], "game": row["game"],
            "ruleset": row["ruleset"], "ruleset_version": row["ruleset_version"], "currency": row["currency"],
            "device_id": row["device_id"], "rule_ref": ref,
            "detail": (f"card(s) {', '.join(where)} dealt in the round were not read by device {row['device_id']} (??): "
                       f"the wagers they decide cannot be settled from the cards ({ref})"),
            "source_file": row["device_source_file"], "source_line": row["device_source_line"],
        })
    return with_ids(pl.DataFrame(rows), pl.lit("unread"))


def _engine_irregularities(irregularities: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    """One finding per irregularity the engine named, with the round's identifiers and source."""
    info = rounds.select(
        "table_id", "round_no", "gaming_day", "dealer_id", "game", "ruleset", "ruleset_version", "currency",
        "source_file", "source_line", "device_id", "device_source_file", "device_source_line",
    )
    # in a round the rules void (a foreign card), the cards after the foreign one are displaced: no drawing finding
    voided = rounds.filter(pl.col("engine_void").fill_null(False)).select("table_id", "round_no")
    irregularities = pl.concat([
        irregularities.filter(pl.col("kind") != "drawing_rule_violation"),
        irregularities.filter(pl.col("kind") == "drawing_rule_violation").join(voided, on=["table_id", "round_no"], how="anti"),
    ])
    x = irregularities.join(info, on=["table_id", "round_no"], how="left").with_columns(
        pl.col("clause").alias("rule_ref"),
        pl.lit("medium").alias("severity"),
        pl.lit(None, dtype=pl.String).alias("wager_id"),
    )
    device = pl.col("kind").is_in(list(DEVICE_KINDS)) & pl.col("device_source_file").is_not_null()
    x = x.with_columns(
        pl.when(device).then(pl.col("device_source_file")).otherwise(pl.col("source_file")).alias("source_file"),
        pl.when(device).then(pl.col("device_source_line")).otherwise(pl.col("source_line")).alias("source_line"),
    )
    return with_ids(x, pl.format("{}#{}", pl.col("rule_ref"), pl.col("idx")))


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
