"""How the server keeps the cyclic garbage collector's pauses short.

A full (generation 2) collection walks every object the collector tracks, and
holds the event loop meanwhile: at a thousand tables that was a pause of 100 ms
and more, and at ten thousand players over a second (BENCHMARKS.md). Two things
shorten it:

- what start-up made (modules, the engine's ranked hands, the dealer bot's
  tables) lives as long as the process: frozen once start-up is done
  (:func:`freeze_start_up_heap`), it is walked no more;
- with ``--gc-freeze full``, what survives each full collection is frozen as
  well (:class:`FreezeAfter`), so that the next one walks only what was
  made since. Right after a full collection nothing the collector tracks is
  garbage; what is frozen and later dies is still freed by its reference
  count, and only a frozen object that ends up in a reference cycle is never
  freed. The gateway leaves almost none (``tests/server/test_gateway.py``); the
  300-table soak's memory check is the measure of the rest;
- with ``--gc-freeze young``, what survives any collection is frozen, the
  youngest generation's too: the collector only ever walks what was made since
  its last pass, a few hundred objects, and never the older generations, which
  stay empty. The cost is the same as ``full``'s, for more objects: one that
  outlived a young collection and later dies in a reference cycle is never
  freed.

``--gc-threshold`` sets the youngest generation's threshold: a higher one makes
fewer young collections, and so rarer full ones.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any, Literal

FreezeChoice = Literal["start", "full", "young"]


def freeze_start_up_heap(threshold: int = 700) -> None:
    """Collect, freeze what is left, and set the youngest generation's ``threshold``
    (the older two keep Python's)."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(threshold, older, oldest)


class FreezeAfter:
    """Freezes what survived each collection of ``generation`` or an older one, between
    :meth:`start` and :meth:`stop`."""

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self._loop: asyncio.AbstractEventLoop | None = None
        self.freezes = 0

    @classmethod
    def chosen(cls, choice: FreezeChoice) -> FreezeAfter | None:
        """What ``--gc-freeze`` asks for beyond start-up's freeze, if anything."""
        return {"start": None, "full": cls(2), "young": cls(0)}[choice]

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        gc.callbacks.append(self._collected)

    def stop(self) -> None:
        if self._collected in gc.callbacks:
            gc.callbacks.remove(self._collected)
        self._loop = None

    def _collected(self, phase: str, info: dict[str, Any]) -> None:
        # Not from inside the collection itself: once it has returned, on the loop.
        if phase == "stop" and info["generation"] >= self.generation and self._loop is not None:
            self._loop.call_soon_threadsafe(self._freeze)

    def _freeze(self) -> None:
        gc.freeze()
        self.freezes += 1
