"""``pipelines.stats.read_ahead``: the statistics step reads the next chunk while it summarises this one; the reads
are the same, in the same order, one at a time, and none is left running on the connection when the loop ends."""

from __future__ import annotations

import threading
import time

import pytest

from pipelines.stats.read_ahead import read_ahead


class Reader:
    """A read that records its calls, whether two ran at once, and which are still running."""

    def __init__(self, fail_on=None, slow=0.0):
        self.calls, self.running, self.overlapped, self.fail_on, self.slow = [], 0, False, fail_on, slow
        self.lock = threading.Lock()

    def __call__(self, key):
        with self.lock:
            self.running += 1
            self.overlapped |= self.running > 1
            self.calls.append(key)
        try:
            time.sleep(self.slow)
            if key == self.fail_on:
                raise ValueError(f"bad chunk {key}")
            return f"read {key}"
        finally:
            with self.lock:
                self.running -= 1


def test_every_chunk_is_read_once_in_order_one_read_at_a_time():
    r = Reader(slow=0.01)
    assert list(read_ahead(r, range(5))) == [f"read {k}" for k in range(5)]
    assert r.calls == list(range(5)) and not r.overlapped and r.running == 0
    assert list(read_ahead(r, [])) == [] and list(read_ahead(r, ["only"])) == ["read only"]


def test_the_next_chunk_is_read_while_the_caller_works_on_this_one():
    r = Reader(slow=0.05)
    seen = []
    for value in read_ahead(r, range(3)):
        time.sleep(0.1)  # the caller's summary: the next read is under way meanwhile
        seen.append((value, list(r.calls)))
    assert seen[0] == ("read 0", [0, 1]) and seen[1] == ("read 1", [0, 1, 2])


def test_leaving_the_loop_waits_for_the_read_under_way():
    r = Reader(slow=0.1)
    for value in read_ahead(r, range(4)):
        assert value == "read 0"
        time.sleep(0.05)  # the read of chunk 1 has begun (one not begun yet is cancelled instead)
        break  # the generator is closed here: the read of chunk 1 must be over before the connection is used again
    assert r.running == 0 and r.calls == [0, 1]


def test_a_failed_read_is_raised_to_the_caller_and_stops_the_reads():
    r = Reader(fail_on=2)
    got = []
    with pytest.raises(ValueError, match="bad chunk 2"):
        for value in read_ahead(r, range(5)):
            got.append(value)
    assert got == ["read 0", "read 1"] and r.calls == [0, 1, 2] and r.running == 0
