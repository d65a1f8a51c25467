"""What holds the event loop up, measured where it happens: its lag, and the collector.

Every player's latency waits behind whatever the loop is doing, so the server
keeps two histograms in its ``/metrics``:

- ``qiuqiu_loop_lag_seconds``: a timer asked to fire every
  :data:`LAG_INTERVAL` seconds, and how late it fired each time: the longest
  stretch a callback (or the collector) kept the loop from its next timer.
  While the server has nobody to keep waiting (no connection, no table) it
  fires every :data:`IDLE_INTERVAL` seconds instead, and a new connection
  brings the short interval back at once;
- ``qiuqiu_gc_pause_seconds{generation}``: each collection of the cyclic
  garbage collector, timed from ``gc.callbacks``; its ``_sum`` is the time the
  collector took in all, its ``_count`` the collections.

It names the loop it runs on (``qiuqiu_event_loop{loop}``, :mod:`~qiuqiu.server.loops`).
It does not count what is frozen out of the collector's sight
(:mod:`~qiuqiu.server.collector`): CPython counts the frozen objects by walking
every one of them (``gc.get_freeze_count``), a walk that holds the loop for
35-40 ms at a thousand tables, at every scrape. A reference cycle that a
freeze keeps for good shows instead as resident memory that climbs at a
steady load (``process_resident_memory_bytes``), as the soak checks.

The buckets have a bound at 20 ms, the longest pause BENCHMARKS.md allows, so
that a scrape before and after a window tells exactly whether any pause in it
went over. ``bench.load`` reads them so.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Gauge, Histogram

from qiuqiu.server import loops

LAG_INTERVAL = 0.01
"""Seconds between the lag timer's firings, so that a pause of 20 ms is always seen.
A busy loop wakes that often anyway; one with nothing else to do pays each wakeup in
full, 2% of a core in all on this project's hosts (virtual machines)."""

IDLE_INTERVAL = 1.0
"""Seconds between the lag timer's firings while the server is idle: a pause then keeps
nobody waiting, and the idle loop's wakeups cost a hundredth of the busy interval's."""

PAUSE_BUCKETS = (
    *(0.00025, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02),
    *(0.03, 0.05, 0.1, 0.2, 0.5, 1.0),
)
"""Seconds, fine below the 20 ms limit, coarse above it."""

GENERATIONS = ("0", "1", "2")


class PauseWatch:
    """Times the loop's lag and the collector's pauses into ``registry`` between
    :meth:`start` and :meth:`stop`; the lag at the short interval while ``busy()``."""

    def __init__(self, registry: CollectorRegistry, busy: Callable[[], bool]) -> None:
        self._busy = busy
        self.lag = Histogram(
            "qiuqiu_loop_lag_seconds",
            f"How late a timer due every {LAG_INTERVAL:g} s ({IDLE_INTERVAL:g} s while the "
            "server has no connection and no table) fired: how long the event loop was held up.",
            buckets=PAUSE_BUCKETS,
            registry=registry,
        )
        gc_pause = Histogram(
            "qiuqiu_gc_pause_seconds",
            "Collections of the cyclic garbage collector and how long each took, by generation.",
            ["generation"],
            buckets=PAUSE_BUCKETS,
            registry=registry,
        )
        self._gc_pause = [gc_pause.labels(g) for g in GENERATIONS]
        self.loop = Gauge(
            "qiuqiu_event_loop",
            "The event loop this process runs on (1 for its name).",
            ["loop"],
            registry=registry,
        )
        self._gc_started = 0.0
        self._due = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self.loop.labels(loops.running_loop_name()).set(1)
        gc.callbacks.append(self._collected)
        self._arm()

    def stop(self) -> None:
        if self._collected in gc.callbacks:
            gc.callbacks.remove(self._collected)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def wake(self) -> None:
        """Someone may be kept waiting from now on: time the lag at the short interval
        at once, not from the idle timer's next firing."""
        if self._timer is not None and self._due - time.perf_counter() > LAG_INTERVAL:
            self._timer.cancel()
            self._arm()

    def _arm(self) -> None:
        interval = LAG_INTERVAL if self._busy() else IDLE_INTERVAL
        # perf_counter, not loop.time(): uvloop's clock moves in whole milliseconds.
        self._due = time.perf_counter() + interval
        self._timer = asyncio.get_running_loop().call_later(interval, self._fired)

    def _fired(self) -> None:
        self.lag.observe(max(0.0, time.perf_counter() - self._due))
        self._arm()

    def _collected(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self._gc_pause[info["generation"]].observe(time.perf_counter() - self._gc_started)
