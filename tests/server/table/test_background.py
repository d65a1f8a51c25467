"""A table's timers, work for later and tasks: each runs once, and none after a cancel."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from qiuqiu.server.logs import TableLog
from qiuqiu.server.table.audience import TURN, Timer
from qiuqiu.server.table.background import STALL, STALL_GRACE, Background


class At:
    table_id, hand_id = "t", 3


def background() -> Background:
    return Background(TableLog(logging.getLogger("qiuqiu.server.table"), At()))


async def test_a_timer_armed_again_fires_once_at_its_new_time() -> None:
    b, fired = background(), asyncio.get_running_loop().create_future()
    b.arm(TURN, 30, lambda timer: fired.set_result(("first", timer)))
    b.arm(TURN, 0, lambda timer: fired.set_result(("second", timer)))
    assert await asyncio.wait_for(fired, 5) == ("second", TURN)


async def test_a_timer_that_fires_after_a_stall_lets_what_waited_to_be_read_go_first() -> None:
    b, order = background(), list[str]()
    fired = asyncio.get_running_loop().create_future()

    def fire(timer: Timer) -> None:
        order.append("timer")
        fired.set_result(None)

    b.arm(TURN, 0.01, fire)
    time.sleep(STALL + 0.05)
    # What arrived during the stall takes a few turns of the loop to be read and handled.
    for _ in range(3):
        await asyncio.sleep(0)
    order.append("input")
    await asyncio.wait_for(fired, 5)
    assert order == ["input", "timer"]


async def test_a_timer_fires_once_even_if_the_loop_stalls_again_in_its_grace() -> None:
    b, fired = background(), list[Timer]()
    b.arm(TURN, 0.01, fired.append)
    time.sleep(STALL + 0.05)
    for _ in range(2):  # the timer fires late, and waits its grace
        await asyncio.sleep(0)
    time.sleep(STALL_GRACE + STALL + 0.05)
    for _ in range(3):
        await asyncio.sleep(0)
    assert fired == [TURN]


async def test_a_disarmed_timer_and_a_cancelled_background_run_nothing() -> None:
    b, ran = background(), list[object]()
    b.arm(TURN, 0, ran.append)
    b.disarm(TURN)
    b.arm(Timer("next_hand"), 0, ran.append)
    b.later(0, lambda: ran.append("later"))
    task_ran = asyncio.Event()

    async def task() -> None:
        await asyncio.sleep(0)
        task_ran.set()

    b.spawn(task())
    b.cancel()
    await b.wait()
    await asyncio.sleep(0.05)
    assert ran == []
    assert not task_ran.is_set()


async def test_a_failing_timer_is_logged_with_its_table_and_the_next_still_fires(
    caplog: pytest.LogCaptureFixture,
) -> None:
    b, after = background(), asyncio.get_running_loop().create_future()

    def fail(timer: Timer) -> None:
        raise RuntimeError("boom")

    b.arm(TURN, 0, fail)
    b.arm(Timer("next_hand"), 0, after.set_result)
    with caplog.at_level(logging.ERROR, logger="qiuqiu.server.table"):
        await asyncio.wait_for(after, 5)
    assert "table t: timer" in caplog.text
    assert "boom" in caplog.text
