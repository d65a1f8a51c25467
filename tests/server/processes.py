"""Real ``qiuqiu-server`` processes on a real Redis, and what tests ask of them."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable

from qiuqiu.cli.bot import Action, Bot, Call, Check, Turn
from qiuqiu.server.redis_store import RedisStore

WAIT = 30.0
"""Seconds to wait for a server to listen or a table to deal (never a timing assertion)."""


class Caller(Bot):
    def decide(self, turn: Turn) -> Action:
        return Check() if turn.legal.check else Call()


class Servers:
    """``qiuqiu-server`` processes sharing one Redis, each started on a port of its own
    once it listens: quick leases (half a second), hardly a pause between hands, a
    long grace period. :meth:`kill_remaining` ends whatever a test left running."""

    def __init__(self, redis_url: str) -> None:
        self.redis_url = redis_url
        self._started: list[asyncio.subprocess.Process] = []

    async def start(self, port: int) -> asyncio.subprocess.Process:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "qiuqiu.server", "--port", str(port), "--redis-url", self.redis_url),
            *("--lease", "0.5", "--hand-pause", "0.02", "--bot-delay", "0", "--grace", "30"),
            *("--rate", "1000", "--burst", "1000", "--log-level", "WARNING"),
            stderr=asyncio.subprocess.DEVNULL,
        )
        self._started.append(process)
        await until(lambda: listening(port))
        return process

    async def stop(self, process: asyncio.subprocess.Process) -> int:
        """SIGTERM ``process`` and return its exit status, once it has exited."""
        process.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(process.wait(), WAIT)

    async def kill_remaining(self) -> None:
        for process in self._started:
            if process.returncode is None:
                process.kill()
                await process.wait()


async def listening(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    await writer.wait_closed()
    return True


async def until(done: Callable[[], Awaitable[bool]]) -> None:
    async with asyncio.timeout(WAIT):
        while not await done():
            await asyncio.sleep(0.05)


async def chips_in_redis(store: RedisStore) -> int:
    """Every balance (the house's below zero) and every stack at every saved table."""
    balances = sum((await store.balances()).values())
    return balances + sum(s.stack for t in await store.tables() for s in t.seats)


async def hands_dealt(store: RedisStore, table_ids: list[str]) -> dict[str, int]:
    records = [await store.table(t) for t in table_ids]
    return {t: r.hand_id for t, r in zip(table_ids, records, strict=True) if r is not None}
