"""Rule sets are data: strict loading, one version in force per date (issue 2, part 2)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from rulebook.catalogue import Catalogue, UnknownRuleSet, builtin, load_catalogue, parse_ruleset_text
from rulebook.money import Odds
from rulebook.strict import RuleSetError

SIX = {
    "hoiana-tiger-baccarat/commission",
    "hoiana-tiger-baccarat/no-commission",
    "hoiana-blackjack",
    "hoiana-holdem-bonus",
    "mbs-holdem-bonus-progressive",
    "guide-holdem-bonus-progressive",
}

BACCARAT_FILE = (
    Path(__file__).parents[1] / "rulebook/rulesets/hoiana-tiger-baccarat/commission/2024-10-01.toml"
).read_text()


def test_the_six_rule_sets_of_the_contract_are_shipped():
    assert set(builtin().names()) == SIX


def test_commission_banker_pays_0_95_to_1_per_TBAC_5_1_1():
    rs = builtin().in_force("hoiana-tiger-baccarat/commission", dt.date(2026, 11, 24))
    assert rs.params.pay_table.banker.odds == Odds(19, 20)
    assert rs.params.pay_table.banker.clause == "TBAC-5.1.1"
    assert rs.params.pay_table.big_tiger.odds == Odds(50, 1)


def test_guide_ante_needs_a_flush_and_hoiana_a_straight():
    cat = builtin()
    assert cat.latest("guide-holdem-bonus-progressive").params.ante_qualifier == "flush"
    assert cat.latest("hoiana-holdem-bonus").params.ante_qualifier == "straight"


def test_rule_sets_are_frozen():
    rs = builtin().latest("hoiana-blackjack")
    with pytest.raises(AttributeError):
        rs.params.decks = 2  # type: ignore[misc]


def test_unknown_key_is_rejected_with_its_name():
    text = BACCARAT_FILE.replace("decks = 8", "decks = 8\ndecsk = 6")
    with pytest.raises(RuleSetError, match="decsk"):
        parse_ruleset_text(text, "typo.toml")


def test_wrong_type_is_rejected():
    text = BACCARAT_FILE.replace("decks = 8", 'decks = "eight"')
    with pytest.raises(RuleSetError, match="decks"):
        parse_ruleset_text(text, "bad.toml")


def test_version_in_force_is_chosen_by_date(tmp_path):
    old = BACCARAT_FILE
    new = BACCARAT_FILE.replace('version = "01/01.10.2024"', 'version = "02/2027"').replace(
        "effective_from = 2024-10-01", "effective_from = 2027-01-01"
    ).replace('tie = { odds = "8:1"', 'tie = { odds = "9:1"')
    (tmp_path / "a.toml").write_text(old)
    (tmp_path / "b.toml").write_text(new)
    cat = load_catalogue(tmp_path)
    name = "hoiana-tiger-baccarat/commission"
    assert cat.in_force(name, dt.date(2026, 12, 31)).params.pay_table.tie.odds == Odds(8, 1)
    assert cat.in_force(name, dt.date(2027, 1, 1)).params.pay_table.tie.odds == Odds(9, 1)
    with pytest.raises(UnknownRuleSet, match="not in force"):
        cat.in_force(name, dt.date(2024, 9, 30))


def test_two_versions_on_one_date_are_refused():
    rs = parse_ruleset_text(BACCARAT_FILE, "a.toml")
    twin = parse_ruleset_text(BACCARAT_FILE.replace('version = "01/01.10.2024"', 'version = "x"'), "b.toml")
    with pytest.raises(RuleSetError, match="same date"):
        Catalogue((rs, twin))


def test_unknown_rule_set_names_the_known_ones():
    with pytest.raises(UnknownRuleSet, match="hoiana-blackjack"):
        builtin().latest("vegas-craps")
