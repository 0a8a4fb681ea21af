"""Small simulated floors as the detectors read them (settlement and card frames), fast enough for tests
and for the detection-power benchmark over hundreds of nights.

The cards are real: every baccarat round is dealt from a shuffled 8-deck shoe and resolved by the rules
engine (``rulebook.baccarat.vector.resolve``), and settled on the rule set's pay table; blackjack shoes
are shuffled decks dealt a plausible number of cards per round (the counts need the sequence, not the
play). The planted behaviours are the issue's benchmark goals, each with a strength:

- ``counter_units``: a Hi-Lo counter at blackjack whose bet goes from 1 unit at a true count of 1 or
  less to ``counter_units`` units at +4.5 and above (1 = flat, undetectable);
- ``luck_multiple``: a Big Tiger bettor whose bets land on three-card Banker sixes ``luck_multiple``
  times as often as chance (1 = fair);
- ``collusion_rate``: the share of the rounds a colluding dealer deals to one player in which he overpays
  him (0 = off), on top of every dealer's honest error rate ``error_rate``;
- ``drift``: the share of rounds at one baccarat table on which a big bettor backs the winner (0 = off).

This is not ``pipelines.simulate`` (which writes the input files the whole audit reads); it builds the
audit's output frames directly, so a benchmark night costs milliseconds, not seconds.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import polars as pl

from rulebook.baccarat import vector as V

COMMISSION = "hoiana-tiger-baccarat/commission"
BLACKJACK = "hoiana-blackjack"
SIDE_BETS = ("tie", "player_pair", "banker_pair", "tiger", "small_tiger", "big_tiger")
SIDE_P = np.array([0.30, 0.20, 0.20, 0.15, 0.08, 0.07])
UNIT = 5_000  # cents: every unit bet is a multiple of 50.00
MULTS = (1, 1, 2, 3)
SIDE_CUM = np.cumsum(SIDE_P)[:-1]


@dataclass(frozen=True)
class Floor:
    baccarat_tables: int = 6
    baccarat_rounds: int = 300  # per table and night
    blackjack_tables: int = 2
    blackjack_rounds: int = 250
    players: int = 80
    dealers: int = 12
    seats: int = 5  # players at a table per round (at most)
    error_rate: float = 0.002  # each wager's chance of an honest settlement error (either way)
    # planted behaviours: a count of 0 leaves the player (or table) out; a strength of 1 (0 for the rates)
    # keeps him in, behaving fairly (the same floor, for false-positive counts)
    counter_units: float = 1.0
    counter_hands: int = 0
    luck_multiple: float = 1.0
    luck_bets: int = 0
    colluder: bool = False
    collusion_rate: float = 0.0
    drift: float = 0.0
    drift_rounds: int = 0
    drift_units: int = 12  # the informed bettor's stake, in units (the other seats bet 1 to 12 units)
    side_share: float = 0.25  # share of wagers that carry a side bet
    holdem_tables: int = 0  # Hold'em Bonus tables (Hoiana rule set), a fresh deck per round
    holdem_rounds: int = 200
    holdem_luck_multiple: float = 1.0  # a Bonus bettor whose Bonus wins this many times as often as chance
    holdem_luck_bets: int = 0
    blackjack_side: bool = False  # blackjack Pair and Insurance wagers, and main nets drawn from the engine's distribution


def _ruleset_version(name: str) -> str:
    from rulebook.catalogue import builtin

    return builtin().latest(name).version


def _shoe(rng, decks: int) -> np.ndarray:
    cards = np.tile(np.arange(52, dtype=np.int16), decks)
    rng.shuffle(cards)
    return cards


def _deal_baccarat(rng, rounds: int, decks: int = 8):
    """(cards per round as lists, result class, player pair, banker pair, shoe index per round)."""
    out_cards, cls, pp, bp, shoe_of = [], [], [], [], []
    shoe_no = 0
    while len(out_cards) < rounds:
        shoe = _shoe(rng, decks)
        limit = len(shoe) - 16
        windows = np.lib.stride_tricks.sliding_window_view(shoe[: limit + 6], 6)
        coups = V.resolve(windows.astype(np.int16))
        used = (coups.player_cards + coups.banker_cards).astype(int)
        klass = V.result_class(coups)
        i = 0
        while i < limit and len(out_cards) < rounds:
            n = used[i]
            out_cards.append(shoe[i:i + n])
            cls.append(int(klass[i]))
            pp.append(int(coups.player_pair[i]))
            bp.append(int(coups.banker_pair[i]))
            shoe_of.append(shoe_no)
            i += n
        shoe_no += 1
    return out_cards, np.array(cls), np.array(pp), np.array(bp), np.array(shoe_of)


def _baccarat_net_units(bet: str, cls: int, pp: int, bp: int, params) -> tuple[int, int]:
    """(numerator, denominator) of the net per unit wagered, from the rule set's pay table."""
    key = (bet, cls, pp, bp, id(params))
    if key not in _NETS:
        _NETS[key] = _net_units(bet, cls, pp, bp, params)
    return _NETS[key]


_NETS: dict = {}


def _net_units(bet: str, cls: int, pp: int, bp: int, params) -> tuple[int, int]:
    effect, num, den = V.payout_table(params)
    if bet in ("player_pair", "banker_pair"):
        won = (pp if bet == "player_pair" else bp) == 1
        reason = V.Reason.PLAYER_PAIR_WINS if bet == "player_pair" else V.Reason.BANKER_PAIR_WINS
        return (int(num[reason]), int(den[reason])) if won else (-1, 1)
    reason = V.Reason(int(V._main_table(params)[V.BET_CODES[bet], cls]))
    e = int(effect[reason])
    return (int(num[reason]), int(den[reason])) if e == 1 else ((-1, 1) if e == -1 else (0, 1))


def night(floor: Floor, day: dt.date, seed: int, colluder: str = "P-COLLUDER", dealer: str = "D-COLLUDER"):
    """One gaming day: (wagers, cards, dealer_errors) frames in the shapes ``pipelines.stats.load`` returns."""
    from pipelines.stats.distributions import ruleset_of

    rng = np.random.default_rng(seed)
    version = _ruleset_version(COMMISSION)
    params = ruleset_of(COMMISSION, version).params
    rows: list[tuple] = []
    card_rows: list[tuple] = []
    players = [f"P-{i:04d}" for i in range(floor.players)]
    dealers = [f"D-{i:03d}" for i in range(floor.dealers)]
    seq = 0
    wager_no = 0
    round_base = int((day - dt.date(2026, 1, 1)).days) * 100_000

    def add(table, rno, seat, player, dealer_id, game, ruleset, ver, bet, amount, cards_net, recorded, shoe, decks):
        nonlocal wager_no
        wager_no += 1
        rows.append((day, table, rno, f"W-{seed}-{wager_no}", wager_no, seat, player, dealer_id, game, ruleset, ver, "USD",
                     "settled", bet, amount, amount, cards_net, cards_net, recorded, recorded - cards_net, None,
                     f"rounds_{table}.jsonl", rno, shoe, decks))

    def honest(amount: int, net: int) -> int:
        if rng.random() < floor.error_rate:
            return net + (1 if rng.random() < 0.5 else -1) * max(500, amount // 10 // 500 * 500)
        return net

    # ---- baccarat
    n_bac = floor.baccarat_tables + (1 if floor.drift_rounds > 0 else 0)
    if floor.luck_bets > 0:
        # the lucky player: his Big Tiger bets land on three-card sixes luck_multiple times as often as chance,
        # picked from 20 times as many rounds dealt from real shoes at a table of his own
        pool = 20 * floor.luck_bets
        _, cls, pp, bp, shoe_of = _deal_baccarat(rng, pool)
        p = 0.0166
        w = np.where(cls == 4, floor.luck_multiple * (1 - p) / max(1e-9, 1 - floor.luck_multiple * p), 1.0)
        for r in sorted(rng.choice(pool, floor.luck_bets, replace=False, p=w / w.sum()).tolist()):
            num, den = _baccarat_net_units("big_tiger", cls[r], pp[r], bp[r], params)
            add("BAC-99", round_base + 90_000 + r, 1, "P-LUCKY", dealers[r // 40 % len(dealers)], "baccarat", COMMISSION,
                version, "big_tiger", 1000, 1000 * num // den, 1000 * num // den, f"S-BAC-99-{seed}-{shoe_of[r]}", 8)
    for t in range(n_bac):
        drift_table = floor.drift_rounds > 0 and t == n_bac - 1
        table = f"BAC-{t + 1:02d}"
        rounds = floor.drift_rounds if drift_table else floor.baccarat_rounds
        cards, cls, pp, bp, shoe_of = _deal_baccarat(rng, rounds)
        for r in range(rounds):
            rno = round_base + t * 10_000 + r
            shoe = f"S-{table}-{seed}-{shoe_of[r]}"
            dealer_id = dealers[(t * 3 + r // 40) % len(dealers)]
            if floor.colluder and t == 0 and (r // 40) % 2 == 0:
                dealer_id = dealer  # the colluding dealer deals every other stint at the colluder's table
            for c in cards[r]:
                seq += 1
                card_rows.append((table, shoe, seq, rno, int(c), 8))
            seated = rng.choice(floor.players, size=int(rng.integers(2, floor.seats + 1)), replace=False)
            seat = 0
            for pi in seated:
                seat += 1
                player = players[pi]
                unit = UNIT * (1 + pi % 4)
                main = "banker" if rng.random() < 0.6 else "player"
                amount = unit * MULTS[rng.integers(4)]
                num, den = _baccarat_net_units(main, cls[r], pp[r], bp[r], params)
                net = amount * num // den
                add(table, rno, seat, player, dealer_id, "baccarat", COMMISSION, version, main, amount, net, honest(amount, net), shoe, 8)
                if rng.random() < floor.side_share:
                    side = SIDE_BETS[int(np.searchsorted(SIDE_CUM, rng.random()))]
                    samount = max(500, amount // 5 // 500 * 500)
                    num, den = _baccarat_net_units(side, cls[r], pp[r], bp[r], params)
                    net = samount * num // den
                    add(table, rno, seat, player, dealer_id, "baccarat", COMMISSION, version, side, samount, net,
                        honest(samount, net), shoe, 8)
            if floor.colluder and t == 0:
                amount = 2 * UNIT
                main = "banker" if rng.random() < 0.5 else "player"
                num, den = _baccarat_net_units(main, cls[r], pp[r], bp[r], params)
                net = amount * num // den
                recorded = honest(amount, net)
                if dealer_id == dealer and rng.random() < floor.collusion_rate:
                    recorded = net + amount if net >= 0 else 0  # paid twice the win, or the loss not collected
                add(table, rno, floor.seats + 1, colluder, dealer_id, "baccarat", COMMISSION, version, main, amount, net,
                    recorded, shoe, 8)
            if drift_table:
                amount = floor.drift_units * UNIT
                winner = {0: "player", 1: None, 2: "banker", 3: "banker", 4: "banker"}[cls[r]]
                informed = rng.random() < floor.drift and winner is not None
                main = winner if informed else ("banker" if rng.random() < 0.5 else "player")
                num, den = _baccarat_net_units(main, cls[r], pp[r], bp[r], params)
                net = amount * num // den
                add(table, rno, floor.seats + 3, None, dealer_id, "baccarat", COMMISSION, version, main, amount, net, net, shoe, 8)

    # ---- blackjack: the card sequence, and main bets
    bj_version = _ruleset_version(BLACKJACK)
    for t in range(floor.blackjack_tables + (1 if floor.counter_hands > 0 else 0)):
        counter_table = floor.counter_hands > 0 and t == floor.blackjack_tables
        table = f"BJ-{t + 1:02d}"
        rounds = floor.counter_hands if counter_table else floor.blackjack_rounds
        decks = 6
        shoe_no, shoe, pos, rc, seen = 0, _shoe(rng, decks), 0, 0, 0
        for r in range(rounds):
            if pos > 0.75 * len(shoe):
                shoe_no, shoe, pos, rc, seen = shoe_no + 1, _shoe(rng, decks), 0, 0, 0
            rno = round_base + 50_000 + t * 10_000 + r
            sid = f"S-{table}-{seed}-{shoe_no}"
            dealer_id = dealers[(t * 5 + 1 + r // 40) % len(dealers)]
            tc = rc / max(0.5, (decks * 52 - seen) / 52)
            seated = rng.choice(floor.players, size=int(rng.integers(1, floor.seats + 1)), replace=False)
            hands = len(seated) + (1 if counter_table else 0)
            n_cards = 2 * (hands + 1) + int(rng.integers(0, hands + 2))
            ace_up = rng.random() < 1 / 13
            for seat, pi in enumerate(seated, start=1):
                amount = UNIT * (1 + pi % 4) * MULTS[rng.integers(4)]
                if floor.blackjack_side:
                    net = _draw(rng, BLACKJACK, bj_version, decks, "main", amount)
                else:
                    net = int(rng.choice([-1, 0, 1, 1], p=[0.48, 0.08, 0.40, 0.04]) * amount)
                add(table, rno, seat, players[pi], dealer_id, "blackjack", BLACKJACK, bj_version, "main", amount, net,
                    honest(amount, net), sid, decks)
                if floor.blackjack_side and rng.random() < floor.side_share:
                    samount = max(500, amount // 5 // 500 * 500)
                    net = _draw(rng, BLACKJACK, bj_version, decks, "pair", samount)
                    add(table, rno, seat, players[pi], dealer_id, "blackjack", BLACKJACK, bj_version, "pair", samount, net,
                        honest(samount, net), sid, decks)
                if floor.blackjack_side and ace_up and rng.random() < 0.3:
                    iamount = amount // 2 // 500 * 500 or 500
                    if "ins" not in locals() or ins[0] != rno:
                        ins = (rno, _draw(rng, BLACKJACK, bj_version, decks, "insurance", 1))  # one card for the round
                    net = ins[1] * iamount
                    add(table, rno, seat, players[pi], dealer_id, "blackjack", BLACKJACK, bj_version, "insurance", iamount,
                        net, honest(iamount, net), sid, decks)
            if counter_table:
                ramp = np.clip((tc - 1) / 3.5, 0, 1)
                units = int(round(1 + (floor.counter_units - 1) * ramp))
                amount = UNIT * units
                net = int(rng.choice([-1, 0, 1], p=[0.48, 0.08, 0.44]) * amount)
                add(table, rno, floor.seats + 1, "P-COUNTER", dealer_id, "blackjack", BLACKJACK, bj_version, "main",
                    amount, net, net, sid, decks)
            for c in shoe[pos:pos + n_cards]:
                seq += 1
                card_rows.append((table, sid, seq, rno, int(c), decks))
                rank = int(c) // 4
                rc += 1 if 1 <= rank <= 5 else (-1 if rank == 0 or rank >= 9 else 0)
            pos += n_cards
            seen += n_cards

    if floor.holdem_tables or floor.holdem_luck_bets:
        _holdem(floor, rng, add, players, dealers, round_base, honest)

    from pipelines.stats.load import WAGER_COLUMNS

    wagers = pl.DataFrame(rows, schema=[*WAGER_COLUMNS, "shoe_id", "decks"], orient="row", infer_schema_length=None).with_columns(
        pl.col("gaming_day").cast(pl.Date), pl.col("round_no").cast(pl.Int64), pl.col("seat").cast(pl.Int64),
        pl.col("amount").cast(pl.Int64), pl.col("settled_amount").cast(pl.Int64), pl.col("cards_net").cast(pl.Int64),
        pl.col("expected_net").cast(pl.Int64), pl.col("recorded_net").cast(pl.Int64), pl.col("difference").cast(pl.Int64),
        pl.col("adjustment").cast(pl.String), pl.col("decks").cast(pl.Int64), pl.col("player_id").cast(pl.String))
    cards = pl.DataFrame(card_rows, schema={"table_id": pl.String, "shoe_id": pl.String, "event_seq": pl.Int64,
                                            "round_no": pl.Int64, "card_code": pl.Int16, "decks": pl.Int64}, orient="row")
    errors = wagers.filter(pl.col("difference") != 0).select(
        "gaming_day", "table_id", "round_no", "dealer_id", pl.lit("payout_mismatch").alias("kind")).unique()
    return wagers, cards, errors


def nights(floor: Floor, first_day: dt.date, days: int, seed: int):
    """``days`` consecutive nights concatenated (the inputs of a 7-day window)."""
    parts = [night(floor, first_day + dt.timedelta(days=i), seed * 1000 + i) for i in range(days)]
    return tuple(pl.concat([p[k] for p in parts]) for k in range(3))


HOLDEM = "hoiana-holdem-bonus"


def _draw(rng, ruleset: str, version: str, decks: int, bet: str, amount: int) -> int:
    """One wager's net drawn from the bet's payout distribution (``payouts.bet_distribution``)."""
    from pipelines.stats.games import distribution_of

    d = distribution_of(ruleset, version, decks, bet)
    key = (ruleset, version, decks, bet)
    if key not in _CUM:
        _CUM[key] = (np.cumsum([float(p) for p in d.probs]), d.values)
    cum, values = _CUM[key]
    v = values[min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), len(values) - 1)]
    return int(amount * v.numerator // v.denominator)


_CUM: dict = {}


def _holdem(floor: Floor, rng, add, players, dealers, round_base: int, honest) -> None:
    """Hold'em Bonus tables dealt from a fresh deck each round: the Bonus on the seats' hole cards and the main
    game played by the engine's ``basic`` rule strategy and settled by its array kernel (``rulebook.holdem_bonus``),
    the seats sharing the board and the dealer's cards; and the lucky Bonus bettor, at a table of his own."""
    from pipelines.stats.distributions import ruleset_of
    from rulebook import poker
    from rulebook.holdem_bonus.odds import strategy_decisions
    from rulebook.holdem_bonus.params import BONUS_HANDS
    from rulebook.holdem_bonus.vector import BET_CODES, bonus_hand_index, main_game

    version = _ruleset_version(HOLDEM)
    params = ruleset_of(HOLDEM, version).params
    odds = {line.hand: tuple(map(int, line.odds.split(":"))) for line in params.bonus_pay_table}

    def bonus_net(hole: np.ndarray, dealer: np.ndarray, amount: int) -> np.ndarray:
        idx = bonus_hand_index(hole, dealer)
        out = np.full(len(idx), -amount, dtype=np.int64)
        for k, hand in enumerate(BONUS_HANDS):
            if hand in odds:
                out[idx == k] = amount * odds[hand][0] // odds[hand][1]
        return out

    for t in range(floor.holdem_tables):
        table = f"HB-{t + 1:02d}"
        n = floor.holdem_rounds
        seats = floor.seats
        decks = np.argsort(rng.random((n, 52)), axis=1)[:, : 7 + 2 * seats]  # board 0-4, dealer 5-6, seats after
        board, dealer = decks[:, :5], decks[:, 5:7]
        for seat in range(seats):
            hole = decks[:, 7 + 2 * seat: 9 + 2 * seat]
            cards = np.concatenate([hole, board, dealer], axis=1)  # hole 0-1, community 2-6, dealer 7-8
            turn, river, folded = strategy_decisions(cards, "basic")
            strength = poker.evaluate7(np.concatenate([np.concatenate([hole, board], axis=1),
                                                       np.concatenate([dealer, board], axis=1)]))
            p, d = strength[:n], strength[n:]
            sat = rng.random(n) < 0.7
            who = rng.choice(floor.players, size=n)
            for r in np.flatnonzero(sat).tolist():
                rno = round_base + 70_000 + t * 10_000 + r
                pi = int(who[r])
                ante = UNIT * (1 + pi % 4)
                dealer_id = dealers[(t * 7 + 2 + r // 40) % len(dealers)]
                shoe = f"S-{table}-{r}"
                status = np.array([1 if folded[r] else 0])
                for bet, amount in (("ante", ante), ("flop", 0 if folded[r] else 2 * ante),
                                    ("turn", ante if turn[r] and not folded[r] else 0),
                                    ("river", ante if river[r] and not folded[r] else 0)):
                    if amount == 0 and bet != "ante":
                        continue
                    net = int(main_game(params, np.array([BET_CODES[bet]]), status, p[r:r + 1], d[r:r + 1],
                                        np.array([amount]))[0][0])
                    add(table, rno, seat + 1, players[pi], dealer_id, "holdem_bonus", HOLDEM, version, bet, amount, net,
                        honest(amount, net), shoe, 1)
                if rng.random() < 0.5:
                    bamount = max(500, ante // 2 // 500 * 500)
                    net = int(bonus_net(hole[r:r + 1], dealer[r:r + 1], bamount)[0])
                    add(table, rno, seat + 1, players[pi], dealer_id, "holdem_bonus", HOLDEM, version, "bonus", bamount,
                        net, honest(bamount, net), shoe, 1)
    if floor.holdem_luck_bets:
        # the lucky Bonus bettor: his hands are picked from 20 times as many deals, a winning Bonus weighted
        # so that it comes holdem_luck_multiple times as often as chance
        pool = 20 * floor.holdem_luck_bets
        deals = np.argsort(rng.random((pool, 52)), axis=1)[:, :4]
        wins = bonus_hand_index(deals[:, :2], deals[:, 2:4]) >= 0
        q = 0.095
        m = floor.holdem_luck_multiple
        w = np.where(wins, m * (1 - q) / max(1e-9, 1 - m * q), 1.0)
        for r in sorted(rng.choice(pool, floor.holdem_luck_bets, replace=False, p=w / w.sum()).tolist()):
            net = int(bonus_net(deals[r:r + 1, :2], deals[r:r + 1, 2:4], 1000)[0])
            add("HB-99", round_base + 95_000 + r, 1, "P-LUCKY-HB", dealers[r // 40 % len(dealers)], "holdem_bonus", HOLDEM,
                version, "bonus", 1000, net, net, f"S-HB-99-{r}", 1)
