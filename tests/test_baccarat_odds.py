"""Exact Tiger Baccarat odds against published figures, the rule set's pay table, and a Monte Carlo run.

Published 8-deck figures (house edge, per wager, ties included): Banker 1.0579 %, Player 1.2351 %,
Tie 8:1 14.3596 %, Pairs 11:1 10.36 %, Tiger 12:1/20:1 16.68 %, Big Tiger 50:1 15.25 %, no-commission
Banker (1:2 on a win on 6) 1.4581 %; 6 decks: Banker 1.0558 %, Player 1.2374 %.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from rulebook.baccarat import vector as V
from rulebook.baccarat.engine import settle_round
from rulebook.baccarat.odds import result_weights
from rulebook.catalogue import builtin
from rulebook.money import Odds
from rulebook.odds import house_edges
from rulebook.payout import Payout
from rulebook.round import DeviceCard, RoundInput, Wager

COMMISSION = builtin().latest("hoiana-tiger-baccarat/commission")
NO_COMMISSION = builtin().latest("hoiana-tiger-baccarat/no-commission")


@pytest.fixture(scope="module")
def eight():
    return house_edges(COMMISSION, 8)


def pct(x: float, digits: int) -> float:
    return round(100 * x, digits)


def test_published_eight_deck_house_edges(eight):
    b = eight.bets
    assert pct(b["banker"].house_edge, 4) == 1.0579
    assert pct(b["player"].house_edge, 4) == 1.2351
    assert pct(b["tie"].house_edge, 4) == 14.3596
    assert pct(b["player_pair"].house_edge, 2) == 10.36
    assert pct(b["banker_pair"].house_edge, 2) == 10.36
    assert pct(b["tiger"].house_edge, 2) == 16.68
    assert pct(b["big_tiger"].house_edge, 2) == 15.25
    assert eight.decks == 8 and eight.ruleset == "hoiana-tiger-baccarat/commission"


def test_published_no_commission_banker_edge_TBAC_5_1_2():
    report = house_edges(NO_COMMISSION)  # the rule set's 8 decks
    assert report.decks == 8
    assert pct(report.bets["banker"].house_edge, 4) == 1.4581
    assert pct(report.bets["player"].house_edge, 4) == 1.2351


def test_published_six_deck_edges():
    report = house_edges(COMMISSION, 6, rounds=10_000, seed=1)  # simulation options are accepted and ignored
    assert pct(report.bets["banker"].house_edge, 4) == 1.0558
    assert pct(report.bets["player"].house_edge, 4) == 1.2374


def test_probabilities_are_consistent(eight):
    b = eight.bets
    tie = b["tie"].win_probability
    assert b["banker"].win_probability + b["player"].win_probability + tie == pytest.approx(1, abs=1e-12)
    assert b["banker"].push_probability == tie and b["player"].push_probability == tie
    assert b["tiger"].win_probability == pytest.approx(b["small_tiger"].win_probability + b["big_tiger"].win_probability, abs=1e-15)
    assert b["player_pair"].win_probability == pytest.approx(31 / 415, abs=1e-15)  # (4*8-1)/(52*8-1)
    assert b["tie"].push_probability is None


def test_enumeration_weights_are_exact_integers_summing_to_the_shoe():
    w = result_weights(1)
    assert w.total == 52 * 51 * 50 * 49 * 48 * 47 == sum(w.by_class)
    assert w.player_pair * 17 == w.total  # exactly 3/51 in one deck


def test_the_figure_follows_the_rule_set_pay_table(eight):
    """A tie paying 9:1 instead of 8:1 changes the edge to 1 - 10 P(tie): the pay table is read, not assumed."""
    pt = COMMISSION.params.pay_table
    nine = dataclasses.replace(COMMISSION, params=dataclasses.replace(
        COMMISSION.params, pay_table=dataclasses.replace(pt, tie=Payout(Odds(9, 1), "TBAC-5.1.3"))))
    report = house_edges(nine, 8)
    p_tie = eight.bets["tie"].win_probability
    assert report.bets["tie"].house_edge == pytest.approx(1 - 10 * p_tie, abs=1e-12)
    assert report.bets["banker"].house_edge == eight.bets["banker"].house_edge


def test_small_tiger_edge_from_its_own_pay_line(eight):
    p = eight.bets["small_tiger"].win_probability
    assert eight.bets["small_tiger"].house_edge == pytest.approx(1 - 23 * p, abs=1e-12)


def test_the_report_serialises_for_the_cli(eight):
    out = json.loads(json.dumps(eight.as_json()))
    assert set(out["bets"]) == set(V.BET_CODES)
    assert out["bets"]["tie"]["method"] == "exact"


def _shoes(rng, n_shoes, decks=8):
    for _ in range(n_shoes):
        shoe = rng.permutation(np.repeat(np.arange(52), decks)).astype(np.int8)
        burn = 1 + int(shoe[0] // 4)  # a burn of up to 10 cards, as dealers do (value of the first card)
        yield from V.deal_shoe(shoe, cut_at=len(shoe) - 16, start=burn)


def _agrees(nets: np.ndarray, edge: float, z: float) -> tuple[bool, str]:
    mean, se = nets.mean(), nets.std(ddof=1) / math.sqrt(len(nets))
    return abs(mean + edge) <= z * se, f"mean {mean:.5f} vs -edge {-edge:.5f} (se {se:.5f})"


def test_monte_carlo_with_the_scalar_engine_over_real_shoes_agrees_with_the_exact_edges(eight):
    """An independent check of the enumeration: real shuffled shoes, cut card, burn, the scalar engine.

    150 shoes (about 12,000 rounds), one wager of 1000 on every bet each round; every bet's mean net
    per unit must lie within 3.3 standard errors (99.9 %) of minus the exact house edge. Seeded.
    """
    rng = np.random.default_rng(20261125)
    wagers = tuple(Wager(bet, 1, bet, 1000) for bet in V.BET_CODES)
    nets = {bet: [] for bet in V.BET_CODES}
    for cards in _shoes(rng, 150):
        r = settle_round(RoundInput(ruleset=COMMISSION, cards=tuple(DeviceCard(int(c)) for c in cards), wagers=wagers))
        assert not r.irregularities and not r.unsettled
        for bet, s in r.settlements.items():
            nets[bet].append(s.net / 1000)
    assert len(nets["banker"]) > 11_000
    for bet, values in nets.items():
        ok, why = _agrees(np.array(values), eight.bets[bet].house_edge, 3.3)
        assert ok, f"{bet}: {why}"


@pytest.mark.slow
def test_monte_carlo_with_the_vector_engine_over_many_shoes_agrees_with_the_exact_edges(eight):
    """The same check at 12,000 shoes (about a million rounds) with the vectorised engine, both variants."""
    rng = np.random.default_rng(7)
    rounds = list(_shoes(rng, 12_000))
    arr = np.full((len(rounds), 6), -3, dtype=np.int8)
    for i, r in enumerate(rounds):
        arr[i, : len(r)] = r
    coups = V.resolve(arr)
    assert not coups.flags.any()
    ri = np.repeat(np.arange(len(rounds)), 8)
    bet = np.tile(np.arange(8), len(rounds))
    for ruleset, report in ((COMMISSION, eight), (NO_COMMISSION, house_edges(NO_COMMISSION, 8))):
        net, _ = V.settle(coups, ri, bet, np.full(len(ri), 1000), ruleset.params)
        for code, name in enumerate(V.BET_CODES):
            ok, why = _agrees(net[bet == code] / 1000, report.bets[name].house_edge, 4.0)
            assert ok, f"{ruleset.name} {name}: {why}"


def test_pitaudit_odds_prints_the_exact_figures_as_json():
    from typer.testing import CliRunner

    from pipelines.cli import app

    result = CliRunner().invoke(app, ["odds", "--ruleset", "hoiana-tiger-baccarat/no-commission", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["decks"] == 8
    assert round(100 * out["bets"]["banker"]["house_edge"], 4) == 1.4581
