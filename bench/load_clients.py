"""The load generator's clients: lean raw ``websockets`` connections of :mod:`bench.load`.

QiuQiu players (:class:`Player`) and their echo-floor twins (:class:`EchoClient`)
parse only the frames they must answer, so that the load generator, not the
server, is the cheap side; both count what they send and receive into one
:class:`Tally` while the measured :class:`Window` is open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from qiuqiu.protocol import PROTOCOL_VERSION

Kind = Literal["duel", "four"]
"""A table of one player against the dealer bot, or of four players and no bot."""

MAX_FRAME = 4096
"""The server's default ``--max-frame``; the echo gets the same."""

BUY_IN = 10**8
"""Chips each player sits down with. The dealer bot can still win them all in one hand
(its all-in, called: about once in 30,000 duel hands), so a player that goes bust buys
in again from its balance, which holds :data:`BUY_INS` of them: a table never stops."""
BUY_INS = 10


SETUP_AT_ONCE = 100
"""Clients connecting and sitting down at the same time: a listen backlog's worth, so
thousands of connections queue here rather than in SYN retries."""


@dataclass(slots=True)
class Tally:
    """What the clients saw while the window was open."""

    frames_in: int = 0
    """Frames the clients sent: what the server received."""
    frames_out: int = 0
    """Frames the clients received: what the server sent."""
    bytes_in: int = 0
    bytes_out: int = 0
    hands: int = 0
    latencies: list[float] = field(default_factory=list)
    end_latencies: list[float] = field(default_factory=list)
    """From an action that ended its hand to that hand's ``hand_ended``: the hand's
    result waits for its end to be written, the action's own event does not."""


@dataclass(slots=True)
class Window:
    """The measured stretch of a run: clients count only while ``open``."""

    tally: Tally = field(default_factory=Tally)
    open: bool = False
    go: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when every client is ready, for the echo clients to start asking."""


def think_time(rng: random.Random, mean: float) -> float:
    # Spread around the mean, so that tables do not move in lockstep.
    return rng.uniform(0.5, 1.5) * mean if mean > 0 else 0.0


def hello(name: str) -> str:
    return json.dumps({"type": "hello", "version": PROTOCOL_VERSION, "name": name})


async def open_client(url: str, local_host: str | None = None) -> ClientConnection:
    """A lean client connection; from ``local_host`` (another loopback address, say) so
    that tens of thousands of them do not run out of one address's ephemeral ports."""
    local: dict[str, Any] = {"local_addr": (local_host, 0)} if local_host else {}
    return await connect(
        url, compression=None, max_size=None, open_timeout=120, ping_interval=None, **local
    )


class Player:
    """One bot client of the QiuQiu server: checks when it may, calls otherwise."""

    def __init__(
        self,
        window: Window,
        think: float,
        rng: random.Random,
        counts_hands: bool,
        local_host: str | None = None,
    ):
        self.window = window
        self.local_host = local_host
        self.think = think
        self.rng = rng
        self.counts_hands = counts_hands
        self.ws: ClientConnection | None = None
        self._next_id = 0
        self._waiting: str | None = None
        """The start of the first frame answering the action in flight."""
        self._sent_at = 0.0
        self._sent_in_window = False
        self._may_end = False
        """Whether the last action may have ended its hand: no turn came after it."""
        self._table_id = ""

    async def connect(self, url: str) -> None:
        self.ws = await open_client(url, self.local_host)
        await self.ws.send(hello("bench"))
        await self.ws.recv()

    async def sit(self, kind: Kind, table_id: asyncio.Future[str] | None) -> str:
        """Open a table (``table_id`` None) or join the one ``table_id`` will name."""
        assert self.ws is not None
        if table_id is None:
            options: dict[str, Any] = {"max_buy_in": BUY_IN, "turn_seconds": 600}
            if kind == "four":
                options |= {"seats": 4, "dealer_bot": False, "min_players": 4}
            message = {"type": "create_table", "options": options, "buy_in": BUY_IN}
        else:
            message = {"type": "join_table", "table_id": await table_id, "buy_in": BUY_IN}
        await self.ws.send(json.dumps(message))
        while True:
            frame = json.loads(await self.ws.recv())
            if frame["type"] == "table_joined":
                self._table_id = str(frame["table_id"])
                return self._table_id
            if frame["type"] == "error":
                raise RuntimeError(f"could not sit down: {frame}")

    async def play(self) -> None:
        assert self.ws is not None
        window, tally = self.window, self.window.tally
        with contextlib.suppress(ConnectionClosed):
            async for frame in self.ws:
                assert isinstance(frame, str)
                now = time.perf_counter()
                if window.open:
                    tally.frames_out += 1
                    tally.bytes_out += len(frame)
                if self._waiting is not None and frame.startswith(self._waiting):
                    self._waiting = None
                    if self._sent_in_window:
                        tally.latencies.append(now - self._sent_at)
                if '"type":"hand_ended"' in frame and self._may_end:
                    self._may_end = False
                    if self._sent_in_window:
                        tally.end_latencies.append(now - self._sent_at)
                if '"type":"turn_started"' in frame:
                    self._may_end = False
                if '"legal"' in frame and '"type":"turn_started"' in frame:
                    turn = json.loads(frame)
                    action = "check" if turn["legal"]["check"] else "call"
                    move = {
                        "type": action,
                        "table_id": turn["table_id"],
                        "hand_id": turn["hand_id"],
                    }
                    if self.think > 0:
                        asyncio.get_running_loop().call_later(
                            think_time(self.rng, self.think), self._act_later, move
                        )
                    else:
                        await self._act(move)
                elif self.counts_hands and window.open and '"type":"hand_ended"' in frame:
                    tally.hands += 1
                elif '"type":"table_left"' in frame:  # it went bust: the bench never leaves
                    rebuy = {"type": "join_table", "table_id": self._table_id, "buy_in": BUY_IN}
                    await self.ws.send(json.dumps(rebuy))

    def _act_later(self, move: dict[str, Any]) -> None:
        asyncio.get_running_loop().create_task(self._act(move))

    async def _act(self, move: dict[str, Any]) -> None:
        assert self.ws is not None
        self._next_id += 1
        frame = json.dumps({**move, "id": self._next_id}, separators=(",", ":"))
        self._waiting = f'{{"ref":{self._next_id},'
        self._sent_in_window = self.window.open
        if self.window.open:
            self.window.tally.frames_in += 1
            self.window.tally.bytes_in += len(frame)
        self._sent_at = time.perf_counter()
        self._may_end = True
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(frame)


@dataclass(frozen=True, slots=True)
class Shape:
    """The messages of a QiuQiu run, for the echo to answer in kind."""

    requests: int
    answers_per_request: float
    request_size: int
    answer_size: int

    @classmethod
    def of(cls, tally: Tally) -> Shape:
        requests = max(tally.frames_in, 1)
        return cls(
            requests,
            tally.frames_out / requests,
            max(tally.bytes_in // requests, 16),
            max(tally.bytes_out // max(tally.frames_out, 1), 1),
        )


class EchoClient:
    """One client of the echo floor, asking as a QiuQiu player acts."""

    def __init__(
        self, window: Window, think: float, rng: random.Random, local_host: str | None = None
    ) -> None:
        self.window = window
        self.think = think
        self.rng = rng
        self.local_host = local_host
        self.ws: ClientConnection | None = None

    async def connect(self, url: str) -> None:
        self.ws = await open_client(url, self.local_host)
        greeting = hello("bench")
        await self.ws.send(f"1 {len(greeting)} {greeting}")  # as QiuQiu's hello and welcome
        await self.ws.recv()

    async def ask(self, requests: int, shape: Shape) -> None:
        assert self.ws is not None
        tally = self.window.tally
        await self.window.go.wait()
        for i in range(requests):
            if self.think > 0:
                await asyncio.sleep(think_time(self.rng, self.think))
            # Exactly the QiuQiu run's answers per request, spread over the requests.
            ratio = shape.answers_per_request
            count = max(1, math.floor((i + 1) * ratio) - math.floor(i * ratio))
            head = f"{count} {shape.answer_size} "
            request = head + "x" * max(shape.request_size - len(head), 0)
            tally.frames_in += 1
            tally.bytes_in += len(request)
            sent_at = time.perf_counter()
            await self.ws.send(request)
            for n in range(count):
                answer = await self.ws.recv()
                if n == 0:
                    tally.latencies.append(time.perf_counter() - sent_at)
                tally.frames_out += 1
                tally.bytes_out += len(answer)


async def at_most(limit: int, jobs: Sequence[Callable[[], Awaitable[Any]]]) -> None:
    """Run ``jobs`` with at most ``limit`` of them at once."""
    gate = asyncio.Semaphore(limit)

    async def one(job: Callable[[], Awaitable[Any]]) -> None:
        async with gate:
            await job()

    await asyncio.gather(*(one(job) for job in jobs))


async def seat_players(
    urls: Sequence[str],
    kind: Kind,
    tables: int,
    window: Window,
    think: float,
    rng: random.Random,
    local_host: str | None = None,
    at_once: int = SETUP_AT_ONCE,
) -> list[Player]:
    """Connect every player and sit it at its table; each table on one server of ``urls``."""
    per_table = 1 if kind == "duel" else 4
    players: list[Player] = []
    jobs: list[Callable[[], Awaitable[Any]]] = []
    loop = asyncio.get_running_loop()
    for t in range(tables):
        url = urls[t % len(urls)]
        table_id: asyncio.Future[str] = loop.create_future()
        for seat in range(per_table):
            player = Player(
                window, think, random.Random(rng.random()), seat == 0, local_host=local_host
            )
            players.append(player)
            jobs.append(_seat_job(player, url, kind, None if seat == 0 else table_id, table_id))
    # Creators first: every joiner waits for its table, so none may hold a place the
    # creator needs.
    creators = jobs[::per_table]
    joiners = [job for i, job in enumerate(jobs) if i % per_table]
    await at_most(at_once, creators)
    await at_most(at_once, joiners)
    return players


def _seat_job(
    player: Player,
    url: str,
    kind: Kind,
    join: asyncio.Future[str] | None,
    opened: asyncio.Future[str],
) -> Callable[[], Awaitable[None]]:
    async def job() -> None:
        await player.connect(url)
        table_id = await player.sit(kind, join)
        if join is None:
            opened.set_result(table_id)

    return job
