"""Whether this process reaches its store: an outage is a state, not an exception.

Whatever meets the store (a table's write, a lease renewal, a session's read)
says how it went. The first failure logs one WARNING and tells every listener
(the tables, which then refuse requests that need a write and start no hand);
the first success after it logs one more, with how long it lasted and how many
calls failed, and tells them again. Nothing logs a traceback per failed call.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class StoreHealth:
    def __init__(self) -> None:
        self.up = True
        self._failures = 0
        self._since = 0.0
        self._listeners: list[Callable[[bool], None]] = []

    def listen(self, listener: Callable[[bool], None]) -> None:
        """Call ``listener`` with each change, until :meth:`ignore`."""
        self._listeners.append(listener)

    def ignore(self, listener: Callable[[bool], None]) -> None:
        self._listeners.remove(listener)

    def failed(self, error: BaseException) -> None:
        self._failures += 1
        if not self.up:
            return
        self.up, self._since, self._failures = False, time.monotonic(), 1
        log.warning("the store is unreachable: %s", error or type(error).__name__)
        self._tell()

    def answered(self) -> None:
        if self.up:
            return
        self.up = True
        seconds = time.monotonic() - self._since
        log.warning(
            "the store answers again after %.1f s and %d failed calls",
            seconds,
            self._failures,
            extra={"outage_seconds": round(seconds, 3), "failed_calls": self._failures},
        )
        self._tell()

    def _tell(self) -> None:
        for listener in list(self._listeners):
            listener(self.up)
