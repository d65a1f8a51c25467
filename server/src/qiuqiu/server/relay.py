"""Tables shared by every server process on one store.

A table is hosted by one process, the holder of its lease (see
:mod:`qiuqiu.server.store`). A client connected to another process plays at it
all the same, over the store's :class:`~qiuqiu.server.bus.Bus`:

1. Its session sends each message for that table to the host, saying who sent
   it (process, session, account and name): ``command``; and ``reconnect`` or
   ``gone`` when its connection comes or goes. A process that dies says nothing:
   the host learns it when a frame it sends there reaches no process, or a probe
   it sends every third of a lease (:meth:`Relay.probe`).
2. The host serves it as if the client were connected there, through a
   :class:`RemoteViewer` that stands for that session: serving is a plain call
   into the table's state machine, which returns at once, so a slow table never
   holds back another's messages, and every command gets its reply or an
   ``error``. Whatever the table sends that viewer goes back to the session's
   process (``deliver``), which writes it out as it is. A command whose answer
   is not out when serving returns (a leave in a hand, a buy-in being written)
   is acknowledged at once (``received``).
3. The session's process keeps each command with an ``id`` until its answer,
   so that it is answered even if the host dies with it
   (:mod:`qiuqiu.server.pending`).
4. A process that adopts the tables of a dead host tells every process
   (``adopted``); each whose sessions were at one of them asks the new host to
   take them back, and they get the voided hand and a snapshot. The adopter
   itself seats its own sessions again (the lobby) and lets its spectators of
   the table watch on.
5. An account has one connection: a newer ``hello`` anywhere closes the older
   one (``taken_over``), after the seats have moved to the new one, so the other
   players see ``player_reconnected`` and never ``player_disconnected``. The store
   numbers the hellos' claims, and a table seats the player again only from a
   claim no older than the last it took: the word of two hellos at once may reach
   it in either order.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from qiuqiu.protocol import BadMessage, ErrorCode, decode_client, encode
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId
from qiuqiu.server.accounts import TAKEN_OVER, TAKEN_OVER_REASON
from qiuqiu.server.bus import ALL, Bus
from qiuqiu.server.errors import Refused
from qiuqiu.server.frames import Frame
from qiuqiu.server.pending import PendingCommands, not_received
from qiuqiu.server.table import UNAVAILABLE, Viewer
from qiuqiu.server.table.reasons import MOVED_UNANSWERED

if TYPE_CHECKING:
    from qiuqiu.server.lobby import Lobby

log = logging.getLogger(__name__)

SNAPSHOT_TRIES, SNAPSHOT_PAUSE = 20, 0.5
"""How often, and how many seconds apart, a session asks a table elsewhere for a snapshot
once this process listens again after Redis was away, while its host does not yet."""


class Client(Viewer, Protocol):
    """A local session, as the relay needs it."""

    session_id: str
    claim: int
    """The number of its claim on its account's connection."""
    remote_tables: dict[str, str]
    """The tables hosted elsewhere that this session sits or watches at, with their host."""
    watching: set[str]

    @property
    def account_id(self) -> str | None: ...

    @property
    def name(self) -> str: ...

    def send_frame(self, frame: str, table_id: str | None, seq: int | None) -> None: ...

    def told(self, table_id: str, kind: str) -> None: ...

    def refuse(self, ref: MessageId | None, code: ErrorCode, text: str) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


class RemoteViewer:
    """A session on another process, as one table here sees it. There is one object
    per session and table, so the table can tell it is the same viewer each time, and
    the session's process can tell which host each frame comes from."""

    def __init__(
        self, relay: Relay, process: str, session_id: str, table_id: str, account_id: str
    ) -> None:
        self.relay = relay
        self.process = process
        self.session_id = session_id
        self.table_id = table_id
        self.account_id = account_id
        self.heard = 0
        """How many messages its session's process has sent about this table: a frame
        that reached no process says it is gone only if none came since it was sent."""
        self.last_ref: MessageId | None = None
        """The ``ref`` of the last answer sent, to tell whether a command served just now
        was answered already."""

    def deliver(self, message: wire.Reply) -> None:
        self.deliver_frame(Frame.of(message))

    def deliver_frame(self, frame: Frame) -> None:
        data: dict[str, Any] = {
            "kind": "deliver",
            "session": self.session_id,
            "host": self.relay.owner,
            "table": self.table_id,
            "frame": frame.text,
        }
        if frame.event:
            data["table_id"], data["seq"] = frame.table_id, frame.seq
        else:  # a reply or a snapshot: what it is tells whether the session watches
            data["type"] = frame.kind.model_fields["type"].default
        if frame.ref is not None:
            data["ref"] = self.last_ref = frame.ref
        unheard = partial(self.relay.unheard, self, self.heard)
        self.relay.bus.send(self.process, data, unheard=unheard)


class Relay:
    def __init__(self, bus: Bus, lobby: Lobby, timeout: float) -> None:
        self.bus = bus
        self.lobby = lobby
        self.owner = bus.owner
        self.pending = PendingCommands(timeout)
        """This process's sessions' commands that their hosts have not answered yet."""
        self.sessions: dict[str, Client] = {}
        """This process's sessions, by id, for the frames that come back for them."""
        self._viewers: dict[tuple[str, str, str], RemoteViewer] = {}
        """The sessions elsewhere at the tables here, by process, session and table."""

    async def start(self) -> None:
        await self.bus.start(self._receive, self._resumed)

    async def stop(self) -> None:
        await self.bus.stop()

    # -- what a session here asks of a table elsewhere -------------------------------

    def forward(
        self,
        host: str,
        client: Client,
        table_id: str,
        kind: str,
        message: cmd.ClientMessage | None = None,
        *,
        again: Callable[[], None] | None = None,
        unsent: Callable[[], None] = lambda: None,
    ) -> None:
        """Send ``kind`` (``command`` with ``message``, ``reconnect`` or ``gone``) for
        ``client`` to ``host``, the process hosting ``table_id``; ``again`` is called
        where a message without a command was lost or nobody heard it, ``unsent`` where
        the client is told that its command changed nothing (lost, unheard, refused)."""
        if kind != "gone":
            client.remote_tables[table_id] = host
        lost = unheard = again
        if message is not None and message.id is not None:
            ref, session = message.id, client.session_id
            self.pending.sent(client, ref, table_id, host, unsent)

            def lost() -> None:
                self.pending.lost(session, ref)

            def unheard() -> None:
                self.pending.unheard(session, ref)

        elif message is not None:

            def lost() -> None:
                unsent()
                client.refuse(None, ErrorCode.STORE_UNAVAILABLE, UNAVAILABLE)

            def unheard() -> None:
                unsent()
                client.refuse(None, ErrorCode.TABLE_MOVING, not_received(table_id))

        self.bus.send(
            host,
            {
                "kind": kind,
                "process": self.owner,
                "session": client.session_id,
                "claim": client.claim,
                "account_id": client.account_id,
                "name": client.name,
                "table_id": table_id,
                "watching": table_id in client.watching,
                "frame": None if message is None else encode(message),
            },
            lost,
            unheard,
        )

    def take_over(self, previous: Sequence[str]) -> None:
        """Close the account's previous connections that another process has."""
        for holder in dict.fromkeys(previous):
            process, _, session = holder.partition(":")
            if process != self.owner:
                self.bus.send(process, {"kind": "taken_over", "session": session})

    def announce_adopted(self, table_id: str) -> None:
        # Before the lobby seats this process's sessions again: their commands to the old
        # host are answered before the snapshot that says where things stand.
        self.pending.moved(table_id, self.owner)
        self.bus.send(ALL, {"kind": "adopted", "table_id": table_id, "host": self.owner})

    # -- inside ------------------------------------------------------------------------

    def _receive(self, data: dict[str, Any]) -> None:
        try:
            match data["kind"]:
                case "deliver" | "taken_over":
                    client = self.sessions.get(data["session"])
                    if client is None:
                        return  # gone already
                    if data["kind"] == "deliver":
                        self._deliver(client, data)
                    else:
                        client.close(TAKEN_OVER, TAKEN_OVER_REASON)
                case "received":
                    self.pending.received(data["session"], data["ref"])
                case "probe":
                    return
                case "adopted":
                    self._adopted(data["table_id"], data["host"])
                case _:
                    self._serve(data)
        except Exception:
            log.exception("relay: could not handle %r", data)

    def _deliver(self, client: Client, data: dict[str, Any]) -> None:
        """A frame a host sent one of this process's sessions, unless the session has
        moved on from that host for that table (it was adopted elsewhere, or here): a
        host frozen past its lease still serves what it was sent until it learns it."""
        if client.remote_tables.get(data["table"]) != data["host"]:
            return
        if "ref" in data:
            refused = data.get("type") == "error"
            self.pending.answered(client.session_id, data["ref"], refused)
        if "seq" not in data:
            client.told(data["table"], data["type"])
        client.send_frame(data["frame"], data.get("table_id"), data.get("seq"))

    def _serve(self, data: dict[str, Any]) -> None:
        """Do what a session on another process asked of a table hosted here."""
        key = (data["process"], data["session"], data["table_id"])
        account_id, table_id = data["account_id"], data["table_id"]
        viewer = self._viewers.get(key) or self._viewers.setdefault(
            key, RemoteViewer(self, *key, account_id)
        )
        viewer.heard += 1
        table = self.lobby.tables.get(table_id)
        match data["kind"]:
            case "gone":
                self._gone(viewer)
                return
            case "reconnect":
                if table is None:
                    return
                if table.seat_of(account_id) is not None:
                    # None from a process older than numbered claims: as it was then.
                    table.reconnect(account_id, viewer, data.get("claim"))
                elif data["watching"] and not table.sees(viewer):
                    table.serve(account_id, data["name"], viewer, cmd.WatchTable(table_id=table_id))
                return
        arrived = time.perf_counter()
        try:
            message = decode_client(data["frame"])
        except BadMessage as bad:  # checked by the sender: only a bug gets here
            viewer.deliver(self.lobby.refusal(None, bad.code, bad.message))
            return
        if not isinstance(message, cmd.TableMessage):
            return
        viewer.last_ref = None
        try:
            moved = table_id not in self.lobby.adopting and not self.lobby.closed_here(table_id)
            if table is None and moved:
                # Sent here on the lease's word from before this process handed the
                # table over (stopping) or lost it: nothing is applied, and the sender's
                # connection, on another process, has no reason to move.
                raise Refused(ErrorCode.TABLE_MOVING, MOVED_UNANSWERED)
            # Being adopted here: table_moving; closed here since the lease was read:
            # unknown_table, as this process would answer its own client.
            table = self.lobby.table(table_id)
            table.serve(account_id, data["name"], viewer, message)
            table.when_sent(partial(self.lobby.metrics.served, message, arrived))
        except Refused as refused:
            viewer.deliver(self.lobby.refusal(message.id, refused.code, refused.message))
        if message.id is not None and viewer.last_ref != message.id:
            # Answered later (a leave in a hand, a write under way): the sender must know
            # this process has it, or it would take the silence for a death.
            self.bus.send(
                viewer.process,
                {"kind": "received", "session": viewer.session_id, "ref": message.id},
            )

    def probe(self) -> None:
        """Ask whether each process with sessions at a table here still listens: a
        table with nothing to send them (one waiting for players) would otherwise
        never learn that one died, and its seats there would never be away, nor their
        grace period run."""
        by_process: dict[str, list[tuple[RemoteViewer, int]]] = {}
        for viewer in self._viewers.values():
            by_process.setdefault(viewer.process, []).append((viewer, viewer.heard))

        def unheard(viewers: list[tuple[RemoteViewer, int]]) -> None:
            for viewer, heard in viewers:
                self.unheard(viewer, heard)

        for process, viewers in by_process.items():
            self.bus.send(process, {"kind": "probe"}, unheard=partial(unheard, viewers))

    def unheard(self, viewer: RemoteViewer, heard: int) -> None:
        """A frame for ``viewer`` reached no process: unless that process has said
        something since, it died without a word (SIGKILL, a lost host), so its seat is
        away from now on, as if it had said ``gone``, and its grace period runs. A
        process that only stopped listening for a moment asks for its tables again once
        it listens (:meth:`_resumed`), which seats it again."""
        if viewer.heard == heard:
            self._gone(viewer)

    def _gone(self, viewer: RemoteViewer) -> None:
        key = (viewer.process, viewer.session_id, viewer.table_id)
        if self._viewers.get(key) is viewer:
            del self._viewers[key]
        table = self.lobby.tables.get(viewer.table_id)
        if table is not None:
            table.forget(viewer)
            table.disconnect(viewer.account_id, viewer)

    def _adopted(self, table_id: str, host: str) -> None:
        self.pending.moved(table_id, host)
        for client in list(self.sessions.values()):
            if table_id not in client.remote_tables or client.account_id is None:
                continue
            if host == self.owner:
                del client.remote_tables[table_id]  # a seat: seated here again by the lobby
                self._watch_again(client, table_id)
            else:
                self.forward(host, client, table_id, "reconnect")

    def _resumed(self) -> None:
        """Listening again after Redis was away: what the hosts sent this process's
        sessions meanwhile is lost, so each asks its tables elsewhere for a snapshot."""
        for client in list(self.sessions.values()):
            if client.account_id is not None:
                for table_id in list(client.remote_tables):
                    self._ask_snapshot(client, table_id, SNAPSHOT_TRIES)

    def _ask_snapshot(self, client: Client, table_id: str, tries: int) -> None:
        host = client.remote_tables.get(table_id)
        if not host or tries == 0 or self.sessions.get(client.session_id) is not client:
            return

        def again() -> None:  # its host does not listen again yet
            loop = asyncio.get_running_loop()
            loop.call_later(SNAPSHOT_PAUSE, self._ask_snapshot, client, table_id, tries - 1)

        self.forward(host, client, table_id, "reconnect", again=again)

    def _watch_again(self, client: Client, table_id: str) -> None:
        """A spectator here of a table this process has just adopted watches it here: the
        lobby knows only the seats the record names."""
        table = self.lobby.tables.get(table_id)
        account_id = client.account_id or ""
        seated = table is not None and table.seat_of(account_id) is not None
        if table is None or seated or table_id not in client.watching:
            return
        try:
            table.serve(account_id, client.name, client, cmd.WatchTable(table_id=table_id))
        except Refused:  # closed as it was adopted (nobody sat at it): nothing to watch
            client.watching.discard(table_id)
