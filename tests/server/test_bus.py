"""The bus between processes, over a real Redis: what a sender is told of a message."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from qiuqiu.server.bus import RedisBus, stopped_in
from qiuqiu.server.errors import StoreUnavailable
from qiuqiu.server.redis_clients import clients
from tests.conftest import free_port, own_redis

PREFIX = "test-bus:"
WAIT = 10.0
"""Seconds to wait for a message (never a timing assertion)."""


class ReplyCutter:
    """A TCP proxy in front of Redis that passes everything on, but for the answer to
    the first PUBLISH: it cuts that connection instead, once Redis has the command."""

    def __init__(self, redis_port: int) -> None:
        self.redis_port = redis_port
        self.cut = asyncio.Event()
        self._publishing: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self._serving: set[asyncio.Task[Any]] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._serving:
            task.cancel()
        await asyncio.gather(*self._serving, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._serving.add(task)
        upstream_reader, upstream = await asyncio.open_connection("127.0.0.1", self.redis_port)
        both = (writer, upstream)
        try:
            await asyncio.gather(
                self._pass(reader, upstream, both, towards_redis=True),
                self._pass(upstream_reader, writer, both, towards_redis=False),
            )
        finally:
            for end in both:
                end.close()
                with contextlib.suppress(OSError):
                    await end.wait_closed()

    async def _pass(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        both: tuple[asyncio.StreamWriter, asyncio.StreamWriter],
        *,
        towards_redis: bool,
    ) -> None:
        client = both[0]
        while data := await reader.read(65536):
            if towards_redis and b"PUBLISH" in data and not self.cut.is_set():
                self._publishing.add(client)
            elif not towards_redis and client in self._publishing:
                self._publishing.discard(client)
                self.cut.set()
                break
            writer.write(data)
            await writer.drain()
        for end in both:
            end.close()


async def test_a_message_whose_publish_lost_its_answer_is_not_called_lost(
    redis_url: str,
) -> None:
    """Redis has the message and hands it to the process listening, but the sender's
    connection is cut before Redis's answer: the message was not lost, so the sender
    must not say so (its relay would tell the client "nothing changed" of a command
    that process then applies). Its next message goes out as usual."""
    address = urlsplit(redis_url)
    assert address.port is not None
    cutter = ReplyCutter(address.port)
    cut_port = await cutter.start()
    received: list[dict[str, Any]] = []
    direct, cut = clients(redis_url, 2.0), clients(f"redis://127.0.0.1:{cut_port}/0", 2.0)
    listening = RedisBus(direct[2], "host", PREFIX)
    sending = RedisBus(cut[2], "relay", PREFIX)
    await listening.start(received.append, lambda: None)
    await sending.start(lambda _: None, lambda: None)
    lost: list[int] = []
    try:
        sending.send("host", {"n": 1}, lost=lambda: lost.append(1))
        await asyncio.wait_for(cutter.cut.wait(), WAIT)
        sending.send("host", {"n": 2}, lost=lambda: lost.append(2))
        async with asyncio.timeout(WAIT):
            while len(received) < 2:
                await asyncio.sleep(0.01)
    finally:
        await sending.stop()
        await listening.stop()
        for client in (*direct, *cut):
            await client.aclose()
        await cutter.close()
    assert received == [{"n": 1}, {"n": 2}]
    assert lost == []


async def test_the_channels_working_again_after_redis_was_away_is_logged_as_their_failure_was(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An operator who reads that listening to the other processes, or publishing to
    them, failed reads, once Redis is back, that it works again, as the store's own
    outage says it ends."""
    port = free_port()
    redis = own_redis(port, tmp_path)
    resumed = asyncio.Event()
    redis_clients = clients(f"redis://127.0.0.1:{port}/0", 2.0)
    bus = RedisBus(redis_clients[2], "host", PREFIX)
    caplog.set_level(logging.INFO, logger="qiuqiu.server.bus")

    async def said(words: str) -> None:
        async with asyncio.timeout(WAIT):
            while not any(words in r.getMessage() for r in caplog.records):
                await asyncio.sleep(0.05)

    try:
        async with asyncio.timeout(WAIT):
            while True:
                with contextlib.suppress(Exception):
                    await bus.start(lambda _: None, resumed.set)
                    break
                await asyncio.sleep(0.05)
        redis.terminate()
        redis.wait()
        await said("listening to other processes failed")
        bus.send("elsewhere", {"n": 1})
        await said("could not publish to other processes")
        redis = own_redis(port, tmp_path)
        await asyncio.wait_for(resumed.wait(), WAIT)
        await said("listening to other processes again")
        bus.send("elsewhere", {"n": 2})
        await said("publishing to other processes again")
    finally:
        await bus.stop()
        for client in redis_clients:
            await client.aclose()
        redis.terminate()
        redis.wait()


async def test_a_bus_whose_redis_is_gone_at_start_is_a_store_outage() -> None:
    """Redis lost between the store's first call and the bus's subscription: the server
    stops its start with one line naming Redis (``__main__``), not a traceback."""
    (_, _, channels) = redis_clients = clients(f"redis://127.0.0.1:{free_port()}/0", 2.0)
    bus = RedisBus(channels, "host", PREFIX)
    try:
        with pytest.raises(StoreUnavailable, match="connecting to"):
            await bus.start(lambda _: None, lambda: None)
    finally:
        for client in redis_clients:
            await client.aclose()


async def test_a_loop_cancelled_in_a_call_that_answers_with_an_error_ends() -> None:
    """A cancellation that reaches redis-py mid-call may come out as one of Redis's
    errors; the bus's loops, which go on after those (Redis away), must end all the
    same, or a stopping server waits on them for ever."""
    calls = 0

    async def call_turning_cancels_into_errors() -> None:
        nonlocal calls
        calls += 1
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            raise ConnectionError("Connection closed by server.") from None

    async def loop_as_the_bus_does() -> None:
        while calls < 100:
            try:
                await call_turning_cancels_into_errors()
            except Exception as error:
                stopped_in(error)

    task = asyncio.create_task(loop_as_the_bus_does())
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.wait([task], timeout=WAIT)
    assert task.cancelled()
    assert calls == 1
