"""What a simulated night is made of: the knobs a user turns, and the casino's fixed habits.

Everything here is frozen data. ``SimConfig`` is what ``pitaudit simulate`` passes in; the
constants below are the floor's habits (paces, limits, currencies, time zones, seat counts),
chosen to be plausible for an Asian integrated resort and written down once so the rest of the
simulator never invents a number of its own.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Final

from rulebook.catalogue import builtin


@dataclass(frozen=True, slots=True)
class Behaviours:
    """Strengths (0 = off, 1 = blatant) of the planted behaviours the statistical detectors look for.

    - ``counter``: a blackjack card counter's bet spread follows the Hi-Lo true count
      (at 1 the bet climbs to 12 units; at 0 the counter flat-bets and is undetectable).
    - ``luck``: the share of a lucky player's baccarat rounds in which he knows the cards: he backs the
      best-paying side bet that wins, or places none when none wins (past-posting help: the cards are
      fair, the choice is not); at 0.5 he wins about 3.5 times the fair rate, at 1 every side bet.
    - ``collusion``: the share of a player's wagers with one dealer that the dealer overpays.
    - ``drift``: the share of rounds at one baccarat table on which the big unrated bettors back the
      side that wins, so the table's hold drifts far below theory.
    """

    counter: float = 0.5
    luck: float = 0.5
    collusion: float = 0.5
    drift: float = 0.5

    def __post_init__(self) -> None:
        for name in ("counter", "luck", "collusion", "drift"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"behaviour strength {name} must be within 0..1, got {value}")

    @classmethod
    def off(cls) -> "Behaviours":
        return cls(0.0, 0.0, 0.0, 0.0)

    @property
    def any(self) -> bool:
        return any(v > 0 for v in (self.counter, self.luck, self.collusion, self.drift))


@dataclass(frozen=True, slots=True)
class SimConfig:
    """One simulation run. ``tables`` 0 means: as many as the rounds need at each game's pace."""

    out: str
    rounds: int = 5_000  # per gaming day, across the floor
    tables: int = 0
    days: int = 1
    seed: int = 7
    fault_rate: float = 0.01  # share of rounds with a planted fault
    start_day: dt.date = dt.date(2026, 11, 24)  # the first gaming day
    behaviours: Behaviours = field(default_factory=Behaviours)
    workers: int = 0  # processes; 0 = one per core
    # the night's share of rounds per game, e.g. (("baccarat", 40.0), ("holdem_bonus", 40.0), ("blackjack", 20.0));
    # None: the floor's usual mix (RULESET_SHARES). Relative weights: they need not sum to 100.
    game_shares: tuple[tuple[str, float], ...] | None = None

    def __post_init__(self) -> None:
        if self.rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {self.rounds}")
        if self.tables < 0:
            raise ValueError(f"tables must not be negative, got {self.tables}")
        if self.days < 1:
            raise ValueError(f"days must be at least 1, got {self.days}")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError(f"fault rate must be within 0..1, got {self.fault_rate}")
        if self.seed < 0:
            raise ValueError(f"seed must not be negative, got {self.seed}")
        if self.game_shares is not None:
            check_game_shares(self.game_shares)

    @property
    def ruleset_shares(self) -> tuple[tuple[str, float], ...]:
        """Table shares per rule set: the usual floor, or the one that deals ``game_shares`` of the rounds."""
        return RULESET_SHARES if self.game_shares is None else shares_for_games(dict(self.game_shares))


# ---- the floor ---------------------------------------------------------------------------------

#: Share of the floor's tables per rule set. Baccarat dominates an Asian integrated resort's floor
#: (about two thirds of the tables and most of the drop); blackjack and the poker games share the
#: rest. With each game's pace this gives about 77 % baccarat rounds, 15 % blackjack, 8 % Hold'em.
#: Every rule set gets at least one table once the floor has six.
RULESET_SHARES: Final[tuple[tuple[str, float], ...]] = (
    ("hoiana-tiger-baccarat/commission", 0.38),
    ("hoiana-tiger-baccarat/no-commission", 0.30),
    ("hoiana-blackjack", 0.16),
    ("hoiana-holdem-bonus", 0.06),
    ("mbs-holdem-bonus-progressive", 0.05),
    ("guide-holdem-bonus-progressive", 0.05),
)

GAMES: Final[tuple[str, ...]] = ("baccarat", "blackjack", "holdem_bonus")


def check_game_shares(shares: tuple[tuple[str, float], ...]) -> None:
    """A game mix names known games once each, with shares that are not negative and not all zero."""
    names = [g for g, _ in shares]
    unknown = sorted(set(names) - set(GAMES))
    if unknown:
        raise ValueError(f"unknown game {unknown[0]!r} in the game shares (games: {', '.join(GAMES)})")
    if len(set(names)) != len(names):
        raise ValueError("a game is named twice in the game shares")
    if any(not (v >= 0.0) or v == float("inf") for _, v in shares):
        raise ValueError("game shares must be finite numbers of 0 or more")
    if sum(v for _, v in shares) <= 0:
        raise ValueError("at least one game needs a share above 0")


def parse_game_shares(text: str) -> tuple[tuple[str, float], ...]:
    """``"baccarat=40,holdem_bonus=40,blackjack=20"`` -> the pairs, checked; a game left out gets no table."""
    pairs = []
    for part in text.split(","):
        if not part.strip():
            continue
        name, eq, value = part.partition("=")
        if not eq:
            raise ValueError(f"game shares are GAME=SHARE pairs separated by commas, got {part.strip()!r}")
        try:
            share = float(value)
        except ValueError:
            raise ValueError(f"the share of {name.strip()!r} must be a number, got {value.strip()!r}") from None
        pairs.append((name.strip(), share))
    out = tuple(pairs)
    check_game_shares(out)
    return out


def shares_for_games(game_shares: dict[str, float]) -> tuple[tuple[str, float], ...]:
    """Table shares per rule set that deal about ``game_shares`` of the night's rounds per game.

    A table deals rounds at its game's ``PACE``, so a game's tables are its share of the rounds over its pace;
    within a game its rule sets keep their usual proportions (``RULESET_SHARES``). A game with no share (or left
    out) gets no table."""
    game = {r: builtin().game_of(r) for r, _ in RULESET_SHARES}
    total = sum(game_shares.values())
    within = {g: sum(s for r, s in RULESET_SHARES if game[r] == g) for g in GAMES}
    return tuple((r, (game_shares.get(game[r], 0.0) / total) / PACE[game[r]] * s / within[game[r]])
                 for r, s in RULESET_SHARES)


#: Where each rule set's tables are: currency (integer cents) and UTC offset in minutes. The guide
#: is a New South Wales text: Sydney in November keeps daylight time (+11:00); the simulator uses a
#: fixed offset per venue and does not model a daylight-saving change inside a run.
VENUE: Final[dict[str, tuple[str, int]]] = {
    "hoiana-tiger-baccarat/commission": ("USD", 7 * 60),
    "hoiana-tiger-baccarat/no-commission": ("USD", 7 * 60),
    "hoiana-blackjack": ("USD", 7 * 60),
    "hoiana-holdem-bonus": ("USD", 7 * 60),
    "mbs-holdem-bonus-progressive": ("SGD", 8 * 60),
    "guide-holdem-bonus-progressive": ("AUD", 11 * 60),
}

#: Table id prefix per rule set (the table log's ``table_id``, e.g. BAC-07).
TABLE_PREFIX: Final[dict[str, str]] = {
    "hoiana-tiger-baccarat/commission": "BAC",
    "hoiana-tiger-baccarat/no-commission": "NCB",
    "hoiana-blackjack": "BJ",
    "hoiana-holdem-bonus": "HTB",
    "mbs-holdem-bonus-progressive": "MBS",
    "guide-holdem-bonus-progressive": "GHB",
}

#: Rounds per hour of play, the issue's figures; the simulated timings are tuned to land near them.
PACE: Final[dict[str, float]] = {"baccarat": 70.0, "blackjack": 60.0, "holdem_bonus": 30.0}

#: Seats (betting positions) per game.
SEATS: Final[dict[str, int]] = {"baccarat": 6, "blackjack": 7, "holdem_bonus": 6}

#: Hours of play a table may be given in one gaming day when the floor size is derived from the
#: rounds asked for (the rest is the late-morning lull, shoe changes and drift).
PLANNED_HOURS: Final = 18.0
#: Most hours of play a table can be given: beyond this the rounds asked for do not fit the tables.
MAX_HOURS: Final = 20.0
#: Fewest tables a derived floor has (so that every rule set and several pits are present).
MIN_AUTO_TABLES: Final = 24

#: Chip unit per currency: every amount a player puts down is a multiple of it (cents).
CHIP: Final = 500


@dataclass(frozen=True, slots=True)
class LimitTier:
    """A table-limit sign (integer cents). ``differential`` only for baccarat (TBAC-2.2.17)."""

    min: int
    max: int
    differential: int | None
    side_min: int
    side_max: int
    weight: float


#: Limit signs per game, with the share of tables carrying each.
LIMIT_TIERS: Final[dict[str, tuple[LimitTier, ...]]] = {
    "baccarat": (
        LimitTier(2_500, 500_000, 1_000_000, 500, 100_000, 0.40),
        LimitTier(5_000, 1_000_000, 2_000_000, 500, 200_000, 0.35),
        LimitTier(10_000, 2_000_000, 4_000_000, 1_000, 400_000, 0.20),
        LimitTier(50_000, 5_000_000, 10_000_000, 5_000, 1_000_000, 0.05),
    ),
    "blackjack": (
        LimitTier(2_500, 250_000, None, 500, 50_000, 0.50),
        LimitTier(5_000, 500_000, None, 500, 100_000, 0.35),
        LimitTier(10_000, 1_000_000, None, 1_000, 200_000, 0.15),
    ),
    "holdem_bonus": (
        LimitTier(2_500, 200_000, None, 100, 50_000, 0.60),
        LimitTier(5_000, 500_000, None, 100, 100_000, 0.40),
    ),
}

#: A jackpot wager's fixed amount (one unit of the table's currency) and the meter it feeds.
PROGRESSIVE_WAGER: Final = 100
JACKPOT_SEED: Final = 5_000_000  # the meter after a reset (50,000.00)
JACKPOT_CONTRIBUTION: Final = (1, 5)  # a fifth of each jackpot wager goes to the meter

#: Dealer rotation: a 20-minute stint at each table of the pit in turn, then a break.
ROTATION_MS: Final = 20 * 60 * 1000
SHIFT_HOURS: Final = 8
PIT_SIZE: Final = 8

#: Gaming day starts at 06:00 local (formats: "06:00 to 06:00 local time by default").
GAMING_DAY_START: Final = dt.time(6, 0)
