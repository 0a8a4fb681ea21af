"""The audit's key-only joins (pipelines.audit.joins) and the reconstruction's order check give the plain polars results."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from pipelines.audit.joins import attach, attach_round_blocks
from pipelines.audit.frames import in_order

KEYS = st.tuples(st.sampled_from(["T-1", "T-2", "T-10", None]), st.integers(0, 4) | st.none())


def _left(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(
        {"table_id": [r[0] for r in rows], "round_no": [r[1] for r in rows], "amount": list(range(len(rows))),
         "bet": [f"b{i}" for i in range(len(rows))]},
        schema={"table_id": pl.String, "round_no": pl.Int64, "amount": pl.Int64, "bet": pl.String},
    )


def _right(rows: list[tuple], column: str = "net") -> pl.DataFrame:
    return pl.DataFrame(
        {"table_id": [r[0] for r in rows], "round_no": [r[1] for r in rows], column: [10 * i for i in range(len(rows))],
         "note": [None if i % 2 else f"n{i}" for i in range(len(rows))]},
        schema={"table_id": pl.String, "round_no": pl.Int64, column: pl.Int64, "note": pl.String},
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(KEYS, max_size=12), st.lists(KEYS, max_size=8), st.sampled_from(["left", "inner"]),
       st.sampled_from(["net", "amount"]))
def test_attach_is_the_plain_join(left_keys, right_keys, how, column):
    """Unique keys, repeated keys, null keys, an empty side, a shared column name: the plain join's rows in left order."""
    left, right = _left(left_keys), _right(right_keys, column)
    expected = left.join(right, on=["table_id", "round_no"], how=how, maintain_order="left")
    assert_frame_equal(attach(left, right, ["table_id", "round_no"], how=how), expected)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["T-1", "T-2", "T-10"]), st.integers(0, 4)), max_size=12),
       st.lists(st.tuples(st.sampled_from(["T-1", "T-2", "T-10", "T-3"]), st.integers(0, 4)), max_size=8),
       st.sampled_from(["left", "inner"]))
def test_attach_by_the_round_search_is_the_plain_join(left_keys, right_keys, how):
    """No null key: the int64 search of each left row's round (unique keys on the right, a table only one side has,
    rows in any order), or the join where the right repeats a key; both the plain join's rows in left order."""
    left, right = _left(left_keys), _right(right_keys)
    expected = left.join(right, on=["table_id", "round_no"], how=how, maintain_order="left")
    assert_frame_equal(attach(left, right, ["table_id", "round_no"], how=how), expected)


def test_attach_keeps_left_order_and_only_adds_columns():
    left = _left([("T-2", 1), ("T-1", 3), ("T-2", 0)])
    right = _right([("T-2", 0), ("T-2", 1)])
    out = attach(left, right, ["table_id", "round_no"])
    assert out.columns == ["table_id", "round_no", "amount", "bet", "net", "note"]
    assert out["amount"].to_list() == [0, 1, 2]
    assert out["net"].to_list() == [10, None, 0]
    inner = attach(left, right, ["table_id", "round_no"], how="inner")
    assert inner["amount"].to_list() == [0, 2]


def test_attach_refuses_other_joins():
    with pytest.raises(ValueError):
        attach(_left([]), _right([]), ["table_id"], how="full")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["D-2", "D-10", "D-1"]), st.integers(0, 5)), max_size=10))
def test_in_order_is_sortedness(rows):
    df = pl.DataFrame({"device_id": [r[0] for r in rows], "event_seq": [r[1] for r in rows]},
                      schema={"device_id": pl.String, "event_seq": pl.Int64})
    keys = ["device_id", "event_seq"]
    assert in_order(df, keys) == (df.rows() == sorted(df.rows()))


def test_in_order_with_a_null_is_not_in_order():
    df = pl.DataFrame({"device_id": ["D-1", None], "event_seq": [1, 2]})
    assert not in_order(df, ["device_id", "event_seq"])


def _events(rows: list[tuple[str, str, int, int, str]]) -> pl.DataFrame:
    import datetime as dt

    day = dt.date(2026, 11, 1)
    return pl.DataFrame({
        "device_id": [r[0] for r in rows], "table_id": [r[1] for r in rows], "shoe_id": [f"S-{r[0]}" for r in rows],
        "event_seq": [r[3] for r in rows],
        "ts": [dt.datetime(2026, 11, 1, 20, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=r[3]) for r in rows],
        "event": [r[4] for r in rows], "round_no": [r[2] for r in rows], "card": ["AS"] * len(rows),
        "card_code": [r[3] % 52 for r in rows], "shoe_decks": [8] * len(rows), "copy_no": [1] * len(rows),
        "gaming_day": [day] * len(rows), "source_file": [f"{r[0]}.csv" for r in rows], "source_line": [r[3] for r in rows],
        "lost_before": [0] * len(rows), "quarantined_before": [0] * len(rows), "lost_after": [0] * len(rows),
    }, schema_overrides={"card_code": pl.Int16, "quarantined_before": pl.Decimal(38, 0)})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["ADD-2", "CS-1", "CS-10"]), st.sampled_from(["GHB-01", "GHB-02"]),
                          st.integers(1, 4), st.sampled_from(["card", "card", "burn"])), min_size=1, max_size=25),
       st.randoms(use_true_random=False))
def test_reconstruct_in_device_order_needs_no_sort(events, rnd):
    """Events in the load's (device_id, event_seq) order skip the sort; any other order is sorted first: the same
    rounds, each with its cards in device order (a round dealt by two devices included)."""
    import datetime as dt

    from pipelines.audit.params import AuditParams
    from pipelines.audit.reconstruct import reconstruct

    rows = [(d, t, r, seq, e) for seq, (d, t, r, e) in enumerate(events)]
    loaded = _events(sorted(rows, key=lambda x: (x[0], x[3])))
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    keys = sorted({(t, r) for _, t, r, _, _ in rows})
    rounds = pl.DataFrame({"table_id": [k[0] for k in keys], "round_no": [k[1] for k in keys],
                           "gaming_day": [dt.date(2026, 11, 1)] * len(keys), "shoe_id": [None] * len(keys)},
                          schema_overrides={"shoe_id": pl.String})
    a = reconstruct(loaded, rounds, AuditParams())
    b = reconstruct(_events(shuffled), rounds, AuditParams())
    assert_frame_equal(a, b)
    for (t, r), codes in zip(a.select("table_id", "round_no").rows(), a["codes"].to_list()):
        mine = sorted((d, seq) for d, t2, r2, seq, _ in rows if (t2, r2) == (t, r))
        assert codes == [seq % 52 for _, seq in mine]


# --------------------------------------------------------------------------------------------
# attach_round_blocks: the engine's results placed by position


WAGER_KEYS = ["table_id", "round_no", "wager_id"]


def _wagers(rounds: list[tuple[str, int, list[str]]]) -> pl.DataFrame:
    rows = [(t, r, w) for t, r, ids in rounds for w in ids]
    return pl.DataFrame(
        {"table_id": [r[0] for r in rows], "round_no": [r[1] for r in rows], "wager_id": [r[2] for r in rows],
         "amount": list(range(len(rows)))},
        schema={"table_id": pl.String, "round_no": pl.Int64, "wager_id": pl.String, "amount": pl.Int64},
    )


def _results(left: pl.DataFrame, picks: list[int], order: list[int], drop_last: bool, swap: bool) -> pl.DataFrame:
    """The rows of some of ``left``'s rounds, round by round in the order ``order`` gives; ``drop_last`` leaves a
    round's last row out (not whole), ``swap`` turns a round's first two rows (not in left's order)."""
    blocks = left.with_row_index("_r").group_by(["table_id", "round_no"], maintain_order=True).agg(pl.col("_r"))
    chosen = [blocks["_r"][k].to_list() for k in sorted({k % blocks.height for k in picks})]
    chosen = [chosen[k] for k in sorted(range(len(chosen)), key=lambda k: order[k % len(order)] if order else k)]
    if chosen and drop_last and len(chosen[0]) > 1:
        chosen[0] = chosen[0][:-1]
    if chosen and swap and len(chosen[-1]) > 1:
        chosen[-1] = [chosen[-1][1], chosen[-1][0], *chosen[-1][2:]]
    rows = [r for block in chosen for r in block]
    return left[rows].select(*WAGER_KEYS, (pl.col("amount") * 10).alias("net"),
                             pl.format("w{}", pl.col("amount")).alias("detail"))


MOSTLY_NOT = st.sampled_from([False, False, False, True])
ROUNDS = st.lists(
    st.tuples(st.sampled_from(["T-1", "T-2", "T-10"]), st.integers(0, 6),
              st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True)
              | st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=3)),
    min_size=1, max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(ROUNDS, st.lists(st.integers(0, 7), max_size=8) | st.lists(st.integers(0, 7), min_size=1, max_size=8), st.lists(st.integers(0, 9), max_size=8), MOSTLY_NOT,
       MOSTLY_NOT, MOSTLY_NOT)
def test_attach_round_blocks_is_the_plain_join(rounds, picks, order, drop_last, swap, unsorted):
    """Whole rounds in any order, a round not whole, a round's rows out of order, a round or an id twice, a left
    frame out of round order: the plain join's rows and values every time."""
    left = _wagers(rounds)
    if not unsorted:
        left = left.sort(["table_id", "round_no"], maintain_order=True)
    right = _results(left, picks, order, drop_last, swap)
    expected = left.join(right, on=WAGER_KEYS, how="left", maintain_order="left")
    assert_frame_equal(attach_round_blocks(left, right, WAGER_KEYS), expected)


def test_attach_round_blocks_places_by_position():
    left = _wagers([("T-1", 1, ["x", "y"]), ("T-1", 2, ["z"]), ("T-2", 1, ["x", "w"])])
    right = _results(left, [2, 0], [1, 0], False, False)  # the third round, then the first; the second not settled
    assert right["round_no"].to_list() == [1, 1, 1, 1] and right["table_id"].to_list() == ["T-2", "T-2", "T-1", "T-1"]
    out = attach_round_blocks(left, right, WAGER_KEYS)
    assert out["net"].to_list() == [0, 10, None, 30, 40]
    assert out["detail"].to_list() == ["w0", "w1", None, "w3", "w4"]
