"""``qiuqiu play --watch ID``: a table watched as a spectator, seated nowhere.

The server sends a spectator the table's events without any seat's tiles: that
tiles were dealt, and to whom, but which only at the showdown, for the hands still
in. So this client draws the seats and stacks, tells each hand as it is played,
and shows no tile it was not sent. The connection watches the table again by
itself after a reconnect (:attr:`~qiuqiu.cli.connection.Connection.watching`);
``quit`` stops watching.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from rich.text import Text

from qiuqiu.cli import render
from qiuqiu.cli.commands import ACTIONS, WATCHING_HELP, Help, Nothing, Quit, Refusal, read
from qiuqiu.cli.connection import (
    OPEN_TIMEOUT,
    Closed,
    Connection,
    Disconnected,
    Notice,
    Reconnected,
)
from qiuqiu.cli.errors import ConnectionLost, CutShort, ServerRefused, ShuffleNotRevealed
from qiuqiu.cli.game import TableState
from qiuqiu.cli.live import now_ms
from qiuqiu.cli.narrator import Narrator
from qiuqiu.cli.terminal import INTERRUPT
from qiuqiu.protocol import DealTampered, ErrorCode
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire

PLAYING = ACTIONS | {"rebuy", "seed", "/seed"}
"""The commands of a seat, which a spectator has not."""


async def start_watching(conn: Connection, table_id: str) -> int | None:
    """Ask to watch ``table_id``: :class:`ServerRefused` saying why not (no such table,
    a full audience, too many tables watched from this connection). Returns the last
    hand the table's history has (0 if none), ``None`` if it cannot be read now."""
    try:
        await conn.request(cmd.WatchTable(table_id=table_id), wire.TableWatched)
    except ServerRefused as refused:
        raise ServerRefused(
            refused.code, f"table {table_id} cannot be watched: {refused.message}"
        ) from None
    # A snapshot with no hand (before the first, or at a table another server adopted)
    # does not say where the watch began: the history does.
    try:
        listed = await conn.request(cmd.ListHands(table_id=table_id, limit=1), wire.HandList)
    except (ServerRefused, ConnectionLost):
        return None
    return max((hand.hand_id for hand in listed.hands), default=0)


class Spectator(Narrator):
    """Tells what happens at the table ``table_id``, which ``conn`` watches."""

    _rules_told = False
    """Whether the table's rules were told: a reconnect's snapshot says nothing new of them."""
    _seq_told = -1
    """The ``seq`` of the last event or snapshot told: a snapshot as of no later one (one
    sent again, as when the table moves, or as of the events told) has nothing new."""
    ended_told: int | None = None
    """The last hand whose end was told, or, as the watch begins, the last the table's
    history has (:func:`start_watching`): a later snapshot past the next one (after a
    reconnect) says which hands went by unseen."""
    _closed_unseen = False
    """Whether the table closed while the connection was down: watching it again found none."""
    _last_state: TableState | None = None

    @property
    def state(self) -> TableState | None:
        """The table as last seen: the connection forgets one it may no longer watch (it
        closed while the connection was down), whose last picture stays on screen too."""
        state = self.conn.tables.get(self.table_id)
        if state is not None:
            self._last_state = state
        return self._last_state

    async def run(self, lines: AsyncIterator[str]) -> None:
        """Watch until the person quits, the input ends, or the table is gone.
        Raises :class:`ServerRefused` when watching again after a reconnect is refused,
        :class:`CutShort` when the server stopped or the connection was lost for good."""
        if self.screen is not None:
            self.screen.standing = Text(
                "Watching: no tile is shown before the showdown. Type quit to stop.", "dim"
            )
        self.say(
            Text(f"You are watching table {self.table_id}. Type help for the commands.", "dim")
        )
        messages = self.conn.messages()
        next_message = asyncio.ensure_future(anext(messages))
        next_line: asyncio.Future[str | None] = asyncio.ensure_future(anext(lines, None))
        try:
            while True:
                waiting: set[asyncio.Future[Any]] = {next_message, next_line}
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if next_message in done:
                    if not self.show(next_message.result()):
                        if self._closed_unseen:
                            await self.closed_unseen()
                        return
                    next_message = asyncio.ensure_future(anext(messages))
                if next_line in done:
                    if not await self.command(next_line.result()):
                        return
                    next_line = asyncio.ensure_future(anext(lines, None))
                self.redraw()
        finally:
            if self.screen is not None:
                self.screen.standing = None  # its last picture stays: there is no quitting it
            for task in (next_message, next_line):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await task

    def show(self, message: Notice) -> bool:
        """Show one message; ``False`` once there is nothing more to watch, :class:`CutShort`
        raised once the server or the network ended the watch."""
        match message:
            case Closed(reason=reason):
                self.connection_closed(reason)
                raise CutShort
            case Disconnected(reason=reason):
                self.connection_dropped(reason)
                return True
            case Reconnected():
                self.reconnected()
                return True
            case wire.Error(code=code, message=text) if self.table_id not in self.conn.watching:
                # Watching again after a reconnect or a move was refused: the connection
                # gave up the table (it closed meanwhile, or its audience filled up).
                if code is ErrorCode.UNKNOWN_TABLE:
                    self._closed_unseen = True
                    return False
                raise ServerRefused(code, f"table {self.table_id} cannot be watched again: {text}")
            case wire.TableLeft(table_id=self.table_id):
                self.say(Text(f"You no longer watch table {self.table_id}.", "bold"))
                return False
            case wire.TableSnapshot(seq=seq, table=wire.TableView(table_id=self.table_id)):
                if seq > self._seq_told:
                    self._seq_told = seq
                    self.tell_unseen(message.table.hand)
                    self.show_snapshot()
                return True
        state = self.state
        if state is None or getattr(message, "table_id", None) != self.table_id:
            return True
        if isinstance(message, wire.TableEvent):
            self._seq_told = max(self._seq_told, message.seq)
        line: Text | None
        match message:
            case wire.TableClosed(table_seed=None):
                # Not closed: the connection watches it again, and its snapshot follows.
                line = Text(
                    f"The table moved to another server: watching it there{self.ellipsis}",
                    "yellow",
                )
            case wire.TurnStarted() if self.screen is None:
                line = render.to_act(state, now_ms())
            case _:
                line = render.face_down(message, state) or render.event(
                    message, state, self.unicode
                )
        if line is not None and line.plain:
            self.say(line)
        if isinstance(message, wire.HandEnded):
            self.ended_told = message.hand_id
            self.say(render.stacks(state))
        if state.closed and any(not seat.is_bot for seat in state.seats.values()):
            # A table closes by itself only once its last player has left: one closed
            # with players seated was closed by its server, stopping.
            raise CutShort
        return not state.closed

    async def closed_unseen(self) -> None:
        """Say that the table closed unseen, and rebuild its decks from the seed its
        history now reveals, as its close would have."""
        self.say(Text(f"Table {self.table_id} closed while the connection was down.", "bold"))
        try:
            rebuilt = await self.conn.verify_table(self.table_id, 0)
        except DealTampered as failure:
            self.say(render.tampered(failure))
        except (ShuffleNotRevealed, ConnectionLost, ServerRefused) as error:
            self.say(Text(f"Could not check table {self.table_id}'s shuffle: {error}", "red"))
        else:
            self.say(render.shuffle(self.table_id, rebuilt))

    def tell_unseen(self, hand: wire.HandView | None) -> None:
        """Say which hands ended unseen before a snapshot showing ``hand`` (the one under
        way, or the last one, ended). Where the history could not say where the watch
        began, the first snapshot does."""
        if hand is None:
            return  # no hand yet, or one voided at an adopted table: nothing to tell
        last = hand.hand_id - (hand.phase != "ended")
        told, self.ended_told = self.ended_told, max(last, self.ended_told or 0)
        if told is None or last <= told:
            return
        hands = f"Hand #{last}" if last == told + 1 else f"Hands #{told + 1} to #{last}"
        self.say(Text(f"{hands} went by while the connection was down.", "yellow"))

    def show_snapshot(self) -> None:
        """The table as it is now: its rules, its seats and stacks (drawn all the time
        in the live view), and the hand under way, if one is."""
        state = self.state
        if state is None:
            return
        if not self._rules_told:
            self._rules_told = True
            self.say(render.rules(state.options))
        if self.screen is None:
            self.say(render.table(state, now_ms(), self.unicode))
        hand = state.hand
        if hand is not None and hand.phase != "ended":
            header = render.hand_header(
                state, hand.hand_id, hand.button, hand.commitment, self.unicode
            )
            self.say(header.append("  (under way)", "dim"))

    async def command(self, line: str | None) -> bool:
        """Carry out one typed line; ``False`` once the person has stopped watching."""
        if line is None or line.strip() == INTERRUPT:
            await self.stop()
            return False
        words = line.split()
        if words and words[0].lower() in PLAYING:
            self.say(
                Text(
                    f"{words[0].lower()} is for a seat: you are watching. Type help for the "
                    "commands.",
                    "red",
                )
            )
            return True
        match read(line, None):
            case Quit():
                await self.stop()
                return False
            case Help():
                self.show_help(WATCHING_HELP)
            case Refusal(reason=reason):
                self.say(Text(reason, "red"))
            case Nothing():
                pass
        return True

    async def stop(self) -> None:
        """Stop watching: said to the server if the connection is up (else it forgets
        the watch with the connection)."""
        leave = cmd.LeaveTable(table_id=self.table_id)
        with contextlib.suppress(ConnectionLost, ServerRefused, TimeoutError):
            async with asyncio.timeout(OPEN_TIMEOUT):
                await self.conn.request(leave, wire.TableLeft)
        self.say(Text(f"You stopped watching table {self.table_id}.", "bold"))
