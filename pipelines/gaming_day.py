"""The gaming day's start, as the ``--gaming-day-start`` option gives it: one parser for the ingest and the audit."""

from __future__ import annotations


def parse_day_start(text: str) -> int:
    """``"06:00"`` -> minutes after local midnight at which a gaming day begins; a clear error otherwise."""
    hours, sep, minutes = text.strip().partition(":")
    if not sep or not hours.isdigit() or not minutes.isdigit() or not (0 <= int(hours) < 24 and 0 <= int(minutes) < 60):
        raise ValueError(f"gaming-day start must be a local time HH:MM, e.g. 06:00; got {text!r}")
    return int(hours) * 60 + int(minutes)
