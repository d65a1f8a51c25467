"""The thread a bot thinks in: one per :func:`~qiuqiu.cli.bot.play`, asked each turn."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import TypeVar

from qiuqiu.cli.turns import Action, Bot, HandResult, Split, Turn, answer, listens, tell

Outcome = TypeVar("Outcome")


class Thinker:
    """The one thread that asks the bot every turn of a :func:`play`.

    Not the loop's: a bot that thinks for a while must not stop the connection
    answering the server's keepalive pings meanwhile. One and the same each turn: what
    a bot makes at a turn bound to its thread (an sqlite3 connection) serves it at
    the next. A daemon, not the loop's executor, whose threads are waited for as the
    loop and the process end: Ctrl-C in the middle of a long thought would wait for
    the thought."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self._asked: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        threading.Thread(target=self._think, name="bot-decide", daemon=True).start()

    def _think(self) -> None:
        while (ask := self._asked.get()) is not None:
            ask()

    def stop(self) -> None:
        self._asked.put(None)

    async def answer(self, turn: Turn) -> Action | Split:
        """The bot's :func:`answer` to ``turn``, given in the thread."""
        return await self._in_thread(lambda: answer(self.bot, turn, type(self.bot).__name__))

    async def tell(self, result: HandResult) -> None:
        """:func:`tell` the bot ``result`` in the thread, if it listens."""
        if listens(self.bot):
            await self._in_thread(lambda: tell(self.bot, result, type(self.bot).__name__))

    async def _in_thread(self, call: Callable[[], Outcome]) -> Outcome:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Outcome] = loop.create_future()

        def settle(outcome: Outcome | BaseException) -> None:
            if done.done():  # given up on: the play was cancelled meanwhile
                return
            if isinstance(outcome, BaseException):
                done.set_exception(outcome)
            else:
                done.set_result(outcome)

        def ask() -> None:
            outcome: Outcome | BaseException
            try:
                outcome = call()
            except BaseException as raised:  # the loop's side raises it, whatever it is
                outcome = raised
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(settle, outcome)

        self._asked.put(ask)
        return await done
