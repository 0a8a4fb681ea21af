"""Hold against theory: what the house won per table and game, what the rules say it should win, and the 95 % band.

- **handle**: the amounts wagered (integers, smallest unit); **house win**: minus the players' recorded net.
- **theory**: each wager's amount times its bet's house edge, from :func:`rulebook.odds.house_edges` under the
  rule-set version the round was settled with (exact for baccarat, the blackjack pair and insurance and the
  Hold'em Bonus; simulated under the stated strategy for the blackjack and Hold'em main games). The Hold'em
  edge of ``ante`` is that of Ante, Flop, Turn and River together per unit of Ante, so the Flop, Turn and
  River add handle but no theory of their own. A bet with no figure adds handle to ``handle_unrated``.
- **band**: theory +- 1.96 standard deviations of the house win, the variance being the sum over wagers of
  ``amount**2 * (E[X**2] - edge**2)``, X the net of one unit. For the simulated main games ``E[X**2]`` is the
  simulation's own (its 95 % interval is 1.96 standard deviations over the square root of its rounds:
  doubles, splits, the Flop, Turn and River included); for the exact bets it comes from the bet's win and
  push probabilities and its edge as if it paid one price (:func:`second_moment`): exact for one-price
  bets, a slight lower bound for the Tiger and the no-commission Banker (two prices: about 6 % under for
  the Tiger), so the band is a little narrow there and a table outside it is "worth a look", not proof.
  The hold detector (issue 11) computes the variance from each bet's exact payout distribution; its per-table frame feeds :func:`pipelines.report.figures.hold_funnel`
  directly (the same columns as :func:`hold_by_table`).

- **outside**: the house win beyond the band. At the games whose theory assumes the players' decisions
  (:data:`DECISION_GAMES`: blackjack, Hold'em Bonus) only below it: a player who plays worse than the stated
  strategy (stands on 12 against a 6, folds a pair) gives the house more, which is no anomaly; the hold detector
  tests those games one-sided for the same reason. A table above its band there reads "above: players'
  decisions" (:func:`above_by_decisions`), not "outside the band": a blackjack table holding 16 % against a theory of
  0.3 % had been a red line of the night's summary, every night its players played as players do.

Theory and band are statistics (expectations), not amounts anyone is paid: they are floats, shown rounded.
"""

from __future__ import annotations

import hashlib
import json
import math
from functools import cache
from importlib import resources
from pathlib import Path

import polars as pl

Z95 = 1.959963984540054
# rounds of the simulated games' figures (the rules engine's default): their ci95 gives the per-unit spread
SIMULATED_ROUNDS = 2_000_000
# the Hold'em main game under the engine's "basic" rule strategy, simulated (its spread gives the variance of
# Ante, Flop, Turn and River together); the exact "optimal" count takes CPU-minutes and states no variance
HOLDEM_STRATEGY = "basic"
# bets whose edge is part of another bet's figure (rulebook.holdem_bonus.odds: "Ante, Flop, Turn and River
# together, per unit of Ante")
FOLDED_INTO = {("holdem_bonus", "flop"): "ante", ("holdem_bonus", "turn"): "ante", ("holdem_bonus", "river"): "ante"}

# the per-bet aggregate the report's SQL returns (pipelines.report.gather.bet_aggregates)
BET_AGGREGATE_SCHEMA: dict[str, pl.DataType] = {
    "game": pl.String, "ruleset": pl.String, "ruleset_version": pl.String, "table_id": pl.String,
    "currency": pl.String, "bet": pl.String, "wagers": pl.Int64, "handle": pl.Int128,
    "handle_sq": pl.Float64,  # sum of amount**2 (a statistic: amounts squared overflow int64)
    "house_win": pl.Int128,  # sums of money: Int128 (pipelines.money)
}

#: games whose theory assumes the players' decisions (the stated strategy): their hold is judged one-sided
DECISION_GAMES = ("blackjack", "holdem_bonus")

# hold_by_table / hold_by_game: also the columns a funnel frame from the hold detector must have
HOLD_COLUMNS = ("game", "table_id", "currency", "wagers", "handle", "house_win", "theo_win", "sd",
                "hold_pct", "theo_pct", "band_lo_pct", "band_hi_pct", "outside")


def second_moment(house_edge: float, win: float | None, push: float | None) -> float | None:
    """E[X**2] of one unit's net X for a bet that pays one price k on a win, 0 on a push, -1 on a loss.

    With w, p, l = 1 - w - p: E[X] = k w - l = -edge gives k = (l - edge) / w, and E[X**2] = k**2 w + l.
    """
    if win is None or win <= 0:
        return None
    p = push or 0.0
    lose = max(0.0, 1.0 - win - p)
    k = (lose - house_edge) / win
    return k * k * win + lose


STORED = "theory_figures.json"


def fingerprint(rs) -> str:
    """What the stored figures of a rule-set version were computed from: its whole content and the rounds."""
    return hashlib.sha256(f"{rs!r}|{SIMULATED_ROUNDS}|{HOLDEM_STRATEGY}".encode("utf-8")).hexdigest()


@cache
def _stored() -> dict:
    try:
        text = (resources.files("pipelines.report") / STORED).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    return json.loads(text)


@cache
def bet_figures(ruleset: str, version: str) -> dict[str, tuple[float, float | None]]:
    """bet -> (house edge, E[X**2]) of a rule-set version; {} when the catalogue does not know it.

    The figures of the shipped rule sets are stored (``theory_figures.json``, written by ``python -m
    pipelines.report.theory``; a test recomputes them): computing them takes about 6 CPU-seconds, the
    simulated main games most of it. A version whose content differs from the stored fingerprint (a rule
    set of the user's own) is computed here, once per process.
    """
    from rulebook.catalogue import load_catalogue

    try:
        found = [rs for rs in load_catalogue().versions(ruleset) if rs.version == version]
    except LookupError:
        return {}
    if not found:
        return {}
    entry = _stored().get(ruleset, {}).get(version)
    if entry and entry.get("fingerprint") == fingerprint(found[0]):
        return {bet: (v[0], v[1]) for bet, v in entry["bets"].items()}
    return compute_figures(found[0])


def compute_figures(rs) -> dict[str, tuple[float, float | None]]:
    """bet -> (house edge, E[X**2]) of a rule set, from :func:`rulebook.odds.house_edges`."""
    from rulebook.odds import house_edges

    options = {"strategy": HOLDEM_STRATEGY} if rs.game == "holdem_bonus" else {}
    report = house_edges(rs, rounds=SIMULATED_ROUNDS, **options)
    out = {}
    for bet, b in report.bets.items():
        if b.method == "simulation" and b.ci95:
            # the simulation's own spread: ci95 = edge -+ 1.96 sd / sqrt(rounds), so E[X**2] = sd**2 + edge**2
            sd = (b.ci95[1] - b.ci95[0]) / (2 * 1.96) * math.sqrt(SIMULATED_ROUNDS)
            out[bet] = (b.house_edge, sd * sd + b.house_edge ** 2)
        else:
            out[bet] = (b.house_edge, second_moment(b.house_edge, b.win_probability, b.push_probability))
    return out


def figures_frame(bets: pl.DataFrame) -> pl.DataFrame:
    """One row per (game, ruleset, ruleset_version, bet) present: edge and second moment (nulls: no figure)."""
    rows = []
    for game, ruleset, version, bet in bets.select("game", "ruleset", "ruleset_version", "bet").unique().sort(
            ["game", "ruleset", "ruleset_version", "bet"], nulls_last=True).iter_rows():
        figs = bet_figures(ruleset, version) if ruleset and version else {}
        folded = FOLDED_INTO.get((game, bet))
        if folded and folded in figs:
            edge, m2 = 0.0, 0.0
        elif bet in figs:
            edge, m2 = figs[bet]
        else:
            edge, m2 = None, None
        rows.append({"game": game, "ruleset": ruleset, "ruleset_version": version, "bet": bet, "edge": edge,
                     "m2": m2})
    return pl.DataFrame(rows, schema={"game": pl.String, "ruleset": pl.String, "ruleset_version": pl.String,
                                      "bet": pl.String, "edge": pl.Float64, "m2": pl.Float64})


def _rated(bets: pl.DataFrame) -> pl.DataFrame:
    bets = bets.with_columns(pl.col("handle").cast(pl.Int128), pl.col("house_win").cast(pl.Int128))
    figs = figures_frame(bets)
    return bets.join(figs, on=["game", "ruleset", "ruleset_version", "bet"], how="left", nulls_equal=True).with_columns(
        pl.when(pl.col("edge").is_not_null()).then(pl.col("handle").cast(pl.Float64) * pl.col("edge")).alias("theo_win"),
        pl.when(pl.col("m2").is_not_null()).then(pl.col("handle_sq") * (pl.col("m2") - pl.col("edge") ** 2)).alias("var"),
        pl.when(pl.col("edge").is_null()).then(pl.col("handle")).otherwise(0).cast(pl.Int128).alias("handle_unrated"),
    )


def _hold(rated: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    agg = rated.group_by(by).agg(
        pl.col("wagers").sum(), pl.col("handle").sum(), pl.col("house_win").sum(),
        pl.col("theo_win").sum(), pl.col("var").sum(), pl.col("handle_unrated").sum(),
    )
    rated_handle = (pl.col("handle") - pl.col("handle_unrated")).cast(pl.Float64)
    sd = pl.col("var").clip(lower_bound=0).sqrt()
    out = agg.with_columns(sd.alias("sd")).with_columns(
        (pl.col("house_win").cast(pl.Float64) / pl.col("handle").cast(pl.Float64)).alias("hold_pct"),
        (pl.col("theo_win") / rated_handle).alias("theo_pct"),
        ((pl.col("theo_win") - Z95 * pl.col("sd")) / rated_handle).alias("band_lo_pct"),
        ((pl.col("theo_win") + Z95 * pl.col("sd")) / rated_handle).alias("band_hi_pct"),
    ).with_columns(
        # only judged when every wager has a figure (else the hold and theory are not over the same handle)
        # at the decision games only below the band (the module docstring)
        pl.when((pl.col("handle_unrated") == 0) & (pl.col("sd") > 0))
        .then(pl.when(pl.col("game").is_in(DECISION_GAMES))
              .then(pl.col("house_win").cast(pl.Float64) - pl.col("theo_win") < -Z95 * pl.col("sd"))
              .otherwise((pl.col("house_win").cast(pl.Float64) - pl.col("theo_win")).abs() > Z95 * pl.col("sd")))
        .otherwise(None).alias("outside"),
    )
    for c in ("hold_pct", "theo_pct", "band_lo_pct", "band_hi_pct"):
        out = out.with_columns(pl.when(pl.col(c).is_finite()).then(pl.col(c)).otherwise(None).alias(c))
    return out.sort(by, nulls_last=True)


def hold_by_table(bets: pl.DataFrame) -> pl.DataFrame:
    """Per game, table and currency: wagers, handle, house win, theory, sd, hold %, theory % and the 95 % band."""
    if bets.height == 0:
        return pl.DataFrame(schema={**{c: pl.String for c in ("game", "table_id", "currency")},
                                    "wagers": pl.Int64, "handle": pl.Int128, "house_win": pl.Int128,
                                    "theo_win": pl.Float64, "var": pl.Float64, "handle_unrated": pl.Int128,
                                    "sd": pl.Float64, "hold_pct": pl.Float64, "theo_pct": pl.Float64,
                                    "band_lo_pct": pl.Float64, "band_hi_pct": pl.Float64, "outside": pl.Boolean})
    return _hold(_rated(bets), ["game", "table_id", "currency"])


def hold_by_game(bets: pl.DataFrame) -> pl.DataFrame:
    """Per game and currency (never across currencies): the same columns as :func:`hold_by_table`, table_id null."""
    table = hold_by_table(bets)
    if table.height == 0:
        return table
    return _hold(_rated(bets).with_columns(pl.lit(None, pl.String).alias("table_id")), ["game", "table_id", "currency"])


def outside_by_chance(hold: pl.DataFrame) -> tuple[int, float, int]:
    """Of the judged rows of ``hold`` (``outside`` not null): how many, how many chance alone leaves outside their
    95 % band on average (1 in 20 two-sided, 1 in 40 at the decision games, judged below only), and the count
    chance exceeds in fewer than 1 night in 20 (a Poisson bound on a sum of rare events: the 95th percentile of a
    Poisson of that mean). A night of 24 tables has one outside by chance most nights: the summary says so, marks the
    line when any table is outside, and writes it in red only past that count."""
    if hold.height == 0 or "outside" not in hold.columns:
        return 0, 0.0, 0
    games = hold.filter(pl.col("outside").is_not_null())["game"].to_list()
    mean = sum(0.025 if g in DECISION_GAMES else 0.05 for g in games)
    k, term = 0, math.exp(-mean)
    total = term
    while total < 0.95:
        k += 1
        term *= mean / k
        total += term
    return len(games), mean, k


def above_by_decisions(row: dict) -> bool:
    """A judged row of a decision game whose hold is above its band: the players' decisions, no anomaly."""
    return (row.get("outside") is False and row.get("game") in DECISION_GAMES and row.get("hold_pct") is not None
            and row.get("band_hi_pct") is not None and row["hold_pct"] > row["band_hi_pct"])


def band_halfwidth_pct(sd: float, handle: int) -> float:
    """The 95 % band's half width as a fraction of handle (for a reader who wants the number)."""
    return Z95 * sd / handle if handle else math.nan


def write_stored(path: Path | None = None) -> Path:
    """Compute every shipped rule-set version's figures and store them (``python -m pipelines.report.theory``)."""
    from rulebook.catalogue import load_catalogue

    data: dict = {}
    for rs in sorted(load_catalogue().rulesets, key=lambda r: (r.name, r.version)):
        figs = compute_figures(rs)
        data.setdefault(rs.name, {})[rs.version] = {
            "fingerprint": fingerprint(rs), "bets": {bet: [e, m2] for bet, (e, m2) in sorted(figs.items())}}
    path = path or Path(__file__).with_name(STORED)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    print(f"wrote {write_stored()}")
