"""A seat's request to stand up from its table, as the terminal and a bot make it.

The request is sent again where the server did not take it and said nothing changed
(:data:`~qiuqiu.cli.connection.WAITED_OUT`: the table is moving to another server, or
its host is making sure of its lease after losing touch with Redis): a moment later,
for some 15 s, as a ``join_table`` is. A client that gave up there would leave its seat
behind, playing on without it. The ``table_left`` that answers the request, and an
``error`` that refuses it, name its id.
"""

from __future__ import annotations

import asyncio
import logging
from enum import Enum

from qiuqiu.cli.connection import MOVING_RETRIES, WAITED_OUT, Connection
from qiuqiu.cli.errors import ConnectionLost, ServerRefused
from qiuqiu.cli.game import TableState
from qiuqiu.protocol import ErrorCode
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire

# The bot's own: where a bot's writer, and its command line, read what it does.
log = logging.getLogger("qiuqiu.cli.bot")

RETRIED = frozenset({ErrorCode.TABLE_MOVING, ErrorCode.OUTCOME_UNKNOWN})
"""Refusals of a request to leave that the terminal asks again with the snapshot its
table's new host sends."""


class Leaving(Enum):
    """Where asking to stand up leaves the terminal's game."""

    DONE = "done"
    """Nothing to wait for: no seat, or the request could not be sent."""
    AT_ONCE = "at once"
    """Out of the hand, or with its turns checked or folded: input is ignored until then."""
    AFTER_HAND = "after the hand"
    """The player plays the hand out, and stands up as it ends."""


class LeaveRequest:
    """The last request to stand up from ``table_id``."""

    def __init__(self, conn: Connection, table_id: str) -> None:
        self.conn, self.table_id = conn, table_id
        self.id: int | None = None
        """The request's message id; ``None`` before one is made, or once given up."""
        self.after_hand = False
        """It lets the seat play its hand out."""
        self.asked_in = 0
        """The hand in play, or last played, when it was asked: a later one dealt to the
        seat means the request was lost (its table moved to another server)."""
        self.waits = 0
        """The waits since it was asked, each after a refusal of ``WAITED_OUT``."""
        self._later: asyncio.Task[bool] | None = None

    async def send(self, *, after_hand: bool, asked_in: int = 0) -> bool:
        """Ask to stand up (after the hand in play, with ``after_hand``); ``False`` if
        the connection has just dropped (the snapshot after it says what is left to do)."""
        self.waits, self.asked_in = 0, asked_in
        return await self._send(after_hand=after_hand)

    async def _send(self, *, after_hand: bool) -> bool:
        self.stop()
        self.id, self.after_hand = self.conn.next_id(), after_hand
        leave = cmd.LeaveTable(id=self.id, table_id=self.table_id, after_hand=after_hand)
        try:
            await self.conn.send(leave)
        except ConnectionLost:
            return False
        return True

    def refused_by(self, error: wire.Error) -> bool:
        return error.ref is not None and error.ref == self.id

    def again_later(self, error: wire.Error) -> bool:
        """Send the request again after a wait, if ``error`` (which refused it) says
        nothing changed and the waits of ``MOVING_RETRIES`` are not used up; whether
        it will be."""
        if error.code not in WAITED_OUT or self.waits >= len(MOVING_RETRIES):
            return False
        self._later = asyncio.create_task(self._again(MOVING_RETRIES[self.waits]))
        self.waits += 1
        return True

    async def _again(self, wait: float) -> bool:
        await asyncio.sleep(wait)
        self._later = None  # not cancelled by the send it makes
        return await self._send(after_hand=self.after_hand)

    def give_up(self) -> None:
        self.stop()
        self.id, self.after_hand = None, False

    def stop(self) -> None:
        """Send it again no more."""
        if self._later is not None:
            self._later.cancel()
            self._later = None


async def leave(conn: Connection, table_id: str) -> int | None:
    """Stand up from ``table_id`` and return the balance, or ``None`` if the table or
    the connection is already gone."""
    left = await stand_up(conn, table_id)
    return None if left is None else left.balance


async def stand_up(conn: Connection, table_id: str) -> wire.TableLeft | None:
    """Stand up from ``table_id`` and return the server's ``table_left``, or ``None``
    if the table or the connection is already gone."""
    try:
        return await conn.request_waiting_out(cmd.LeaveTable(table_id=table_id), wire.TableLeft)
    except ServerRefused as refused:
        log.info("leaving %s: %s", table_id, refused)
        return None


def in_hand(state: TableState) -> bool:
    """Whether the seat is dealt into the hand in play and has not folded: the hand
    is still its own to play out."""
    me, hand = state.me, state.hand
    return (
        me is not None
        and hand is not None
        and hand.phase != "ended"
        and me.in_hand
        and not me.folded
    )
