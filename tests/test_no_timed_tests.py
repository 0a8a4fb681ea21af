"""No test is timed (speed targets live in benchmarks): hypothesis' per-example deadline is off for every property test."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st


def test_the_loaded_profile_has_no_deadline():
    assert settings().deadline is None


@given(st.integers(0, 1))
def test_a_slow_example_does_not_fail_a_property_test(n):
    time.sleep(0.25)  # beyond hypothesis' default deadline of 200 ms
    assert n in (0, 1)
