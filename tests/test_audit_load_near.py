"""The audit's first read of a group's wagers and actions: near its rounds' times (``load._near_rounds``), the whole
table when the rounds' counts say some lie further (the same rows either way)."""

from __future__ import annotations

import datetime as dt

import polars as pl

from pipelines.audit.load import NEAR_ROUNDS, _near_rounds, load_partition
from pipelines.audit.params import AuditParams


def test_near_rounds_spans_the_rounds_times_with_a_margin_and_none_without_times():
    t = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.timezone.utc)
    rounds = pl.DataFrame({"bets_open_at": [t, None], "bets_closed_at": [t + dt.timedelta(minutes=1), None],
                           "settled_at": [t + dt.timedelta(minutes=2), t + dt.timedelta(hours=5)]})
    sql = _near_rounds(rounds, "w.placed_at")
    assert f"'{(t - NEAR_ROUNDS).isoformat()}'" in sql and f"'{(t + dt.timedelta(hours=5) + NEAR_ROUNDS).isoformat()}'" in sql
    none = pl.DataFrame({c: pl.Series([None], dtype=pl.Datetime("us", "UTC")) for c in rounds.columns})
    assert _near_rounds(none, "w.placed_at") is None and _near_rounds(rounds.head(0), "a.ts") is None
    # a time at the calendar's edge has no hour before it: the days' window is used instead, no error
    edge = pl.DataFrame({c: pl.Series([dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc)], dtype=pl.Datetime("us", "UTC"))
                         for c in rounds.columns})
    assert _near_rounds(edge, "w.placed_at") is None


def test_a_wager_stamped_hours_after_its_rounds_is_read_with_them():
    """Three hours after its round (outside NEAR_ROUNDS, inside the days' window the read used before): the count
    check reads it all the same, as it does a wager ten days away (tests/test_scope.py)."""
    from test_audit_findings import PLAYER_NATURAL
    from test_audit_support import DAY, NightBuilder

    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000), ("W2", "banker", 10000, -10000, 2, "P-2", 10800)])
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W3", "player", 10000, 10000)])
    part = load_partition(nb.connection(), ((DAY, "BAC-01"),), AuditParams())
    assert sorted(part.wagers["wager_id"]) == ["W1", "W2", "W3"]
    assert part.wagers.filter(pl.col("wager_id") == "W2")["amount"].to_list() == [10000]


def _fingerprints(far_amount: int, far_seconds: int, whole: bool, monkeypatch) -> dict:
    import pipelines.audit.fingerprint as fingerprint
    from test_audit_findings import PLAYER_NATURAL
    from test_audit_support import DAY, NightBuilder

    nb = NightBuilder()
    nb.round("BAC-01", 1, PLAYER_NATURAL, [("W1", "player", 10000, 10000),
                                           ("W2", "banker", far_amount, -far_amount, 2, "P-2", far_seconds)])
    nb.round("BAC-01", 2, PLAYER_NATURAL, [("W3", "player", 10000, 10000)])
    if whole:  # the read before the first try: every night's wagers and actions joined
        monkeypatch.setattr(fingerprint, "_first_reads", lambda cur, window: ("TRUE", "TRUE"))
    try:
        return fingerprint.partition_fingerprints(nb.connection(), [(DAY, "BAC-01")], AuditParams())
    finally:
        monkeypatch.undo()


def test_a_partitions_fingerprint_covers_a_wager_stamped_far_from_its_round(monkeypatch):
    """The fingerprint's first read of the wagers is near the rounds' times; a wager ten days away is still hashed (the
    rounds' counts send the read to the whole table): the same fingerprint as the whole read, and another when that
    wager changes."""
    for seconds in (0, 864000):
        first_try = _fingerprints(10000, seconds, False, monkeypatch)
        assert first_try == _fingerprints(10000, seconds, True, monkeypatch)
        assert first_try != _fingerprints(20000, seconds, False, monkeypatch)
