"""Keeping the tables this process hosts, and taking over those whose host died.

Two loops, so that adopting many tables at once never holds a renewal back
past the lease:

- renewal, every third of a lease (sooner after a failure): extends every
  lease this process holds, and takes back one that ran out while Redis froze
  if nobody took it since. A table whose lease another process took is let go.
  Until a renewal asked less than a lease ago has answered, the process is not
  :meth:`~LeaseKeeper.sure` it still hosts its tables (it was stopped, its loop
  held, or Redis is away): they play nothing meanwhile, since another process
  may have adopted them (docs/ARCHITECTURE.md, "The table", rule 6).
- adoption: a table in the lobby that nobody holds a lease on, seen so on two
  rounds in a row, is adopted. Waiting one round lets a host that was only
  frozen (with Redis, or on its own) take its tables back first, so that a
  pause shorter than the lease changes nothing and a longer one hands a table
  over once, cleanly.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Collection

from qiuqiu.server.errors import StoreUnavailable
from qiuqiu.server.health import StoreHealth
from qiuqiu.server.store import Store

log = logging.getLogger(__name__)


class LeaseKeeper:
    def __init__(
        self,
        store: Store,
        lease: float,
        health: StoreHealth,
        *,
        lost: Callable[[str], None],
        adopt: Callable[[str], Awaitable[None]],
        hosted: Callable[[], Collection[str]],
    ) -> None:
        self.store, self.lease, self.health = store, lease, health
        self._lost, self._adopt, self._hosted = lost, adopt, hosted
        self._suspects: set[str] = set()
        self._sure_until = time.monotonic() + lease
        """Until when every lease this process holds is certainly its own: a lease after
        the last renewal that answered was asked (Redis counts from later still)."""

    def sure(self) -> bool:
        """Whether every table this process hosts is certainly still its own."""
        return time.monotonic() < self._sure_until

    async def run(self) -> None:
        """Renew and adopt for as long as the process lives (cancel to stop)."""
        await asyncio.gather(self._every_round(self.renew), self._every_round(self.adopt))

    async def renew(self) -> bool:
        """Renew every lease held; whether the store was asked (with none held it is
        not, and its silence says nothing about whether it answers)."""
        asked_at = time.monotonic()
        asked = bool(self._hosted())
        for table_id in await self.store.renew_tables(self.lease):
            self._lost(table_id)
        # With nothing held there is nothing to doubt: a table taken since has a lease
        # from its taking, later than this.
        self._sure_until = asked_at + self.lease
        return asked

    async def adopt(self) -> bool:
        hosted = self._hosted()
        orphans = {t for t in await self.store.orphaned_tables() if t not in hosted}
        ripe, self._suspects = orphans & self._suspects, orphans
        for table_id in sorted(ripe):
            await self._adopt(table_id)
        return True

    async def _every_round(self, work: Callable[[], Awaitable[bool]]) -> None:
        while True:
            pause = self.lease / 3
            try:
                if await work():
                    self.health.answered()
            except StoreUnavailable as error:
                self.health.failed(error)
                pause = self.lease / 10
            except Exception:
                log.exception("tending the table leases failed")
            await asyncio.sleep(pause)
