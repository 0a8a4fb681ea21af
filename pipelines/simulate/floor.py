"""The casino floor: which tables exist, what they play, their limits, devices and pits.

A floor mixes all six rule sets in fixed shares (``config.RULESET_SHARES``, or a game mix the user asked for,
``SimConfig.game_shares``); each table has one
card device for its life, a limit sign, a deal mode (Hold'em) and a deck count (blackjack), and
belongs to a pit of at most ``PIT_SIZE`` tables of one game at one venue, whose dealers rotate
among its tables. Built once per run from the planner's random generator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipelines.simulate.config import (
    LIMIT_TIERS,
    PIT_SIZE,
    RULESET_SHARES,
    SEATS,
    TABLE_PREFIX,
    VENUE,
    LimitTier,
)
from rulebook.catalogue import builtin

#: Device id prefix per game and deal mode.
_DEVICE_PREFIX = {"baccarat": "AE", "blackjack": "SH", ("holdem_bonus", "shoe"): "CS", ("holdem_bonus", "device"): "ADD"}


@dataclass(frozen=True, slots=True)
class Table:
    index: int  # position on the floor, 0-based; also the table's random stream
    table_id: str
    ruleset: str
    game: str
    currency: str
    utc_offset_min: int
    device_id: str
    limits: LimitTier
    seats: int
    pit: int
    decks: int
    deal_mode: str | None  # Hold'em only: "shoe" | "device"
    reads_hidden_burns: bool  # baccarat devices on some tables only read the exposed burn card


def ruleset_counts(n_tables: int, ruleset_shares: tuple[tuple[str, float], ...] = RULESET_SHARES) -> list[tuple[str, int]]:
    """Tables per rule set: the shares by largest remainder, every rule set with a share present once the floor
    has a table for each (``ruleset_shares``: the usual floor, or a game mix's, ``SimConfig.ruleset_shares``).

    The usual floor first gives each rule set one table and shares out the rest (as it always has: the same seed
    writes the same night). A game mix shares out every table and then lends a table to any rule set left with
    none, from the largest: one table each up front would tilt a mix towards its small games."""
    shares = np.array([s for _, s in ruleset_shares if s > 0])
    names = [n for n, s in ruleset_shares if s > 0]
    usual = tuple(ruleset_shares) == RULESET_SHARES
    if usual and n_tables >= len(names):
        base = np.ones(len(names), dtype=np.int64)
        rest = n_tables - len(names)
    else:
        base = np.zeros(len(names), dtype=np.int64)
        rest = n_tables
    raw = shares / shares.sum() * rest
    whole = np.floor(raw).astype(np.int64)
    left = rest - int(whole.sum())
    order = np.argsort(-(raw - whole), kind="stable")
    whole[order[:left]] += 1
    counts = base + whole
    if not usual and n_tables >= len(names):
        for i in np.flatnonzero(counts == 0):
            counts[int(np.argmax(counts))] -= 1
            counts[i] = 1
    return [(n, int(c)) for n, c in zip(names, counts) if c > 0]


def build_floor(n_tables: int, rng: np.random.Generator,
                ruleset_shares: tuple[tuple[str, float], ...] = RULESET_SHARES) -> tuple[Table, ...]:
    """The floor's tables in a fixed order: by rule set (the shares' order), then by number."""
    catalogue = builtin()
    tables: list[Table] = []
    pit = -1
    for ruleset, count in ruleset_counts(n_tables, ruleset_shares):
        game = catalogue.game_of(ruleset)
        currency, offset = VENUE[ruleset]
        tiers = LIMIT_TIERS[game]
        weights = np.array([t.weight for t in tiers])
        tier_idx = rng.choice(len(tiers), size=count, p=weights / weights.sum())
        width = max(2, len(str(count)))
        for k in range(count):
            if k % PIT_SIZE == 0:
                pit += 1
            index = len(tables)
            deal_mode = None
            decks = 8 if game == "baccarat" else 1
            if game == "holdem_bonus":
                deal_mode = "shoe" if k % 2 == 0 else "device"
                prefix = _DEVICE_PREFIX[(game, deal_mode)]
            else:
                prefix = _DEVICE_PREFIX[game]
            if game == "blackjack":
                decks = 6 if k % 3 == 2 else 8  # BJ-4.1 allows 1-8; the device's shoe_start says which
            tables.append(
                Table(
                    index=index,
                    table_id=f"{TABLE_PREFIX[ruleset]}-{k + 1:0{width}d}",
                    ruleset=ruleset,
                    game=game,
                    currency=currency,
                    utc_offset_min=offset,
                    device_id=f"{prefix}-{index + 101:04d}",
                    limits=tiers[int(tier_idx[k])],
                    seats=SEATS[game],
                    pit=pit,
                    decks=decks,
                    deal_mode=deal_mode,
                    reads_hidden_burns=(game != "baccarat") or (k % 3 != 1),
                )
            )
    return tuple(tables)
