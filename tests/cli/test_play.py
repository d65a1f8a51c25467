"""The terminal client's own server (``qiuqiu play`` without ``--server``)."""

from __future__ import annotations

import asyncio
import urllib.request
from urllib.parse import urlsplit

from qiuqiu.cli.play import embedded_server
from tests.server.test_http import samples


async def metrics(url: str) -> set[str]:
    """The names of the samples on the /metrics page of the server at ``url``."""
    port = urlsplit(url).port
    with await asyncio.to_thread(urllib.request.urlopen, f"http://127.0.0.1:{port}/metrics") as r:
        page: bytes = r.read()
    return {name for name, _ in samples(page)}


async def test_the_clients_own_server_does_not_time_its_loop_a_hundred_times_a_second() -> None:
    # Nobody reads its /metrics, and the lag's timer woke an idle game's process a
    # hundred times a second: 2% of a core here, for nothing.
    async with embedded_server(fast=False) as url:
        await asyncio.sleep(0.2)
        names = await metrics(url)
    assert "qiuqiu_connections" in names
    assert "qiuqiu_loop_lag_seconds_count" not in names
