"""How the server keeps the cyclic garbage collector's pauses short.

A collection walks every object of the generations it collects, and holds the
event loop meanwhile: at a thousand tables a full (generation 2) collection
took 100 ms and more, and at ten thousand players over a second
(BENCHMARKS.md). So the server keeps the collector off what lives on:

- what start-up made (modules, the engine's ranked hands, the dealer bot's
  tables) lives as long as the process: the collector is kept off it while it
  is built (:func:`paused`), and frozen once start-up is done
  (:func:`freeze_start_up_heap`), it is walked no more;
- with ``--gc-freeze young`` (what the default, ``auto``, is on uvloop), what
  survives any collection is frozen too (:class:`FreezeAfter`): the collector
  only ever walks what was made since its last pass, a few hundred objects
  with the threshold of 200 it comes with, and never the older generations,
  which stay empty;
- with ``--gc-freeze full``, only what survives each full collection is
  frozen, so the next full one walks only what was made since; with ``start``,
  only start-up's heap.

A frozen object that dies is still freed by its reference count; one that dies
in a reference cycle is never freed. So the server leaves no cycle behind what
ends: a connection (``tests/server/test_gateway.py``), a connection to Redis
(``tests/server/test_redis_store.py``), a table (``tests/server/test_lobby.py``).
The 300-table soak, with its thousands of dropped connections and closed tables,
is the measure of the rest (BENCHMARKS.md).

On asyncio's own loop ``auto`` is ``start``: there a socket's transport keeps
itself in a reference cycle once it has closed (CPython 3.11's selector
transport, a handful of objects a connection), which ``young`` would keep for
good, as a server on uvloop keeps nothing.

``--gc-threshold`` sets the youngest generation's threshold: with ``young`` a
lower one makes each collection shorter; with ``start`` or ``full`` a higher one
makes fewer collections, and so rarer full ones. Unset, it is 200 with ``young``
and Python's 700 otherwise.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

from qiuqiu.server.loops import LoopName

FreezeChoice = Literal["auto", "start", "full", "young"]
Freeze = Literal["start", "full", "young"]

YOUNG_THRESHOLD = 200
PYTHON_THRESHOLD = 700


def settings(choice: FreezeChoice, threshold: int | None, loop: LoopName) -> tuple[Freeze, int]:
    """What ``--gc-freeze`` and ``--gc-threshold`` come to on ``loop`` (see the module
    docstring)."""
    on_loop: Freeze = "young" if loop == "uvloop" else "start"
    freeze = on_loop if choice == "auto" else choice
    if threshold is None:
        threshold = YOUNG_THRESHOLD if freeze == "young" else PYTHON_THRESHOLD
    return freeze, threshold


@contextmanager
def paused() -> Iterator[None]:
    """No collection inside: for building what lives as long as the process, which
    the collector would otherwise walk again and again as it grows (a sixth of the
    dealer bot's start). Left as it was found, on or off."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def freeze_start_up_heap(threshold: int) -> None:
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
    def chosen(cls, choice: Freeze) -> FreezeAfter | None:
        """What ``choice`` asks for beyond start-up's freeze, if anything."""
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
