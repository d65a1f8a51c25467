"""The table's asyncio side: what it runs later, and that a stopped table runs nothing."""

from __future__ import annotations

import asyncio
import logging
import random

import pytest

from qiuqiu.protocol import TableOptions
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.table import Table


def table() -> Table:
    return Table("t", TableOptions(), MemoryStore(), random.Random(1))


async def test_work_for_later_runs_once_in_its_time() -> None:
    t, ran = table(), asyncio.get_running_loop().create_future()
    t.later(0, lambda: ran.set_result("ran"))
    assert not ran.done(), "later is later: not inside the call"
    assert await asyncio.wait_for(ran, 5) == "ran"


async def test_a_stopped_table_runs_nothing_it_had_for_later() -> None:
    t, ran = table(), []
    t.later(0, lambda: ran.append(1))
    t.stop_work()
    await asyncio.sleep(0.05)
    assert ran == []


async def test_work_for_later_that_fails_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    t, after = table(), asyncio.get_running_loop().create_future()

    def fail() -> None:
        raise RuntimeError("boom")

    t.later(0, fail)
    t.later(0, lambda: after.set_result(None))
    with caplog.at_level(logging.ERROR, logger="qiuqiu.server.table"):
        await asyncio.wait_for(after, 5)
    assert "background work failed" in caplog.text
    assert "boom" in caplog.text
