"""A table's writes, made one at a time in a task of their own and tried until they land
(docs/ARCHITECTURE.md, "The table").

A write that meets :class:`StoreUnavailable` is tried again, the same commit, with capped
exponential backoff, until the store answers, and so is a write of chips leaving the
table that the store refuses (an account edited by hand). A refused write a player asked
for is their answer; :class:`LeaseLost` means another process hosts the table now, and
this one lets it go.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from qiuqiu.protocol import ErrorCode
from qiuqiu.server.errors import LeaseExpired, LeaseLost, Refused, StoreUnavailable
from qiuqiu.server.table.ledger import Write, WriteKind
from qiuqiu.server.table.reasons import UNAVAILABLE

if TYPE_CHECKING:
    from qiuqiu.server.table.runner import Table

RETRY_MIN, RETRY_MAX = 0.05, 2.0
"""Seconds between tries of a write, doubling up to the most."""

ASKED_FOR = (WriteKind.BUY_IN, WriteKind.SEED)
"""The writes a player asked for: one the store refuses is an answer to give them, where
any other write holds chips or the table itself and is tried until it lands."""


Feed = Callable[[Callable[[], None]], None]
"""How a write's outcome reaches the table: as an input to its core."""
Landed = Callable[[Write], None]
"""Called once a write's success is fed."""


async def write_all(table: Table, first: Write | None, feed: Feed, landed: Landed) -> None:
    """Make ``table``'s writes one after another, from ``first`` (or the core's next one),
    for as long as its core has one. Only the running task holds the table: a closed one
    goes with its last reference, not the collector."""
    write = table.core.next_write() if first is None else first
    while write is not None:
        await _commit(table, write, feed, landed)
        write = None if table.closed else table.core.next_write()


async def _commit(table: Table, write: Write, feed: Feed, landed: Landed) -> None:
    core, store, health = table.core, table.store, table.health
    delay = RETRY_MIN
    commit = write.commit
    if write.kind is WriteKind.BUY_IN:
        commit = replace(commit, seat_limit=table.seat_limit)
    # Whether a try may have been written, its answer lost: then a lease found lost
    # at a later try says nothing of whether the write is in the adopter's record.
    tried = held = False
    while True:
        if write.kind is not WriteKind.CLOSE and not store.holds(table.table_id):
            # Cut off from the store for longer than the lease: the next renewal takes
            # it back if nobody took it, or finds it lost; this waits for that. (A
            # close lets the lease go: a retry of one is known by its commit's id.)
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)
            if table.closed:
                return
            continue
        try:
            balances = await store.commit(commit)
        except Refused as refusal:
            health.answered()
            if write.kind in ASKED_FOR:
                feed(partial(core.refused, write, refusal))
                return
            # Only an account deleted or edited by hand gets here (a cash-out, the
            # house's chips to a new bot): they wait until it can take them.
            if not held:
                table.log.error(
                    "the store refused the %s write; trying again: %s", write.kind, refusal
                )
                held = True
        except LeaseLost:
            health.answered()
            table.abandon(unwritten=not tried)
            return
        except LeaseExpired:  # ran out before the write arrived: as above
            health.answered()
        except StoreUnavailable as error:
            health.failed(error)
            if error.unsent and write.kind in ASKED_FOR:
                # Certainly not written: the player is told so now, not after the outage.
                away = Refused(ErrorCode.STORE_UNAVAILABLE, UNAVAILABLE)
                feed(partial(core.refused, write, away))
                return
            tried = tried or not error.unsent
        except Exception:
            table.log.exception("a %s write failed; trying again", write.kind)
            tried = True
        else:
            health.answered()
            if held:  # the ERROR above said it was held: say that it is over
                table.log.warning("the store took the %s write it had refused", write.kind)
            feed(partial(core.written, write, balances))
            landed(write)
            return
        await asyncio.sleep(delay)
        delay = min(delay * 2, RETRY_MAX)
