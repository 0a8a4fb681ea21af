"""Every rule set the casino has approved, all versions, and which one is in force on a date.

This is the engine's one contact with files: it reads the TOML files shipped in
``rulebook/rulesets/`` (or a folder the caller names) once, and hands out frozen objects.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from rulebook.ruleset import RuleSet, ruleset_from_mapping
from rulebook.strict import RuleSetError


class UnknownRuleSet(LookupError):
    """No rule set of that name, or none in force on that date."""


@dataclass(frozen=True)
class Catalogue:
    rulesets: tuple[RuleSet, ...]

    def __post_init__(self) -> None:
        seen: dict[tuple[str, str], RuleSet] = {}
        for rs in self.rulesets:
            key = (rs.name, rs.version)
            if key in seen:
                raise RuleSetError(f"rule set {rs.name} version {rs.version} is defined twice")
            seen[key] = rs
        for name in self.names():
            versions = sorted(self.versions(name), key=lambda r: r.header.effective_from)
            starts = [r.header.effective_from for r in versions]
            if len(set(starts)) != len(starts):
                raise RuleSetError(f"rule set {name}: two versions take effect on the same date")

    def names(self) -> tuple[str, ...]:
        return tuple(sorted({rs.name for rs in self.rulesets}))

    def versions(self, name: str) -> tuple[RuleSet, ...]:
        found = tuple(rs for rs in self.rulesets if rs.name == name)
        if not found:
            raise UnknownRuleSet(f"unknown rule set {name!r}; known: {', '.join(self.names())}")
        return found

    def in_force(self, name: str, day: dt.date) -> RuleSet:
        """The version of ``name`` in force on ``day``: the latest whose effective date is not after it."""
        candidates = [rs for rs in self.versions(name) if rs.in_force_on(day)]
        if not candidates:
            first = min(rs.header.effective_from for rs in self.versions(name))
            raise UnknownRuleSet(f"rule set {name!r} is not in force on {day.isoformat()} (first effective {first.isoformat()})")
        return max(candidates, key=lambda rs: rs.header.effective_from)

    def latest(self, name: str) -> RuleSet:
        return max(self.versions(name), key=lambda rs: rs.header.effective_from)

    def game_of(self, name: str) -> str:
        return self.versions(name)[0].game


def parse_ruleset_text(text: str, where: str) -> RuleSet:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RuleSetError(f"{where}: not valid TOML: {exc}") from exc
    return ruleset_from_mapping(data, where)


def load_catalogue(folder: Path | None = None) -> Catalogue:
    """Load every ``*.toml`` under ``folder`` (default: the rule sets shipped with the package)."""
    if folder is None:
        root = resources.files("rulebook") / "rulesets"
        files = sorted(_walk(root), key=lambda p: str(p))
    else:
        files = sorted(Path(folder).rglob("*.toml"))
    return Catalogue(tuple(parse_ruleset_text(f.read_text(encoding="utf-8"), str(f.name)) for f in files))


def _walk(node):  # importlib.resources Traversable has no rglob
    for child in node.iterdir():
        if child.is_dir():
            yield from _walk(child)
        elif child.name.endswith(".toml"):
            yield child


@cache
def builtin() -> Catalogue:
    """The shipped catalogue, loaded once per process (the files are immutable package data)."""
    return load_catalogue()
