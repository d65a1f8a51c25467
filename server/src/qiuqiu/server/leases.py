"""Keeping the tables this process hosts, and taking over those whose host died.

Two loops, so that adopting many tables at once never holds a renewal back
past the lease:

- renewal, every third of a lease (sooner after a failure): extends every
  lease this process holds, and takes back one that ran out while Redis froze
  if nobody took it since. A table whose lease another process took is let go;
  one that doubted its lease meanwhile (rule 6 in :mod:`.table.core`) is told
  to look again.
- adoption: a table in the lobby that nobody holds a lease on, seen so on two
  rounds in a row, is adopted. Waiting one round lets a host that was only
  frozen (with Redis, or on its own) take its tables back first, so that a
  pause shorter than the lease changes nothing and a longer one hands a table
  over once, cleanly.
"""

from __future__ import annotations

import asyncio
import logging
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
        renewed: Callable[[], None],
        adopt: Callable[[str], Awaitable[None]],
        hosted: Callable[[], Collection[str]],
    ) -> None:
        self.store, self.lease, self.health = store, lease, health
        self._lost, self._renewed = lost, renewed
        self._adopt, self._hosted = adopt, hosted
        self._suspects: set[str] = set()

    async def run(self) -> None:
        """Renew and adopt for as long as the process lives (cancel to stop)."""
        await asyncio.gather(self._every_round(self.renew), self._every_round(self.adopt))

    async def renew(self) -> bool:
        """Renew every lease held; whether the store was asked (with none held it is
        not, and its silence says nothing about whether it answers)."""
        asked = bool(self._hosted())
        for table_id in await self.store.renew_tables(self.lease):
            self._lost(table_id)
        self._renewed()
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
                    if not self.health.up:
                        # Reading, or extending a lease, is not writing: a full Redis
                        # does both, so only a write (the health check's) ends an outage.
                        await self.store.ping()
                    self.health.answered()
            except StoreUnavailable as error:
                self.health.failed(error)
                pause = self.lease / 10
            except Exception:
                log.exception("tending the table leases failed")
            await asyncio.sleep(pause)
