"""Re-settle every wager with the rule-set version in force that gaming day.

For each wager: what the cards and decisions say at the amount placed (``cards_net``, the engine),
what the rules prescribe all things considered (``expected_net``: limits, Hold'em ratios, the
differential, void rounds, Free Hands; :mod:`pipelines.audit.adjust`), the clause that decides it,
beside what the table system recorded (``recorded_net``). Where the evidence cannot decide, the
expected net is null and ``unsettled_reason`` says why.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from pipelines.audit.adjust import prescribe
from pipelines.audit.engine_pass import engine_pass
from pipelines.audit.frames import SETTLEMENTS_SCHEMA, conform, in_order
from pipelines.audit.free_hand import free_hand_pass
from pipelines.audit.joins import attach, attach_round_blocks
from pipelines.audit.params import AuditParams
from pipelines.money import checked_difference
from rulebook.ruleset import RuleSet


ROUND = ["table_id", "round_no"]
WAGER = ["table_id", "round_no", "wager_id"]
WAGER_ORDER = ["table_id", "round_no", "wager_order"]


@dataclass(frozen=True)
class Settled:
    wagers: pl.DataFrame  # SETTLEMENTS_SCHEMA plus the checks the detectors read (limit_issue, override, ...)
    rounds: pl.DataFrame  # one row per table round: context, rule set, and what the engine said
    irregularities: pl.DataFrame  # IRREGULARITIES_SCHEMA: what the engine called irregular, per round


def resolve_rulesets(rounds: pl.DataFrame, params: AuditParams) -> tuple[pl.DataFrame, dict[str, RuleSet]]:
    """Per round: the rule-set version in force on its gaming day (or why none is)."""
    pairs = rounds.select("ruleset", "gaming_day").unique(maintain_order=True)
    found: dict[str, RuleSet] = {}
    rows = []
    for name, day in pairs.iter_rows():
        rs = params.ruleset(name, day)
        if isinstance(rs, str):
            rows.append((name, day, None, None, None, rs))
        else:
            key = f"{rs.name}@{rs.version}"
            found[key] = rs
            rows.append((name, day, key, rs.version, rs.header.clause_prefix, None))
    table = pl.DataFrame(
        rows,
        schema={"ruleset": pl.String, "gaming_day": pl.Date, "ruleset_key": pl.String, "ruleset_version": pl.String,
                "clause_prefix": pl.String, "ruleset_error": pl.String},
        orient="row",
    )
    return attach(rounds, table, ["ruleset", "gaming_day"]), found


def settle(
    recon: pl.DataFrame, rounds: pl.DataFrame, wagers: pl.DataFrame, actions: pl.DataFrame, params: AuditParams
) -> Settled:
    """Settle every wager of the partition; see the module docstring."""
    rounds, rulesets = resolve_rulesets(rounds, params)
    ctx_all = attach(rounds, recon.select(
        "table_id", "round_no", "has_cards", "complete", "codes", "burns", "dealt", "foreign_burn", "decks",
        "excess_cards", "first_card_at", "note", "device_id", "device_shoe_id", "device_source_file", "device_source_line",
    ), ROUND)
    engine_ready = ctx_all.filter(pl.col("complete").fill_null(False) & pl.col("ruleset_key").is_not_null())
    # the engine's `ruleset_version` key is the name@version (two rule sets may share a version string)
    face = engine_pass(
        engine_ready.with_columns(pl.col("ruleset_key").alias("ruleset_version")),
        wagers, actions, "amount", rulesets, params, with_rounds=True,
    )
    # a card dealt in error makes the next round of the shoe a Free Hand (TBAC-7.6-7.8): pipelines.audit.free_hand
    face, free_hands = free_hand_pass(ctx_all, engine_ready, face, wagers, actions, rulesets, params)
    round_results = face.rounds.drop("ruleset_version")
    ctx_all = attach(ctx_all, round_results, ROUND)
    ctx_all = attach(ctx_all, free_hands, ROUND)
    # A card seen more often than the shoe holds is a card-integrity finding, not a void: the texts void
    # a round when extra cards are discovered during it (TBAC-7.1, HTB-7.7, ...); one only the audit
    # finds afterwards left the round to be settled as dealt (docs/interpretations/audit.md).
    ctx_all = ctx_all.with_columns(
        pl.col("engine_void").fill_null(False).alias("rules_void"),
        pl.when(pl.col("engine_void").fill_null(False)).then(pl.col("void_clause")).alias("rules_void_clause"),
    )

    round_cols = [
        "table_id", "round_no", "gaming_day", "game", "ruleset", "ruleset_version", "clause_prefix", "status",
        "dealer_id", "currency", "limit_min", "limit_max", "limit_differential", "limit_side_min", "limit_side_max",
        "rules_void", "rules_void_clause", "bets_closed_at", "first_card_at", "free_hand_after", "free_hand_cause",
        # read only after prescribe, by the unsettled reasons below
        "has_cards", "complete", "note", "ruleset_error", "engine_error",
    ]
    # every join onto the wide wager frame copies only its keys (pipelines.audit.joins)
    w = attach(wagers, ctx_all.select(round_cols), ROUND, how="inner")
    w = prescribe(w)
    # the engine's results come round by round in the wagers' order: placed by position, not by a join on the keys
    w = attach_round_blocks(
        w, face.wagers.rename({"net": "cards_net", "detail": "_pay_detail", "unsettled_reason": "_engine_unsettled"}), WAGER,
    )

    # a second pass for the wagers the rules settle at another amount (limits, ratios, differential)
    resettle = w.filter(
        pl.col("override").is_null() & (pl.col("settled_amount") != pl.col("amount")) & (pl.col("settled_amount") > 0)
    )
    if resettle.height:
        keys = resettle.select("table_id", "round_no").unique()
        ctx2 = engine_ready.join(keys, on=["table_id", "round_no"], how="semi").with_columns(
            pl.col("ruleset_key").alias("ruleset_version")
        )
        w2 = wagers.join(keys, on=["table_id", "round_no"], how="semi").join(
            w.select("table_id", "round_no", "wager_id", "settled_amount"), on=["table_id", "round_no", "wager_id"], how="left"
        )
        a2 = actions.join(keys, on=["table_id", "round_no"], how="semi")
        second = engine_pass(ctx2, w2, a2, "settled_amount", rulesets, params, with_rounds=False).wagers
        w = attach(
            w, second.select("table_id", "round_no", "wager_id", pl.col("net").alias("_adj_net"), pl.col("detail").alias("_adj_detail")),
            WAGER,
        )
    else:
        w = w.with_columns(pl.lit(None, dtype=pl.Int64).alias("_adj_net"), pl.lit(None, dtype=pl.String).alias("_adj_detail"))

    changed = pl.col("settled_amount") != pl.col("amount")
    expected = (
        pl.when(pl.col("override").is_not_null()).then(pl.lit(0, dtype=pl.Int64))
        .when(~changed).then(pl.col("cards_net"))
        .when(pl.col("settled_amount") == 0).then(pl.lit(0, dtype=pl.Int64))
        .otherwise(pl.col("_adj_net"))
    )
    adjustment = (
        pl.when(pl.col("override").is_not_null()).then(pl.col("override"))
        .when(changed & pl.col("differential_clause").is_not_null() & (pl.col("amount_clause") == pl.col("differential_clause")))
        .then(pl.lit("differential"))
        .when(changed).then(pl.lit("limit"))
    )
    why_not = (
        pl.when(pl.col("ruleset_error").is_not_null()).then(pl.col("ruleset_error"))
        .when(~pl.col("complete").fill_null(False)).then(pl.coalesce("note", pl.lit("no cards from the device for this round")))
        .when(pl.col("engine_error").is_not_null()).then(pl.format("the engine could not settle this round ({})", pl.col("engine_error")))
        .otherwise(pl.col("_engine_unsettled"))
    )
    w = w.with_columns(
        expected.alias("expected_net"),
        adjustment.alias("adjustment"),
        pl.coalesce(
            pl.when(pl.col("override").is_not_null()).then(pl.col("override_clause")),
            pl.when(changed).then(pl.col("amount_clause")),
            pl.col("pay_clause"),
        ).alias("clause"),
        pl.col("net").alias("recorded_net"),
    ).with_columns(
        checked_difference("recorded_net", "expected_net").alias("difference"),  # never wraps (pipelines.money)
    )
    # the two sentences that differ from the engine's on a few wagers are written on those rows only
    w = w.with_columns(
        _on_rows(w, pl.col("expected_net").is_null(), why_not, None).alias("unsettled_reason"),
        _on_rows(
            w, pl.col("override").is_not_null() | changed,
            pl.when(pl.col("override").is_not_null()).then(pl.col("override_detail")).otherwise(pl.concat_str(
                [pl.coalesce("differential_issue", "limit_issue"), pl.col("_adj_detail")], separator="; ", ignore_nulls=True
            )),
            "_pay_detail",
        ).alias("detail"),
    )
    extra = ["category", "limit_issue", "limit_clause", "differential_issue", "differential_clause", "override",
             "override_clause", "override_detail", "clause_prefix", "placed_at", "bets_closed_at", "first_card_at", "rules_void",
             "cards_net_detail", "hand"]
    w = w.with_columns(pl.col("_pay_detail").alias("cards_net_detail"))
    published = conform(w, SETTLEMENTS_SCHEMA)
    wagers_out = _in_wager_order(pl.concat([published, w.select(extra)], how="horizontal"))
    rounds_out = ctx_all
    return Settled(wagers=wagers_out, rounds=rounds_out, irregularities=face.irregularities)


def _on_rows(w: pl.DataFrame, where: pl.Expr, value: pl.Expr, otherwise: str | None) -> pl.Series:
    """``pl.when(where).then(value).otherwise(otherwise)`` (a column name, or null), with ``value`` evaluated on the
    rows ``where`` holds only: a sentence a few wagers need, not built for every wager and then mostly discarded."""
    rows = w.select(where.fill_null(False)).to_series().arg_true()
    if len(rows) > w.height // 4:
        return w.select(pl.when(where).then(value).otherwise(pl.col(otherwise) if otherwise else None)).to_series()
    base = w[otherwise] if otherwise else pl.repeat(None, w.height, dtype=pl.String, eager=True)
    if not len(rows):
        return base
    return base.scatter(rows, w.select(list(dict.fromkeys(value.meta.root_names())))[rows].select(value).to_series())


def _in_wager_order(w: pl.DataFrame) -> pl.DataFrame:
    """``w`` sorted by table, round and wager order, gathered only when it is not in that order already (the wagers
    come in it from the load)."""
    return w if in_order(w, WAGER_ORDER) else w.sort(WAGER_ORDER, maintain_order=True)


def published_settlements(wagers: pl.DataFrame) -> pl.DataFrame:
    """The settlements.parquet / out_settlements columns of a settled-wagers frame."""
    return conform(wagers, SETTLEMENTS_SCHEMA)


