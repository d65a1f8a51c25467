"""Real ``qiuqiu-server`` processes on a real Redis, and what tests ask of them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

from qiuqiu.cli.bot import Action, Bot, Call, Check, Turn
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import HOUSE
from tests.conftest import free_port, own_redis
from tests.server.faulty_store import (
    JOURNAL_VARIABLE,
    OUTAGE_VARIABLE,
    PLAN_VARIABLE,
    FaultPlan,
)

WAIT = 30.0
"""Seconds to wait for a server to listen or a table to deal (never a timing assertion)."""

STOP_TIMEOUT = 3.0
"""The stop deadline every server here is given (``QIUQIU_STOP_TIMEOUT``): SIGTERM
must end it within this, whatever state its store is in."""

STOP_MARGIN = 5.0
"""Seconds past the stop deadline allowed for the interpreter itself to exit, on a
machine shared with other work."""

HOST_LEASE = 3.0
"""A lease for a test whose table must stay with its host until the test kills a
process: with the quick default, a host stalled that long on a busy machine loses the
table to another process first, and the test then sees something else happen."""

ROOT = Path(__file__).resolve().parents[2]


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

    async def start(
        self,
        port: int,
        *,
        lease: float = 0.5,
        plan: FaultPlan | None = None,
        journal: Path | None = None,
        outage: Path | None = None,
        log: Path | None = None,
        flags: Sequence[str] = (),
    ) -> asyncio.subprocess.Process:
        """Start a server and return once it listens. With a ``plan`` it runs on a
        :class:`~tests.server.faulty_store.FaultyStore` writing ``journal``, its Redis
        switched off by the file ``outage``; with
        ``log`` its stderr (JSON lines at INFO) is kept there."""
        # The stop deadline is passed in the environment, which a server that does
        # not know the setting yet ignores, rather than as a flag it would refuse.
        env = {**os.environ, "QIUQIU_STOP_TIMEOUT": str(STOP_TIMEOUT)}
        module = "qiuqiu.server"
        if plan is not None:
            module = "tests.server.faulty_server"
            env[PLAN_VARIABLE] = plan.to_json()
            if journal is not None:
                env[JOURNAL_VARIABLE] = str(journal)
            if outage is not None:
                env[OUTAGE_VARIABLE] = str(outage)
        level = (
            ("--log-level", "INFO", "--log-format", "json") if log else ("--log-level", "WARNING")
        )
        with contextlib.ExitStack() as files:
            stderr = files.enter_context(log.open("ab")) if log else asyncio.subprocess.DEVNULL
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                *("-m", module, "--port", str(port), "--redis-url", self.redis_url),
                *("--lease", str(lease), "--hand-pause", "0.02", "--bot-delay", "0"),
                *("--grace", "30", "--rate", "1000", "--burst", "1000", *level, *flags),
                stderr=stderr,
                env=env,
                cwd=ROOT,
            )
        self._started.append(process)

        async def up() -> bool:
            return process.returncode is not None or await listening(port)

        await until(up)
        assert process.returncode is None, f"the server on port {port} exited at start"
        return process

    async def stop(self, process: asyncio.subprocess.Process) -> int:
        """SIGTERM ``process`` and return its exit status, once it has exited."""
        process.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(process.wait(), WAIT)

    async def stop_within_deadline(self, process: asyncio.subprocess.Process) -> int | None:
        """SIGTERM ``process`` and wait for it as long as its stop deadline allows (and a
        margin); its exit status, or ``None`` (and it is killed) if it was still running."""
        process.send_signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(process.wait(), STOP_TIMEOUT + STOP_MARGIN)
        except TimeoutError:
            process.kill()
            await process.wait()
            return None

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


PASSWORDS_REFUSED = (
    ("", "no password: put it in the URL, redis://:PASSWORD@host:port/db"),
    (":hunter2@", "the URL's user or password: invalid username-password pair"),
)
"""What goes before the host in a Redis URL that :func:`redis_asking_a_password` refuses,
and how the server says so."""


@contextlib.asynccontextmanager
async def redis_asking_a_password(directory: Path) -> AsyncIterator[int]:
    """A Redis of its own, listening, whose password is ``s3cret``; its port."""
    port = free_port()
    redis = own_redis(port, directory, "--requirepass", "s3cret")
    try:
        await until(lambda: listening(port))
        yield port
    finally:
        redis.kill()
        redis.wait()


async def until(done: Callable[[], Awaitable[bool]]) -> None:
    async with asyncio.timeout(WAIT):
        while not await done():
            await asyncio.sleep(0.05)


async def chips_in_redis(store: RedisStore) -> int:
    """Every balance (the house's below zero) and every stack at every saved table."""
    balances = sum((await store.balances()).values())
    return balances + sum(s.stack for t in await store.tables() for s in t.seats)


async def seats_in_redis(store: RedisStore) -> list[str]:
    """Every seat of a player (not the dealer bot) in a saved table, and every table an
    account's seat index names, as ``account at table``."""
    seats = [f"{s.account_id} at {t.table_id}" for t in await store.tables() for s in t.seats]
    indexed = [
        f"{account} at {table_id} (its index)"
        for account in await store.balances()
        for table_id in await store.seated_tables(account)
    ]
    return [seat for seat in seats if not seat.startswith(f"{HOUSE} ")] + indexed


async def hands_dealt(store: RedisStore, table_ids: list[str]) -> dict[str, int]:
    records = [await store.table(t) for t in table_ids]
    return {t: r.hand_id for t, r in zip(table_ids, records, strict=True) if r is not None}
