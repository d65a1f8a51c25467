"""How a bot's seat stands up: the request to leave, sent again a moment after a
refusal that says nothing changed (:data:`~qiuqiu.cli.connection.WAITED_OUT`: the
table is moving to another server, or its host is making sure of its lease after
losing touch with Redis), for some 15 s, as a ``join_table`` is. A bot that gave up
there would leave its seat behind, playing on without it."""

from __future__ import annotations

import asyncio
import logging

from qiuqiu.cli.connection import MOVING_RETRIES, WAITED_OUT, Connection
from qiuqiu.cli.errors import ConnectionLost, ServerRefused
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire

# The bot's own: where a bot's writer, and its command line, read what it does.
log = logging.getLogger("qiuqiu.cli.bot")


async def sent(conn: Connection, message: cmd.ClientMessage) -> bool:
    """Send ``message``; ``False`` if the connection has just dropped. Not an error:
    the connection comes back by itself (or closes for good), and the snapshot after
    it says what is still to do, as the turn still open or the seat not yet left."""
    try:
        await conn.send(message)
    except ConnectionLost as lost:
        log.info("%s not sent, the connection dropped: %s", type(message).__name__, lost)
        return False
    return True


class LeaveRequest:
    """The play loop's last request to stand up from its table: the ``error`` that
    refuses it names its id."""

    def __init__(self, conn: Connection, table_id: str) -> None:
        self.conn, self.table_id = conn, table_id
        self.id: int | None = None
        self.after_hand = False
        self.waits = 0
        """The waits since the bot asked, each after a refusal of :data:`WAITED_OUT`."""
        self._later: asyncio.Task[bool] | None = None

    async def send(self, *, after_hand: bool) -> bool:
        """Ask to stand up (after the hand in play, with ``after_hand``); ``False`` if
        the connection has just dropped."""
        self.waits = 0
        return await self._send(after_hand=after_hand)

    async def _send(self, *, after_hand: bool) -> bool:
        self.stop()
        self.id, self.after_hand = self.conn.next_id(), after_hand
        leave = cmd.LeaveTable(id=self.id, table_id=self.table_id, after_hand=after_hand)
        return await sent(self.conn, leave)

    def refused(self, error: wire.Error) -> bool:
        """Whether ``error`` refuses this request; if it says nothing changed, the
        request is sent again after a wait, until :data:`MOVING_RETRIES` are used up."""
        if error.ref is None or error.ref != self.id:
            return False
        if error.code in WAITED_OUT and self.waits < len(MOVING_RETRIES):
            wait = MOVING_RETRIES[self.waits]
            self.waits += 1
            log.info("leaving table %s: %s; asking again in a moment", self.table_id, error.message)
            self._later = asyncio.create_task(self._again(wait))
        else:
            log.info("leaving table %s was refused: %s", self.table_id, error.message)
        return True

    async def _again(self, wait: float) -> bool:
        await asyncio.sleep(wait)
        self._later = None  # not cancelled by the send it makes
        return await self._send(after_hand=self.after_hand)

    def stop(self) -> None:
        """Send it again no more."""
        if self._later is not None:
            self._later.cancel()
            self._later = None


async def leave(conn: Connection, table_id: str) -> int | None:
    """Stand up from ``table_id`` and return the balance, or ``None`` if the table or
    the connection is already gone."""
    waits = iter(MOVING_RETRIES)
    while True:
        try:
            left = await conn.request(cmd.LeaveTable(table_id=table_id), wire.TableLeft)
        except ServerRefused as refused:
            wait = next(waits, None)
            if wait is None or refused.code not in WAITED_OUT:
                log.info("leaving %s: %s", table_id, refused)
                return None
            log.info("leaving %s: %s; asking again in a moment", table_id, refused.message)
            await asyncio.sleep(wait)
        else:
            return left.balance
