"""Tables shared by every server process on one Redis.

A table is hosted by one process, the holder of its lease (see
:mod:`qiuqiu.server.store`). A client connected to another process plays at it
all the same:

1. Its session sends each message for that table to the host's channel
   (``channel:process:{owner}``), saying who sent it: process, session, account.
2. The host serves the message as if the client were connected there, through a
   :class:`RemoteViewer` that stands for that session; whatever the table sends
   that viewer goes back to the session's process, which writes it out as is.
3. A process that adopts the tables of a dead host says so on
   ``channel:adopted``; every process whose sessions were at one of them asks
   the new host to seat them again, and they get a snapshot.

What a process publishes goes through one queue, sent in order by one task, so
a client sees its table's events in ``seq`` order. Pub/sub reaches only those
listening: a message to a process that has just died is lost, and its client
sees the table again once another process adopts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import decode_client, encode
from qiuqiu.protocol import server as wire
from qiuqiu.server.errors import LeaseLost, Refused
from qiuqiu.server.lobby import TAKEN_OVER, TAKEN_OVER_REASON
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.table import MOVED

if TYPE_CHECKING:
    from qiuqiu.server.lobby import Lobby

log = logging.getLogger(__name__)


class Client(Protocol):
    """A local session, as the relay needs it."""

    session_id: str
    remote_tables: set[str]
    """The tables hosted elsewhere that this session sits or watches at."""

    @property
    def account_id(self) -> str | None: ...

    def send_frame(self, frame: str) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


class RemoteViewer:
    """A session on another process, as a table here sees it. There is one object
    per session, so the table can tell it is the same viewer each time."""

    def __init__(self, relay: Relay, process: str, session_id: str) -> None:
        self.relay = relay
        self.process = process
        self.session_id = session_id

    def deliver(self, message: wire.Reply) -> None:
        self.relay.send(
            self.process,
            {
                "kind": "deliver",
                "session": self.session_id,
                "frame": self.relay.lobby.frames.encode(message),
            },
        )


class Relay:
    def __init__(self, store: RedisStore, lobby: Lobby) -> None:
        self.store = store
        self.lobby = lobby
        self.owner = store.owner
        self.sessions: dict[str, Client] = {}
        """This process's sessions, by id, for the frames that come back for them."""
        self._viewers: dict[tuple[str, str], RemoteViewer] = {}
        self._outbox: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._pubsub = store.redis.pubsub()

    async def start(self) -> None:
        await self._pubsub.subscribe(self._process_channel(self.owner), self._adopted_channel)
        self._tasks = [asyncio.create_task(self._listen()), asyncio.create_task(self._publish())]

    async def stop(self) -> None:
        """Send what is queued, then stop listening."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2):
                while not self._outbox.empty():
                    await asyncio.sleep(0.01)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._pubsub.aclose()  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated

    # -- what a session here asks of a table elsewhere -------------------------------

    def forward(
        self,
        host: str,
        client: Client,
        account_id: str,
        table_id: str,
        kind: str,
        message: cmd.ClientMessage | None = None,
    ) -> None:
        """Send ``kind`` (``command`` with ``message``, ``reconnect`` or ``gone``) for
        ``client`` to the process hosting ``table_id``."""
        client.remote_tables.add(table_id)
        self.send(
            host,
            {
                "kind": kind,
                "process": self.owner,
                "session": client.session_id,
                "account_id": account_id,
                "table_id": table_id,
                "frame": None if message is None else encode(message),
            },
        )

    async def take_over(self, account_id: str, client: Client) -> None:
        """Make ``client`` the account's one connection on every process: the one
        before it, wherever it is, closes (on this process the lobby has closed it)."""
        holder = f"{self.owner}:{client.session_id}"
        previous = await self.store.claim_connection(account_id, holder)
        if previous is not None:
            process, _, session = previous.partition(":")
            if process != self.owner:
                self.send(process, {"kind": "taken_over", "session": session})

    def announce_adopted(self, table_id: str) -> None:
        payload = json.dumps({"table_id": table_id, "host": self.owner})
        self._outbox.put_nowait((self._adopted_channel, payload))

    def send(self, process: str, data: dict[str, Any]) -> None:
        self._outbox.put_nowait((self._process_channel(process), json.dumps(data)))

    # -- inside ------------------------------------------------------------------------

    @property
    def _adopted_channel(self) -> str:
        return self.store.channel("adopted")

    def _process_channel(self, process: str) -> str:
        return self.store.channel("process", process)

    async def _publish(self) -> None:
        while True:
            channel, payload = await self._outbox.get()
            try:
                await self.store.redis.publish(channel, payload)
            except Exception:
                log.exception("relay: could not publish to %s", channel)

    async def _listen(self) -> None:
        while True:
            try:
                async for item in self._pubsub.listen():
                    if item["type"] == "message":
                        await self._handle(item["channel"], item["data"])
            except Exception:
                # The connection to Redis dropped: redis-py subscribes again on the next read.
                log.exception("relay: listening failed; listening again")
                await asyncio.sleep(0.5)

    async def _handle(self, channel: str, payload: str) -> None:
        try:
            data = json.loads(payload)
            if channel == self._adopted_channel:
                self._adopted(data["table_id"], data["host"])
            elif data["kind"] in ("deliver", "taken_over"):
                client = self.sessions.get(data["session"])
                if client is None:
                    return  # gone already
                if data["kind"] == "deliver":
                    client.send_frame(data["frame"])
                else:
                    client.close(TAKEN_OVER, TAKEN_OVER_REASON)
            else:
                await self._serve(data)
        except Exception:
            log.exception("relay: could not handle %r", payload)

    async def _serve(self, data: dict[str, Any]) -> None:
        """Do what a session on another process asked of a table hosted here."""
        key = (data["process"], data["session"])
        viewer = self._viewers.get(key) or self._viewers.setdefault(key, RemoteViewer(self, *key))
        account_id, table_id = data["account_id"], data["table_id"]
        table = self.lobby.tables.get(table_id)
        match data["kind"]:
            case "gone":
                self._viewers.pop(key, None)
                if table is not None:
                    table.forget(viewer)
                    await table.disconnect(account_id, viewer)
                return
            case "reconnect":
                if table is not None:
                    await table.reconnect(account_id, viewer)
                return
        arrived = time.perf_counter()
        message = decode_client(data["frame"])
        if not isinstance(message, cmd.TableMessage):
            return
        try:
            if table is None:
                raise Refused("table_moved", MOVED)
            account = await self.lobby.store.account(account_id)
            await table.serve(account_id, account.name if account else "", viewer, message)
            self.lobby.metrics.served(message, arrived)
        except Refused as refused:
            viewer.deliver(self.lobby.refusal(message.id, refused.code, refused.message))
        except LeaseLost:
            self.lobby.abandon(table_id)
            viewer.deliver(self.lobby.refusal(message.id, "table_moved", MOVED))

    def _adopted(self, table_id: str, host: str) -> None:
        for client in self.sessions.values():
            if table_id not in client.remote_tables:
                continue
            if host == self.owner:
                client.remote_tables.discard(table_id)  # seated here by the lobby already
            elif client.account_id is not None:
                self.forward(host, client, client.account_id, table_id, "reconnect")
