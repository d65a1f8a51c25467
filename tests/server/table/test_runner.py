"""The table's asyncio side: what it runs later, that a stopped table runs nothing, and
when it makes its writes."""

from __future__ import annotations

import asyncio
import logging
import random
from typing import cast

import pytest

from qiuqiu.protocol import TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.dealer import DealerBot
from qiuqiu.server.frames import Frame
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.table import Table, TableTimings
from qiuqiu.server.table.ledger import Write, WriteKind


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


async def test_a_hands_last_action_goes_out_before_its_end_commit_is_made() -> None:
    # The end commit is a sixth of that action's work: its player waits for none of it.
    store = MemoryStore()
    await store.create_account("p", "P", "token", 1000)
    await store.acquire_table("t", 60)
    timings = TableTimings(hand_pause=60, grace=30, bot_delay=0)
    t = Table("t", TableOptions(), store, random.Random(1), timings, bot_factory=DealerBot)
    loop = asyncio.get_running_loop()
    frames = {"given": 0, "out": 0}

    def out() -> None:
        frames["out"] += 1

    unsent_at_the_end = loop.create_future()
    real_next_write = t.core.next_write

    def next_write() -> Write | None:
        write = real_next_write()
        if write is not None and write.kind is WriteKind.HAND_END:
            unsent_at_the_end.set_result(frames["given"] - frames["out"])
        return write

    class Player:
        """Checks or calls at each turn; what it is given goes out as an outbox's does,
        once the input that made it is done."""

        def deliver(self, message: wire.Reply) -> None:
            self.deliver_frame(Frame.of(message))

        def deliver_frame(self, frame: Frame) -> None:
            frames["given"] += 1
            loop.call_soon(out)
            if frame.kind is wire.TurnStarted and '"legal"' in frame.text:
                turn = cast(wire.TurnStarted, frame.message)
                assert turn.legal is not None
                action: cmd.TableAction = (
                    cmd.Check(table_id="t", hand_id=turn.hand_id)
                    if turn.legal.check
                    else cmd.Call(table_id="t", hand_id=turn.hand_id)
                )
                loop.call_soon(t.serve, "p", "P", self, action)

    t.core.next_write = next_write  # type: ignore[method-assign]
    await t.open()
    t.serve("p", "P", Player(), cmd.JoinTable(table_id="t", buy_in=500))
    unsent = await asyncio.wait_for(unsent_at_the_end, 10)
    await t.close()
    assert unsent == 0, "the frames of the action that ended the hand wait for its commit"
