"""Derived tables: the statistical detectors' per-gaming-day summaries (schema 4; the Hold'em Bonus and blackjack
bets' since schema 5; mid-shoe entry's since schema 6; the baccarat hold's rows by entity number and a round's
all-bets row once since schema 7).

Written by the audit's one writer when a gaming day is audited (``pipelines.stats.summary_store``), read by
the rolling windows instead of every wager and card event of their days (``pipelines.stats.summaries``
says what each column is for). Every table is keyed by ``gaming_day``; a day's rows are replaced together
with its ``stat_days`` row, which records the summaries' format: a day summarised by another format is
summarised again from the evidence when a window needs it. Nothing here is evidence: a database upgraded
from schema 3 starts with these tables empty and fills them as windows read their days.
"""

from __future__ import annotations

# sums of money are HUGEINT (128 bits, read as polars Int128): a night's handle may pass 2**63 (pipelines.money)

_DAY = ("gaming_day", "DATE")
_TABLES = ("tables", "VARCHAR[]")

STAT_DAY_TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "stat_days": (_DAY, ("format", "BIGINT")),
    "stat_day_hold": (
        _DAY, ("grouping", "VARCHAR"), ("key", "VARCHAR"), ("currency", "VARCHAR"), ("level", "VARCHAR"),
        ("wagers", "BIGINT"), ("rounds", "BIGINT"), ("handle", "HUGEINT"), ("theo", "DOUBLE"), ("recorded", "HUGEINT"),
        ("first_day", "DATE"), ("last_day", "DATE"), _TABLES, ("ruleset", "VARCHAR"), ("first_round", "BIGINT"),
        ("last_round", "BIGINT"), ("m_mean", "DOUBLE"), ("m_var", "DOUBLE"), ("m_k3", "DOUBLE"),
        ("eid", "BIGINT"),  # the entity's number in its day (schema 7): what its rows name it by
    ),
    # the rows of an entity's sum (schema 7): a single bet's draws (stake ``a``, count ``c``), and the all-bets rows of a
    # round that is not the same for its table, dealer and shoe (one split between dealers, shoes or deck counts)
    "stat_day_hold_rows": (_DAY, ("eid", "BIGINT"), ("a", "DOUBLE"), ("c", "DOUBLE"), ("xid", "BIGINT"), ("pid", "BIGINT")),
    # a round's all-bets row once (schema 7), naming its table's, dealer's and shoe's all-bets entities (null: none);
    # stake 1, ``c`` rounds of the same entities and vectors
    "stat_day_hold_rounds": (
        _DAY, ("table_eid", "BIGINT"), ("dealer_eid", "BIGINT"), ("shoe_eid", "BIGINT"), ("c", "BIGINT"), ("xid", "BIGINT"),
        ("pid", "BIGINT"),
    ),
    # the day's distinct outcome vectors of the rows: nets per unit of a bet, or a round's nets on all its bets,
    # and the outcomes' probabilities
    "stat_day_hold_nets": (_DAY, ("xid", "BIGINT"), ("x", "DOUBLE[]")),
    "stat_day_hold_probs": (_DAY, ("pid", "BIGINT"), ("p", "DOUBLE[]")),
    "stat_day_luck": (
        _DAY, ("player_id", "VARCHAR"), ("currency", "VARCHAR"), ("entity_bet", "VARCHAR"), ("wagers", "BIGINT"),
        ("rounds", "BIGINT"), ("wins", "BIGINT"), ("wins_expected", "DOUBLE"), ("theo", "DOUBLE"), ("recorded", "HUGEINT"),
        ("cards", "HUGEINT"), ("first_day", "DATE"), ("last_day", "DATE"), ("ruleset", "VARCHAR"), _TABLES,
    ),
    "stat_day_luck_parts": (
        _DAY, ("player_id", "VARCHAR"), ("currency", "VARCHAR"), ("entity_bet", "VARCHAR"), ("ruleset", "VARCHAR"),
        ("ruleset_version", "VARCHAR"), ("decks", "BIGINT"), ("bet", "VARCHAR"), ("grid", "BIGINT"), ("n", "BIGINT"),
        ("k", "BIGINT"),
    ),
    "stat_day_dealers": (
        _DAY, ("dealer_id", "VARCHAR"), ("rounds", "BIGINT"), ("first_day", "DATE"), ("last_day", "DATE"),
        ("errors", "BIGINT"),
    ),
    "stat_day_pairs": (
        _DAY, ("dealer_id", "VARCHAR"), ("player_id", "VARCHAR"), ("currency", "VARCHAR"), ("rounds", "BIGINT"),
        ("wagers", "BIGINT"), ("overpaid_wagers", "BIGINT"), ("overpaid_rounds", "BIGINT"), ("overpaid_amount", "HUGEINT"),
        ("underpaid_wagers", "BIGINT"), ("underpaid_amount", "HUGEINT"), ("wagered", "HUGEINT"), ("expected_net", "HUGEINT"),
        ("recorded_net", "HUGEINT"), ("first_day", "DATE"), ("last_day", "DATE"), _TABLES, ("game", "VARCHAR"),
        ("ruleset", "VARCHAR"),
    ),
    "stat_day_hands": (
        ("player_id", "VARCHAR"), ("currency", "VARCHAR"), ("table_id", "VARCHAR"), ("shoe_id", "VARCHAR"),
        ("round_no", "BIGINT"), _DAY, ("amount", "BIGINT"), ("true_count", "DOUBLE"), ("ko_rc", "BIGINT"),
        ("round_in_shoe", "BIGINT"), ("ruleset", "VARCHAR"), ("expected_net", "BIGINT"), ("recorded_net", "BIGINT"),
    ),
    # mid-shoe entry (``wonging.shoe_entries``, schema 6): per player and shoe his first round of the day, ranked in its shoe
    "stat_day_entries": (
        ("player_id", "VARCHAR"), ("currency", "VARCHAR"), ("table_id", "VARCHAR"), ("shoe_id", "VARCHAR"),
        ("entered", "BIGINT"), ("round_no", "BIGINT"), _DAY, ("ruleset", "VARCHAR"), ("rank", "DOUBLE"), ("m", "BIGINT"),
        ("true_count", "DOUBLE"), ("mu", "DOUBLE"),
    ),
    "stat_day_side": (
        _DAY, ("family", "VARCHAR"), ("player_id", "VARCHAR"), ("currency", "VARCHAR"), ("n_all", "BIGINT"),
        ("n_bet", "BIGINT"), ("sum_all", "DOUBLE"), ("m2_all", "DOUBLE"), ("sum_bet", "DOUBLE"), ("first_day", "DATE"),
        ("last_day", "DATE"), ("ruleset", "VARCHAR"), ("expected_net", "HUGEINT"), ("recorded_net", "HUGEINT"), _TABLES,
    ),
    # the Hold'em Bonus and blackjack bets (``hold_games``, ``luck_games``): their entities' sums, their independent
    # draws per distribution, stake and spread with a count; per player and bet the luck sums and parts, the jackpot hits
    "stat_day_games_hold": (
        _DAY, ("grouping", "VARCHAR"), ("key", "VARCHAR"), ("currency", "VARCHAR"), ("game", "VARCHAR"), ("level", "VARCHAR"),
        ("wagers", "BIGINT"), ("rounds", "BIGINT"), ("handle", "HUGEINT"), ("theo", "DOUBLE"), ("recorded", "HUGEINT"),
        ("one_sided", "BOOLEAN"), ("first_day", "DATE"), ("last_day", "DATE"), _TABLES, ("ruleset", "VARCHAR"),
        ("first_round", "BIGINT"), ("last_round", "BIGINT"),
    ),
    "stat_day_games_draws": (
        _DAY, ("grouping", "VARCHAR"), ("key", "VARCHAR"), ("currency", "VARCHAR"), ("game", "VARCHAR"), ("ruleset", "VARCHAR"),
        ("ruleset_version", "VARCHAR"), ("decks", "BIGINT"), ("bet", "VARCHAR"), ("amount", "DOUBLE"), ("scale", "DOUBLE"),
        ("c", "BIGINT"),
    ),
    "stat_day_games_luck": (
        _DAY, ("player_id", "VARCHAR"), ("currency", "VARCHAR"), ("game", "VARCHAR"), ("bet", "VARCHAR"), ("wagers", "BIGINT"),
        ("rounds", "BIGINT"), ("wins", "BIGINT"), ("wins_expected", "DOUBLE"), ("theo", "DOUBLE"), ("recorded", "HUGEINT"),
        ("cards", "HUGEINT"), ("first_day", "DATE"), ("last_day", "DATE"), ("ruleset", "VARCHAR"), _TABLES,
    ),
    "stat_day_games_luck_parts": (
        _DAY, ("player_id", "VARCHAR"), ("currency", "VARCHAR"), ("game", "VARCHAR"), ("bet", "VARCHAR"), ("ruleset", "VARCHAR"),
        ("ruleset_version", "VARCHAR"), ("decks", "BIGINT"), ("grid", "BIGINT"), ("n", "BIGINT"), ("k", "BIGINT"),
        ("score", "BIGINT"),
    ),
    "stat_day_games_jackpot": (
        _DAY, ("player_id", "VARCHAR"), ("currency", "VARCHAR"), ("ruleset", "VARCHAR"), ("ruleset_version", "VARCHAR"),
        ("wagers", "BIGINT"), ("hits", "BIGINT"), ("p_hit", "DOUBLE"), ("how", "VARCHAR"), ("recorded", "HUGEINT"),
        ("first_day", "DATE"), ("last_day", "DATE"), _TABLES, ("rounds", "BIGINT"),
    ),
}

_FRAME_OF = {"stat_day_hold": "hold_entities", "stat_day_hold_rows": "hold_rows", "stat_day_hold_rounds": "hold_rounds",
             "stat_day_hold_nets": "hold_nets",
             "stat_day_hold_probs": "hold_probs", "stat_day_luck": "luck_entities",
             "stat_day_luck_parts": "luck_parts", "stat_day_dealers": "dealers", "stat_day_pairs": "pairs",
             "stat_day_hands": "hands", "stat_day_entries": "entries", "stat_day_side": "side", "stat_day_games_hold": "games_hold",
             "stat_day_games_draws": "games_draws", "stat_day_games_luck": "games_lines",
             "stat_day_games_luck_parts": "games_parts", "stat_day_games_jackpot": "games_jackpot"}


#: the grouping whose all-bets entity each column of ``stat_day_hold_rounds`` names
ROUND_EIDS = {"table_id": "table_eid", "dealer_id": "dealer_eid", "shoe_id": "shoe_eid"}


def summary_frame_of(table: str) -> str | None:
    """The ``DaySummaries`` frame a table holds (None for ``stat_days``)."""
    return _FRAME_OF.get(table)


def table_of(frame: str) -> str:
    return next(t for t, f in _FRAME_OF.items() if f == frame)


def derived_ddl() -> list[str]:
    """CREATE TABLE IF NOT EXISTS of every derived table (run by ``schemas.ddl.all_ddl``)."""
    out = []
    for table, cols in STAT_DAY_TABLES.items():
        body = ",\n    ".join(f"{c} {t}" for c, t in cols)
        key = ",\n    PRIMARY KEY (gaming_day)" if table == "stat_days" else ""
        out.append(f"CREATE TABLE IF NOT EXISTS {table} (\n    {body}{key}\n);")
    return out


def derived_upgrade_sql(version: int) -> list[str]:
    """What turns the derived tables of schema ``version`` into schema 7's, before ``derived_ddl`` runs.

    Schema 7 stores the baccarat hold's rows by the entity's number in its day (``stat_day_hold.eid``) and a round's
    all-bets row once for its table, dealer and shoe (``stat_day_hold_rounds``); schema 6 wrote them once per grouping,
    each naming its entity by its grouping, key, currency and level. A schema-6 file keeps its summaries: its entities
    are numbered in their day (by grouping, key, level and currency) and its rows name them by that number, every row
    kept as it was (its all-bets rows stay one per grouping, in ``stat_day_hold_rows``: which of them are one round is not
    stored), so a window reads the same rows; its days are marked with the summaries' new format (4). The days of an
    earlier format are summarised again anyway (``stat_days.format``): their rows are dropped. Nothing here is evidence."""
    if version < 4 or version >= 7:
        return []
    cols = ", ".join(c for c, _ in STAT_DAY_TABLES["stat_day_hold_rows"])
    create = [s for s in derived_ddl() if " stat_day_hold_rows (" in s or " stat_day_hold_rounds (" in s]
    out = ["ALTER TABLE stat_day_hold ADD COLUMN IF NOT EXISTS eid BIGINT;",
           """UPDATE stat_day_hold SET eid = n.eid FROM (SELECT rowid AS at, row_number() OVER (PARTITION BY gaming_day
                  ORDER BY grouping, key, level, currency) - 1 AS eid FROM stat_day_hold) n WHERE stat_day_hold.rowid = n.at;"""]
    if version < 6:  # summarised in formats 1 and 2, which are summarised again: nothing to keep
        return out + ["DROP TABLE IF EXISTS stat_day_hold_rows;", *create]
    return out + [
        "ALTER TABLE stat_day_hold_rows RENAME TO stat_day_hold_rows_v6;",
        *create,
        f"""INSERT INTO stat_day_hold_rows ({cols})
            SELECT r.gaming_day, h.eid, r.a, r.c, r.xid, r.pid FROM stat_day_hold_rows_v6 r
            JOIN stat_day_hold h ON h.gaming_day = r.gaming_day AND h.grouping = r.grouping AND h.key IS NOT DISTINCT FROM r.key
                 AND h.currency IS NOT DISTINCT FROM r.currency AND h.level = r.level
            WHERE r.gaming_day IN (SELECT gaming_day FROM stat_days WHERE format = 3)
            ORDER BY r.rowid;""",
        "DROP TABLE stat_day_hold_rows_v6;",
        "UPDATE stat_days SET format = 4 WHERE format = 3;",
    ]
