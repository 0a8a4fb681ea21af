"""One pass of the rules engine over a partition's rounds: what each wager nets by its cards and decisions.

Baccarat, most of the floor, goes through ``rulebook.baccarat.vector`` (numpy over all rounds of a
rule-set version at once), blackjack through ``rulebook.blackjack.vector`` (which hands the rounds it
does not model back to the scalar engine); every other game, and any round a caller wants with a
hand-made engine, through the scalar ``settle_round`` one round at a time. Both yield the same two
frames: per wager (net, pay clause, a sentence, or why it cannot be settled) and per round (void,
outcome in the ``recorded_result`` vocabulary, irregularities with their finding kind and clause).

This module never decides a rule: it only moves rounds between frames and the engine.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import numpy as np
import polars as pl

from pipelines.audit.frames import IRREGULARITIES_SCHEMA, ROUND_RESULTS_SCHEMA, WAGER_RESULTS_SCHEMA, conform, empty
from pipelines.audit.params import AuditParams
from rulebook.cards import NO_CARD
from rulebook.round import Action, DeviceCard, Irregularity, Limits, RoundInput, RoundResult, Wager
from rulebook.ruleset import RuleSet
from rulebook.settlement import RuleViolation

# what the engine needs of a round (the context frame built by settle.round_context)
CONTEXT_COLUMNS: tuple[str, ...] = (
    "table_id", "round_no", "game", "ruleset", "ruleset_version", "gaming_day", "deal_mode", "jackpot_meter",
    "currency", "limit_min", "limit_max", "limit_differential", "limit_side_min", "limit_side_max",
    "codes", "burns", "dealt", "foreign_burn", "decks",
)


@dataclass(frozen=True)
class EngineOutput:
    wagers: pl.DataFrame  # WAGER_RESULTS_SCHEMA
    rounds: pl.DataFrame  # ROUND_RESULTS_SCHEMA (empty when the pass did not ask for rounds)
    irregularities: pl.DataFrame  # IRREGULARITIES_SCHEMA (empty when the pass did not ask for rounds)


def engine_pass(
    ctx: pl.DataFrame,
    wagers: pl.DataFrame,
    actions: pl.DataFrame,
    amount_col: str,
    rulesets: dict[str, RuleSet],
    params: AuditParams,
    with_rounds: bool = True,
) -> EngineOutput:
    """Settle ``wagers`` (at ``amount_col``) of the rounds in ``ctx``; ``rulesets`` maps a version key to its RuleSet.

    ``ctx`` holds one row per round the engine can see (a table record with cards and a rule set in
    force); ``ruleset_version`` there is the key into ``rulesets``.
    """
    wager_parts: list[pl.DataFrame] = []
    round_parts: list[pl.DataFrame] = []
    irr_parts: list[pl.DataFrame] = []
    holdem: list[pl.DataFrame] = []
    holdem_columns = params.vectorised and params.engine is None  # Hold'em through pipelines.audit.holdem_pass
    if ctx.height and holdem_columns and all(
        rulesets[k].game == "holdem_bonus" for k in ctx["ruleset_version"].unique().to_list()
    ):
        holdem, ctx = [ctx], ctx.clear()  # a Hold'em group: no split by version and concatenation of its wide context
    if ctx.height:
        # one version (most groups): the context whole, not split by a group_by that copies every column
        versions = ctx["ruleset_version"].unique(maintain_order=True)
        groups = [((versions[0],), ctx)] if len(versions) == 1 else ctx.group_by(["ruleset_version"], maintain_order=True)
        for (key,), group in groups:
            rs = rulesets[key]
            if rs.game == "holdem_bonus" and holdem_columns:
                holdem.append(group)  # all Hold'em versions in one pass, after this loop
                continue
            keys = group.select("table_id", "round_no")
            if rs.game == "blackjack" and params.vectorised and params.engine is None:
                # it joins the wagers and actions to its rounds itself
                out = _blackjack_vector(group, wagers, actions, amount_col, rs, params, with_rounds)
                wager_parts.append(out.wagers)
                round_parts.append(out.rounds)
                irr_parts.append(out.irregularities)
                continue
            w = wagers.join(keys, on=["table_id", "round_no"], how="semi")
            if rs.game == "baccarat" and params.vectorised and params.engine is None:
                out = _baccarat_vector(group, w, amount_col, rs, with_rounds)
            else:
                a = actions.join(keys, on=["table_id", "round_no"], how="semi")
                out = _scalar(group, w, a, amount_col, rs, params, with_rounds)
            wager_parts.append(out.wagers)
            round_parts.append(out.rounds)
            irr_parts.append(out.irregularities)
    if holdem:
        out = _holdem_vector(pl.concat(holdem), wagers, actions, amount_col, rulesets, params, with_rounds)
        wager_parts.append(out.wagers)
        round_parts.append(out.rounds)
        irr_parts.append(out.irregularities)
    wagers_out = pl.concat(wager_parts) if wager_parts else empty(WAGER_RESULTS_SCHEMA)
    rounds_out = pl.concat(round_parts) if round_parts else empty(ROUND_RESULTS_SCHEMA)
    irr_out = pl.concat(irr_parts) if irr_parts else empty(IRREGULARITIES_SCHEMA)
    return EngineOutput(wagers_out, rounds_out, irr_out)


# --------------------------------------------------------------------------------------------
# the scalar engine, one round at a time


def round_input(row: dict, wagers: list[dict], actions: list[dict], amount_col: str, rs: RuleSet) -> RoundInput:
    """The engine's view of one round, from the round's context row and its wager and action rows."""
    return RoundInput(
        ruleset=rs,
        cards=tuple(DeviceCard(int(c), bool(b)) for c, b in zip(row["codes"] or (), row["burns"] or ())),
        wagers=tuple(
            Wager(wager_id=w["wager_id"], seat=int(w["seat"]), bet=w["bet"], amount=int(w[amount_col]), player_id=w["player_id"],
                  hand=None if w.get("hand") is None else int(w["hand"]))
            for w in wagers
        ),
        actions=tuple(
            Action(
                seat=int(a["seat"]), hand=int(a["hand"]), action=a["action"],
                amount=None if a["amount"] is None else int(a["amount"]),
                wager_ids=None if a["wager_ids"] is None else tuple(a["wager_ids"]),
            )
            for a in actions
        ),
        deal_mode=row["deal_mode"],
        decks=None if row["decks"] is None else int(row["decks"]),
        jackpot_meter=None if row["jackpot_meter"] is None else int(row["jackpot_meter"]),
        currency=row["currency"],
        limits=Limits(row["limit_min"], row["limit_max"], row["limit_differential"], row["limit_side_min"], row["limit_side_max"]),
    )


_DEVICE_CARDS = {(c, b): DeviceCard(c, b) for c in range(-3, 52) for b in (False, True)}


def _scalar(
    ctx: pl.DataFrame, wagers: pl.DataFrame, actions: pl.DataFrame, amount_col: str, rs: RuleSet | dict[str, RuleSet],
    params: AuditParams, with_rounds: bool,
) -> EngineOutput:
    """Rounds through the scalar engine (or a game's batch of it). The RoundInputs are built from flat
    columns sliced per round (no per-row dictionaries): on a big night this costs less than the engine.
    They ask for no steps (``with_steps=False``): the audit never reads them, and writing them was a
    fifth of the Blackjack engine's time. ``rs`` is the rounds' rule set, or a map of one game's rule sets by
    ``ruleset_version`` (each round settled by its own)."""
    by_version = rs if isinstance(rs, dict) else None
    ctx = ctx.with_row_index("_ri")
    n = ctx.height
    keys = ctx.select("table_id", "round_no", "_ri")
    w = wagers.join(keys, on=["table_id", "round_no"], how="inner").sort(["_ri", "wager_order"])
    a = actions.join(keys, on=["table_id", "round_no"], how="inner").sort(["_ri", "action_order"])
    w_off = np.searchsorted(w["_ri"].to_numpy(), np.arange(n + 1))
    a_off = np.searchsorted(a["_ri"].to_numpy(), np.arange(n + 1))
    w_ids, w_seats, w_players = w["wager_id"].to_list(), w["seat"].to_list(), w["player_id"].to_list()
    hands = w["hand"].to_list() if "hand" in w.columns else [None] * w.height
    all_wagers = [
        Wager(wager_id=i, seat=int(st), bet=b, amount=int(am), player_id=pid, hand=None if h is None else int(h))
        for i, st, b, am, pid, h in zip(w_ids, w_seats, w["bet"].to_list(), w[amount_col].to_list(), w_players, hands)
    ]
    all_actions = [
        Action(seat=int(st), hand=int(h), action=act, amount=None if am is None else int(am),
               wager_ids=None if ids is None else tuple(ids))
        for st, h, act, am, ids in zip(a["seat"].to_list(), a["hand"].to_list(), a["action"].to_list(),
                                       a["amount"].to_list(), a["wager_ids"].to_list())
    ]
    cols = {c: ctx[c].to_list() for c in ("table_id", "round_no", "codes", "burns", "deal_mode", "decks", "jackpot_meter",
                                         "currency", "limit_min", "limit_max", "limit_differential", "limit_side_min",
                                         "limit_side_max", "ruleset_version")}
    limits_cache: dict[tuple, Limits] = {}
    inputs = []
    for i in range(n):
        lim_key = (cols["limit_min"][i], cols["limit_max"][i], cols["limit_differential"][i], cols["limit_side_min"][i],
                   cols["limit_side_max"][i])
        limits = limits_cache.get(lim_key) or limits_cache.setdefault(lim_key, Limits(*lim_key))
        decks, meter = cols["decks"][i], cols["jackpot_meter"][i]
        inputs.append(RoundInput(
            ruleset=rs if by_version is None else by_version[cols["ruleset_version"][i]],
            cards=tuple(_DEVICE_CARDS[(c, b)] for c, b in zip(cols["codes"][i] or (), cols["burns"][i] or ())),
            wagers=tuple(all_wagers[w_off[i]:w_off[i + 1]]),
            actions=tuple(all_actions[a_off[i]:a_off[i + 1]]),
            deal_mode=cols["deal_mode"][i],
            decks=None if decks is None else int(decks),
            jackpot_meter=None if meter is None else int(meter),
            currency=cols["currency"][i],
            limits=limits,
            with_steps=False,
        ))
    results = _settle_batch(inputs, rs if by_version is None else (inputs[0].ruleset if inputs else None), params)

    w_rows: dict[str, list] = {k: [] for k in WAGER_RESULTS_SCHEMA}
    r_rows: dict[str, list] = {k: [] for k in ROUND_RESULTS_SCHEMA}
    i_rows: dict[str, list] = {k: [] for k in IRREGULARITIES_SCHEMA}
    net, pay_clause, detail, unsettled = w_rows["net"], w_rows["pay_clause"], w_rows["detail"], w_rows["unsettled_reason"]
    for i, (result, error) in enumerate(results):
        settlements, why = result.settlements, result.unsettled
        for j in range(w_off[i], w_off[i + 1]):
            wid = w_ids[j]
            st = settlements.get(wid)
            if st is not None:
                net.append(st.net)
                pay_clause.append(st.clause)
                detail.append(st.detail)
                unsettled.append(None)
            else:
                net.append(None)
                pay_clause.append(None)
                detail.append(None)
                unsettled.append(why.get(wid, "the engine returned no settlement for this wager"))
        if with_rounds:
            row = {"table_id": cols["table_id"][i], "round_no": cols["round_no"][i], "ruleset_version": cols["ruleset_version"][i]}
            _append_round(r_rows, i_rows, row, result, error)
    w_rows["table_id"] = w["table_id"].to_list()
    w_rows["round_no"] = w["round_no"].to_list()
    w_rows["wager_id"] = w_ids
    wagers_out = pl.DataFrame(w_rows, schema=WAGER_RESULTS_SCHEMA)
    rounds_out = pl.DataFrame(r_rows, schema=ROUND_RESULTS_SCHEMA) if with_rounds else empty(ROUND_RESULTS_SCHEMA)
    return EngineOutput(wagers_out, rounds_out, pl.DataFrame(i_rows, schema=IRREGULARITIES_SCHEMA))


def _settle_one(ri: RoundInput, params: AuditParams) -> tuple[RoundResult, str | None]:
    """One round through the engine; a refusal becomes an illegal action, a defect an unsettled round."""
    try:
        return params.settle_round(ri), None
    except RuleViolation as exc:
        # the engine refused the decisions or cards: an illegal action the rules name
        return RoundResult(
            settlements={}, unsettled={w.wager_id: f"{exc.reason} ({exc.clause})" for w in ri.wagers}, steps=(),
            irregularities=(Irregularity("illegal_action", exc.clause, exc.reason),),
        ), None
    except Exception as exc:  # noqa: BLE001 - a defect in an engine must not stop the night's audit
        error = f"{type(exc).__name__}: {exc}"
        return RoundResult(
            settlements={}, unsettled={w.wager_id: f"the engine could not settle this round ({error})" for w in ri.wagers},
            steps=(),
        ), error


def _settle_batch(inputs: list[RoundInput], rs: RuleSet | None, params: AuditParams) -> list[tuple[RoundResult, str | None]]:
    """Every round of one game (``rs``: one of its rule sets): a game's batched engine where it has one, else one by one.

    ``rulebook.holdem_bonus.vector.settle_many`` settles the clean rounds over arrays and hands the
    others to the scalar engine itself; if the batch fails as a whole, the rounds go one by one so
    that one bad round cannot hide the night.
    """
    if rs is not None and rs.game == "holdem_bonus" and params.vectorised and params.engine is None and len(inputs) > 1:
        try:
            from rulebook.holdem_bonus.vector import settle_many

            return [(r, None) for r in settle_many(inputs)]
        except Exception:  # noqa: BLE001 - fall back to the reference engine round by round
            pass
    workers = params.workers or 0
    if params.engine is None and workers > 1 and len(inputs) >= params.pool_min_rounds:
        from pipelines.audit.pool import settle_in_processes

        return settle_in_processes(inputs, workers)
    return [_settle_one(ri, params) for ri in inputs]


def _append_irregularities(i_rows: dict[str, list], table_id: str, round_no: int, irregularities) -> None:
    for k, x in enumerate(irregularities):
        i_rows["table_id"].append(table_id)
        i_rows["round_no"].append(round_no)
        i_rows["idx"].append(k)
        i_rows["kind"].append(x.kind)
        i_rows["clause"].append(x.clause)
        i_rows["detail"].append(x.detail)
        i_rows["voids_round"].append(bool(x.voids_round))


def _append_round(r_rows: dict[str, list], i_rows: dict[str, list], row: dict, result: RoundResult, error: str | None) -> None:
    void_clause = next((i.clause for i in result.irregularities if i.voids_round), None)
    if result.void and void_clause is None:
        void_clause = next((s.clause for s in result.settlements.values()), None)
    outcome = result.outcome or {}
    r_rows["table_id"].append(row["table_id"])
    r_rows["round_no"].append(row["round_no"])
    r_rows["ruleset_version"].append(row["ruleset_version"])
    r_rows["engine_void"].append(bool(result.void))
    r_rows["void_clause"].append(void_clause)
    r_rows["outcome"].append(json.dumps(outcome, sort_keys=True, default=str) if outcome else None)
    r_rows["out_winner"].append(outcome.get("winner") if isinstance(outcome.get("winner"), str) else None)
    r_rows["out_player_points"].append(_int_or_none(outcome.get("player_points")))
    r_rows["out_banker_points"].append(_int_or_none(outcome.get("banker_points")))
    r_rows["engine_error"].append(error)
    _append_irregularities(i_rows, row["table_id"], row["round_no"], result.irregularities)


def _int_or_none(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


# --------------------------------------------------------------------------------------------
# Hold'em Bonus over columns


def _holdem_vector(
    ctx: pl.DataFrame, wagers: pl.DataFrame, actions: pl.DataFrame, amount_col: str, rulesets: dict[str, RuleSet],
    params: AuditParams, with_rounds: bool,
) -> EngineOutput:
    """Every Hold'em round of the pass: ``pipelines.audit.holdem_pass`` settles the clean ones column-wise (one
    search for all versions' wagers, no join on the text key per version); the rest go through ``_scalar``."""
    from pipelines.audit.holdem_pass import holdem_pass

    # the rounds the column pass hands over are those the arrays cannot settle: settle_many's arrays would only hand
    # them over again, so they go to the reference engine one by one (to the process pool for a great many)
    one_by_one = dataclasses.replace(params, vectorised=False)

    def rest(c: pl.DataFrame, w: pl.DataFrame, a: pl.DataFrame, rs: RuleSet | dict[str, RuleSet]) -> EngineOutput:
        return _scalar(c, w, a, amount_col, rs, one_by_one, with_rounds)

    return holdem_pass(ctx, wagers, actions, amount_col, rulesets, with_rounds, rest)


# --------------------------------------------------------------------------------------------
# baccarat over arrays


def _baccarat_vector(ctx: pl.DataFrame, wagers: pl.DataFrame, amount_col: str, rs: RuleSet, with_rounds: bool) -> EngineOutput:
    from rulebook.baccarat import clauses as BC
    from rulebook.baccarat import vector as V
    from rulebook.baccarat.engine import settle_round as scalar_settle

    p = rs.params
    ctx = ctx.with_row_index("_ri")
    # every card of the round goes in (not only the six the hands can use): a foreign card dealt after
    # the last card the rules need still voids the round (TBAC-7.1)
    n_cards = ctx["dealt"].list.len().to_numpy().astype(np.int16)
    width = max(6, int(n_cards.max()) if len(n_cards) else 6)
    pad = pl.lit(pl.Series([[NO_CARD] * width], dtype=pl.List(pl.Int16)))
    cards = ctx.select(
        pl.concat_list(pl.col("dealt").list.head(width), pad).list.head(width).list.to_array(width)
    ).to_series().to_numpy()
    cards = np.asarray(cards, dtype=np.int16).reshape(ctx.height, width)
    foreign_burn = ctx["foreign_burn"].fill_null(False).to_numpy()
    coups = V.resolve(cards, n_cards, foreign_burn=foreign_burn, deal_order=p.deal_order)

    w = wagers.join(ctx.select("table_id", "round_no", "_ri"), on=["table_id", "round_no"], how="inner")
    ri = w["_ri"].to_numpy().astype(np.int64)
    bets = w["bet"].replace_strict(V.BET_CODES, default=-1, return_dtype=pl.Int8).to_numpy()
    amounts = w[amount_col].to_numpy().astype(np.int64)
    net, reason = V.settle(coups, ri, bets, amounts, p)
    clauses = np.array(V.clause_table(p), dtype=object)
    effect, num, den = V.payout_table(p)
    texts = [V.REASON_TEXT[r] for r in V.Reason]
    unsettled = V.UNSETTLED_MASK[reason]
    wagers_out = pl.DataFrame({
        "table_id": w["table_id"],
        "round_no": w["round_no"],
        "wager_id": w["wager_id"],
        "net": pl.Series(net, dtype=pl.Int64),
        "_reason": pl.Series(reason.astype(np.int64)),
        "_bet": w["bet"],
    })
    lookup = pl.DataFrame({
        "_reason": list(range(len(texts))),
        "_text": texts,
        "_clause": list(clauses),
        "_effect": effect.astype(np.int64),
        "_odds": [f"{a}:{b}" for a, b in zip(num, den)],
        "_unsettled": V.UNSETTLED_MASK,
    }, schema_overrides={"_clause": pl.String})
    wagers_out = wagers_out.join(lookup, on="_reason", how="left").with_columns(
        pl.when(pl.col("_unsettled")).then(None).otherwise(pl.col("net")).alias("net"),
        pl.when(pl.col("_unsettled")).then(None).otherwise(pl.col("_clause")).alias("pay_clause"),
        pl.when(pl.col("_unsettled")).then(None)
        .when(pl.col("_effect") == 1).then(pl.format("{}: {} pays {} ({})", pl.col("_text"), pl.col("_bet"), pl.col("_odds"), pl.col("_clause")))
        .when(pl.col("_effect") == -1).then(pl.format("{}: {} loses ({})", pl.col("_text"), pl.col("_bet"), pl.col("_clause")))
        .otherwise(pl.format("{}: {} returned ({})", pl.col("_text"), pl.col("_bet"), pl.col("_clause")))
        .alias("detail"),
        pl.when(pl.col("_unsettled")).then(pl.format("{} ({})", pl.col("_text"), pl.col("_clause"))).alias("unsettled_reason"),
    )
    wagers_out = conform(wagers_out, WAGER_RESULTS_SCHEMA)
    del unsettled
    if not with_rounds:
        return EngineOutput(wagers_out, empty(ROUND_RESULTS_SCHEMA), empty(IRREGULARITIES_SCHEMA))

    winner = pl.Series(coups.winner.astype(np.int64)).replace_strict(
        {V.BANKER: "banker", V.PLAYER: "player", V.TIE: "tie"}, default=None, return_dtype=pl.String
    )
    known = coups.winner >= 0
    rounds = pl.DataFrame({
        "table_id": ctx["table_id"],
        "round_no": ctx["round_no"],
        "ruleset_version": ctx["ruleset_version"],
        "engine_void": pl.Series(coups.void, dtype=pl.Boolean),
        "out_winner": winner,
        "out_player_points": pl.Series(np.where(known, coups.player_points, 0), dtype=pl.Int16),
        "out_banker_points": pl.Series(np.where(known, coups.banker_points, 0), dtype=pl.Int16),
        "_known": pl.Series(known & ~coups.void),
        "_banker_cards": pl.Series(coups.banker_cards.astype(np.int64)),
    }).with_columns(
        pl.when(pl.col("_known")).then(pl.col("out_winner")).alias("out_winner"),
        pl.when(pl.col("_known")).then(pl.col("out_player_points")).alias("out_player_points"),
        pl.when(pl.col("_known")).then(pl.col("out_banker_points")).alias("out_banker_points"),
        pl.when(pl.col("engine_void")).then(pl.lit(BC.VOID_FOREIGN)).alias("void_clause"),
    ).with_columns(
        pl.when(pl.col("_known")).then(pl.concat_str([
            pl.lit('{"banker_cards": '), pl.col("_banker_cards").cast(pl.String),
            pl.lit(', "banker_points": '), pl.col("out_banker_points").cast(pl.String),
            pl.lit(', "player_points": '), pl.col("out_player_points").cast(pl.String),
            pl.lit(', "winner": "'), pl.col("out_winner"), pl.lit('"}'),
        ])).alias("outcome"),
    )
    # the irregular rounds are few: the scalar engine names them with its full sentences
    i_rows: dict[str, list] = {k: [] for k in IRREGULARITIES_SCHEMA}
    flagged = np.flatnonzero(coups.flags)
    if flagged.size:
        for row in ctx[flagged.tolist()].iter_rows(named=True):
            res = scalar_settle(round_input(row, [], [], amount_col, rs))
            _append_irregularities(i_rows, row["table_id"], row["round_no"], res.irregularities)
    rounds = rounds.with_columns(pl.lit(None, dtype=pl.String).alias("engine_error"))
    irregular = pl.DataFrame(i_rows, schema=IRREGULARITIES_SCHEMA)
    return EngineOutput(wagers_out, conform(rounds, ROUND_RESULTS_SCHEMA), irregular)


# --------------------------------------------------------------------------------------------
# blackjack over arrays, the rounds the arrays hand back through the scalar engine


def _blackjack_vector(ctx: pl.DataFrame, wagers: pl.DataFrame, actions: pl.DataFrame, amount_col: str, rs: RuleSet,
                      params: AuditParams, with_rounds: bool) -> EngineOutput:
    from rulebook.blackjack.vector import settle_frames

    done = settle_frames(ctx, wagers, actions, amount_col, rs.params, with_rounds=with_rounds)
    rest = _scalar(done.handed_ctx, done.handed_wagers, done.handed_actions, amount_col, rs, params, with_rounds)
    wagers_out = pl.concat([conform(done.wagers, WAGER_RESULTS_SCHEMA), rest.wagers])
    if not with_rounds:
        return EngineOutput(wagers_out, empty(ROUND_RESULTS_SCHEMA), empty(IRREGULARITIES_SCHEMA))
    rounds = done.rounds.with_columns(pl.lit(False).alias("engine_void"))
    return EngineOutput(wagers_out, pl.concat([conform(rounds, ROUND_RESULTS_SCHEMA), rest.rounds]), rest.irregularities)
