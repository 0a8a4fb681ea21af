"""Every ``PITAUDIT_*`` setting, read once, validated, frozen: the one place the environment enters.

The CLI builds a :class:`Settings` with :func:`load_settings` when a command starts and hands it down (the
ingest, the audit flow, the parse workers receive it as a parameter; nothing else reads ``os.environ`` for
these). A malformed value stops the command with a one-line :class:`SettingsError` naming the variable,
never a silent fall-back to the default. The README's Settings table documents each field
(``tests/test_settings_documented.py`` iterates the fields against it, the datasette way).

The money bound (``max_amount``): money is BIGINT (signed 64 bits, at most 2**63 - 1 = 9.22e18) in the
core tables, and the audit multiplies and subtracts amounts per wager (a payout is the amount times a
pay-table ratio; a difference is recorded minus expected) before it sums them over a night. An amount
near 2**63 overflows the first product. The default bound, 10**12 smallest units (a trillion dong, or
ten billion dollars in cents: three orders of magnitude above any table's limit), leaves room for:
- per wager, the amount times the largest pay ratio of the rule sets plus the stake (at most 10**12 x
  ~10**3 = 10**15), and any difference of two such values, inside BIGINT with 9,000x to spare;
- per night, DuckDB sums BIGINT into HUGEINT (2**127 = 1.7e38): 10**23 wagers at the worst case; a
  plain BIGINT sum of amounts holds 9.2 million wagers all at the bound, and of worst-case payouts
  9,200 (an Int128 or HUGEINT sum is the audit's safe choice; the bound makes it sufficient).
Amounts beyond the bound are quarantined at intake (reason ``amount_beyond_bound``), so a single
corrupt value cannot break tonight's totals or any later night's.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "PITAUDIT_"

# DuckDB's memory limit for the one writer and for each audit reader, when PITAUDIT_DUCKDB_MEMORY is unset:
# with the loader's own frames the writer stays under the 4 GB goal; several readers run at once.
WRITER_MEMORY = "1500MB"
READER_MEMORY = "1GB"

# the largest bound a user may set: a product with a pay ratio of ~1,000 must still fit BIGINT
LARGEST_BOUND = 10**15
DEFAULT_MAX_AMOUNT = 10**12

_MEMORY = re.compile(r"(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|kib|mib|gib|tib)", re.IGNORECASE)
_UNITS = {u.lower(): u for u in ("B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB")}


class SettingsError(ValueError):
    """A ``PITAUDIT_*`` variable holds a value that cannot be used; the message is one line naming it."""


_UNIT_BYTES = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
               "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
# DuckDB's memory limit within which an audit can run at all: below a few tens of MB even a small night's first
# statement runs out of memory (8MB did, 32MB audited a 1,200-round night); above a petabyte DuckDB refuses the
# value ("Memory value out of range"). Both were found only mid-run, after the ingest; now when the command starts.
MEMORY_BOUNDS = (32 * 10**6, 10**15)


def _memory_limit(text: str) -> str:
    """``"8GB"``, ``"1500 mb"`` -> ``"8GB"``, ``"1500MB"``: a number and a unit, nothing else (it goes into SQL),
    within :data:`MEMORY_BOUNDS`."""
    m = _MEMORY.fullmatch(text.strip())
    if not m or float(m.group(1)) <= 0:
        raise ValueError("must be a size such as 1500MB, 8GB or 2GiB")
    size = float(m.group(1)) * _UNIT_BYTES[m.group(2).lower()]
    if not MEMORY_BOUNDS[0] <= size <= MEMORY_BOUNDS[1]:
        raise ValueError("must be a size from 32MB to 1000TB, such as 1500MB, 8GB or 2GiB")
    return f"{m.group(1)}{_UNITS[m.group(2).lower()]}"


MemoryLimit = Annotated[str, AfterValidator(_memory_limit)]


def _apprise_url(text: str) -> str:
    """A URL Apprise can send to, checked when the command starts: one it does not understand was only found when the
    night had something to say, and then dropped without a word."""
    import apprise  # only when the setting is given (its import takes a second)

    if not apprise.Apprise().add(text.strip()):
        raise ValueError("must be an Apprise URL such as mailto://user:password@example.com, slack://TOKEN_A/TOKEN_B/"
                         "TOKEN_C or json://host/path")
    return text.strip()


NotifyUrl = Annotated[str, AfterValidator(_apprise_url)]


# the most worker processes a setting may ask for: each holds a batch or a group in memory at once, so a typo such as
# 10000 started one parser per batch of the night together and ran the machine out of memory; 256 is a large host's cores
MAX_PROCESSES = 256


class Settings(BaseSettings):
    """The run's settings. Each field is the environment variable ``PITAUDIT_<NAME>``; ``None`` means "choose"."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", frozen=True, env_ignore_empty=True,
                                      validate_default=True, case_sensitive=False)

    duckdb_memory: MemoryLimit | None = Field(
        None, description="DuckDB's memory limit per connection (it spills to disk past it), e.g. 8GB; "
                          f"unset: {WRITER_MEMORY} for the writer, {READER_MEMORY} for each audit reader")
    ingest_workers: int | None = Field(
        None, ge=0, le=MAX_PROCESSES,
        description="processes that parse input files ahead of the one writer; unset: one per core; 0 or 1 parses in "
                    "the writer; at most 256")
    audit_processes: int | None = Field(
        None, ge=0, le=MAX_PROCESSES,
        description="worker processes that audit the groups of partitions; 0 runs them on threads; unset: one per core "
                    "for nights of 128 MiB or more, else 0; at most 256")
    group_rounds: int = Field(50_000, gt=0, description="about how many rounds one group of partitions holds")
    max_amount: int = Field(
        DEFAULT_MAX_AMOUNT, ge=1, le=LARGEST_BOUND,
        description="the largest amount (smallest currency unit) an input may carry; beyond it the line is "
                    "quarantined (amount_beyond_bound)")
    debug: bool = Field(False, description="1 shows the traceback behind a one-line error")
    rule_docs: Path | None = Field(
        None, description="folder of the casino's rule documents, read where a clause's text is shown; "
                          "unset: only the clause id is shown")
    cameras: Path | None = Field(
        None, description="the table-to-camera map (TOML) an evidence pack names the cameras from (docs/evidence.md); "
                          "unset: the video window with no camera id")
    evidence_packs: int = Field(
        2_000, ge=0, description="at most how many finding rounds' evidence packs an audit writes beside its report "
                                 "(the worst first); the others' rows show the command that makes theirs")
    notebook_db: Path | None = Field(
        None, description="the database the notebooks read; unset: out/pitaudit.readonly.duckdb if there, else the "
                          "sample night audited into a temporary folder")
    lock_wait: float = Field(
        300.0, ge=0, le=86_400, allow_inf_nan=False,  # a scheduled run waits at most a day, never for ever
        description="seconds a run waits for another run writing the same database to finish (at most 86400, a day); "
                    "0 stops at once with a one-line reason")
    notify_url: NotifyUrl | None = Field(
        None, description="an Apprise URL (e.g. mailto://..., slack://...) told when an audit fails or finds "
                          "high-severity findings; unset: no notification")

    @property
    def writer_memory(self) -> str:
        return self.duckdb_memory or WRITER_MEMORY

    @property
    def reader_memory(self) -> str:
        return self.duckdb_memory or READER_MEMORY

    @property
    def parse_workers(self) -> int:
        """The ingest's parse processes; 0 or 1 parses in the writer's process."""
        return self.ingest_workers if self.ingest_workers is not None else (os.cpu_count() or 1)

    @classmethod
    def defaults(cls) -> "Settings":
        """Every default, the environment not read (tests, and callers that were handed nothing)."""
        return cls.model_construct()  # the defaults are valid (validate_default checks them on every load)


def env_name(field: str) -> str:
    """``"max_amount"`` -> ``"PITAUDIT_MAX_AMOUNT"``."""
    return ENV_PREFIX + field.upper()


# settings whose value may hold a password (an Apprise URL's): an error names the variable, never repeats the value
SECRET_FIELDS = frozenset({"notify_url"})


def _one_line(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        field = str(err["loc"][0]) if err.get("loc") else ""
        name = env_name(field) if field else ENV_PREFIX + "*"
        msg = err["msg"].removeprefix("Value error, ")
        msg = msg[:1].lower() + msg[1:]
        shown = err.get("input") is not None and field not in SECRET_FIELDS
        parts.append(f"{name}={err.get('input')!r}: {msg}" if shown else f"{name}: {msg}")
    return "; ".join(parts)


def _unknown_names(environ) -> str | None:
    """One line naming a ``PITAUDIT_*`` variable that is no setting (and the setting it is nearest), else None: a
    misspelled name (``PITAUDIT_LOCKWAIT=0``) was read by nothing and left the default without a word. Names are
    compared without regard to case, as the settings are read."""
    import difflib

    known = {env_name(field) for field in Settings.model_fields}
    unknown = sorted(name.upper() for name in environ if name.upper().startswith(ENV_PREFIX) and name.upper() not in known)
    if not unknown:
        return None
    parts = []
    for name in unknown:
        near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
        parts.append(f"{name}: not a pitaudit setting" + (f" (did you mean {near[0]}?)" if near else ""))
    return "; ".join(parts) + "; every setting is in the README's Settings table"


def load_settings() -> Settings:
    """The settings from the environment; :class:`SettingsError` (one line, naming the variable) when malformed or
    when a ``PITAUDIT_*`` variable is no setting."""
    unknown = _unknown_names(os.environ)
    if unknown:
        raise SettingsError(unknown)
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingsError(_one_line(exc)) from None


def settings_with(overrides: dict | None = None) -> Settings:
    """The environment's settings with ``overrides`` (field -> value) on top: how a flow run that was handed plain
    parameters (a Prefect deployment's) gets its settings. One-line :class:`SettingsError` when malformed."""
    base = load_settings()
    if not overrides:
        return base
    try:
        return Settings.model_validate({**base.model_dump(), **overrides})
    except ValidationError as exc:
        raise SettingsError(_one_line(exc)) from None
