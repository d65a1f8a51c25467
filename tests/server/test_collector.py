"""--gc-freeze: what auto comes to, and with full and young what survives a collection is
frozen and later garbage is not; and start-up's pause of the collector."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import weakref
from collections.abc import Iterator

import pytest

from qiuqiu.server.collector import Freeze, FreezeAfter, paused, settings


def test_auto_is_young_on_uvloop_and_start_elsewhere_each_with_the_threshold_it_suits() -> None:
    assert settings("auto", None, "uvloop") == ("young", 200)
    assert settings("auto", None, "asyncio") == ("start", 700)
    assert settings("full", None, "uvloop") == ("full", 700)
    assert settings("young", 50, "asyncio") == ("young", 50)


@pytest.mark.parametrize("on", [True, False])
def test_a_pause_collects_nothing_and_leaves_the_collector_as_it_found_it(on: bool) -> None:
    enabled = gc.isenabled()
    (gc.enable if on else gc.disable)()
    try:
        inside: list[bool] = []

        def build() -> None:
            with paused():
                inside.append(gc.isenabled())
                raise ValueError("a strategy file that does not load")

        with pytest.raises(ValueError, match="does not load"):
            build()
        assert inside == [False]
        assert gc.isenabled() is on
    finally:
        (gc.enable if enabled else gc.disable)()


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


@contextlib.contextmanager
def watching(choice: Freeze) -> Iterator[FreezeAfter]:
    """The freezes ``choice`` asks for, started; stopped and the heap unfrozen after."""
    watch = FreezeAfter.chosen(choice)
    assert watch is not None
    watch.start()
    try:
        yield watch
    finally:
        watch.stop()
        gc.unfreeze()


async def assert_never_freed(gone: weakref.ref[Node]) -> None:
    """A frozen object let go in a cycle is not freed: the setting's cost."""
    gc.collect()
    await asyncio.sleep(0)
    assert gone() is not None


async def test_what_survives_a_full_collection_is_frozen_and_what_comes_after_is_not() -> None:
    with watching("full") as watch:
        survivor = Node()
        gc.collect()
        await asyncio.sleep(0)  # the freeze runs on the loop, once the collection is over
        assert watch.freezes == 1
        assert gc.get_freeze_count() > 0
        # Made after the freeze: a cycle the next collection frees, as ever.
        later = weakref.ref(Node())
        gc.collect(0)
        assert later() is None
        gone = weakref.ref(survivor)
        del survivor
        await assert_never_freed(gone)
    gc.collect()
    assert gone() is None
    before = watch.freezes
    gc.collect()
    await asyncio.sleep(0)
    assert watch.freezes == before  # stopped: no more freezes


async def test_young_freezes_what_survives_a_young_collection_and_start_walks_on() -> None:
    assert FreezeAfter.chosen("start") is None
    with watching("young") as watch:
        garbage = weakref.ref(Node())
        frozen = gc.get_freeze_count()
        gc.collect(0)
        await asyncio.sleep(0)
        assert watch.freezes == 1
        # The cycle was garbage by then: the young collection freed it before the freeze.
        assert garbage() is None
        kept = Node()
        gc.collect(0)
        await asyncio.sleep(0)
        assert watch.freezes == 2
        assert gc.get_freeze_count() > frozen
        # Frozen after one young collection.
        gone = weakref.ref(kept)
        del kept
        await assert_never_freed(gone)
    gc.collect()
    assert gone() is None
