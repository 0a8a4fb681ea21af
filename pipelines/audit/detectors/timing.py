"""``late_wager``: an Ante, Bonus, main or side wager placed after "no more bets" or after the first card (past posting).

Insurance, doubles, splits and the Hold'em Flop, Turn and River are decisions the rules place after
the cards by design: never late; nor is a blackjack Pair wager placed when splitting (a ``pair`` with a
``hand``: BJ-4.5 excepts splitting, BJ-4.10.1.2 gives the option; one naming a hand no split formed is
the engine's ``illegal_action``, not a late wager). The first card is the round's first ``card`` event on the device
(a burn is not dealt to anyone). A wager placed exactly at the close is not late. The rules say such
a wager is refused (TBAC-4.2/4.6, BJ-4.5, HTB-4.7/4.9, MBS-5.6), so it is ``high``: money was at
stake that should never have been; ``recorded_net`` shows what the table settled it at.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from pipelines.audit.clauses import CLAUSES
from pipelines.audit.findings import money, with_ids


def _local(ts: dt.datetime | None, offset_minutes: int | None) -> str:
    if ts is None:
        return "?"
    local = ts.astimezone(dt.timezone(dt.timedelta(minutes=offset_minutes or 0)))
    return local.isoformat(timespec="milliseconds")


def detect_late_wagers(wagers: pl.DataFrame, rounds: pl.DataFrame) -> pl.DataFrame:
    if wagers.height == 0:
        return pl.DataFrame()
    at_split = (pl.col("bet") == "pair") & pl.col("hand").is_not_null() if "hand" in wagers.columns else pl.lit(False)
    late = wagers.filter(
        (pl.col("category") != "decision")
        & ~at_split
        & (
            (pl.col("placed_at") > pl.col("bets_closed_at")).fill_null(False)
            | (pl.col("placed_at") > pl.col("first_card_at")).fill_null(False)
        )
    )
    if late.height == 0:
        return pl.DataFrame()
    late = late.join(rounds.select("table_id", "round_no", "utc_offset_minutes"), on=["table_id", "round_no"], how="left")
    rows = []
    for r in late.iter_rows(named=True):
        c = CLAUSES.get(r["clause_prefix"] or "")
        ref = c.late_wager if c else ""
        off = r["utc_offset_minutes"]
        why = []
        if r["bets_closed_at"] is not None and r["placed_at"] > r["bets_closed_at"]:
            secs = (r["placed_at"] - r["bets_closed_at"]).total_seconds()
            why.append(f"{secs:.3f} s after bets closed at {_local(r['bets_closed_at'], off)}")
        if r["first_card_at"] is not None and r["placed_at"] > r["first_card_at"]:
            secs = (r["placed_at"] - r["first_card_at"]).total_seconds()
            why.append(f"{secs:.3f} s after the first card at {_local(r['first_card_at'], off)}")
        settled = "" if r["recorded_net"] is None else f"; the table settled it at {money(r['recorded_net'], r.get('currency'))}"
        rows.append({
            **r,
            "kind": "late_wager",
            "severity": "high",
            "rule_ref": ref,
            "expected_net": None,
            "difference": None,
            "detail": (
                f"{r['bet']} {money(r['amount'], r.get('currency'))} placed at {_local(r['placed_at'], off)}, " + " and ".join(why)
                + f": the rules require it to be refused ({ref}){settled}"
            ),
        })
    return with_ids(pl.DataFrame(rows, infer_schema_length=None))
