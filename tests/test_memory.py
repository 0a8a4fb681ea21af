"""``pipelines.memory``: what a finished step or worker task gives back (issue 13's 3 GB goal) must not change what
it keeps."""

from __future__ import annotations

import gc
import platform
import weakref

import polars as pl

from pipelines.memory import compact, release, trim


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_release_frees_cyclic_garbage_a_task_left():
    gc.disable()  # no automatic collection may free it first
    try:
        node = _Node()
        alive = weakref.ref(node)
        del node
        assert alive() is not None
        release()
        assert alive() is None
    finally:
        gc.enable()


def test_trim_says_whether_glibc_was_there():
    assert trim() is (platform.system() == "Linux" and platform.libc_ver()[0] == "glibc")


def test_compact_keeps_every_value_and_type():
    big = pl.DataFrame({"key": [f"a long table id {i:06d}" for i in range(10_000)], "n": range(10_000)})
    cut = big.group_by("n").agg(pl.col("key").first()).sort("n").head(100)
    out = compact(cut)
    assert out.schema == cut.schema
    assert out.equals(cut)
    assert compact(pl.DataFrame()).width == 0


def test_release_setting_aside_keeps_freeing_what_comes_after():
    """A group's task releases with ``set_aside``: the garbage it left is freed, what survived is frozen (the next
    collection walks only what is new), and a later task's cyclic garbage is still freed by the next release."""
    gc.disable()
    frozen_before = gc.get_freeze_count()
    try:
        left = _Node()
        left_alive = weakref.ref(left)
        del left
        survivor = _Node()
        release(set_aside=True)
        assert left_alive() is None
        assert gc.is_tracked(survivor) and gc.get_freeze_count() > frozen_before
        assert not any(o is survivor for o in gc.get_objects())  # set aside: no collection walks it now
        later = _Node()
        later_alive = weakref.ref(later)
        del later
        release(set_aside=True)
        assert later_alive() is None
    finally:
        gc.unfreeze()
        gc.enable()
