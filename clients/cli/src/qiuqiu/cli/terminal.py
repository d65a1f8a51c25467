"""The interactive game: server messages and typed lines, handled as they come.

Two sources feed one loop: the connection's messages and the lines read from
standard input. Neither waits for the other, so what the other players do and
the turn timer keep appearing while the prompt is open. The loop wakes every
second as well, to count down the player's own turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator

from rich.console import Console, RenderableType
from rich.text import Text

from qiuqiu.cli import render
from qiuqiu.cli.bot import Action, Split, action_message, leave
from qiuqiu.cli.commands import HELP, Help, Nothing, Quit, Refusal, read
from qiuqiu.cli.connection import Closed, Connection, Disconnected, Notice, Reconnected
from qiuqiu.cli.errors import ConnectionLost
from qiuqiu.cli.game import TableState
from qiuqiu.protocol import server as wire

REMINDERS = (20, 10, 5)
"""Seconds left on the player's turn at which the timer is shown again."""


async def stdin_lines() -> AsyncIterator[str]:
    """Lines typed on standard input, without blocking the event loop."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        yield line.decode(errors="replace")


class Terminal:
    """Shows the table at ``table_id`` and plays what the person types."""

    def __init__(self, conn: Connection, table_id: str, console: Console, unicode: bool) -> None:
        self.conn = conn
        self.table_id = table_id
        self.console = console
        self.unicode = unicode
        self._prompt_open = False
        self._reminded: set[int] = set()
        self._turn_shown: tuple[int, int] | None = None
        self._answered: tuple[int, int | None] | None = None

    @property
    def state(self) -> TableState | None:
        return self.conn.tables.get(self.table_id)

    async def run(self, lines: AsyncIterator[str]) -> None:
        """Play until the person quits, the input ends, or the table is gone."""
        self.say(Text("Type help for the commands. Good luck!", "dim"))
        messages = self.conn.messages()
        next_message = asyncio.ensure_future(anext(messages))
        next_line = asyncio.ensure_future(anext(lines, None))
        try:
            while True:
                done, _ = await asyncio.wait(
                    {next_message, next_line}, timeout=1.0, return_when=asyncio.FIRST_COMPLETED
                )
                if next_message in done:
                    if not self.show(next_message.result()):
                        return
                    next_message = asyncio.ensure_future(anext(messages))
                if next_line in done:
                    line = next_line.result()
                    if line is None or not await self.command(line):
                        await self.quit()
                        return
                    next_line = asyncio.ensure_future(anext(lines, None))
                self.remind()
                self.prompt()
        finally:
            for task in (next_message, next_line):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await task

    # -- output --------------------------------------------------------------------

    def say(self, renderable: RenderableType) -> None:
        if self._prompt_open:
            self.console.print()
            self._prompt_open = False
        self.console.print(renderable)

    def prompt(self) -> None:
        state = self.state
        if self._prompt_open or state is None or state.legal is None:
            return
        if self._answered is not None and self._answered == _turn_key(state):
            return  # answered; the server has not said so yet
        self.console.print("> ", end="")
        self._prompt_open = True

    def show(self, message: Notice) -> bool:
        """Show one message; ``False`` when the game is over for this client."""
        state = self.state
        match message:
            case Closed(reason=reason):
                self.say(Text(f"The connection is closed ({reason}).", "bold red"))
                return False
            case Disconnected(reason=reason):
                self.say(Text(f"Connection lost ({reason}); reconnecting…", "red"))
                return True
            case Reconnected():
                self.say(Text("Reconnected.", "green"))
                return True
            case wire.TableLeft(table_id=self.table_id, balance=balance):
                self.say(Text(f"You left the table. Your balance is {balance}.", "bold"))
                return False
        if state is None:
            return True
        if getattr(message, "table_id", self.table_id) != self.table_id:
            return True
        if isinstance(message, wire.Error):
            self._answered = None  # refused: the turn is still open
        line = render.event(message, state, self.unicode)
        if line is not None and line.plain:
            self.say(line)
        if isinstance(message, wire.PlayerLeft) and state.you is None:
            return False
        if state.closed:
            return False
        if isinstance(message, wire.TurnStarted | wire.CuttingStarted | wire.TableSnapshot):
            self.show_turn(state)
        return True

    def show_turn(self, state: TableState) -> None:
        """The whole table when it is this player's turn; whose turn it is otherwise."""
        hand = state.hand
        if hand is None or hand.deadline_ms is None:
            return
        if state.legal is None:
            if hand.actor is not None:
                left = render.seconds_left(hand.deadline_ms, now_ms())
                self.say(Text(f"{render.who(state, hand.actor)} to act ({left} s).", "dim"))
            return
        key = (hand.hand_id, hand.deadline_ms)
        if key == self._turn_shown:
            return
        self._turn_shown, self._reminded = key, set()
        self.say(render.table(state, now_ms(), self.unicode))
        self.say(Text.assemble(("Your turn: ", "bold cyan"), render.legal(state.legal)))

    def remind(self) -> None:
        state = self.state
        if state is None or state.legal is None or state.hand is None:
            return
        if state.hand.deadline_ms is None:
            return
        left = render.seconds_left(state.hand.deadline_ms, now_ms())
        due = [r for r in REMINDERS if left <= r and r not in self._reminded]
        if due:
            self._reminded.update(r for r in REMINDERS if r >= left)
            self.say(
                Text(
                    f"⏱ {left} s left to act" if self.unicode else f"{left} s left to act", "yellow"
                )
            )

    # -- input ---------------------------------------------------------------------

    async def command(self, line: str) -> bool:
        """Carry out one typed line; ``False`` when the person wants to quit."""
        self._prompt_open = False
        state = self.state
        match read(line, state):
            case Quit():
                return False
            case Help():
                self.say(HELP)
            case Nothing():
                pass
            case Refusal(reason=reason):
                self.say(Text(reason, "red"))
            case action:
                await self.act(action)
        return True

    async def act(self, action: Action | Split) -> None:
        state = self.state
        assert state is not None
        assert state.hand is not None
        try:
            await self.conn.send(action_message(action, self.table_id, state.hand.hand_id))
            self._answered = _turn_key(state)
        except ConnectionLost:
            self.say(Text("Not connected; try again in a moment.", "red"))

    async def quit(self) -> None:
        state = self.state
        if state is not None and state.hand is not None and state.hand.phase != "ended":
            self.say(Text("Leaving: your seat plays out this hand (check or fold)…", "dim"))
        try:
            balance = await leave(self.conn, self.table_id)
        except ConnectionLost:
            balance = None
        if balance is not None:
            self.say(Text(f"You left the table. Your balance is {balance}.", "bold"))


def _turn_key(state: TableState) -> tuple[int, int | None] | None:
    """Which turn it is: each has its own deadline."""
    return None if state.hand is None else (state.hand.hand_id, state.hand.deadline_ms)


def now_ms() -> int:
    return int(time.time() * 1000)
