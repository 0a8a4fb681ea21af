"""The main wager's value under basic strategy, by simulation over arrays of rounds (numpy).

Every round is one seat playing ``strategy.py`` against the dealer from a freshly shuffled shoe of
``decks`` decks, with the rules of the rule set: no hole card, the dealer's draws after the
players' (BJ-4.7.2, 4.14), doubling and splitting as BJ-4.9 and 4.10 allow, surrender not against
an ace (BJ-4.12), a dealer blackjack taking only the original wager (BJ-4.9.5, 4.10.8).
Insurance and even money are declined, as basic strategy does.

Cards are drawn without replacement, per round, only when the play needs one, in the order the
state machine takes them (seat, dealer, seat, then the hands in play order, then the dealer), so
``record=True`` returns each round's cards as point values and the scalar state machine can replay
them (tests prove the two agree round by round). Results are in units of the initial wager:
floats, because they are statistics, not money.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rulebook.blackjack.params import BlackjackParams
from rulebook.blackjack.strategy import DECISION, table

H, S, D, P, R = 0, 1, 2, 3, 4  # decisions, in the order of the strategy letters below
LETTERS = {"H": H, "S": S, "D": D, "P": P, "R": R}
ACTIVE, STOOD, BUST, SURRENDERED, CLOSED = 1, 2, 3, 4, 5  # a hand slot's state (0 = no hand)
SLOTS = 4
MAX_CARDS = 64  # recorded cards per round: four hands and the dealer never need more


@dataclass(frozen=True)
class SimResult:
    rounds: int
    mean: float  # the player's average result per initial wager
    sd: float  # its standard deviation per round
    win: float  # share of rounds with a positive result
    push: float  # share with zero
    cards: np.ndarray | None = None  # (rounds, MAX_CARDS) point values 1..10, 0 = unused (record=True)
    results: np.ndarray | None = None  # (rounds,) per-round results (record=True)

    @property
    def house_edge(self) -> float:
        return -self.mean

    @property
    def ci95(self) -> tuple[float, float]:
        half = 1.96 * self.sd / float(np.sqrt(self.rounds))
        return (float(self.house_edge - half), float(self.house_edge + half))


def _code_tables():
    """The strategy tables as arrays: preference letters per code, and code per (row, dealer column)."""
    codes: dict[str, int] = {}
    arrays = {}
    for kind, rows in (("hard", 22), ("soft", 22), ("pair", 11)):
        t = table(kind)
        arr = np.zeros((rows, 10), dtype=np.int16)
        for row, cells in t.items():
            for col, code in enumerate(cells):
                arr[row, col] = codes.setdefault(code, len(codes))
        arrays[kind] = arr
    pref = np.full((len(codes), 3), -1, dtype=np.int8)
    for code, i in codes.items():
        assert all(ch in DECISION for ch in code) and len(code) <= 3
        for k, ch in enumerate(code):
            pref[i, k] = LETTERS[ch]
    # dealer column by point value 1..10 (ace is the last column)
    col = np.array([9, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8], dtype=np.int8)  # index 0 unused, 1 = ace
    return arrays["hard"], arrays["soft"], arrays["pair"], pref, col


HARD_T, SOFT_T, PAIR_T, PREF, COLUMN = _code_tables()


class _Batch:
    """The arrays of one batch of rounds, and the one operation that touches the shoe: draw."""

    def __init__(self, n: int, decks: int, rng: np.random.Generator, record: bool):
        self.rng = rng
        self.full = np.array([4 * decks] * 9 + [16 * decks], dtype=np.int16)
        self.counts = np.tile(self.full, (n, 1))
        self.size = 52 * decks
        self.value_at = np.repeat(np.arange(10, dtype=np.int8), self.full)  # shoe position -> value index
        self.record = record
        if record:
            self.cards = np.zeros((n, MAX_CARDS), dtype=np.int8)
            self.ptr = np.zeros(n, dtype=np.int32)

    def draw(self, rows: np.ndarray) -> np.ndarray:
        """A card for each of ``rows`` (point values 1..10), without replacement within the round.

        Rejection sampling: propose a value with its full-shoe probability, accept it with the share
        of its cards still in this round's shoe; accepted values follow the cards left exactly."""
        out = np.empty(rows.size, dtype=np.int8)
        todo = np.arange(rows.size)
        while todo.size:
            r = rows[todo]
            v = self.value_at[self.rng.integers(0, self.size, size=todo.size)]
            ok = self.rng.random(todo.size) * self.full[v] < self.counts[r, v]
            self.counts[r[ok], v[ok]] -= 1
            out[todo[ok]] = v[ok] + 1
            todo = todo[~ok]
        if self.record:
            self.cards[rows, self.ptr[rows]] = out
            self.ptr[rows] += 1
        return out


def simulate_main(
    params: BlackjackParams,
    decks: int,
    rounds: int,
    seed: int = 20261125,
    batch: int = 250_000,
    record: bool = False,
) -> SimResult:
    """Play ``rounds`` rounds of basic strategy; the mean result per initial wager with its spread."""
    rng = np.random.default_rng(seed)
    total = 0.0
    total_sq = 0.0
    wins = pushes = 0
    cards_out, results_out = [], []
    done = 0
    while done < rounds:
        n = min(batch, rounds - done)
        res, b = _play_batch(params, decks, n, rng, record)
        total += float(res.sum())
        total_sq += float((res * res).sum())
        wins += int((res > 0).sum())
        pushes += int((res == 0).sum())
        if record:
            cards_out.append(b.cards)
            results_out.append(res)
        done += n
    mean = total / rounds
    sd = float(np.sqrt(max(total_sq / rounds - mean * mean, 0.0)))
    return SimResult(
        rounds,
        mean,
        sd,
        wins / rounds,
        pushes / rounds,
        np.concatenate(cards_out) if record else None,
        np.concatenate(results_out) if record else None,
    )


def _totals(hard: np.ndarray, ace: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    soft = ace & (hard <= 11)
    return np.where(soft, hard + 10, hard), soft


def _play_batch(params: BlackjackParams, decks: int, n: int, rng: np.random.Generator, record: bool):
    b = _Batch(n, decks, rng, record)
    every = np.arange(n)
    hard = np.zeros((n, SLOTS), dtype=np.int16)
    ace = np.zeros((n, SLOTS), dtype=bool)
    ncards = np.zeros((n, SLOTS), dtype=np.int8)
    first = np.zeros((n, SLOTS), dtype=np.int8)  # the first card's point value (for pairs)
    second = np.zeros((n, SLOTS), dtype=np.int8)
    mult = np.ones((n, SLOTS), dtype=np.int8)
    status = np.zeros((n, SLOTS), dtype=np.int8)
    split_aces = np.zeros((n, SLOTS), dtype=bool)
    nh = np.ones(n, dtype=np.int8)

    # the initial deal: seat, dealer, seat (BJ-4.7.2)
    c1 = b.draw(every)
    up = b.draw(every)
    c2 = b.draw(every)
    hard[:, 0] = c1 + c2
    ace[:, 0] = (c1 == 1) | (c2 == 1)
    ncards[:, 0] = 2
    first[:, 0], second[:, 0] = c1, c2
    natural = ace[:, 0] & (hard[:, 0] == 11)
    status[:, 0] = np.where(natural, CLOSED, ACTIVE)
    col = COLUMN[up]
    up_ace = up == 1

    def add_card(rows, j, v):
        hard[rows, j] += v
        ace[rows, j] |= v == 1
        ncards[rows, j] += 1
        t, _ = _totals(hard[rows, j], ace[rows, j])
        status[rows, j] = np.where(hard[rows, j] > 21, BUST, np.where(t == 21, CLOSED, status[rows, j]))

    for j in range(SLOTS):
        while True:
            rows = every[(nh > j) & (status[:, j] == ACTIVE)]
            if rows.size == 0:
                break
            # a hand formed by a split takes its second card when its turn comes (BJ-4.10.2)
            one = rows[ncards[rows, j] == 1]
            if one.size:
                v = b.draw(one)
                second[one, j] = v
                add_card(one, j, v)
                sa = one[split_aces[one, j]]
                status[sa, j] = np.where(status[sa, j] == ACTIVE, CLOSED, status[sa, j])
                continue
            t, soft = _totals(hard[rows, j], ace[rows, j])
            two = ncards[rows, j] == 2
            is_pair = two & (first[rows, j] == second[rows, j])
            code = np.where(
                is_pair,
                PAIR_T[first[rows, j], col[rows]],
                np.where(soft, SOFT_T[np.minimum(t, 21), col[rows]], HARD_T[np.clip(t, 4, 21), col[rows]]),
            )
            allowed = np.zeros((rows.size, 5), dtype=bool)
            allowed[:, H] = True
            allowed[:, S] = True
            from_split = nh[rows] > 1
            allowed[:, D] = two & (~from_split | params.double_after_split)
            allowed[:, P] = is_pair & (nh[rows] < params.max_hands) & ~((first[rows, j] == 1) & from_split & (not params.resplit_aces))
            allowed[:, R] = two & ~from_split & (j == 0) & (~up_ace[rows] | params.surrender_against_ace) & params.surrender_allowed
            choice = np.full(rows.size, -1, dtype=np.int8)
            for k in range(3):
                letter = PREF[code, k]
                ok = (choice < 0) & (letter >= 0) & allowed[np.arange(rows.size), np.maximum(letter, 0)]
                choice[ok] = letter[ok]
            choice[choice < 0] = np.where(t[choice < 0] >= 17, S, H)

            st = rows[choice == S]
            status[st, j] = STOOD
            sr = rows[choice == R]
            status[sr, j] = SURRENDERED
            hi = rows[choice == H]
            if hi.size:
                add_card(hi, j, b.draw(hi))
            do = rows[choice == D]
            if do.size:
                mult[do, j] = 2
                add_card(do, j, b.draw(do))
                status[do, j] = np.where(status[do, j] == ACTIVE, STOOD, status[do, j])
            sp = rows[choice == P]
            if sp.size:
                # the new hand's play position is the rule set's split_play_order (state.place_split_hand): right
                # after this one, later hands moving along, or after the seat's last hand (BJ-4.10.2)
                if params.split_play_order == "newest_first":
                    for arr in (hard, ace, ncards, first, second, mult, status, split_aces):
                        for k in range(SLOTS - 1, j + 1, -1):
                            arr[sp, k] = arr[sp, k - 1]
                    slot = np.full(sp.size, j + 1)
                else:
                    slot = nh[sp]
                v = first[sp, j]
                aces = (v == 1) & params.split_aces_one_card
                for k in (np.full(sp.size, j), slot):
                    hard[sp, k] = v
                    ace[sp, k] = v == 1
                    ncards[sp, k] = 1
                    first[sp, k] = v
                    second[sp, k] = 0
                    mult[sp, k] = 1
                    status[sp, k] = ACTIVE
                    split_aces[sp, k] = aces
                nh[sp] += 1
                # this hand takes its second card at once (BJ-4.10.2)
                v2 = b.draw(sp)
                second[sp, j] = v2
                add_card(sp, j, v2)
                sa = sp[aces]
                status[sa, j] = np.where(status[sa, j] == ACTIVE, CLOSED, status[sa, j])

    # the dealer draws as far as the hands in play need (BJ-4.14.1)
    slot_live = (np.arange(SLOTS)[None, :] < nh[:, None]) & ((status == STOOD) | (status == CLOSED))
    player_bj = natural & (nh == 1)
    slot_live[:, 0] &= ~player_bj
    need_total = slot_live.any(axis=1)
    need_second = need_total | (player_bj & (up_ace | (up == 10)))
    d_hard = up.astype(np.int16)
    d_ace = up_ace.copy()
    d_n = np.ones(n, dtype=np.int8)
    rows = every[need_second]
    if rows.size:
        v = b.draw(rows)
        d_hard[rows] += v
        d_ace[rows] |= v == 1
        d_n[rows] += 1
    while True:
        t, soft = _totals(d_hard, d_ace)
        stands = (t >= 17) & ~(params.dealer_hits_soft_17 & soft & (t == 17))
        rows = every[need_total & ~stands]
        if rows.size == 0:
            break
        v = b.draw(rows)
        d_hard[rows] += v
        d_ace[rows] |= v == 1
        d_n[rows] += 1
    d_total, _ = _totals(d_hard, d_ace)
    dealer_bj = (d_n == 2) & (d_total == 21)

    # settle each hand in units of the initial wager (BJ-4.12.1, 4.13.3, 5.1, 6.2, 4.9.5, 4.10.8)
    bj = params.pay_table.blackjack.odds
    res = np.zeros(n, dtype=np.float64)
    res += np.where(player_bj, np.where(dealer_bj, 0.0, bj.num / bj.den), 0.0)
    for j in range(SLOTS):
        exists = (nh > j) & ~(player_bj if j == 0 else np.zeros(n, dtype=bool))
        m = mult[:, j].astype(np.float64)
        st = status[:, j]
        t, _ = _totals(hard[:, j], ace[:, j])
        cmp = np.sign(np.where(d_total > 21, 1, t - d_total)).astype(np.float64)
        if params.dealer_blackjack_takes_original_only:
            vs_bj = -1.0 if j == 0 else 0.0
            on_bj = np.full(n, vs_bj)
        else:
            on_bj = -m
        value = np.select(
            [st == SURRENDERED, st == BUST, dealer_bj],
            [np.full(n, -0.5), -m, on_bj],
            default=m * cmp,
        )
        res += np.where(exists, value, 0.0)
    return res, b
