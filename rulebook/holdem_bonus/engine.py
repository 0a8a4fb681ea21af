"""Settle one Texas Hold'em Bonus round from its cards and decisions: the scalar reference engine.

The order of judgement, each step citing the rule set's clause:

1. the wagers: known bets, a seat with an Ante (only those are dealt, HTB-4.7, 4.11.1);
2. the decisions of each seat (``decisions.py``: fold/flop, turn, river, concede);
3. the cards: foreign cards, duplicates, the decks loaded; then the deal procedure of the round's
   ``deal_mode`` assigns every card to a hand (``deal.py``), noting burns out of place;
4. the irregularities' effects as the rule set states them: ``void`` returns every wager,
   ``unsettled`` leaves them to the operator, ``flag`` reports and settles from the cards;
5. each wager on the hands (``hands.py`` for the pay tables): the main game (HTB-5.2-5.4), the
   Bonus (HTB-6.1.2), the jackpot (MBS-4.1.2, 4.1.3; THB-G-JACKPOT), a fold (HTB-4.11.2.i) or a
   concession (HTB-5.6).

A card the device could not read (or a card never dealt because every seat folded) is settled
"where it matters": a wager whose result does not depend on it is settled; one that may depend
on up to two such cards is settled over every card they could be, and left unsettled with the
reason if the results differ; beyond two, it is left unsettled.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass

import numpy as np

from rulebook import poker
from rulebook.cards import FOREIGN, card_text, is_valid
from rulebook.holdem_bonus import text
from rulebook.holdem_bonus.deal import COMMUNITY_NAMES, Deal, reconstruct
from rulebook.holdem_bonus.decisions import CONCEDED, FOLDED, PLAYED, UNDECIDED, SeatPlay, read_seat
from rulebook.holdem_bonus.hands import (
    CATEGORY_OF,
    JackpotStrengths,
    MissingEvidence,
    bonus_line,
    is_royal_or_straight_flush_line,
    jackpot_payout,
    lines_met,
    needs_dealer_for_bonus,
)
from rulebook.holdem_bonus.params import HoldemBonusParams, IrregularityRule, stated
from rulebook.money import Odds
from rulebook.round import Irregularity, RoundInput, RoundResult, Step, Wager
from rulebook.settlement import Settlement

BETS = ("ante", "bonus", "flop", "turn", "river", "progressive")
MAIN_BETS = ("ante", "flop", "turn", "river")
QUALIFIER_CATEGORY = {"straight": poker.STRAIGHT, "flush": poker.FLUSH}
MAX_ENUMERATED_UNKNOWNS = 2

# a card position in the round: ("hole", seat, k) | ("community", k) | ("dealer", k)
Position = tuple


def position_name(pos: Position) -> str:
    if pos[0] == "hole":
        return f"seat {pos[1]} hole card {pos[2] + 1}"
    if pos[0] == "community":
        return COMMUNITY_NAMES[pos[1]]
    return f"dealer hole card {pos[1] + 1}"


@dataclass(frozen=True, slots=True)
class Hands:
    """Concrete cards of every hand of one round (every code 0..51)."""

    hole: dict[int, tuple[int, int]]
    community: tuple[int, ...]
    dealer: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Strengths:
    seven: dict[int, int]  # per seat, hole + community
    dealer: int
    jackpot: dict[int, JackpotStrengths] | None  # per seat, when the rule set has a jackpot


def _unranked_if_twice(cards: np.ndarray, strengths: np.ndarray) -> np.ndarray:
    """``strengths`` with 0 (no rank) where a row of ``cards`` holds one card twice: only a shoe of more decks than
    the rule set's deals that, and the evaluator, made for one deck, would rank it as it pleases (trips of a pair
    and its copy, or nothing). The wagers on such a hand are unsettled (``_twice``)."""
    ordered = np.sort(cards, axis=1)
    twice = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
    return np.where(twice, 0, strengths) if twice.any() else strengths


def evaluate_many(hands_list: list[Hands], seats: tuple[int, ...], with_jackpot: bool) -> list[Strengths]:
    """Every strength the settlement needs, for many candidate deals, in one evaluator call per width."""
    n, s = len(hands_list), len(seats)
    players = np.array([[*h.hole[seat], *h.community] for h in hands_list for seat in seats], dtype=np.int64).reshape(n * s, 7)
    dealers = np.array([[*h.dealer, *h.community] for h in hands_list], dtype=np.int64).reshape(n, 7)
    both = np.concatenate([players, dealers])
    seven = _unranked_if_twice(both, poker.evaluate7(both)) if n else np.zeros(0, dtype=np.int32)
    p7, d7 = seven[: n * s].reshape(n, s), seven[n * s :]
    if with_jackpot and s:
        hf = _unranked_if_twice(players[:, :5], poker.evaluate(players[:, :5])).reshape(n, s)
        ht = _unranked_if_twice(players[:, :6], poker.evaluate(players[:, :6])).reshape(n, s)
        comm = _unranked_if_twice(dealers[:, 2:], poker.evaluate(dealers[:, 2:]))
    out = []
    for c in range(n):
        jackpot = None
        if with_jackpot:
            jackpot = {
                seat: JackpotStrengths(int(hf[c, j]), int(ht[c, j]), int(p7[c, j]), int(comm[c])) for j, seat in enumerate(seats)
            }
        out.append(Strengths({seat: int(p7[c, j]) for j, seat in enumerate(seats)}, int(d7[c]), jackpot))
    return out


# --------------------------------------------------------------------------------------------
# settlement of every wager on concrete hands


def settle_on_hands(
    params: HoldemBonusParams,
    mode: str,
    plays: dict[int, SeatPlay],
    wagers: list[Wager],
    hands: Hands,
    st: Strengths,
    meter: int | None,
    currency: str | None,
) -> dict[str, Settlement | str]:
    """What each (dealt-seat) wager nets on these hands; a string is the reason it cannot be settled."""
    out: dict[str, Settlement | str] = {}
    decisions = params.decisions(mode)
    sd = params.showdown
    jackpot_wagers: list[Wager] = []
    for w in wagers:
        play = plays[w.seat]
        if w.wager_id in play.refused:
            out[w.wager_id] = play.refused[w.wager_id]
            continue
        if play.status == UNDECIDED:
            absent = params.absent_player
            if absent.effect == "returned" and w.bet in ("ante", "bonus"):
                out[w.wager_id] = Settlement(0, absent.clause, text.absent(w.bet, w.seat))
            else:
                out[w.wager_id] = (
                    f"seat {w.seat} has no Fold or Flop decision on record and no Flop wager: a fold loses the Ante and "
                    f"Bonus ({decisions.fold}); the rule set has no rule for an absent player's {w.bet} ({absent.clause})"
                )
            continue
        if w.bet == "progressive":
            j = st.jackpot[w.seat] if st.jackpot is not None else None
            if j is not None and 0 in (j.hole_and_flop, j.hole_and_turn, j.seven, j.community):
                out[w.wager_id] = _twice(params, w)
            else:
                jackpot_wagers.append(w)
            continue
        hole = hands.hole[w.seat]
        if play.status == FOLDED and (w.bet != "bonus" or params.folded_bonus_loses):
            out[w.wager_id] = Settlement(-w.amount, decisions.fold, text.folded(w.bet, w.seat))
        elif play.status == CONCEDED:
            out[w.wager_id] = Settlement(-w.amount, sd.concede, text.conceded(w.bet, w.seat))
        elif w.bet == "bonus":
            line = bonus_line(params.bonus_pay_table, hole, hands.dealer)
            if line is None:
                out[w.wager_id] = Settlement(-w.amount, sd.bonus_lose, text.bonus_lose(hole))
            else:
                out[w.wager_id] = Settlement(Odds.parse(line.odds).win(w.amount), line.clause, text.bonus_win(hole, line.hand, line.odds))
        elif st.seven[w.seat] == 0 or st.dealer == 0:
            out[w.wager_id] = _twice(params, w)
        else:
            out[w.wager_id] = _main_game(params, w, st.seven[w.seat], st.dealer)
    if jackpot_wagers:
        out.update(_jackpot(params, plays, jackpot_wagers, st, meter, currency))
    return out


def _twice(params: HoldemBonusParams, w: Wager) -> str:
    """Why a wager whose hands hold one card twice is not settled. Only a shoe of more decks than the rule set's gets
    this far (its own finding, an effect of ``flag``): the hand ranks are those of one deck and have no place for it
    (``_unranked_if_twice``)."""
    return (f"seat {w.seat}'s seven cards or the dealer's hold the same card twice: the hand ranks of a "
            f"{params.decks}-deck game have no place for it ({params.irregularities.decks.clause})")


def _main_game(params: HoldemBonusParams, w: Wager, p: int, d: int) -> Settlement:
    sd = params.showdown
    payout = getattr(params, w.bet)
    if p > d:
        if w.bet == "ante" and CATEGORY_OF[p] < QUALIFIER_CATEGORY[params.ante_qualifier]:
            return Settlement(0, params.ante_qualifier_clause, text.ante_stand_off(p, d, params.ante_qualifier))
        return Settlement(payout.odds.win(w.amount), payout.clause, text.win(w.bet, p, d, str(payout.odds)))
    if p < d:
        return Settlement(-w.amount, sd.lose, text.lose(w.bet, p, d))
    return Settlement(0, sd.stand_off, text.stand_off(w.bet, p))


def _jackpot(
    params: HoldemBonusParams,
    plays: dict[int, SeatPlay],
    wagers: list[Wager],
    st: Strengths,
    meter: int | None,
    currency: str | None,
) -> dict[str, Settlement | str]:
    prog = params.progressive
    assert prog is not None and st.jackpot is not None
    met_by: dict[str, tuple] = {}
    out: dict[str, Settlement | str] = {}
    for w in wagers:
        status = plays[w.seat].status
        if status == CONCEDED and not prog.checked_after_concede:
            out[w.wager_id] = Settlement(-w.amount, params.showdown.concede, text.conceded("progressive", w.seat))
            continue
        after_fold = status in (FOLDED, CONCEDED)
        met_by[w.wager_id] = (lines_met(prog, st.jackpot[w.seat], after_fold), after_fold)
    # the guide's Bonus Jackpot (envy): to every other jackpot wager when a royal or straight flush is won
    won_hands = {l.hand for met, _ in met_by.values() for l in met if is_royal_or_straight_flush_line(l)}
    envy_by_hand = {"royal_flush": prog.envy_royal_flush, "straight_flush": prog.envy_straight_flush}
    unstated = sorted(h for h in won_hands if not stated(envy_by_hand[h]))
    envy_amount = max([envy_by_hand[h] for h in won_hands if stated(envy_by_hand[h])] + [0])
    for w in wagers:
        if w.wager_id in out:
            continue
        met, after_fold = met_by[w.wager_id]
        winner = any(is_royal_or_straight_flush_line(l) for l in met)
        if unstated and not winner:
            out[w.wager_id] = text.envy_unstated(unstated, prog.envy_clause)
            continue
        envy = 0 if winner else envy_amount
        try:
            payout, line = jackpot_payout(prog, met, meter, currency)
            if envy and currency != prog.currency:
                raise MissingEvidence(
                    f"the Bonus Jackpot is in {prog.currency} and the round is in {currency or 'no stated currency'} ({prog.envy_clause})"
                )
        except MissingEvidence as exc:
            out[w.wager_id] = str(exc)
            continue
        total = payout + envy
        if total == 0:
            out[w.wager_id] = Settlement(-w.amount, prog.lose_clause, text.jackpot_lose(after_fold))
            continue
        net = total - w.amount if prog.wager_on_win == "collected" else total
        if line is None:
            out[w.wager_id] = Settlement(net, prog.envy_clause, text.jackpot_envy(envy, prog.wager_on_win))
        else:
            out[w.wager_id] = Settlement(net, line.clause, text.jackpot_win(text.line_description(line), payout, prog.wager_on_win, envy))
    return out


# --------------------------------------------------------------------------------------------
# which cards a wager's result depends on


def dependencies(params: HoldemBonusParams, w: Wager, play: SeatPlay, hole: tuple, jackpot_seats: tuple[int, ...]) -> set[Position]:
    """The card positions the wager's settlement reads (a superset is safe; a subset is not)."""
    own = {("hole", w.seat, 0), ("hole", w.seat, 1)}
    community = {("community", k) for k in range(5)}
    flop = {("community", k) for k in range(3)}
    dealer = {("dealer", 0), ("dealer", 1)}
    if w.wager_id in play.refused or play.status == UNDECIDED:
        return set()
    prog = params.progressive
    if w.bet == "progressive":
        if play.status == CONCEDED and not prog.checked_after_concede:
            return set()
        after_fold = play.status in (FOLDED, CONCEDED)
        deps: set[Position] = set()
        for line in prog.lines:
            if after_fold and not line.pays_after_fold:
                continue
            if line.cards == "hole_and_flop":
                deps |= own | flop
            elif line.cards == "hole_and_turn":
                deps |= own | flop | {("community", 3)}
            elif line.cards == "community":
                deps |= community
            else:
                deps |= own | community
        if prog.envy_offered():  # another hand's royal or straight flush decides the envy
            for seat in jackpot_seats:
                deps |= {("hole", seat, 0), ("hole", seat, 1)} | community
        return deps
    if play.status == FOLDED and (w.bet != "bonus" or params.folded_bonus_loses):
        return set()
    if play.status == CONCEDED:
        return set()
    if w.bet == "bonus":
        known = all(c is not None and c >= 0 for c in hole)
        if known and not needs_dealer_for_bonus(params.bonus_pay_table, hole):
            return own
        return own | dealer
    return own | community | dealer


# --------------------------------------------------------------------------------------------
# the round


def settle_round(round_input: RoundInput) -> RoundResult:
    """Reconstruct and settle one Hold'em Bonus round (see the module docstring for the order)."""
    ri = round_input
    params: HoldemBonusParams = ri.ruleset.params
    settlements: dict[str, Settlement] = {}
    unsettled: dict[str, str] = {}
    steps: list[Step] = []
    irregularities: list[Irregularity] = []
    sd = params.showdown

    # 1. the wagers
    ante_seats = tuple(sorted({w.seat for w in ri.wagers if w.bet == "ante"}))
    wagers: list[Wager] = []
    for w in ri.wagers:
        if w.bet not in BETS:
            unsettled[w.wager_id] = f"{w.bet!r} is not a Hold'em Bonus bet (ante, bonus, flop, turn, river, progressive)"
        elif w.amount < 0:
            unsettled[w.wager_id] = f"wager amount {w.amount} is negative"
        elif w.bet == "progressive" and params.progressive is None:
            unsettled[w.wager_id] = f"rule set {ri.ruleset.name} has no Progressive Jackpot wager"
        elif w.seat not in ante_seats:
            unsettled[w.wager_id] = f"{w.bet} wager on seat {w.seat}, which has no Ante: the seat is not dealt ({sd.ante_required})"
        else:
            wagers.append(w)
    wagers = _one_wager_per_area(params, wagers, settlements, unsettled, irregularities)
    irregularities.extend(_stake_breaches(params, wagers))
    try:
        procedure, clauses = params.deal(ri.deal_mode or "")
    except ValueError:
        reason = f"deal_mode is {ri.deal_mode!r}: the round must say 'shoe' or 'device' to reconstruct the hands"
        for w in wagers:
            unsettled[w.wager_id] = reason
        return RoundResult(settlements, unsettled, tuple(steps))
    mode = ri.deal_mode

    # 2. the decisions
    plays = {
        seat: read_seat(
            seat,
            [a for a in ri.actions if a.seat == seat],
            [w for w in wagers if w.seat == seat],
            params.decisions(mode),
            sd,
        )
        for seat in ante_seats
    }
    for seat in ante_seats:
        irregularities.extend(plays[seat].irregularities)
    for a in ri.actions:
        if a.seat not in ante_seats:
            irregularities.append(
                Irregularity("illegal_action", sd.ante_required, f"seat {a.seat}: {a.action!r} on a seat with no Ante")
            )

    # 3. the cards
    rules = params.irregularities
    effects: list[tuple[IrregularityRule, str]] = []  # (rule, detail) whose effect applies to the whole round

    def found(rule: IrregularityRule, kind: str, detail: str, clause: str | None = None) -> None:
        irregularities.append(Irregularity(kind, clause or rule.clause, detail, voids_round=rule.effect == "void"))
        effects.append((rule, detail))

    loaded = ri.logged_decks  # a count below one says nothing: as unlogged
    decks = loaded if loaded is not None else params.decks
    if loaded is not None and loaded != params.decks:
        found(rules.decks, "card_integrity", f"the device loaded {loaded} deck(s); the rule set plays {params.decks}")
    foreign = [k for k, c in enumerate(ri.cards) if c.code == FOREIGN]
    if foreign:
        found(rules.foreign_card, "card_integrity", f"foreign card at event(s) {', '.join(str(k + 1) for k in foreign)}")
    counts = Counter(c.code for c in ri.cards if is_valid(c.code))
    dups = sorted(code for code, k in counts.items() if k > decks)
    if dups:
        found(
            rules.card_count,
            "card_integrity",
            f"card(s) {', '.join(card_text(c) for c in dups)} appear more often than {decks} deck(s) hold: an excess of cards",
        )
    deal = reconstruct(procedure, clauses, ante_seats, ri.cards, rules.missing_burn.clause, rules.unexpected_burn.clause)
    steps.extend(in_play_order(deal, [plays[seat] for seat in ante_seats]))
    for p in deal.problems:
        rule = rules.missing_burn if p.kind == "missing_burn" else rules.unexpected_burn
        found(rule, "card_integrity", p.detail, p.clause)
    all_folded = bool(ante_seats) and all(plays[s].status == FOLDED for s in ante_seats)
    ended_early = (
        deal.missing > 0 and deal.excess == 0 and all_folded and deal.all_hole_cards_dealt and deal.stopped_at_step_boundary
    )
    if ended_early:
        steps.append(Step(f"the deal stopped after every seat folded; {deal.missing} card(s) not dealt", clauses[-1] if clauses else ""))
    elif deal.missing or deal.excess:
        what = f"{deal.missing} card(s) short" if deal.missing else f"{deal.excess} card(s) in excess"
        hint = ""
        unanted = sorted({w.seat for w in ri.wagers if w.seat not in ante_seats})
        if deal.excess and unanted and deal.excess == 2 * len(unanted):
            hint = f"; seat(s) {', '.join(map(str, unanted))} hold wagers but no Ante: had they been dealt, the count would be right"
        found(rules.card_count, "card_integrity", f"{what} of the deal procedure for {len(ante_seats)} seat(s) ({mode} mode){hint}")

    # 4. the irregularities' effects
    voiding = [(r, d) for r, d in effects if r.effect == "void"]
    if voiding:
        rule, detail = voiding[0]
        for w in ri.wagers:
            settlements[w.wager_id] = Settlement(0, rule.clause, f"round void ({detail}): every wager is returned")
        return RoundResult({**settlements}, {}, tuple(steps), tuple(irregularities), void=True, outcome={"void": True})
    no_rule = [(r, d) for r, d in effects if r.effect == "unsettled"]
    if no_rule:
        rule, detail = no_rule[0]
        for w in wagers:
            unsettled[w.wager_id] = f"{detail}: the rule set states no rule for it; the operator decides ({rule.clause})"
        return RoundResult(settlements, unsettled, tuple(steps), tuple(irregularities))

    # 5. the wagers on the hands
    known, unknown = _positions(deal)
    result, outcome = _settle_with_unknowns(params, mode, plays, wagers, known, unknown, counts, decks, ri, deal)
    for wid, r in result.items():
        if isinstance(r, Settlement):
            settlements[wid] = r
        else:
            unsettled[wid] = r
    return RoundResult(settlements, unsettled, tuple(steps), tuple(irregularities), outcome=outcome)


def in_play_order(deal: Deal, plays: list[SeatPlay]) -> list[Step]:
    """The deal's steps with the seats' decisions where the game makes them (HTB-4.11.2 to 4.11.4, MBS-3.7).

    Dealt from a shoe (HTB-4.11: hole cards, then the flop, turn and river, each after its burn): every seat's Flop
    or fold after the last hole card (the flop's burn follows the decisions), the Turn decisions after the third
    community card, the River's after the fourth, a concession after every card. A dispute reads "seat 1 checks
    the Turn" before "turn card: Ad", not after the dealer's cards. A device that deals the board before the hands
    (HTB-4.12.1) has dealt every card before anyone decides: its decisions follow the whole deal, street by street.
    A seat's own decisions keep their order within a street."""
    decided = sorted(((street, order, k, step) for order, play in enumerate(plays)
                      for k, (street, step) in enumerate(zip(play.streets, play.steps))), key=lambda t: t[:3])
    to = deal.dealt_to
    board = list(itertools.accumulate(t == "community" for t in to))  # community cards dealt once each step is done
    cards = [j for j, t in enumerate(to) if t != "burn"]
    board_first = next((j for j in cards if board[j] > 0), len(to))
    hands_first = "seat" not in to[board_first:]  # a shoe's deal: no hole card after the first community card
    # after which deal step each street's decisions stand: the last card (not a burn) dealt with at most that many
    # community cards on the table; on a device's deal, the last step
    last = len(deal.steps) - 1
    after = {street: max((j for j in cards if board[j] <= street), default=-1) if hands_first else last
             for street, *_ in decided}
    out: list[Step] = []
    pending = iter(decided)
    nxt = next(pending, None)
    for j in range(-1, len(deal.steps)):
        if j >= 0:
            out.append(deal.steps[j])
        while nxt is not None and (after[nxt[0]] == j or (j == len(deal.steps) - 1)):
            out.append(nxt[3])
            nxt = next(pending, None)
    return out


def _one_wager_per_area(params, wagers, settlements, unsettled, irregularities) -> list[Wager]:
    """Keep the first wager of each kind on each betting area (HTB-4.7.2); a later one is refused.

    What happens to the refused one is the rule set's ``one_wager_per_area``: ``returned`` (net 0,
    HTB-4.7.2 with 4.9: a bet the rules do not accept is refused) or ``unsettled`` (no rule in the text).
    """
    rule = params.one_wager_per_area
    first: dict[tuple[int, str], Wager] = {}
    kept: list[Wager] = []
    for w in wagers:
        key = (w.seat, w.bet)
        if key not in first:
            first[key] = w
            kept.append(w)
            continue
        detail = text.second_wager(w, first[key])
        irregularities.append(Irregularity("illegal_action", rule.clause, detail))
        if rule.effect == "returned":
            settlements[w.wager_id] = Settlement(0, rule.clause, f"{detail}: refused and returned")
        else:
            unsettled[w.wager_id] = f"{detail}: the rule set has no rule for it; the operator decides ({rule.clause})"
    return kept


def _stake_breaches(params, wagers) -> list[Irregularity]:
    """A jackpot wager of another amount than the stated stake (settled as placed: the prize is not odds)."""
    prog = params.progressive
    if prog is None or not stated(prog.stake):
        return []
    return [
        Irregularity("limit_breach", prog.stake_clause, text.stake_breach(w, prog.stake, prog.currency))
        for w in wagers
        if w.bet == "progressive" and w.amount != prog.stake
    ]


def _positions(deal: Deal) -> tuple[dict[Position, int], list[Position]]:
    """Every card position of the round with its code, and those with no usable card (unread or not dealt)."""
    known: dict[Position, int] = {}
    unknown: list[Position] = []
    slots: list[tuple[Position, int | None]] = []
    for seat, hole in zip(deal.seats, deal.hole):
        slots += [(("hole", seat, k), hole[k] if k < len(hole) else None) for k in range(2)]
    slots += [(("community", k), deal.community[k] if k < len(deal.community) else None) for k in range(5)]
    slots += [(("dealer", k), deal.dealer[k] if k < len(deal.dealer) else None) for k in range(2)]
    for pos, code in slots:
        if code is not None and is_valid(code):
            known[pos] = code
        else:
            unknown.append(pos)
    return known, unknown


def _hands_from(known: dict[Position, int], seats: tuple[int, ...]) -> Hands:
    return Hands(
        hole={s: (known[("hole", s, 0)], known[("hole", s, 1)]) for s in seats},
        community=tuple(known[("community", k)] for k in range(5)),
        dealer=(known[("dealer", 0)], known[("dealer", 1)]),
    )


def _settle_with_unknowns(params, mode, plays, wagers, known, unknown, counts, decks, ri, deal):
    seats = deal.seats
    with_jackpot = params.progressive is not None and any(w.bet == "progressive" for w in wagers)
    unseen = [c for c in range(52) if counts.get(c, 0) < decks]
    jackpot_seats = tuple(sorted({w.seat for w in wagers if w.bet == "progressive"}))
    envy = with_jackpot and params.progressive.envy_offered()

    def filled(assign: dict[Position, int]) -> dict[Position, int]:
        # every other unknown position gets a distinct card not otherwise used: it does not matter
        # to the wagers being settled, it only lets the evaluator run
        out = {**known, **assign}
        spare = (c for c in unseen if c not in assign.values())
        for pos in unknown:
            if pos not in out:
                out[pos] = next(spare)
        return out

    groups: dict[frozenset, list[Wager]] = {}
    for w in wagers:
        deps = dependencies(params, w, plays[w.seat], tuple(known.get(("hole", w.seat, k)) for k in range(2)), jackpot_seats)
        groups.setdefault(frozenset(deps & set(unknown)), []).append(w)
    result: dict[str, Settlement | str] = {}
    outcome: dict[str, object] = {}
    for key, group in groups.items():
        if len(key) > MAX_ENUMERATED_UNKNOWNS:
            names = ", ".join(position_name(p) for p in sorted(key, key=str))
            for w in group:
                result[w.wager_id] = f"{w.bet} depends on cards unread or not dealt ({names})"
            continue
        order = sorted(key, key=str)
        assigns = [dict(zip(order, combo)) for combo in itertools.permutations(unseen, len(order))] if order else [{}]
        hands_list = [_hands_from(filled(a), seats) for a in assigns]
        strengths = evaluate_many(hands_list, seats, with_jackpot)
        subset = group if not envy else group + [w for w in wagers if w.bet == "progressive" and w not in group]
        if not order and not outcome:
            outcome = _outcome(seats, plays, hands_list[0], strengths[0], set(unknown))
        names = ", ".join(position_name(p) for p in order)
        result.update(_merge_candidates(params, mode, plays, group, subset, hands_list, strengths, ri, names))
    if not outcome:
        outcome = _outcome(seats, plays, None, None, set(unknown))
    return result, outcome


def _merge_candidates(params, mode, plays, group, subset, hands_list, strengths, ri, names) -> dict[str, Settlement | str]:
    """Settle the group's wagers on every candidate deal; a wager is settled only if every candidate agrees.

    Candidates are read in order and the reading stops as soon as every wager of the group is known
    to differ (or cannot be settled at all), which is the common case for a wager an unread card decides.
    """
    first: dict[str, Settlement | str] = {}
    state: dict[str, str] = {}  # "same" | "detail" (same net and clause, other words) | "differs" | "reason"
    note: dict[str, str] = {}
    for c, (h, st) in enumerate(zip(hands_list, strengths)):
        settled = settle_on_hands(params, mode, plays, subset, h, st, ri.jackpot_meter, ri.currency)
        for w in group:
            r = settled[w.wager_id]
            if c == 0:
                first[w.wager_id] = r
                state[w.wager_id] = "reason" if isinstance(r, str) else "same"
                continue
            if state[w.wager_id] in ("reason", "differs"):
                continue
            f = first[w.wager_id]
            if isinstance(r, Settlement) and (r.net, r.clause) == (f.net, f.clause):
                if r.detail != f.detail:
                    state[w.wager_id] = "detail"
            else:
                state[w.wager_id] = "differs"
                if isinstance(r, str):
                    note[w.wager_id] = r
        if all(state[w.wager_id] in ("reason", "differs") for w in group):
            break
    out: dict[str, Settlement | str] = {}
    for w in group:
        f, how = first[w.wager_id], state[w.wager_id]
        if how == "reason" or how == "same":
            out[w.wager_id] = f
        elif how == "detail":
            out[w.wager_id] = Settlement(f.net, f.clause, f"{w.bet}: nets {f.net} whatever the unread card(s) ({names}) are")
        else:
            extra = f"; for one of them: {note[w.wager_id]}" if w.wager_id in note else ""
            out[w.wager_id] = f"{w.bet} depends on the unread card(s) ({names}): the result differs with what they are{extra}"
    return out


def _outcome(seats, plays, hands: Hands | None, st: Strengths | None, unknown: set) -> dict[str, object]:
    """The result in words for result_mismatch checks: the dealer's hand and each seat's."""
    dealer_known = not any(p[0] in ("community", "dealer") for p in unknown)
    out: dict[str, object] = {}
    dealer_known = dealer_known and (st is None or st.dealer != 0)  # 0: the same card twice (_twice)
    if hands is not None and st is not None and dealer_known:
        out["dealer_hand"] = text.hand(st.dealer)
        out["community"] = [card_text(c) for c in hands.community]
    seat_out = {}
    for seat in seats:
        play = plays[seat]
        entry: dict[str, object] = {"status": play.status}
        seat_known = dealer_known and ("hole", seat, 0) not in unknown and ("hole", seat, 1) not in unknown
        if hands is not None and st is not None and seat_known and st.seven[seat] != 0:
            entry["hand"] = text.hand(st.seven[seat])
            if play.status == PLAYED:
                p, d = st.seven[seat], st.dealer
                entry["result"] = "win" if p > d else "lose" if p < d else "stand_off"
        seat_out[str(seat)] = entry
    out["seats"] = seat_out
    return out
