"""The Free Hand after a card dealt in error (TBAC-7.6-7.8): a rule that spans two rounds of a shoe.

A third card dealt when the drawing rules give none becomes the first card of the next hand, which is
dealt as a Free Hand, and "in a Free Hand, all wagers must be removed" (TBAC-7.8). The engine finds the
card dealt in error on its own round (a ``drawing_rule_violation`` whose clause is one of the text's
``free_hand_causes``, pipelines.audit.clauses); this module carries the consequence to the next round:

- **which round**: the table's next game number (``round_no + 1``) at the same table, dealt from the same
  shoe (the device's shoe, else the one the table system names). A next round from another shoe, or a
  round the rules void, expects nothing; a missing game number is the gap detector's.
- **what it expects**: every wager on it nets 0 (TBAC-7.8; the audit's ``free_hand`` override, whatever
  the table recorded); a round not recorded as ``free_hand`` is a ``free_hand_wager`` finding (one per
  wager, or one for the round when it has none: pipelines.audit.detectors.money).
- **its cards**: the device logged the card(s) dealt in error with the round they left the shoe in, so a
  round the table recorded as ``free_hand`` is re-settled with those cards put in front of its own (its
  first card to the Player, the next to the Banker, and so on, TBAC-7.8): its result, and any card dealt
  in error in it (the next Free Hand), are then the rules'. A round the table did not play as a Free Hand
  keeps its own cards.

The partitions are gaming day x table, and a shoe is inside a table: both rounds are in one partition,
except a shoe that runs across the gaming day's start (the pair is then not checked; docs/interpretations/baccarat.md).
"""

from __future__ import annotations

import polars as pl

from pipelines.audit.clauses import CLAUSES
from pipelines.audit.engine_pass import EngineOutput, engine_pass
from pipelines.audit.params import AuditParams
from rulebook.ruleset import RuleSet

# the clauses whose card(s) dealt in error begin a Free Hand, over every rule text
CAUSES: frozenset[str] = frozenset(c for pc in CLAUSES.values() for c in pc.free_hand_causes)
EXPECTED_COLUMNS = {"table_id": pl.String, "round_no": pl.Int64, "free_hand_after": pl.Int64, "free_hand_cause": pl.String}
MAX_CHAIN = 20  # Free Hands in a row whose own cards hold a card dealt in error (each carries the next)


def expected_free_hands(ctx: pl.DataFrame, irregularities: pl.DataFrame, void_rounds: pl.DataFrame) -> pl.DataFrame:
    """``EXPECTED_COLUMNS``: each round the rules make a Free Hand, the round whose card(s) dealt in error began
    it, and that round's clause. ``ctx`` holds the table rounds (table_id, round_no, shoe_id, device_shoe_id)."""
    causes = (
        irregularities.filter((pl.col("kind") == "drawing_rule_violation") & pl.col("clause").is_in(list(CAUSES)))
        .sort("idx")
        .group_by(["table_id", "round_no"], maintain_order=True)
        .agg(pl.col("clause").first().alias("free_hand_cause"))
        .join(void_rounds, on=["table_id", "round_no"], how="anti")
    )
    if causes.height == 0:
        return pl.DataFrame(schema=EXPECTED_COLUMNS)
    shoe = pl.coalesce("device_shoe_id", "shoe_id")
    rounds = ctx.select("table_id", "round_no", shoe.alias("_shoe"))
    error = causes.join(rounds, on=["table_id", "round_no"], how="inner").select(
        "table_id", pl.col("round_no").alias("free_hand_after"), (pl.col("round_no") + 1).alias("round_no"),
        "free_hand_cause", pl.col("_shoe").alias("_error_shoe"),
    )
    nxt = error.join(rounds, on=["table_id", "round_no"], how="inner").filter(
        pl.col("_shoe").is_not_null() & (pl.col("_shoe") == pl.col("_error_shoe"))
    )
    return nxt.select(list(EXPECTED_COLUMNS)).cast(EXPECTED_COLUMNS)


def _carried(engine_ready: pl.DataFrame, expected: pl.DataFrame, rulesets: dict[str, RuleSet]) -> pl.DataFrame:
    """Engine context rows of the Free Hands the table recorded as such, each with the card(s) dealt in error in
    the round before it put in front of its own cards (TBAC-7.8)."""
    from rulebook.baccarat.engine import cards_dealt_in_error
    from rulebook.round import DeviceCard

    todo = engine_ready.join(expected, on=["table_id", "round_no"], how="inner").filter(pl.col("status") == "free_hand")
    if todo.height == 0:
        return todo.drop(list(set(EXPECTED_COLUMNS) - {"table_id", "round_no"}))
    before = engine_ready.select(
        "table_id", pl.col("round_no").alias("free_hand_after"), pl.col("codes").alias("_prev_codes"),
        pl.col("burns").alias("_prev_burns"), pl.col("ruleset_key").alias("_prev_key"), pl.col("game").alias("_prev_game"),
    )
    todo = todo.join(before, on=["table_id", "free_hand_after"], how="inner")
    codes, burns, dealt = [], [], []
    for r in todo.iter_rows(named=True):
        carry: tuple[int, ...] = ()
        if r["_prev_game"] == "baccarat":
            rs = rulesets[r["_prev_key"]]
            events = [DeviceCard(int(c), bool(b)) for c, b in zip(r["_prev_codes"] or (), r["_prev_burns"] or ())]
            carry = cards_dealt_in_error(events, rs.params.deal_order)
        codes.append(list(carry) + list(r["codes"] or ()))
        burns.append([False] * len(carry) + list(r["burns"] or ()))
        dealt.append(list(carry) + list(r["dealt"] or ()))
    return todo.with_columns(
        pl.Series("codes", codes, dtype=todo.schema["codes"]),
        pl.Series("burns", burns, dtype=todo.schema["burns"]),
        pl.Series("dealt", dealt, dtype=todo.schema["dealt"]),
    ).select(engine_ready.columns)


def _replace(old: pl.DataFrame, new: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    return pl.concat([old.join(keys, on=["table_id", "round_no"], how="anti"), new], how="vertical_relaxed")


def free_hand_pass(
    ctx_all: pl.DataFrame, engine_ready: pl.DataFrame, face: EngineOutput, wagers: pl.DataFrame, actions: pl.DataFrame,
    rulesets: dict[str, RuleSet], params: AuditParams,
) -> tuple[EngineOutput, pl.DataFrame]:
    """The engine's results with every recorded Free Hand re-settled on its carried cards, and the expected Free
    Hands (``EXPECTED_COLUMNS``). A Free Hand whose own cards hold a card dealt in error makes the next one: the
    pass repeats until no new Free Hand is carried (at most :data:`MAX_CHAIN` times)."""
    done: set[tuple[str, int]] = set()
    expected = pl.DataFrame(schema=EXPECTED_COLUMNS)
    for _ in range(MAX_CHAIN):
        void = face.rounds.filter(pl.col("engine_void")).select("table_id", "round_no")
        expected = expected_free_hands(ctx_all, face.irregularities, void)
        carried = _carried(engine_ready, expected, rulesets)
        carried = carried.filter(
            ~pl.struct("table_id", "round_no").map_elements(lambda k: (k["table_id"], k["round_no"]) in done, return_dtype=pl.Boolean)
        ) if carried.height else carried
        if carried.height == 0:
            break
        done.update(carried.select("table_id", "round_no").iter_rows())
        again = engine_pass(carried.with_columns(pl.col("ruleset_key").alias("ruleset_version")), wagers, actions,
                            "amount", rulesets, params, with_rounds=True)
        keys = carried.select("table_id", "round_no")
        face = EngineOutput(
            wagers=_replace(face.wagers, again.wagers, keys),
            rounds=_replace(face.rounds, again.rounds, keys),
            irregularities=_replace(face.irregularities, again.irregularities, keys),
        )
    return face, expected
