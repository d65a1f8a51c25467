"""The server's own account of what held its event loop up: its lag and the collector."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect

from qiuqiu.server import loops
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.pauses import IDLE_INTERVAL, LAG_INTERVAL
from tests.server.test_http import get, samples

LAG_COUNT = ("qiuqiu_loop_lag_seconds_count", ())


async def test_metrics_time_the_loops_lag_and_each_collection_by_generation() -> None:
    server = QiuQiuServer(ServerConfig(port=0))
    await server.start()
    try:
        # Someone to keep waiting, so that the lag is timed at the short interval.
        player = await connect(server.url)
        _, _, before = await get(server, "/metrics")
        for _ in range(3):
            gc.collect(2)
        gc.collect(0)
        # A callback that holds the loop for three timer intervals: the timer fires late.
        held = asyncio.get_running_loop().time() + 3 * LAG_INTERVAL
        while asyncio.get_running_loop().time() < held:
            pass
        await asyncio.sleep(5 * LAG_INTERVAL)
        _, _, after = await get(server, "/metrics")
        await player.close()
    finally:
        await server.stop()
    was, now = samples(before), samples(after)

    def grew(name: str, *labels: tuple[str, str]) -> float:
        return now[(name, labels)] - was.get((name, labels), 0.0)

    full = ("generation", "2")
    assert grew("qiuqiu_gc_pause_seconds_count", full) >= 3
    assert grew("qiuqiu_gc_pause_seconds_count", ("generation", "0")) >= 1
    assert grew("qiuqiu_gc_pause_seconds_sum", full) > 0
    assert grew("qiuqiu_loop_lag_seconds_count") >= 1
    # The held callback shows as one firing later than the interval it held the loop for.
    late = grew("qiuqiu_loop_lag_seconds_count") - grew(
        "qiuqiu_loop_lag_seconds_bucket", ("le", str(LAG_INTERVAL))
    )
    assert late >= 1
    assert now[("qiuqiu_event_loop", (("loop", loops.running_loop_name()),))] == 1


async def test_the_lag_is_timed_often_only_while_someone_may_be_kept_waiting() -> None:
    # An idle loop pays each wakeup in full: a hundred a second cost 2% of a core.
    server = QiuQiuServer(ServerConfig(port=0))
    await server.start()

    async def firings(seconds: float) -> tuple[float, float]:
        """The lag timer's firings over ``seconds`` or more, and the most it may fire
        in that time while idle."""
        started = time.perf_counter()
        _, _, before = await get(server, "/metrics")
        await asyncio.sleep(seconds)
        _, _, after = await get(server, "/metrics")
        idle_most = (time.perf_counter() - started) / IDLE_INTERVAL + 1
        return samples(after)[LAG_COUNT] - samples(before).get(LAG_COUNT, 0.0), idle_most

    async def connections() -> float:
        _, _, text = await get(server, "/metrics")
        return samples(text)[("qiuqiu_connections", ())]

    window = 20 * LAG_INTERVAL
    try:
        await asyncio.sleep(LAG_INTERVAL)  # the first timer, armed as the server started
        idle, idle_most = await firings(window)
        player = await connect(server.url)
        # At once, not from the idle timer's next firing.
        playing, _ = await firings(window)
        await player.close()
        while await connections():
            await asyncio.sleep(LAG_INTERVAL)
        await asyncio.sleep(2 * LAG_INTERVAL)  # the short timer armed before the close
        left, left_most = await firings(window)
    finally:
        await server.stop()
    assert idle <= idle_most
    assert playing >= 5
    assert left <= left_most


async def test_a_scrape_walks_no_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    # CPython counts frozen objects, or lists tracked ones, by walking every one: 35-40
    # ms at a thousand tables, a pause over the limit at every scrape.
    walks: list[str] = []

    def walking(name: str) -> Callable[..., Any]:
        real = getattr(gc, name)

        def walk(*args: Any) -> Any:
            walks.append(name)
            return real(*args)

        return walk

    for name in ("get_freeze_count", "get_objects"):
        monkeypatch.setattr(gc, name, walking(name))
    server = QiuQiuServer(ServerConfig(port=0))
    await server.start()
    try:
        status, _, text = await get(server, "/metrics")
    finally:
        await server.stop()
    assert status == 200
    assert b"qiuqiu_gc_pause_seconds" in text
    assert walks == []


async def test_a_stopped_server_no_longer_watches_the_collector() -> None:
    watching = len(gc.callbacks)
    server = QiuQiuServer(ServerConfig(port=0))
    await server.start()
    assert len(gc.callbacks) == watching + 1
    await server.stop()
    assert len(gc.callbacks) == watching
