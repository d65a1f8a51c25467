"""--gc-freeze full and young: what survives a collection is frozen, and later garbage is not."""

from __future__ import annotations

import asyncio
import gc
import weakref

from qiuqiu.server.collector import FreezeAfter


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


async def test_what_survives_a_full_collection_is_frozen_and_what_comes_after_is_not() -> None:
    watch = FreezeAfter.chosen("full")
    assert watch is not None
    watch.start()
    try:
        survivor = Node()
        gc.collect()
        await asyncio.sleep(0)  # the freeze runs on the loop, once the collection is over
        assert watch.freezes == 1
        frozen = gc.get_freeze_count()
        assert frozen > 0
        # Made after the freeze: a cycle the next collection frees, as ever.
        later = weakref.ref(Node())
        gc.collect(0)
        assert later() is None
        # Frozen, then let go in a cycle: never freed, the setting's cost.
        gone = weakref.ref(survivor)
        del survivor
        gc.collect()
        await asyncio.sleep(0)
        assert gone() is not None
    finally:
        watch.stop()
        gc.unfreeze()
    gc.collect()
    assert gone() is None
    before = watch.freezes
    gc.collect()
    await asyncio.sleep(0)
    assert watch.freezes == before  # stopped: no more freezes


async def test_young_freezes_what_survives_a_young_collection_and_start_walks_on() -> None:
    assert FreezeAfter.chosen("start") is None
    watch = FreezeAfter.chosen("young")
    assert watch is not None
    watch.start()
    try:
        survivor = weakref.ref(Node())
        frozen = gc.get_freeze_count()
        gc.collect(0)
        await asyncio.sleep(0)
        assert watch.freezes == 1
        # The cycle was garbage by then: the young collection freed it before the freeze.
        assert survivor() is None
        kept = Node()
        gc.collect(0)
        await asyncio.sleep(0)
        assert watch.freezes == 2
        assert gc.get_freeze_count() > frozen
        # Frozen after one young collection, then let go in a cycle: never freed.
        gone = weakref.ref(kept)
        del kept
        gc.collect()
        await asyncio.sleep(0)
        assert gone() is not None
    finally:
        watch.stop()
        gc.unfreeze()
    gc.collect()
    assert gone() is None
