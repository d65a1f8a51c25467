"""The thread a bot thinks in, driven without a server: each result told there."""

from __future__ import annotations

import threading

import pytest

from qiuqiu.cli.errors import BotFailed
from qiuqiu.cli.thinker import Thinker
from qiuqiu.cli.turns import Bot, HandResult


def result(hand_id: int) -> HandResult:
    return HandResult("t1", hand_id, 0, (), {0: 10, 1: -10}, {}, ())


class Remembers(Bot):
    """Keeps the thread each hand's end was told in."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def hand_ended(self, result: HandResult) -> None:
        self.threads.append(threading.get_ident())


class Fails(Bot):
    def hand_ended(self, result: HandResult) -> None:
        raise ValueError("no memory left")


async def test_every_result_is_told_in_one_thread_that_is_not_the_loops() -> None:
    # What a bot binds to its thread at one turn (an sqlite3 connection) serves the next.
    bot = Remembers()
    thinker = Thinker(bot)
    try:
        for hand_id in (1, 2, 3):
            await thinker.tell(result(hand_id))
    finally:
        thinker.stop()
    assert len(bot.threads) == 3
    assert len(set(bot.threads)) == 1
    assert bot.threads[0] != threading.get_ident()


async def test_what_the_bot_raises_in_its_thread_is_raised_where_it_was_asked() -> None:
    thinker = Thinker(Fails())
    try:
        with pytest.raises(BotFailed) as failed:
            await thinker.tell(result(7))
    finally:
        thinker.stop()
    assert isinstance(failed.value.error, ValueError)
    assert str(failed.value) == "Fails raised ValueError in hand 7: no memory left"
