"""Build frozen dataclasses from parsed TOML, rejecting unknown keys and wrong types.

A rule set is a legal text turned into data: a misspelt key silently falling back to a default
would change what the casino is told it owes. So every key must be known, every value must have
the declared type, and the error names the file and the key.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import types
import typing
from enum import Enum
from typing import Any, TypeVar

from rulebook.money import Odds

T = TypeVar("T")


class RuleSetError(ValueError):
    """A rule-set file that cannot be loaded; the message names the file and the key."""


def build(cls: type[T], data: Any, where: str) -> T:
    """``cls(**data)`` with every field converted and checked; ``where`` prefixes error messages."""
    if not isinstance(data, dict):
        raise RuleSetError(f"{where}: expected a table, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise RuleSetError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(fields))}")
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for name, field in fields.items():
        if name in data:
            kwargs[name] = convert(hints[name], data[name], f"{where}.{name}")
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise RuleSetError(f"{where}: missing required key {name}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise RuleSetError(f"{where}: {exc}") from exc


def convert(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return convert(arg, value, where)
            except RuleSetError as exc:
                errors.append(str(exc))
        raise RuleSetError("; ".join(errors))
    if origin is tuple:
        if not isinstance(value, list):
            raise RuleSetError(f"{where}: expected a list, got {value!r}")
        item = args[0]
        return tuple(convert(item, v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise RuleSetError(f"{where}: expected a table, got {value!r}")
        return types.MappingProxyType({k: convert(args[1], v, f"{where}.{k}") for k, v in value.items()})
    if hint is Odds:
        if not isinstance(value, str):
            raise RuleSetError(f"{where}: odds are written as a string 'num:den', got {value!r}")
        try:
            return Odds.parse(value)
        except ValueError as exc:
            raise RuleSetError(f"{where}: {exc}") from exc
    if isinstance(hint, type) and issubclass(hint, Enum):
        try:
            return hint(value)
        except ValueError as exc:
            allowed = ", ".join(repr(m.value) for m in hint)
            raise RuleSetError(f"{where}: {value!r} is not one of {allowed}") from exc
    if dataclasses.is_dataclass(hint):
        return build(hint, value, where)  # type: ignore[arg-type]
    if hint is bool:
        if not isinstance(value, bool):
            raise RuleSetError(f"{where}: expected true/false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RuleSetError(f"{where}: expected an integer, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise RuleSetError(f"{where}: expected text, got {value!r}")
        return value
    if hint is dt.date:
        if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
            raise RuleSetError(f"{where}: expected a date (YYYY-MM-DD), got {value!r}")
        return value
    raise RuleSetError(f"{where}: no conversion for type {hint!r}")
