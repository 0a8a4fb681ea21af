"""The engine's step texts on the evidence page give amounts in major units with the currency's decimals (ISO
4217), found by where the engine's sentences put amounts; round.json keeps the engine's integers."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings, strategies as st

from pipelines.step_money import money_spans, step_in_major_units

COMMISSION = "Wager W-7 (banker 39500): Player 1 v Banker 4: the Banker wins: paid 19:20 = 37525, net 37525"


def test_the_banker_commission_reads_in_dollars_and_in_dong():
    # TBAC-5.1.1: a winning Banker wager is paid 19:20; the ratio is not money, the stake and the payout are
    assert step_in_major_units(COMMISSION, "USD") == (
        "Wager W-7 (banker 395.00): Player 1 v Banker 4: the Banker wins: paid 19:20 = 375.25, net 375.25")
    assert step_in_major_units(COMMISSION, "VND") == (
        "Wager W-7 (banker 39,500): Player 1 v Banker 4: the Banker wins: paid 19:20 = 37,525, net 37,525")


def test_blackjack_settlements_and_decisions_read_in_major_units():
    usd = {
        "settle W1: +14250 (seat 3 hand 1 blackjack pays 3:2: +14250)":  # BJ-5.1
            "settle W1: +142.50 (seat 3 hand 1 blackjack pays 3:2: +142.50)",
        "settle W2: -5000 (seat 4 hand 1 surrendered: half of 10000 returned, 5000 lost)":  # BJ-4.12.1
            "settle W2: -50.00 (seat 4 hand 1 surrendered: half of 100.00 returned, 50.00 lost)",
        "wager W3: 5000 on seat 1 (controls the hand)": "wager W3: 50.00 on seat 1 (controls the hand)",
        "seat 7 hand 1 doubles (W4 5000): one card, 7s, 18": "seat 7 hand 1 doubles (W4 50.00): one card, 7s, 18",
        "settle W5: -9000 (seat 6 hand 1 20 loses the original wager to dealer blackjack: -9000, the double of 9000 returned)":
            "settle W5: -90.00 (seat 6 hand 1 20 loses the original wager to dealer blackjack: -90.00, the double of 90.00 returned)",
    }
    for engine, page in usd.items():
        assert step_in_major_units(engine, "USD") == page
    assert step_in_major_units("settle W1: +14250 (seat 3 hand 1 blackjack pays 3:2: +14250)", "VND") == (
        "settle W1: +14,250 (seat 3 hand 1 blackjack pays 3:2: +14,250)")


def test_points_totals_cards_and_ratios_are_not_money():
    for text in ("Player 2 cards 5 points: stands", "Player 7 v Banker 6: the Player wins", "seat 2 hand 1 is bust (26): its wagers lose",
                 "Card 3 8h to the Player", "seat 1 hand 1 card 2: Kd", "dealer's card: 5h (no second card until the players are done)"):
        assert money_spans(text) == [] and step_in_major_units(text, "USD") == text


@settings(max_examples=200, deadline=None)
@given(amount=st.integers(1, 10**12), won=st.integers(0, 10**13), decimals=st.sampled_from(["USD", "VND", "KWD"]))
def test_only_the_amounts_change_and_they_read_back_exactly(amount, won, decimals):
    text = f"Wager W-1 (banker {amount}): Player 1 v Banker 4: the Banker wins: paid 19:20 = {won}, net {won}"
    page = step_in_major_units(text, decimals)
    numbers = re.findall(r"[\d,]+(?:\.\d+)?", page.split("(banker ")[1].split(")")[0]) + \
        re.findall(r"= ([\d,.]+),", page) + re.findall(r"net ([\d,.]+)$", page)
    back = [int(n.replace(",", "").replace(".", "")) for n in numbers]
    assert back == [amount, won, won]
    assert re.sub(r"[\d,.]+", "#", page) == re.sub(r"[\d,.]+", "#", text)


def test_the_page_shows_major_units_and_round_json_keeps_the_engines_integers(audited_sample):
    from pipelines.evidence.render import render_html

    pack = next(p for p in sorted((audited_sample / "out" / "evidence").glob("BAC-*/*"))
                if any("paid 19:20" in s["what"] for s in json.loads((p / "round.json").read_text())["steps"]))
    data = json.loads((pack / "round.json").read_text(encoding="utf-8"))
    step = next(s["what"] for s in data["steps"] if "paid 19:20" in s["what"])
    won = int(re.search(r"= (\d+)", step).group(1))
    assert data["round"]["currency"] == "USD"
    page = (pack / "index.html").read_text(encoding="utf-8")
    assert f"= {won // 100:,}.{won % 100:02d}" in page and f"= {won}," not in page
    data["round"]["currency"] = "VND"
    assert f"= {won:,}, net" in render_html(data)
