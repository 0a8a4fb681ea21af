"""Property: on a night settled exactly as the rules say, the findings are exactly the nets someone changed.

A night of Tiger Baccarat is dealt from a shuffled eight-deck shoe (rulebook.baccarat.vector.deal_shoe),
every wager is settled by the scalar engine (the reference), the table's announced results are the
cards' own; then random wagers' recorded nets are perturbed. The audit (vectorised path) must
report one payout_mismatch per perturbed wager, with the engine's net as expected_net and the
perturbation as the difference, and nothing else.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulebook.baccarat.engine import settle_round
from rulebook.baccarat.vector import deal_shoe
from rulebook.cards import card_text
from rulebook.catalogue import builtin
from rulebook.round import DeviceCard, RoundInput, Wager
from test_audit_support import DAY, NightBuilder

BETS = ("banker", "player", "tie", "banker_pair", "player_pair", "tiger", "small_tiger", "big_tiger")
MAIN = ("banker", "player")
LIMITS = {"min": 2500, "max": 500000, "differential": 10**12, "side_min": 500, "side_max": 100000}


def _night(seed: int, n_rounds: int, ruleset: str) -> tuple[NightBuilder, dict[str, int]]:
    rng = np.random.default_rng(seed)
    shoe = rng.permutation(np.repeat(np.arange(52), 8))
    rounds = deal_shoe(shoe, cut_at=len(shoe) - 16, start=1)[:n_rounds]
    rs = builtin().in_force(ruleset, DAY)
    nb = NightBuilder()
    nb.start_shoe("BAC-P", "S-P", decks=8, burns=(card_text(int(shoe[0])),))
    truth: dict[str, int] = {}
    for r, cards in enumerate(rounds, start=1):
        wagers = []
        for k in range(int(rng.integers(1, 5))):
            bet = BETS[int(rng.integers(len(BETS)))]
            lo = LIMITS["min"] if bet in MAIN else LIMITS["side_min"]
            amount = int(rng.integers(lo // 500, 100000 // 500 + 1)) * 500
            wagers.append(Wager(f"W{r}-{k}", int(rng.integers(1, 7)), bet, amount))
        result = settle_round(RoundInput(rs, tuple(DeviceCard(int(c)) for c in cards), tuple(wagers)))
        rows = []
        for w in wagers:
            net = result.settlements[w.wager_id].net
            truth[w.wager_id] = net
            rows.append((w.wager_id, w.bet, w.amount, net, w.seat))
        recorded = {k: result.outcome[k] for k in ("winner", "player_points", "banker_points")}
        nb.round("BAC-P", r, " ".join(card_text(int(c)) for c in cards), rows, ruleset=ruleset, shoe_id="S-P",
                 limits=LIMITS, recorded=recorded)
    return nb, truth


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rounds=st.integers(2, 20),
    ruleset=st.sampled_from(["hoiana-tiger-baccarat/commission", "hoiana-tiger-baccarat/no-commission"]),
    data=st.data(),
)
def test_findings_are_exactly_the_perturbed_wagers(seed, n_rounds, ruleset, data):
    nb, truth = _night(seed, n_rounds, ruleset)
    ids = sorted(truth)
    chosen = data.draw(st.lists(st.sampled_from(ids), unique=True, max_size=min(6, len(ids))), label="perturbed")
    deltas = {w: data.draw(st.integers(-50_000, 50_000).filter(lambda d: d != 0), label=f"delta {w}") for w in chosen}
    for w in nb.wagers:
        if w["wager_id"] in deltas:
            w["net"] += deltas[w["wager_id"]]

    settlements, findings = nb.audit()

    assert settlements.height == len(truth)
    assert dict(zip(settlements["wager_id"], settlements["expected_net"])) == truth
    assert set(findings["kind"]) <= {"payout_mismatch"}, findings.select("kind", "detail").rows()
    got = {r["wager_id"]: (r["expected_net"], r["difference"]) for r in findings.iter_rows(named=True)}
    assert got == {w: (truth[w], d) for w, d in deltas.items()}
    assert findings.filter(pl.col("severity") != "high").height == 0
