"""What a table runs besides its inputs, all stopped together when it stops.

- the core's timers (a turn's clock, the next hand, a deserted table), armed
  and disarmed as the core asks; one that fires after the loop stalled waits
  a grace once (``STALL_GRACE``), so what was sent in time is read first;
- work for later (the dealer bot's answers): a timer each, where a task would
  cost more than the bot's whole turn;
- background tasks (a spectator leaving reads its balance first).

Work that raises is logged, never raised into the event loop: one table's
failure must not reach another's.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable, Coroutine
from typing import Any

from qiuqiu.server.logs import TableLog
from qiuqiu.server.table.audience import Timer

STALL = 0.05
"""Seconds late past which a timer's firing means the loop stalled (a long collection,
a frozen host), not that it was busy."""
STALL_GRACE = 0.2
"""Seconds a timer that fired after a stall waits once more: an action sent in time sits
unread in a socket (or in Redis's reply) until the loop has turned a few times, and it
must count before the turn's clock does."""


class Background:
    def __init__(self, log: TableLog) -> None:
        self._log = log
        self._timers: dict[Timer, asyncio.TimerHandle] = {}
        self._later: dict[int, asyncio.TimerHandle] = {}
        self._numbers = itertools.count()
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        # Looked up once: on Python 3.11 each asyncio.get_running_loop() asks the kernel
        # for the process id, and a hand arms and fires a dozen timers.
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    def arm(self, timer: Timer, seconds: float, fire: Callable[[Timer], None]) -> None:
        """Run ``fire(timer)`` in ``seconds``, in place of the same timer armed before."""
        self.disarm(timer)
        loop = self.loop
        # The due time is kept apart: uvloop hands a timer of 0 s back as a plain
        # handle, which has no ``when``.
        self._timers[timer] = loop.call_later(
            seconds, self._fire, timer, fire, loop.time() + seconds
        )

    def disarm(self, timer: Timer) -> None:
        handle = self._timers.pop(timer, None)
        if handle is not None:
            handle.cancel()

    def later(self, delay: float, work: Callable[[], None]) -> None:
        number = next(self._numbers)
        self._later[number] = self.loop.call_later(delay, self._run_later, number, work)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = self.loop.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def cancel(self) -> None:
        """Disarm every timer, drop the work for later and cancel every task."""
        for handle in (*self._timers.values(), *self._later.values()):
            handle.cancel()
        self._timers.clear()
        self._later.clear()
        for task in list(self._tasks):
            task.cancel()

    async def wait(self) -> None:
        """Let the tasks that were cancelled finish unwinding."""
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _fire(self, timer: Timer, fire: Callable[[Timer], None], due: float | None) -> None:
        """``due`` is None once the timer has waited its grace after a stall."""
        del self._timers[timer]
        loop = self.loop
        if due is not None and loop.time() - due > STALL:
            self._timers[timer] = loop.call_later(STALL_GRACE, self._fire, timer, fire, None)
            return
        try:
            fire(timer)
        except Exception:
            self._log.exception("timer %s failed", timer)

    def _run_later(self, number: int, work: Callable[[], None]) -> None:
        del self._later[number]
        try:
            work()
        except Exception:
            self._log.exception("background work failed")

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._log.error("background work failed", exc_info=task.exception())
