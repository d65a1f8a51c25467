"""Clients that keep every frame they receive, and what the frames must never show.

:class:`RecordedConnection` is the SDK's connection (it reconnects by itself)
keeping each frame with the number of the WebSocket connection it came on, and
giving an ``id`` to every message it sends without one, so that every error can
be matched to what it refuses. :class:`Player` plays a seat with it for as long
as a test runs, reconnecting (as PROTOCOL.md says to) when its table moves.

The checks take frames as ``(connection, message)`` pairs, so they read the
test :class:`~tests.server.conftest.Client`'s frames as well (:func:`of_client`).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from qiuqiu.cli.bot import leave, play
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.errors import ConnectionLost, ServerRefused
from qiuqiu.protocol import TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from tests.server.processes import WAIT, Caller

Frame = tuple[int, dict[str, Any]]
"""A message as received, with the number of the connection it came on."""

T = TypeVar("T")

STEADY = TableOptions(ante=1, min_bet=1, max_bet=1, max_raises=1, turn_seconds=2)
"""A duel against the dealer bot with small bets, so that a calling bot loses no whole
stack in a few hundred hands, and short turns, so that a seat whose player is away
is played for quickly."""

STEADY_HEADS_UP = STEADY.model_copy(update={"seats": 2, "dealer_bot": False})

STEADY_PACE = ("--hand-pause", "0.1")
"""Server flags for a pace at which those stacks last a whole test, and yet many
hands are dealt."""

MID_HAND = ("--hand-pause", "0.05", "--bot-delay", "0.1")
"""Server flags for a dealer bot that thinks a little, so that most moments find a
hand in play (and a kill or an outage catches one)."""

RETRIED = frozenset({"store_unavailable", "table_moving", "table_moved"})
"""Refusals that say nothing changed and to try again: a client retries them."""


LEFT_OPEN: set[RecordedConnection] = set()
"""Connections not closed yet: a test that fails midway leaves some, which
:func:`close_left_open` closes before they can warn in a later test."""


async def close_left_open() -> None:
    for conn in list(LEFT_OPEN):
        await conn.close()


class RecordedConnection(Connection):
    """The SDK's connection, keeping every frame it receives in :attr:`frames`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        LEFT_OPEN.add(self)
        self.frames: list[Frame] = []
        self.connection = 0
        self._stamps = itertools.count(1)
        self.watchers: list[Callable[[dict[str, Any]], None]] = []

    async def _connect(self, *, resuming: bool = False) -> wire.Welcome:
        self.connection += 1
        welcome = await super()._connect(resuming=resuming)
        self._record(welcome)
        return welcome

    def _take(self, message: wire.AnyServerMessage) -> None:
        self._record(message)
        super()._take(message)

    async def close(self) -> None:
        LEFT_OPEN.discard(self)
        await super().close()

    async def send(self, message: cmd.ClientMessage) -> None:
        if message.id is None:
            message = message.model_copy(update={"id": f"s{next(self._stamps)}"})
        await super().send(message)

    def _record(self, message: wire.AnyServerMessage) -> None:
        frame = message.model_dump(mode="json", exclude_none=True)
        self.frames.append((self.connection, frame))
        for watcher in self.watchers:
            watcher(frame)


def of_client(frames: Iterable[dict[str, Any]], connection: int = 1) -> list[Frame]:
    return [(connection, frame) for frame in frames]


async def persist(attempt: Callable[[], Awaitable[T]]) -> T:
    """``attempt`` until it is not refused with a code that means "try again", nor
    cut off while the connection comes back by itself."""
    async with asyncio.timeout(WAIT):
        while True:
            try:
                return await attempt()
            except ServerRefused as refused:
                if refused.code not in RETRIED:
                    raise
            except ConnectionLost:
                pass
            await asyncio.sleep(0.1)


async def open_recorded(
    url: str, *, name: str | None = None, token: str | None = None
) -> RecordedConnection:
    """A connection, once the server lets it say hello (a store away refuses it)."""

    async def attempt() -> RecordedConnection:
        conn = await RecordedConnection.open(url, name=name, token=token)
        assert isinstance(conn, RecordedConnection)
        return conn

    return await persist(attempt)


@dataclass
class Player:
    """One account playing one seat with the calling bot, for as long as it is told
    to, across reconnects of its own and moves of its table."""

    name: str
    url: str
    conn: RecordedConnection | None = None
    table_id: str | None = None
    connections: list[RecordedConnection] = field(default_factory=list)
    _playing: asyncio.Task[None] | None = None
    _moved: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def token(self) -> str:
        assert self.conn is not None
        assert self.conn.token is not None
        return self.conn.token

    @property
    def frames(self) -> list[Frame]:
        """Every frame of every connection this player opened, numbered apart."""
        found: list[Frame] = []
        for n, conn in enumerate(self.connections):
            found += [(n * 1000 + c, frame) for c, frame in conn.frames]
        return found

    async def connect(self, url: str | None = None) -> RecordedConnection:
        self.url = url or self.url
        if self.conn is None:
            conn = await open_recorded(self.url, name=self.name)
        else:
            conn = await open_recorded(self.url, token=self.token)
        conn.watchers.append(self._watch)
        self.conn = conn
        self.connections.append(conn)
        return conn

    async def create(self, options: TableOptions, buy_in: int = 500) -> str:
        conn = self.conn
        assert conn is not None
        request = cmd.CreateTable(options=options, buy_in=buy_in)
        created = await persist(lambda: conn.request(request, wire.TableCreated))
        self.table_id = created.table.table_id
        return self.table_id

    async def join(self, table_id: str, buy_in: int = 500) -> None:
        conn = self.conn
        assert conn is not None
        request = cmd.JoinTable(table_id=table_id, buy_in=buy_in)
        await persist(lambda: conn.request(request, wire.TableJoined))
        self.table_id = table_id

    def start(self) -> None:
        self._playing = asyncio.create_task(self._play())

    @property
    def idle(self) -> bool:
        return self._playing is None or self._playing.done()

    async def pause(self) -> None:
        """Stop playing and close the connection: the seat waits its grace period."""
        await self._stop_playing()
        assert self.conn is not None
        await self.conn.close()

    async def stand_up(self) -> None:
        """Stop playing and leave the table, staying connected."""
        await self._stop_playing()
        assert self.conn is not None
        assert self.table_id is not None
        await leave(self.conn, self.table_id)

    async def resume(self, url: str | None = None) -> None:
        await self.connect(url)
        self.start()

    async def quit(self) -> None:
        """Stop playing and close every connection, whatever state they are in."""
        await self._stop_playing()
        for conn in self.connections:
            await conn.close()

    async def finish(self) -> int | str:
        """Stand up and close: the balance, or the code the leaving was refused with."""
        await self._stop_playing()
        conn, table_id = self.conn, self.table_id
        assert conn is not None
        assert table_id is not None
        try:
            request = cmd.LeaveTable(table_id=table_id)
            left = await persist(lambda: conn.request(request, wire.TableLeft))
        except ServerRefused as refused:
            return refused.code
        finally:
            await conn.close()
        return left.balance

    async def _play(self) -> None:
        while True:
            conn, table_id = self.conn, self.table_id
            assert conn is not None
            assert table_id is not None
            self._moved.clear()
            game = asyncio.create_task(play(Caller(), conn, table_id))
            moved = asyncio.create_task(self._moved.wait())
            try:
                await asyncio.wait({game, moved}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (game, moved):
                    task.cancel()
                await asyncio.gather(game, moved, return_exceptions=True)
            if not moved.done() or moved.cancelled():
                return  # the seat is gone, or the connection for good
            # The table moved to another process: say hello again to find it there.
            await conn.close()
            await self.connect()

    async def _stop_playing(self) -> None:
        if self._playing is not None:
            self._playing.cancel()
            await asyncio.gather(self._playing, return_exceptions=True)
            self._playing = None

    def _watch(self, frame: dict[str, Any]) -> None:
        if frame.get("table_id") != self.table_id:
            return
        if frame["type"] == "table_closed" or frame.get("code") == "table_moved":
            self._moved.set()


def last_seen(players: Iterable[Player], frames: int = 8) -> str:
    """What each player saw last, for a failure to say where things stopped."""
    return "; ".join(
        f"{p.name} at {p.table_id}: {[f['type'] for _, f in p.frames[-frames:]]}" for p in players
    )


# -- what the frames must never show ---------------------------------------------------


def errors_after_effects(frames: Iterable[Frame]) -> list[dict[str, Any]]:
    """Every ``error`` whose ``ref`` names a message that also had an effect: an event
    or a reply with the same ``ref`` came on the same connection. ``outcome_unknown``
    is no such error: it says the message may have been applied."""
    effects: set[tuple[int, Any]] = set()
    errors: list[tuple[int, dict[str, Any]]] = []
    for connection, frame in frames:
        if "ref" not in frame or frame.get("code") == "outcome_unknown":
            continue
        if frame["type"] == "error":
            errors.append((connection, frame))
        else:
            effects.add((connection, frame["ref"]))
    return [frame for connection, frame in errors if (connection, frame["ref"]) in effects]


def seq_regressions(frames: Iterable[Frame]) -> list[str]:
    """Where a table event's ``seq`` is not above every earlier event's and snapshot's
    ``seq`` for that table on the same connection: the first such event of each."""
    last: dict[tuple[int, str], int] = {}
    found: dict[tuple[int, str], str] = {}
    for connection, frame in frames:
        if frame["type"] == "table_snapshot":
            key = (connection, frame["table"]["table_id"])
        elif "seq" in frame and "table_id" in frame:
            key = (connection, frame["table_id"])
            if key in last and frame["seq"] <= last[key] and key not in found:
                found[key] = (
                    f"connection {connection}, table {key[1]}: {frame['type']} seq "
                    f"{frame['seq']} after seq {last[key]}"
                )
        else:
            continue
        last[key] = max(last.get(key, 0), frame["seq"])
    return list(found.values())


def unfinished_hands(frames: Iterable[Frame]) -> list[tuple[str, int]]:
    """Hands seen to start (on any connection) that never ended or were voided."""
    started: dict[tuple[str, int], None] = {}
    ended: set[tuple[str, int]] = set()
    for _, frame in frames:
        if frame["type"] == "hand_started":
            started[(frame["table_id"], frame["hand_id"])] = None
        elif frame["type"] in ("hand_ended", "hand_voided"):
            ended.add((frame["table_id"], frame["hand_id"]))
    return [hand for hand in started if hand not in ended]


def seen_from_start(frames: Iterable[Frame], table_id: str, hand_id: int) -> list[str]:
    """What one hand's ``hand_started`` and everything after it were, frame by frame:
    the type, the connection and, for a hand's events, which hand."""
    seen: list[str] = []
    for connection, frame in frames:
        if seen or (
            frame["type"] == "hand_started"
            and frame["hand_id"] == hand_id
            and frame["table_id"] == table_id
        ):
            seen.append(f"{connection}:{frame['type']}:{frame.get('hand_id', '')}")
    return seen


def hands_started(frames: Iterable[Frame], table_id: str) -> list[int]:
    return [
        f["hand_id"] for _, f in frames if f["type"] == "hand_started" and f["table_id"] == table_id
    ]
