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
