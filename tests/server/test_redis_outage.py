"""Redis itself goes away while two server processes play on it: killed and started
again (it keeps an append-only file, fsynced on every write), or frozen with
SIGSTOP for less and for more than the lease. No chip is lost, every seated
player can still act afterwards, and the figures (how long until a hand is dealt
again, how many hands were voided) are printed for README's operations section
(run with ``-s`` to see them).

A server whose Redis is gone for good stops within its deadline on SIGTERM, and
logs an outage once as a WARNING when it starts (and once when it ends), never
a traceback every fraction of a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from qiuqiu.server.errors import StoreUnavailable
from qiuqiu.server.redis_store import RedisStore
from tests.conftest import free_port, own_redis
from tests.server.conftest import Client
from tests.server.processes import Servers, chips_in_redis, hands_dealt, listening, until
from tests.server.recorder import (
    MID_HAND,
    STEADY,
    STEADY_HEADS_UP,
    STEADY_PACE,
    Frame,
    Player,
    hands_started,
    last_seen,
)

DURABLE = ("--appendonly", "yes", "--appendfsync", "always")

ACTIONS = frozenset({"checked", "called", "bet_placed", "raised", "folded"})


@dataclass
class OwnRedis:
    """A redis-server of the test's own, which the test may kill, restart and freeze."""

    port: int
    directory: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        self.process = own_redis(self.port, self.directory, *DURABLE)
        await until(lambda: listening(self.port))

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()

    def signal(self, signum: int) -> None:
        assert self.process is not None
        self.process.send_signal(signum)


@pytest.fixture
async def redis(tmp_path: Path) -> AsyncIterator[OwnRedis]:
    started = OwnRedis(free_port(), tmp_path)
    await started.start()
    yield started
    if started.process is not None and started.process.poll() is None:
        started.process.send_signal(signal.SIGCONT)
        started.kill()


@pytest.fixture
async def servers(redis: OwnRedis) -> AsyncIterator[Servers]:
    """Server processes on the test's own Redis, none left running after the test."""
    started = Servers(redis.url)
    yield started
    await started.kill_remaining()


@dataclass
class Game:
    """Two processes, and players at two duels and a table without the bot (one of
    its players through the other process)."""

    servers: Servers
    processes: list[asyncio.subprocess.Process]
    players: list[Player]
    table_ids: list[str]


async def start_game(servers: Servers, redis: OwnRedis, lease: float) -> Game:
    ports = free_port(), free_port()
    processes = [await servers.start(p, lease=lease, flags=MID_HAND) for p in ports]
    here, there = (f"ws://127.0.0.1:{p}" for p in ports)
    ann, bo, cy, dan = (
        Player(n, u) for n, u in zip(["Ann", "Bo", "Cy", "Dan"], (here, there) * 2, strict=True)
    )
    for player in (ann, bo, cy, dan):
        await player.connect()
    await ann.create(STEADY)
    await bo.create(STEADY)
    await dan.join(await cy.create(STEADY_HEADS_UP))
    players = [ann, bo, cy, dan]
    for player in players:
        player.start()
    table_ids = sorted({p.table_id for p in players if p.table_id is not None})
    store = await RedisStore.from_url(redis.url)
    try:

        async def a_few_hands_everywhere() -> bool:
            dealt = await hands_dealt(store, table_ids)
            return len(dealt) == len(table_ids) and min(dealt.values()) >= 3

        await until(a_few_hands_everywhere)
    finally:
        await store.close()
    return Game(servers, processes, players, table_ids)


async def recover(game: Game, back: float, redis: OwnRedis) -> dict[str, float | int]:
    """Once Redis is ``back`` (a ``time.monotonic``): every table deals and every seated
    player acts again. Then everyone leaves, the processes stop, and the chips are
    counted. The figures."""
    marks = [len(p.frames) for p in game.players]
    dealt: dict[str, float] = {}

    async def every_table_dealt() -> bool:
        for player, mark in zip(game.players, marks, strict=True):
            for _, frame in player.frames[mark:]:
                if frame["type"] == "hand_started":
                    dealt.setdefault(frame["table_id"], time.monotonic())
        return set(dealt) >= set(game.table_ids)

    async def everyone_acted() -> bool:
        return all(acted(p.frames[m:]) for p, m in zip(game.players, marks, strict=True))

    try:
        await until(every_table_dealt)
        await until(everyone_acted)
    except TimeoutError:
        stuck = sorted(set(game.table_ids) - set(dealt))
        raise AssertionError(
            f"no hand since Redis came back at {stuck}, or a player could not act; "
            + last_seen(game.players)
        ) from None
    for player in game.players:
        assert isinstance(await player.finish(), int), f"{player.name} could not leave"
    for process in game.processes:
        assert await game.servers.stop_within_deadline(process) is not None
    store = await RedisStore.from_url(redis.url)
    try:
        assert await chips_in_redis(store) == 0
        voided = [h for t in game.table_ids for h in await store.table_hands(t) if h.voided]
    finally:
        await store.close()
    moved = {
        f["table_id"] for p in game.players for _, f in p.frames if f["type"] == "table_closed"
    }
    return {
        "seconds until the first table deals again": round(min(dealt.values()) - back, 2),
        "until every table does": round(max(dealt.values()) - back, 2),
        "hands voided": len(voided),
        "tables that moved to another process": len(moved),
    }


def acted(frames: list[Frame]) -> bool:
    """An action of the player's own was played (its event carries the player's ref)."""
    return any(f["type"] in ACTIONS and "ref" in f for _, f in frames)


def report(what: str, figures: dict[str, float | int]) -> None:
    print(f"\n{what}: " + ", ".join(f"{k}: {v}" for k, v in figures.items()))


@pytest.mark.long
async def test_play_goes_on_with_every_chip_after_redis_is_killed_and_restarted(
    redis: OwnRedis, servers: Servers
) -> None:
    game = await start_game(servers, redis, lease=1.0)
    redis.kill()
    await asyncio.sleep(3.0)  # longer than the lease: every lease is gone when it is back
    await redis.start()
    figures = await recover(game, time.monotonic(), redis)
    report("Redis killed for 3 s (lease 1 s) and restarted", figures)


@pytest.mark.long
@pytest.mark.parametrize(
    ("lease", "freeze"), [(3.0, 1.0), (1.0, 3.0)], ids=["shorter_than_the_lease", "longer"]
)
async def test_play_goes_on_with_every_chip_after_redis_freezes(
    redis: OwnRedis, servers: Servers, lease: float, freeze: float
) -> None:
    game = await start_game(servers, redis, lease=lease)
    redis.signal(signal.SIGSTOP)
    await asyncio.sleep(freeze)
    redis.signal(signal.SIGCONT)
    figures = await recover(game, time.monotonic(), redis)
    report(f"Redis frozen (SIGSTOP) for {freeze} s, lease {lease} s", figures)
    if freeze < lease:
        assert figures["tables that moved to another process"] == 0, "hosts keep their tables"


OUTAGE_RECORDS = 6
"""The most log records at WARNING or above two outages of a few seconds may make:
the store's health and the listener between processes each say when the first
starts and ends, and when the second starts."""


async def test_a_server_whose_redis_is_gone_logs_each_outage_once_and_stops_in_time(
    redis: OwnRedis, servers: Servers, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    port = free_port()
    process = await servers.start(port, lease=1.0, log=log, flags=STEADY_PACE)
    ann = Player("Ann", f"ws://127.0.0.1:{port}")
    await ann.connect()
    table_id = await ann.create(STEADY)
    ann.start()
    store = await RedisStore.from_url(redis.url)

    async def dealt(at_least: int) -> bool:
        # The test's own connection to Redis is cut too; it is made again on the next try.
        with contextlib.suppress(StoreUnavailable):
            return (await hands_dealt(store, [table_id])).get(table_id, 0) >= at_least
        return False

    try:
        await until(lambda: dealt(3))
        began = time.time()
        redis.kill()
        await asyncio.sleep(3.0)
        await redis.start()
        so_far = len(hands_started(ann.frames, table_id))
        await until(lambda: played_on(ann, table_id, so_far + 2))
        redis.kill()  # for good
        await asyncio.sleep(3.0)
    finally:
        await store.close()
    stopping = time.time()
    status = await servers.stop_within_deadline(process)
    await ann.pause()

    during = [r for r in records(log) if began <= r["at"] < stopping]
    loud = [r for r in during if r["level"] in ("WARNING", "ERROR", "CRITICAL")]
    tracebacks = [r for r in during if "exception" in r]
    assert status is not None, "SIGTERM with Redis gone must end the server within its deadline"
    seconds = stopping - began
    first = tracebacks[0]["message"] if tracebacks else ""
    assert not tracebacks, f"{len(tracebacks)} tracebacks in {seconds:.0f} s, first: {first}"
    said = "\n".join(f"{r['at'] - began:6.2f} s {r['logger']}: {r['message']}" for r in loud)
    assert 1 <= len(loud) <= OUTAGE_RECORDS, f"{len(loud)} records:\n{said}"


async def test_a_server_that_hosts_no_table_logs_an_outage_once_too(
    redis: OwnRedis, servers: Servers, tmp_path: Path
) -> None:
    """Its lease renewals ask Redis nothing, so they must not pass for its answers."""
    log = tmp_path / "server.log"
    process = await servers.start(free_port(), lease=1.0, log=log)
    began = time.time()
    redis.kill()
    await asyncio.sleep(3.0)
    await redis.start()
    await asyncio.sleep(1.0)
    stopping = time.time()
    await servers.stop_within_deadline(process)
    during = [r["message"] for r in records(log) if began <= r["at"] < stopping]
    loud = [m for m in during if "the store" in m]
    assert len(loud) == 2, loud
    assert loud[0].startswith("the store is unreachable"), loud
    assert loud[1].startswith("the store answers again"), loud


async def test_a_player_on_another_process_loses_no_turn_to_an_outage(
    redis: OwnRedis, servers: Servers
) -> None:
    """Bo plays through the process that does not host the table, so his messages reach
    it through Redis. Redis dies on his turn for longer than a turn lasts: the turn
    waits for it and starts again with a new deadline, which he learns from a new
    ``turn_started`` or, if that went out before his process listened again, from the
    snapshot his process asks for then; and his answer plays."""
    hosting, relaying = free_port(), free_port()
    await servers.start(hosting, lease=1.0)
    await servers.start(relaying, lease=1.0)
    ann = Client(await connect(f"ws://127.0.0.1:{hosting}"))
    bo = Client(await connect(f"ws://127.0.0.1:{relaying}"))
    try:
        await ann.hello("Ann")
        await bo.hello("Bo")
        options = {"dealer_bot": False, "turn_seconds": 3.0}
        created = await ann.reply("create_table", options=options, buy_in=500)
        table_id = created["table"]["table_id"]
        joined = await bo.reply("join_table", table_id=table_id, buy_in=500)
        assert joined["type"] == "table_joined", joined
        first = await ann.expect("turn_started")
        if first["seat"] != joined["seat"]:
            await ann.send("bet", table_id=table_id, hand_id=first["hand_id"], amount=20)
        turn = await bo.expect("turn_started", seat=joined["seat"])
        redis.kill()
        await asyncio.sleep(3 * options["turn_seconds"])
        await redis.start()
        again = await bo.wait(lambda m: turn_again(m, turn))
        legal = again["legal"] if again["type"] == "turn_started" else again["table"]["legal"]
        answer = "check" if legal["check"] else "call"
        for _ in range(3):
            ref = await bo.send(answer, table_id=table_id, hand_id=turn["hand_id"])
            played = await bo.wait(partial(names, ref))
            if played.get("code") != "table_moving":
                break
            # The host did not listen again yet: its snapshot comes unasked once it does.
            await bo.expect("table_snapshot")
        assert played["type"] == ("checked" if answer == "check" else "called"), played
    finally:
        for client in (ann, bo):
            await client.close()


def names(ref: int, message: dict[str, Any]) -> bool:
    return message.get("ref") == ref


def turn_again(message: dict[str, Any], turn: dict[str, Any]) -> bool:
    """Whether ``message`` gives ``turn``'s seat the same turn with a later deadline."""
    if message["type"] == "turn_started":
        seat, hand, deadline = message["seat"], message["hand_id"], message["deadline_ms"]
    elif message["type"] == "table_snapshot" and message["table"]["hand"] is not None:
        shown = message["table"]["hand"]
        seat, hand, deadline = shown["actor"], shown["hand_id"], shown["deadline_ms"]
    else:
        return False
    return (seat, hand) == (turn["seat"], turn["hand_id"]) and deadline > turn["deadline_ms"]


async def played_on(player: Player, table_id: str, hands: int) -> bool:
    return len(hands_started(player.frames, table_id)) >= hands


def records(log: Path) -> Iterator[dict[str, Any]]:
    """The server's JSON log records, each with its time as ``at`` (Unix seconds)."""
    for line in log.read_text().splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            record["at"] = datetime.fromisoformat(record["time"]).timestamp()
            yield record
