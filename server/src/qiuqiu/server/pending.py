"""The relayed commands that wait for their host's answer.

A command with an ``id`` that a session here sends to the process hosting its
table (:mod:`qiuqiu.server.relay`) is kept until something settles it, so that
every such command is answered even when its host dies on the way:

- the host answers (a frame whose ``ref`` is the id, an event or an ``error``):
  the answer goes to the client as it is, and the command is done;
- the host says it has the command (``received``; it does so only when its
  answer is not out yet: the answer to a leave in a hand, or to a write that is
  still going on, may come much later): its deadline is off, since a host that
  lives answers by itself;
- the publish reached no process: nobody has it, certainly, so the client gets
  ``table_moving`` at once (nothing changed);
- the publish failed (Redis away): ``store_unavailable``;
- the deadline passes with no word from the host, or another process adopts
  the table: the host may have applied the command and died before it could
  say so, so the client gets ``outcome_unknown``, never a promise that nothing
  changed. If the host was only slow, its answer still follows; if another
  process takes the table over, the snapshot it sends says where things stand,
  and nothing more comes from the old host (:meth:`Relay._deliver`).

A command without an ``id`` could not be told its answer anyway (a client
cannot match an ``error`` to it), so it is not kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from qiuqiu.protocol import ErrorCode
from qiuqiu.protocol.common import MessageId
from qiuqiu.server.table import UNAVAILABLE


class Asker(Protocol):
    """The session that sent a relayed command, as far as its answer goes."""

    session_id: str

    def refuse(self, ref: MessageId | None, code: ErrorCode, text: str) -> None: ...


def not_received(table_id: str) -> str:
    return (
        f"table {table_id}'s server did not get this message (it stopped, or the table is "
        "moving to another server): nothing changed; send it again in a moment (if you sit "
        "or watch there, the table's snapshot comes unasked once another server has it)"
    )


def not_answered(table_id: str) -> str:
    return (
        f"table {table_id}'s server has not answered this message: it may have stopped. "
        "Whether the message was applied is not known: if that server was only slow, its "
        "answer follows; if another server takes the table over, the table's snapshot comes "
        "unasked (if you sit or watch there) and says where things stand. Read it before "
        "sending the message again"
    )


@dataclass
class Awaited:
    """One relayed command, as it waits."""

    asker: Asker
    ref: MessageId
    table_id: str
    host: str
    deadline: asyncio.TimerHandle | None
    unsent: Callable[[], None]


class PendingCommands:
    """Every relayed command of this process's sessions that nothing has settled yet,
    by session and id (a session refuses an id it already used, so the pair is one
    command)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        """Seconds a host has to answer, or to say it has the command."""
        self._awaited: dict[tuple[str, MessageId], Awaited] = {}

    def sent(
        self,
        asker: Asker,
        ref: MessageId,
        table_id: str,
        host: str,
        unsent: Callable[[], None] = lambda: None,
    ) -> None:
        """``unsent`` takes back what the session counted of the command as it sent it,
        if it is refused: it changed nothing (an ``outcome_unknown`` may have)."""
        key = (asker.session_id, ref)
        deadline = asyncio.get_running_loop().call_later(self.timeout, self._unknown, key)
        self._awaited[key] = Awaited(asker, ref, table_id, host, deadline, unsent)

    def answered(self, session_id: str, ref: MessageId, refused: bool) -> None:
        """The host's answer went to the client (``refused``: an ``error``)."""
        awaited = self._settle((session_id, ref))
        if awaited is not None and refused:
            awaited.unsent()

    def received(self, session_id: str, ref: MessageId) -> None:
        """The host has the command, and its answer will follow when it can."""
        awaited = self._awaited.get((session_id, ref))
        if awaited is not None and awaited.deadline is not None:
            awaited.deadline.cancel()
            awaited.deadline = None

    def unheard(self, session_id: str, ref: MessageId) -> None:
        """The publish reached no process: nobody has the command."""
        awaited = self._settle((session_id, ref))
        if awaited is not None:
            awaited.unsent()
            awaited.asker.refuse(ref, ErrorCode.TABLE_MOVING, not_received(awaited.table_id))

    def lost(self, session_id: str, ref: MessageId) -> None:
        """The publish failed: Redis is away."""
        awaited = self._settle((session_id, ref))
        if awaited is not None:
            awaited.unsent()
            awaited.asker.refuse(ref, ErrorCode.STORE_UNAVAILABLE, UNAVAILABLE)

    def moved(self, table_id: str, host: str) -> None:
        """``host`` has adopted ``table_id``: whatever the old host had of it is gone
        with it, applied or not."""
        for key, awaited in list(self._awaited.items()):
            if awaited.table_id == table_id and awaited.host != host:
                self._unknown(key)

    def forget(self, session_id: str) -> None:
        """The session's connection is gone: there is nobody to answer."""
        for key in [k for k in self._awaited if k[0] == session_id]:
            self._settle(key)

    def _unknown(self, key: tuple[str, MessageId]) -> None:
        awaited = self._settle(key)
        if awaited is not None:
            awaited.asker.refuse(
                awaited.ref, ErrorCode.OUTCOME_UNKNOWN, not_answered(awaited.table_id)
            )

    def _settle(self, key: tuple[str, MessageId]) -> Awaited | None:
        awaited = self._awaited.pop(key, None)
        if awaited is not None and awaited.deadline is not None:
            awaited.deadline.cancel()
        return awaited
