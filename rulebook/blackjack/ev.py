"""Expected values of every blackjack decision under a rule set, for an infinite shoe.

This is where the basic strategy comes from and what checks it: a dynamic programme over the
dealer's final hand and the player's totals for these rules (no hole card BJ-4.7.2; the dealer
stands on all 17s BJ-4.14.3; a dealer blackjack takes only the original wager BJ-4.9.5, 4.10.8;
double on any first two cards, after splits too BJ-4.9.1; split to four hands, aces once with one
card each BJ-4.10.4; surrender half before the subsequent deal, not against an ace BJ-4.12).

An infinite shoe (each rank 1/13, independent draws) is the textbook approximation: with 8 decks
the strategy is the same and the edge differs by a few hundredths of a percent (the simulation in
``odds.py`` uses the real shoe). Floats here are probabilities, never money.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from rulebook.blackjack.params import BlackjackParams

# point value 1 (ace) .. 10 (ten, jack, queen, king): the probability of each in an infinite shoe
P_VALUE = {v: (4 / 13 if v == 10 else 1 / 13) for v in range(1, 11)}
UP_CARDS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)  # the order the strategy tables use: 2..10, then ace
BUST = 22
BJ = 0  # the dealer's blackjack as an outcome key


def best_total(hard: int, ace: bool) -> int:
    return hard + 10 if ace and hard <= 11 else hard


@dataclass(frozen=True)
class Rules:
    """The parameters of a rule set that change decisions' values."""

    hits_soft_17: bool = False
    original_only: bool = True  # BJ-4.9.5, 4.10.8
    double_after_split: bool = True
    max_hands: int = 4
    resplit_aces: bool = False
    surrender: bool = True
    surrender_against_ace: bool = False
    blackjack_pays: float = 1.5

    @classmethod
    def of(cls, p: BlackjackParams) -> "Rules":
        bj = p.pay_table.blackjack.odds
        return cls(
            hits_soft_17=p.dealer_hits_soft_17,
            original_only=p.dealer_blackjack_takes_original_only,
            double_after_split=p.double_after_split,
            max_hands=p.max_hands,
            resplit_aces=p.resplit_aces,
            surrender=p.surrender_allowed,
            surrender_against_ace=p.surrender_against_ace,
            blackjack_pays=bj.num / bj.den,
        )


@lru_cache(maxsize=None)
def dealer_outcomes(up: int, hits_soft_17: bool = False) -> dict[int, float]:
    """The dealer's final hand given the first card, no hole card: {BJ, 17..21, BUST: probability}."""
    out: dict[int, float] = {}

    def walk(hard: int, ace: bool, n: int, prob: float) -> None:
        total = best_total(hard, ace)
        if n == 2 and total == 21:
            out[BJ] = out.get(BJ, 0.0) + prob
            return
        soft17 = total == 17 and ace and hard <= 11
        if total >= 17 and not (soft17 and hits_soft_17):
            key = BUST if total > 21 else total
            out[key] = out.get(key, 0.0) + prob
            return
        for v, pv in P_VALUE.items():
            walk(hard + v, ace or v == 1, n + 1, prob * pv)

    walk(up, up == 1, 1, 1.0)
    return out


class Values:
    """Every decision's expected value against one dealer up card, per unit of original wager."""

    def __init__(self, up: int, rules: Rules):
        self.up = up
        self.rules = rules
        d = dealer_outcomes(up, rules.hits_soft_17)
        self.p_bj = d.get(BJ, 0.0)
        self.p_bust = d.get(BUST, 0.0)
        self.p = {t: d.get(t, 0.0) for t in range(17, 22)}
        self._cache: dict = {}

    # -- standing: ``win`` is the value over the dealer's non-blackjack outcomes
    def win(self, total: int) -> float:
        if total > 21:
            return -(1.0 - self.p_bj)
        v = self.p_bust
        for d, pd in self.p.items():
            v += pd if total > d else (-pd if total < d else 0.0)
        return v

    def bj_loss(self, original: bool, mult: int) -> float:
        """What a dealer blackjack takes from a live hand: the original wager only (BJ-4.9.5, 4.10.8)."""
        if self.rules.original_only:
            return -1.0 if original else 0.0
        return -float(mult)

    def stand(self, total: int, original: bool = True) -> float:
        return self.win(total) + self.p_bj * self.bj_loss(original, 1)

    def hit(self, hard: int, ace: bool, original: bool = True) -> float:
        """Take a card, then play on as well as possible (no double, no surrender after a hit)."""
        key = ("h", hard, ace, original)
        if key in self._cache:
            return self._cache[key]
        ev = 0.0
        for v, pv in P_VALUE.items():
            h2, a2 = hard + v, ace or v == 1
            if h2 > 21:
                ev -= pv  # bust: collected at once, whatever the dealer then draws (BJ-4.13.3)
                continue
            t2 = best_total(h2, a2)
            if t2 == 21:
                ev += pv * self.stand(21, original)  # no more cards at 21 (BJ-4.13.2)
            else:
                ev += pv * max(self.stand(t2, original), self.hit(h2, a2, original))
        self._cache[key] = ev
        return ev

    def double(self, hard: int, ace: bool, original: bool = True) -> float:
        ev = 0.0
        for v, pv in P_VALUE.items():
            h2, a2 = hard + v, ace or v == 1
            if h2 > 21:
                ev -= 2 * pv
            else:
                ev += pv * (2 * self.win(best_total(h2, a2)) + self.p_bj * self.bj_loss(original, 2))
        return ev

    def surrender(self) -> float | None:
        r = self.rules
        if not r.surrender or (self.up == 1 and not r.surrender_against_ace):
            return None
        return -0.5

    def two_card(self, a: int, b: int, original: bool, after_split: bool) -> dict[str, float]:
        """The value of each decision on a two-card hand (not a blackjack)."""
        hard, ace = a + b, a == 1 or b == 1
        total = best_total(hard, ace)
        if total == 21:
            return {"stand": self.stand(21, original)}
        out = {"stand": self.stand(total, original), "hit": self.hit(hard, ace, original)}
        if not after_split or self.rules.double_after_split:
            out["double"] = self.double(hard, ace, original)
        if not after_split:
            s = self.surrender()
            if s is not None:
                out["surrender"] = s
        return out

    def split_hand(self, r: int, c: int, original: bool) -> float:
        """A split hand of value ``r`` that received ``c``, played as well as possible (no resplit)."""
        if r == 1:  # split aces: one card each (BJ-4.10.4.1); ace + ten is 21, not blackjack (BJ-4.10.5)
            return self.stand(best_total(1 + c, True), original)
        return max(self.two_card(r, c, original, after_split=True).values())

    def split(self, r: int) -> float:
        """Split a pair of value ``r`` into up to ``max_hands`` hands (BJ-4.10.4); the first hand
        keeps the original wager, the others are put-up wagers (BJ-4.10.8)."""
        rules = self.rules

        @lru_cache(maxsize=None)
        def pending(m: int, hands: int, first_original: bool) -> float:
            # the value of ``m`` single-card hands still to play when the seat has ``hands`` hands
            if m == 0:
                return 0.0
            o = first_original
            ev = 0.0
            for c, pc in P_VALUE.items():
                play = self.split_hand(r, c, o) + pending(m - 1, hands, False)
                if c == r and hands < rules.max_hands and (r != 1 or rules.resplit_aces):
                    play = max(play, pending(m + 1, hands + 1, o))
                ev += pc * play
            return ev

        return pending(2, 2, True)

    def initial(self, a: int, b: int) -> dict[str, float]:
        """Every decision on the seat's first two cards (``a``, ``b`` point values)."""
        out = self.two_card(a, b, original=True, after_split=False)
        if a == b:
            out["split"] = self.split(a)
        return out

    def blackjack(self) -> float:
        """A player blackjack: paid unless the dealer makes one too (BJ-6.2.3.1); no even money."""
        return (1.0 - self.p_bj) * self.rules.blackjack_pays


def round_value(rules: Rules) -> float:
    """The player's expected result per unit of initial wager, playing every hand optimally."""
    ev = 0.0
    for up, pu in P_VALUE.items():
        vals = Values(up, rules)
        for a, pa in P_VALUE.items():
            for b, pb in P_VALUE.items():
                if {a, b} == {1, 10}:
                    ev += pu * pa * pb * vals.blackjack()
                else:
                    ev += pu * pa * pb * max(vals.initial(a, b).values())
    return ev


LETTER = {"stand": "S", "hit": "H", "double": "D", "surrender": "R", "split": "P"}


def preference(values: dict[str, float]) -> str:
    """Decisions by falling value, as letters, up to the first of hit/stand (always available):
    ``"RH"`` = surrender if allowed, else hit. Exact ties keep the order stand, hit, double, ..."""
    order = sorted(values, key=lambda k: -values[k])
    out = ""
    for k in order:
        out += LETTER[k]
        if k in ("hit", "stand"):
            break
    return out


def derive_tables(rules: Rules) -> dict[str, dict[int, tuple[str, ...]]]:
    """The basic strategy these values imply: ``hard`` (totals 4-21), ``soft`` (12-21) and ``pair``
    (point value 1-10) tables, each row a preference code per dealer card 2..10, A (UP_CARDS)."""
    vals = {u: Values(u, rules) for u in UP_CARDS}

    def row(f) -> tuple[str, ...]:
        return tuple(preference(f(vals[u])) for u in UP_CARDS)

    def totals(v: Values, hard: int, ace: bool) -> dict[str, float]:
        total = best_total(hard, ace)
        if total >= 21:
            return {"stand": v.stand(21)}
        out = {"stand": v.stand(total), "hit": v.hit(hard, ace), "double": v.double(hard, ace)}
        s = v.surrender()
        if s is not None:
            out["surrender"] = s
        return out

    hard = {t: row(lambda v, t=t: totals(v, t, False)) for t in range(4, 22)}
    soft = {t: row(lambda v, t=t: totals(v, t - 10, True)) for t in range(12, 22)}
    pair = {r: row(lambda v, r=r: v.initial(r, r)) for r in range(1, 11)}
    return {"hard": hard, "soft": soft, "pair": pair}
