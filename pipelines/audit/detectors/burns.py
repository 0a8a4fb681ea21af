"""``card_integrity``: a shoe dealt without its burn (TBAC-7.11, BJ-7.13).

Tiger Baccarat and Blackjack burn cards from a fresh shoe before its first round (TBAC-2.2.2 "Burn means a
process of removing a card(s) prior to commencing the first round of play of a shoe"; BJ-7.13 "burn the first
card from the shoe"). The device logs them as ``burn`` events with no round between the ``shoe_start`` and the
first ``card`` (docs/formats.md). A shoe whose first card came with no burn before it breaks the procedure; the
texts let the results stand (TBAC-7.11.2 the first hand continues to a conclusion, 7.11.3 past it the shoe is
completed; BJ-7.13.2 play continues with that card in play), so no money changes: it is a procedural finding,
``medium`` like the other card findings without money.

A shoe is judged only when its evidence is whole (``pipelines.audit.load.load_shoe_openings``): its
``shoe_start`` and first card both loaded, and no ``event_seq`` jump between them (the lost events may be the
burns; the jump is a ``sequence_gap`` already). The rule set of the first round decides whether its procedure
has a shoe burn (``ProcedureClauses.missing_shoe_burn``): Hold'em burns per round and is checked by the engine.
The shoe's start and burns have no round, so a partition's own rows do not hold them: the check runs once over
the night beside the gaps and files its finding under the first round's partition.
"""

from __future__ import annotations

import polars as pl

from pipelines.audit.clauses import CLAUSES
from pipelines.audit.findings import finalize, with_ids
from pipelines.audit.params import AuditParams
from pipelines.audit.settle import resolve_rulesets

# what the text lets happen once the shoe is dealt without its burn (the results stand)
CONSEQUENCE = {
    "TBAC-7.11": "the first hand continues to its conclusion and the shoe is played to its end; the results stand",
    "BJ-7.13": "play continues with that card in play; the results stand",
}


def shoe_rulesets(shoes: pl.DataFrame, params: AuditParams) -> pl.DataFrame:
    """The shoe openings whose first round the table system logged, with that round's rule set resolved for its
    gaming day (``clause_prefix``): the rule set says whether its procedure burns a new shoe. A first round only
    the device saw has no rule set: its shoe is not judged (the round is an ``unmatched_round``)."""
    known = shoes.filter(pl.col("ruleset").is_not_null())
    return resolve_rulesets(known, params)[0] if known.height else known


def missing_shoe_burns(shoes: pl.DataFrame) -> pl.DataFrame:
    """One ``card_integrity`` finding per shoe dealt without its burn. ``shoes``: the load's shoe openings with each
    first round's rule set resolved (``clause_prefix``, ``ruleset_version``: pipelines.audit.settle.resolve_rulesets)."""
    if shoes.height == 0:
        return finalize([])
    clause = pl.col("clause_prefix").replace_strict(
        {p: c.missing_shoe_burn for p, c in CLAUSES.items()}, default=None, return_dtype=pl.String)
    found = shoes.with_columns(clause.alias("rule_ref")).filter(
        ~pl.col("burned") & ~pl.col("jumped") & pl.col("rule_ref").is_not_null())
    if found.height == 0:
        return finalize([])
    consequence = pl.col("rule_ref").replace_strict(CONSEQUENCE, default="the results stand", return_dtype=pl.String)
    out = found.with_columns(
        pl.lit("card_integrity").alias("kind"),
        pl.lit("medium").alias("severity"),
        pl.lit(None, dtype=pl.String).alias("wager_id"),
        pl.format("shoe {} was dealt without a burn: the first card of round {} came straight after the shoe_start "
                  "(device {}, event_seq {} to {}) ({}: {})", pl.col("shoe_id"), pl.col("round_no"), pl.col("device_id"),
                  pl.col("start_seq"), pl.col("card_seq"), pl.col("rule_ref"), consequence).alias("detail"),
    )
    return finalize([with_ids(out, pl.format("burn#{}#{}", pl.col("device_id"), pl.col("start_seq")))])
