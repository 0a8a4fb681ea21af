"""House edge of every Hold'em Bonus bet of a rule set, each figure naming the strategy it assumes.

- ``bonus``: exact, over all 1,624,350 holdings of two player and two dealer hole cards
  (1,326 x 1,225) from one deck, read on the rule set's own pay table (so the A-A vs A-A line
  counts where the table has it). No strategy offered folds a Bonus-winning hand.
- ``ante``: the main game (Ante, Flop, Turn and River as one bet, per unit of Ante). Under the
  default ``optimal`` strategy (``strategy.py``) it is counted exactly, every flop class with every
  turn, river and dealer hand (standard error 0), or over a random sample of flops with the standard
  error between them; under a ``rule`` strategy it is simulated (``rounds``), settled by the engine's
  own array kernel (``vector.main_game``), with its standard error and 95 % interval.
- ``progressive``: exact expected return for a stated meter at the rule set's jackpot stake, where
  the lines have a structure we can count exactly (the guide's, or the MBS structure; see
  :func:`progressive_return`); no figure while the rule set leaves the stake unstated.

Probabilities are floats (they are not money); the exact figures are computed as fractions first.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from math import comb, sqrt

import numpy as np

from rulebook import poker
from rulebook.holdem_bonus.engine import QUALIFIER_CATEGORY
from rulebook.holdem_bonus.params import BONUS_HANDS, HoldemBonusParams, stated
from rulebook.holdem_bonus.strategy import DEFAULT_STRATEGY, STRATEGIES, main_game_value
from rulebook.holdem_bonus.vector import BET_CODES, bonus_hand_index, main_game
from rulebook.odds import BetOdds, OddsReport, Strategy
from rulebook.ruleset import RuleSet

DEFAULT_ROUNDS = 2_000_000
DEFAULT_METER = 10_000_000  # 100,000.00 in the jackpot currency's smallest unit
SEVEN_CARD = comb(52, 7)
# exhaustive 7-card counts (verified by enumeration in tests/test_poker.py::test_all_seven_card_hands)
SEVEN_CARD_ROYAL, SEVEN_CARD_STRAIGHT_FLUSH, SEVEN_CARD_QUADS = 4324, 41584 - 4324, 224848
#: the progressive figures assume the hand is never folded (a fold loses the hole-card lines, MBS-3.7.1)
NEVER_FOLD = Strategy("never_fold", "every hand is played to the showdown (never folded)")


def strategy_ref(name: str) -> Strategy:
    s = STRATEGIES[name]
    return Strategy(s.name, s.description)


def house_edges(
    ruleset: RuleSet,
    decks: int | None = None,
    rounds: int | None = None,
    seed: int = 20261125,
    strategy: str = DEFAULT_STRATEGY,
    flops: int | None = None,
    meter: int = DEFAULT_METER,
    progress: Callable[[int, int], None] | None = None,
    map_chunks: Callable = map,
    **options,
) -> OddsReport:
    """Every bet's figure. The main game ("ante") under ``strategy``: ``optimal`` (the default) is
    counted exactly over every flop class, or over a random sample of ``flops`` flops with a standard
    error; a ``rule`` strategy is simulated over ``rounds`` rounds. ``meter`` (smallest units) for
    the progressive, whose stake is the rule set's (no figure while the rule set leaves it unstated).
    ``progress(done, total)`` is told of the flops counted under ``optimal``, whose chunks ``map_chunks`` runs
    (:func:`strategy.main_game_value`: the builtin ``map``, or a process pool's)."""
    params: HoldemBonusParams = ruleset.params
    decks = params.decks if decks is None else decks
    if decks != 1:
        raise ValueError(f"Hold'em Bonus is dealt from one deck ({ruleset.name}); odds for {decks} decks are not offered")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    if STRATEGIES[strategy].kind == "exact_ev":
        ante = optimal_ante_odds(params, flops, seed, progress, map_chunks)
    else:
        ante = ante_odds(params, rounds or DEFAULT_ROUNDS, seed, strategy)
    bets = {"bonus": bonus_odds(params, strategy), "ante": ante}
    omitted: dict[str, str] = {}
    if params.progressive is not None:
        prog = params.progressive
        if not stated(prog.stake):
            omitted["progressive"] = (
                f"the jackpot stake is not stated in the rule set ({prog.stake_clause} names the wager, not its amount): "
                "the return per unit staked cannot be given until the casino states it"
            )
        else:
            figure = progressive_odds(params, meter)
            if figure is not None:
                bets["progressive"] = figure
            else:
                omitted["progressive"] = "the rule set's jackpot lines have a structure this count does not cover at this meter"
    return OddsReport(ruleset=ruleset.name, decks=decks, bets=bets, strategy=STRATEGIES[strategy].description, omitted=omitted)


# --------------------------------------------------------------------------------------------
# the Bonus, exact


def all_holdings() -> tuple[np.ndarray, np.ndarray]:
    """Every (player hole cards, dealer hole cards) from one deck: two (1,624,350, 2) arrays."""
    a, b = np.triu_indices(52, 1)
    pairs = np.stack([a, b], axis=1).astype(np.int64)  # the 1,326 two-card hands
    bits = (np.int64(1) << pairs[:, 0]) | (np.int64(1) << pairs[:, 1])
    disjoint = (bits[:, None] & bits[None, :]) == 0  # (1326, 1326)
    p, d = np.nonzero(disjoint)
    return pairs[p], pairs[d]


@lru_cache(maxsize=1)
def holdings_per_bonus_hand() -> tuple[tuple[int, ...], int]:
    """How many of the 1,624,350 holdings are each of ``BONUS_HANDS`` (a pair of aces against the dealer's aces counted
    apart from other aces), and the total: the same for every rule set, so enumerated once (0.2-0.35 CPU s; the
    statistics step and the investigation pages each asked it again for every Hold'em rule set of the night)."""
    player, dealer = all_holdings()
    hand = bonus_hand_index(player, dealer)
    return tuple(int(c) for c in np.bincount(hand[hand >= 0], minlength=len(BONUS_HANDS))), len(player)


def bonus_line_counts(params: HoldemBonusParams) -> tuple[dict[str, int], int]:
    """How many of the 1,624,350 holdings win each pay-table line, and the total. A table without the line for aces
    against the dealer's aces pays those holdings on its aces line."""
    per_hand, total = holdings_per_bonus_hand()
    counts = dict(zip(BONUS_HANDS, per_hand))
    table = {line.hand for line in params.bonus_pay_table}
    if "aa_vs_dealer_aa" not in table:
        counts["aa"] += counts.pop("aa_vs_dealer_aa")
    return {h: counts[h] for h in BONUS_HANDS if h in table}, total


def bonus_expectation(params: HoldemBonusParams) -> tuple[Fraction, Fraction]:
    """Exact expected net per unit of Bonus wager, and the probability it wins."""
    counts, total = bonus_line_counts(params)
    odds = {line.hand: Fraction(*map(int, line.odds.split(":"))) for line in params.bonus_pay_table}
    wins = sum(counts.values())
    ev = (sum(counts[h] * odds[h] for h in counts) - (total - wins)) / Fraction(total)
    return ev, Fraction(wins, total)


def bonus_odds(params: HoldemBonusParams, strategy: str = DEFAULT_STRATEGY) -> BetOdds:
    """Exact; it depends on the decisions only through folds, and no strategy here folds a Bonus-winning hand."""
    ev, p_win = bonus_expectation(params)
    folds = STRATEGIES[strategy].preflop_fold
    assert not any(h[0] == h[1] or h[0] == "A" and h[1] in "KQJ" for h in folds), "a strategy folding a Bonus hand"
    return BetOdds(
        house_edge=float(-ev),
        win_probability=float(p_win),
        push_probability=0.0,
        method="exact",
        notes="all 1,624,350 player and dealer hole-card holdings from one deck; assumes the player never folds a Bonus-winning hand (a fold loses the Bonus)",
        strategy=strategy_ref(strategy),
        standard_error=0.0,
    )


# --------------------------------------------------------------------------------------------
# the main game, simulated


def deal_cards(rng: np.random.Generator, n: int, k: int = 9) -> np.ndarray:
    """``n`` rounds of ``k`` distinct cards from a shuffled deck each (a partial Fisher-Yates, vectorised)."""
    deck = np.tile(np.arange(52, dtype=np.int8), (n, 1))
    rows = np.arange(n)
    for i in range(k):
        j = i + rng.integers(0, 52 - i, size=n)
        top = deck[rows, i].copy()
        deck[rows, i] = deck[rows, j]
        deck[rows, j] = top
    return deck[:, :k].astype(np.int64)


def simulate_main_game(params: HoldemBonusParams, rounds: int, seed: int, strategy: str, chunk: int = 250_000):
    """Per-round net of the main game per unit of Ante, in chunks: yields (nets, player, dealer) arrays."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < rounds:
        n = min(chunk, rounds - done)
        cards = deal_cards(rng, n)  # hole 0-1, community 2-6, dealer 7-8
        hole, community, dealer = cards[:, :2], cards[:, 2:7], cards[:, 7:9]
        strengths = poker.evaluate7(np.concatenate([np.concatenate([hole, community], axis=1), np.concatenate([dealer, community], axis=1)]))
        p, d = strengths[:n], strengths[n:]
        turn, river, folded = strategy_decisions(cards, strategy)
        net = np.zeros(n, dtype=np.int64)
        status = folded.astype(np.int64)  # 1 = folded: only the Ante is lost
        played = (~folded).astype(np.int64)
        for bet, amount in (
            ("ante", np.ones(n, dtype=np.int64)),
            ("flop", 2 * played),
            ("turn", turn.astype(np.int64) * played),
            ("river", river.astype(np.int64) * played),
        ):
            wager_net, _ = main_game(params, np.full(n, BET_CODES[bet]), status, p, d, amount)
            net += wager_net
        yield net, p, d
        done += n


def strategy_decisions(cards: np.ndarray, strategy: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(turn bet, river bet, fold) per round under a named strategy; ``cards``: hole 0-1, flop 2-4, turn 5, river 6."""
    n = len(cards)
    ranks, suits = cards // 4, cards % 4
    pocket = ranks[:, 0] == ranks[:, 1]
    on_flop = (ranks[:, :2, None] == ranks[:, None, 2:5]).any(axis=(1, 2))
    on_turn = on_flop | (ranks[:, :2] == ranks[:, 5:6]).any(axis=1)
    no = np.zeros(n, dtype=bool)
    if strategy == "check":
        return no, no, no
    if strategy == "pair_with_hole":
        return pocket | on_flop, pocket | on_turn, no
    made_flop = poker.category(poker.evaluate(cards[:, :5])) >= poker.STRAIGHT  # five cards: both hole cards play
    made_turn = poker.category(poker.evaluate(cards[:, :6])) >= poker.STRAIGHT  # four on the board: a hole card plays
    four_suited = np.maximum((suits[:, :5] == suits[:, 0:1]).sum(axis=1), (suits[:, :5] == suits[:, 1:2]).sum(axis=1)) >= 4
    high = np.where(ranks[:, :2] == 0, 13, ranks[:, :2])  # the ace high
    # 2-3 .. 2-7 unsuited: a pair of twos is no such hand (its suits always differ, so the pair must be excluded)
    low_two = (high.min(axis=1) == 1) & (high.max(axis=1) <= 6) & (suits[:, 0] != suits[:, 1]) & ~pocket
    return pocket | on_flop | made_flop | four_suited, pocket | on_turn | made_turn, low_two


def ante_odds(params: HoldemBonusParams, rounds: int, seed: int, strategy: str) -> BetOdds:
    total = total_sq = wins = pushes = 0
    n = 0
    for net, p, d in simulate_main_game(params, rounds, seed, strategy):
        total += int(net.sum())
        total_sq += int((net * net).sum())
        wins += int((net > 0).sum())
        pushes += int((net == 0).sum())
        n += len(net)
    mean = total / n
    sd = sqrt(max(total_sq / n - mean * mean, 0.0))
    se = sd / sqrt(n)
    return BetOdds(
        house_edge=-mean,
        win_probability=wins / n,
        push_probability=pushes / n,
        method="simulation",
        ci95=(-mean - 1.96 * se, -mean + 1.96 * se),
        notes=f"Ante, Flop, Turn and River together, per unit of Ante; {n:,} simulated rounds, seed {seed}",
        strategy=strategy_ref(strategy),
        standard_error=se,
    )


def optimal_ante_odds(params: HoldemBonusParams, flops: int | None, seed: int,
                      progress: Callable[[int, int], None] | None = None, map_chunks: Callable = map) -> BetOdds:
    """The main game under the ``optimal`` strategy (``strategy.py``): exact over every flop class, or
    over a random sample of flops (each counted exactly) with the standard error between flops.
    ``progress`` and ``map_chunks`` as :func:`strategy.main_game_value` takes them."""
    v = main_game_value(QUALIFIER_CATEGORY[params.ante_qualifier], flops, seed, STRATEGIES["optimal"].preflop_fold,
                        progress, map_chunks)
    how = (
        f"counted exactly over all 22,100 flops (1,755 classes under suit permutation)"
        if v.exact
        else f"{v.flops:,} random flops (seed {seed}), each counted exactly"
    )
    edge, half = -v.expectation, 1.96 * v.standard_error
    return BetOdds(
        house_edge=edge,
        win_probability=v.win,
        push_probability=v.push,
        method="exact" if v.exact else "sampled flops",
        ci95=None if v.exact else (edge - half, edge + half),
        notes=(
            f"Ante, Flop, Turn and River together, per unit of Ante; {how}, with every turn, river and dealer hand; "
            f"the Turn is bet on {100 * v.turn_rate:.1f} % of hands, the River on {100 * v.river_rate:.1f} %"
        ),
        strategy=strategy_ref("optimal"),
        standard_error=v.standard_error,
    )


# --------------------------------------------------------------------------------------------
# the progressive jackpot, exact for a stated meter


def progressive_return(params: HoldemBonusParams, meter: int, wager: int) -> tuple[Fraction, Fraction, str] | None:
    """Exact expected payout per unit of jackpot wager, the probability of a payout, and the assumptions;
    None where the rule set's lines have a structure not counted here."""
    from rulebook.holdem_bonus.hands import line_amount

    prog = params.progressive
    currency = prog.currency

    def amount(line) -> int:
        return line_amount(prog, line, meter, currency)

    if all(l.cards == "hole_and_flop" for l in prog.lines):
        # the hand is five cards: count every one of the C(52, 5) hands by category
        counts = _five_card_counts()
        payout = Fraction(0)
        hits = 0
        for hand, k in counts.items():
            amounts = [amount(l) for l in prog.lines if l.hand == hand]
            if amounts:
                payout += k * (max(amounts) if prog.combine == "best" else sum(amounts))
                hits += k
        total = comb(52, 5)
        note = "every line is on the hole cards and the flop (five cards), paid after a fold too; no Bonus Jackpot (envy) counted"
        return payout / total / wager, Fraction(hits, total), note
    if _is_mbs_structure(prog) and prog.combine == "best":
        # a royal in seven cards lies at 5 of the 7 dealt positions; each of the C(7, 5) = 21 position
        # sets has probability 4 / C(52, 5). Position classes: hole + flop (1 set), within the first six
        # (5 sets), the community (1 set), the rest end on the river with a hole card (14 sets).
        by = {(l.hand, l.cards): amount(l) for l in prog.lines}
        p_set = Fraction(4, comb(52, 5))
        royal = p_set * (
            by[("royal_flush", "hole_and_flop")] + 5 * by[("royal_flush", "hole_and_turn")]
            + 14 * by[("royal_flush", "best_of_seven_with_hole")] + by[("royal_flush", "community")]
        )
        sf = Fraction(SEVEN_CARD_STRAIGHT_FLUSH, SEVEN_CARD) * by[("straight_flush", "best_of_seven")]
        quads = Fraction(SEVEN_CARD_QUADS, SEVEN_CARD) * by[("four_of_a_kind", "best_of_seven")]
        hits = Fraction(SEVEN_CARD_ROYAL + SEVEN_CARD_STRAIGHT_FLUSH + SEVEN_CARD_QUADS, SEVEN_CARD)
        floor = 20 * max(by[("straight_flush", "community")], by[("straight_flush", "best_of_seven")])
        if meter < floor:
            return None
        note = (
            "the hand is never folded; the meter is at least 20 x the straight-flush amount, so every royal line "
            "outweighs a straight flush the community may also make; 7-card counts from the exhaustive enumeration"
        )
        return (royal + sf + quads) / wager, hits, note
    return None


def _is_mbs_structure(prog) -> bool:
    keys = {(l.hand, l.cards) for l in prog.lines}
    need = {
        ("royal_flush", "hole_and_flop"), ("royal_flush", "hole_and_turn"), ("royal_flush", "best_of_seven_with_hole"),
        ("straight_flush", "best_of_seven"), ("four_of_a_kind", "best_of_seven"),
        ("royal_flush", "community"), ("straight_flush", "community"), ("four_of_a_kind", "community"),
    }
    if keys != need or len(prog.lines) != len(need):
        return False
    by = {(l.hand, l.cards): l for l in prog.lines}
    # the community straight flush / four of a kind never pay more than the best-of-seven line they imply
    return all(by[(h, "community")].fixed <= by[(h, "best_of_seven")].fixed and not by[(h, "community")].percent_of_meter
               for h in ("straight_flush", "four_of_a_kind"))


def _five_card_counts() -> dict[str, int]:
    """Five-card hands per jackpot hand, from the 5-card counts (verified exhaustively in tests/test_poker.py)."""
    return {"royal_flush": 4, "straight_flush": 36, "four_of_a_kind": 624, "full_house": 3744, "flush": 5108}


def progressive_odds(params: HoldemBonusParams, meter: int) -> BetOdds | None:
    """At the rule set's stated stake (MBS-1.1.12 leaves it open: the caller checks it is stated)."""
    wager = params.progressive.stake
    result = progressive_return(params, meter, wager)
    if result is None:
        return None
    ret, p_win, note = result
    collected = params.progressive.wager_on_win == "collected"
    edge = 1 - ret if collected else -(ret - (1 - p_win))
    return BetOdds(
        house_edge=float(edge),
        win_probability=float(p_win),
        push_probability=0.0,
        method="exact",
        notes=f"jackpot meter {meter:,} and the rule set's jackpot stake {wager:,} ({params.progressive.currency} smallest units); {note}",
        strategy=NEVER_FOLD,
        standard_error=0.0,
    )
