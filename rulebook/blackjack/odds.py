"""House edges of the Blackjack wagers: pair and insurance exactly, the main wager by simulation.

- ``pair`` (BJ-4.8, 6.3, 5.1): the seat's first two cards are the same face (BJ-4.2.3.1) with
  probability (4d-1)/(52d-1) in a d-deck shoe (same face and suit: (d-1)/(52d-1)); exact.
- ``insurance`` (BJ-4.11, 4.14.4, 5.1): given the dealer's ace, the second card is a ten-value with
  probability 16d/(52d-1) (the rest of the shoe full: the textbook "off the top" figure); exact.
- ``main``: its value depends on the player's decisions, so it is simulated (``simulate.py``) under
  the basic strategy of ``strategy.py``, with a 95 % confidence interval. The infinite-shoe expected
  value of the same rules (``ev.py``) is given in the notes as an independent check.
"""

from __future__ import annotations

from rulebook.blackjack.ev import Rules, round_value
from rulebook.blackjack.params import BlackjackParams
from rulebook.blackjack.simulate import simulate_main
from rulebook.odds import BetOdds, OddsReport, Strategy
from rulebook.ruleset import RuleSet

# ~700,000 rounds per CPU-second (benchmarks/blackjack.py): about 3 s, a 95 % interval of +-0.16 %
DEFAULT_ROUNDS = 2_000_000

STRATEGY = (
    "basic strategy for no hole card, dealer stands on all 17s, original-wager-only dealer blackjack, "
    "double on any two cards and after splits, split to four hands (aces once, one card each), "
    "surrender before the dealer's second card except against an ace (rulebook/blackjack/strategy.py); "
    "insurance and even money declined; one seat, a fresh shoe each round"
)


def pair_probability(decks: int, pair_by: str = "rank") -> float:
    """The seat's first two cards make a pair (BJ-6.3.1)."""
    same = 4 * decks - 1 if pair_by == "rank" else decks - 1
    return same / (52 * decks - 1)


def insurance_probability(decks: int) -> float:
    """The dealer's second card is a ten-value, given an ace as the first (BJ-4.14.4)."""
    return 16 * decks / (52 * decks - 1)


def _exact(p_win: float, odds) -> BetOdds:
    ev = p_win * odds.num / odds.den - (1 - p_win)
    return BetOdds(house_edge=-ev, win_probability=p_win, push_probability=0.0, method="exact")


def house_edges(
    ruleset: RuleSet,
    decks: int | None = None,
    rounds: int | None = None,
    seed: int = 20261125,
    batch: int = 250_000,
    **_options,
) -> OddsReport:
    params: BlackjackParams = ruleset.params
    d = params.decks if decks is None else decks
    if not 1 <= d <= 16:
        raise ValueError(f"decks must be between 1 and 16 (BJ-4.1 plays 1 to 8), got {d}")
    n = DEFAULT_ROUNDS if rounds is None else rounds
    if n < 1:
        raise ValueError(f"rounds must be positive, got {n}")
    pt = params.pay_table

    pair = _exact(pair_probability(d, params.pair_by), pt.pair.odds)
    pair = BetOdds(**{**_fields(pair), "notes": f"pays {pt.pair.odds} ({pt.pair.clause}); a pair is the same face (BJ-4.2.3.1)"})
    ins = _exact(insurance_probability(d), pt.insurance.odds)
    ins = BetOdds(**{**_fields(ins), "notes": f"pays {pt.insurance.odds} ({pt.insurance.clause}); off the top of a full shoe, the dealer's ace removed"})

    sim = simulate_main(params, d, n, seed=seed, batch=batch)
    infinite = -round_value(Rules.of(params))
    main = BetOdds(
        house_edge=sim.house_edge,
        win_probability=sim.win,
        push_probability=sim.push,
        method="simulation",
        ci95=sim.ci95,
        notes=f"{n:,} rounds, seed {seed}; infinite-shoe expected value under the same rules: {100 * infinite:.3f} %",
        strategy=Strategy("basic", STRATEGY),
        standard_error=sim.sd / sim.rounds**0.5,
    )
    if params.bust_before_dealer_blackjack != "loses_all":
        main = BetOdds(**{**_fields(main), "notes": main.notes + "; the simulation and the infinite-shoe value count a "
                          "busted hand lost in full (BJ-4.13.3): this rule set returns the doubling and split wagers of a "
                          "busted hand when the dealer then has a blackjack, which the figure does not include"})
    return OddsReport(ruleset=ruleset.name, decks=d, bets={"main": main, "pair": pair, "insurance": ins}, strategy=STRATEGY)


def _fields(b: BetOdds) -> dict:
    return {k: getattr(b, k) for k in BetOdds.__slots__}
