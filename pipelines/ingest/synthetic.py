"""A small writer of *valid* logs in the input formats, for the ingest tests and benchmark.

It is not the simulator (``pitaudit simulate`` deals real games with planted faults): the cards
here are random and the nets do not follow any rule. It only has to be valid input, fast to write
at a million rounds, and deterministic for a seed.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from dataclasses import dataclass
from pathlib import Path

from rulebook.cards import RANKS, SUITS

CARDS = [r + s for r in RANKS for s in SUITS]
TABLES = (
    ("BAC", "baccarat", "hoiana-tiger-baccarat/commission", ("banker", "player", "tie", "banker_pair", "tiger")),
    ("BJ", "blackjack", "hoiana-blackjack", ("main", "pair", "insurance")),
    ("HB", "holdem_bonus", "hoiana-holdem-bonus", ("ante", "bonus", "progressive")),
)
CSV_HEADER = "device_id,table_id,shoe_id,event_seq,ts,event,round_no,card,decks"
START = dt.datetime(2026, 11, 24, 18, 0, 0, tzinfo=dt.timezone(dt.timedelta(hours=7)))


def iso(t: dt.datetime) -> str:
    return t.isoformat(timespec="milliseconds")


@dataclass
class TableLog:
    table_id: str
    device_id: str
    round_lines: list[str]
    event_lines: list[str]


def table_log(index: int, rounds: int, seed: int, wagers: int = 6, cards: int = 6,
              start: dt.datetime = START, first_round: int = 1, seconds_per_round: int = 40,
              first_seq: int = 1) -> TableLog:
    """The logs of one table: ``rounds`` round lines and their device events (one shoe, its event_seq from
    ``first_seq``: a device counts on from night to night)."""
    rng = random.Random(seed * 1_000_003 + index)
    prefix, game, ruleset, bets = TABLES[index % len(TABLES)]
    table_id = f"{prefix}-{index:02d}"
    device_id = f"AE-{index:04d}"
    shoe_id = f"S-{table_id}-0001"
    events = [f"{device_id},{table_id},{shoe_id},{first_seq},{iso(start)},shoe_start,,,8"]
    seq = first_seq
    lines = []
    for k in range(rounds):
        round_no = first_round + k
        t0 = start + dt.timedelta(seconds=seconds_per_round * k + 1)
        closed = t0 + dt.timedelta(seconds=20)
        ws = []
        for i in range(wagers):
            amount = rng.randrange(1, 200) * 500
            ws.append({"wager_id": f"W-{table_id}-{round_no}-{i + 1}", "seat": i % 7 + 1,
                       "player_id": f"P-{rng.randrange(1000):04d}" if i % 3 else None, "bet": bets[i % len(bets)],
                       "amount": amount, "placed_at": iso(t0 + dt.timedelta(seconds=5 + i % 10)),
                       "net": rng.choice((-amount, 0, amount))})
        actions = []
        if game == "blackjack":
            actions = [{"seat": 1, "hand": 1, "action": "stand", "amount": None, "ts": iso(closed + dt.timedelta(seconds=5))}]
        elif game == "holdem_bonus":
            actions = [{"seat": 2, "hand": 1, "action": "flop", "amount": 1000, "ts": iso(closed + dt.timedelta(seconds=5))}]
        record = {
            "table_id": table_id, "game": game, "ruleset": ruleset, "round_no": round_no, "shoe_id": shoe_id,
            "dealer_id": f"D{1000 + index}", "currency": "USD",
            "deal_mode": "shoe" if game == "holdem_bonus" else None,
            "limits": {"min": 500, "max": 500000, "differential": 1000000},
            "bets_open_at": iso(t0), "bets_closed_at": iso(closed),
            "settled_at": iso(closed + dt.timedelta(seconds=15)), "status": "settled",
            "recorded_result": {"winner": "banker", "player_points": 5, "banker_points": 6} if game == "baccarat" else None,
            "jackpot_meter": None, "wagers": ws, "actions": actions,
        }
        lines.append(json.dumps(record, separators=(",", ":")))
        for c in range(cards):
            seq += 1
            events.append(f"{device_id},{table_id},{shoe_id},{seq},{iso(closed + dt.timedelta(seconds=1 + c))},"
                          f"card,{round_no},{rng.choice(CARDS)},")
    seq += 1
    events.append(f"{device_id},{table_id},{shoe_id},{seq},{iso(start + dt.timedelta(seconds=seconds_per_round * rounds + 30))},shoe_end,,,")
    return TableLog(table_id, device_id, lines, events)


def write_night(out: Path, rounds: int, tables: int = 24, seed: int = 7, wagers: int = 6, cards: int = 10) -> dict[str, int]:
    """Write ``rounds`` rounds spread over ``tables`` tables: one rounds and one shoe file per table."""
    out.mkdir(parents=True, exist_ok=True)
    per_table = [rounds // tables + (1 if i < rounds % tables else 0) for i in range(tables)]
    totals = {"rounds": 0, "wagers": 0, "events": 0}
    for i, n in enumerate(per_table):
        if n == 0:
            continue
        log = table_log(i, n, seed, wagers, cards)
        (out / f"rounds_{log.table_id}.jsonl").write_text("\n".join(log.round_lines) + "\n", encoding="utf-8")
        (out / f"shoe_{log.device_id}.csv").write_text(CSV_HEADER + "\n" + "\n".join(log.event_lines) + "\n",
                                                       encoding="utf-8")
        totals["rounds"] += n
        totals["wagers"] += n * wagers
        totals["events"] += len(log.event_lines)
    return totals
