"""Work a table holds until it settles: until a hand's end is written, and until the
lease is sure again (rules 2, 5 and 6 in :mod:`.core`). Each piece comes with what it
owes instead should the table move to another process first: the answer a request
still waits for."""

from __future__ import annotations

from collections.abc import Callable

Work = Callable[[], None]


class Deferred:
    def __init__(self) -> None:
        self._waiting: list[tuple[Work, Work | None]] = []

    def add(self, work: Work, moved: Work | None = None) -> None:
        self._waiting.append((work, moved))

    def do(self) -> None:
        """Do what waited, in the order it came (what it does may add more)."""
        waiting, self._waiting = self._waiting, []
        for work, _ in waiting:
            work()

    def moved(self) -> None:
        """The table moved: only what is owed is done."""
        waiting, self._waiting = self._waiting, []
        for _, owed in waiting:
            if owed is not None:
                owed()

    def clear(self) -> None:
        self._waiting.clear()
