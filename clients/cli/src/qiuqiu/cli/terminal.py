"""The interactive game: server messages and typed lines, handled as they come.

Two sources feed one loop: the connection's messages and the lines read from
standard input. Neither waits for the other, so what the other players do and
the turn timer keep appearing while the prompt is open. The loop wakes every
second as well, to count down the player's own turn.

Lines read from a script (standard input that is not a terminal) are queued:
an action waits for the player's turn, and every line after it waits behind it,
so ``qiuqiu play --plain < moves.txt`` plays its moves in order, one a turn.

Every hand's deal is checked as it ends (a green line, or a loud red one), and
when the player leaves, each table played at is asked for its revealed seed to
rebuild its whole shuffle.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from rich.console import Console, RenderableType
from rich.text import Text

from qiuqiu.cli import render
from qiuqiu.cli.commands import (
    ACTIONS,
    HELP,
    Help,
    Nothing,
    Quit,
    Rebuy,
    Refusal,
    Seed,
    read,
)
from qiuqiu.cli.connection import (
    DEFAULT_GRACE,
    Closed,
    Connection,
    Disconnected,
    Notice,
    Reconnected,
)
from qiuqiu.cli.errors import (
    ClientError,
    ConnectionLost,
    CutShort,
    ServerRefused,
    ShuffleNotRevealed,
)
from qiuqiu.cli.game import TableState
from qiuqiu.cli.leaving import RETRIED, LeaveRequest, Leaving, in_hand
from qiuqiu.cli.live import LiveView, now_ms
from qiuqiu.cli.narrator import Narrator
from qiuqiu.cli.render import chips
from qiuqiu.cli.tally import Tally
from qiuqiu.cli.turns import Action, Split, action_message
from qiuqiu.engine import Hand, Tile, cut_with, parse_tiles, rank
from qiuqiu.protocol import DealTampered, ErrorCode, TableOptions
from qiuqiu.protocol import server as wire

DEFAULT_REBUY = 500

REMINDERS = (20, 10, 5)
"""Seconds left on the player's turn at which the timer is shown again."""

INTERRUPT = "\x03"
"""The line Ctrl-C is read as (the character a terminal sends for it): leave now,
whatever a script still holds."""

CLOSE_PATIENCE = 5.0
"""Seconds to wait, after leaving a table no other person sits at, for it to close
and reveal its seed."""


async def stdin_lines() -> AsyncIterator[str]:
    """Lines typed on standard input, without blocking the event loop. A terminal, a
    pipe or a socket is watched by the loop; a file or ``/dev/null``, which the loop
    cannot watch (epoll refuses them), is read by a thread."""
    mode = os.fstat(sys.stdin.fileno()).st_mode
    if not (sys.stdin.isatty() or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        while line := await asyncio.to_thread(sys.stdin.buffer.readline):
            yield line.decode(errors="replace")
        return
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        yield line.decode(errors="replace")


class Terminal(Narrator):
    """Shows the table at ``table_id`` and plays what the person types."""

    def __init__(
        self,
        conn: Connection,
        table_id: str,
        console: Console,
        unicode: bool,
        screen: LiveView | None = None,
        scripted: bool = False,
    ) -> None:
        super().__init__(conn, table_id, console, unicode, screen)
        self.scripted = scripted
        """The lines come from a script, not a person: each waits for its turn to come."""
        self._typed: deque[str | None] = deque()
        """Lines read and not yet carried out, in order; ``None`` for the input's end."""
        self.tally = Tally()
        self.balance = conn.welcome.balance if conn.welcome else 0
        self.busted: TableOptions | None = None
        """The options of the table that took every chip, while a rebuy is on offer."""
        self._prompt_open = False
        self._reminded: set[int] = set()
        self._turn_shown: tuple[int, int] | None = None
        self._answered: tuple[int, int | None] | None = None
        self.last_options = TableOptions()
        self.leave = LeaveRequest(conn, table_id)
        self.played: dict[str, bool] = {table_id: False}
        """Every table sat at, and whether another person was seated there when last seen."""
        self._left = False
        self.cut_short = False
        """The server stood the seat up as it stopped, or the connection was lost for good:
        the session did not end by choice."""
        self._told: DealTampered | None = None
        self._rules_told: set[str] = set()
        """The tables whose rules were said (a reconnect's snapshot says nothing new)."""
        self._hand_told: tuple[str, int] | None = None
        """The table and hand whose start was last said."""
        self._seeds_typed: set[str] = set()
        """The seeds the person chose with ``seed``; any other the client sent itself."""

    async def run(self, lines: AsyncIterator[str]) -> None:
        """Play until the person quits, the input ends, or the table is gone; having
        left, check the shuffle of every table played at."""
        self.say(Text("Type help for the commands. Good luck!", "dim"))
        await self._play(lines)
        if self._left:
            for table_id, others in self.played.items():
                await self.check_shuffle(table_id, 0.0 if others else CLOSE_PATIENCE)
            self.say_summary()
        if self.cut_short:
            raise CutShort

    async def _play(self, lines: AsyncIterator[str]) -> None:
        loop = asyncio.get_running_loop()
        messages = self.conn.messages()
        next_message = asyncio.ensure_future(anext(messages))
        next_line: asyncio.Future[str | None] = asyncio.ensure_future(anext(lines, None))
        leaving = False
        try:
            while True:
                waiting: set[asyncio.Future[Any]] = {next_message, next_line}
                done, _ = await asyncio.wait(
                    waiting, timeout=1.0, return_when=asyncio.FIRST_COMPLETED
                )
                if next_message in done:
                    message = next_message.result()
                    await self.count_unseen(message)
                    if not self.show(message):
                        return
                    if isinstance(message, Reconnected) and self._seat_gone(message.welcome):
                        await self.stood_up_away(message.welcome)
                        return
                    await self.leave_again(message)
                    next_message = asyncio.ensure_future(anext(messages))
                if next_line in done:
                    line = next_line.result()
                    interrupted = line is not None and line.strip() == INTERRUPT
                    if interrupted and leaving:
                        self.stop_waiting()
                        return
                    if interrupted:
                        self._typed.clear()
                    if not leaving:
                        self._typed.append(line)
                    if line is None:
                        # At the input's end nothing more is read.
                        next_line = loop.create_future()
                    else:
                        # Leaving, only another Ctrl-C counts: the rest is ignored.
                        next_line = asyncio.ensure_future(anext(lines, None))
                while not leaving and self._typed and self._due(self._typed[0]):
                    line = self._typed.popleft()
                    if line is None or line.strip() == INTERRUPT:
                        # At the input's end nobody is left to play the hand out.
                        asked: Quit | None = Quit(now=True)
                    else:
                        asked = await self.command(line)
                    if asked is None:
                        continue
                    match await self.quit(now=asked.now):
                        case Leaving.DONE:
                            return
                        case Leaving.AT_ONCE:
                            # What is typed now is ignored until the seat has stood up.
                            leaving = True
                            self._typed.clear()
                if not leaving:  # the seat is played for it now: nothing typed is read
                    self.remind()
                    self.prompt()
                if done:  # else the wait ran out: the view's own clock redraws it
                    self.redraw()
        finally:
            self.leave.stop()
            for task in (next_message, next_line):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await task

    def _due(self, line: str | None) -> bool:
        """Whether the first line queued is to be carried out now: none before the
        table's first snapshot, which a script's end (or a quick ``quit``) can come
        before, and without which there is no seat to stand up from; then a person's
        at once; a script's action only on the player's turn, and once a turn (unless
        the server refuses it)."""
        if self.busted is not None:
            return True
        if self.state is None:
            return False
        if not self.scripted or line is None:
            return True
        words = line.split()
        if not words or words[0].lower() not in ACTIONS:
            return True
        state = self.state
        return state is not None and state.legal is not None and self._answered != _turn_key(state)

    # -- output --------------------------------------------------------------------

    def say(self, renderable: RenderableType) -> None:
        if self.screen is None and self._prompt_open:
            self.console.print()
            self._prompt_open = False
        super().say(renderable)

    def prompt(self) -> None:
        state = self.state
        if self.screen is not None or self._prompt_open or self.scripted:
            return
        if self.busted is None and (state is None or state.legal is None):
            return
        if state is not None and self._answered is not None and self._answered == _turn_key(state):
            return  # answered; the server has not said so yet
        self.console.print("> ", end="")
        self._prompt_open = True

    def show(self, message: Notice) -> bool:
        """Show one message; ``False`` when the game is over for this client."""
        state = self.state
        match message:
            case Closed(reason=reason, seats_gone=seats_gone, taken_over=taken_over):
                self.connection_closed(reason)
                me = None if state is None or seats_gone else state.me
                if me is not None and taken_over:
                    self.say(
                        Text(
                            f"Your seat at table {self.table_id}, with its {chips(me.stack)} "
                            "chips, plays on from that other connection.",
                            "bold yellow",
                        )
                    )
                elif me is not None:
                    self.say(
                        Text(
                            f"Your {chips(me.stack)} chips at table {self.table_id} go back to "
                            "your balance when the server's grace period for your seat ends; run "
                            "the same command again before then to take the seat back.",
                            "bold yellow",
                        )
                    )
                self.say_summary(account_gone=seats_gone)
                self.cut_short = True
                return False
            case Disconnected(reason=reason, grace=grace):
                self.connection_dropped(reason, "; your commands wait for it")
                if state is not None and state.me is not None:
                    held = (
                        f"the server's grace period ({DEFAULT_GRACE:g} s unless it was started "
                        "with another --grace)"
                        if grace is None
                        else f"{grace:g} s"
                    )
                    self.say(
                        Text(
                            f"Your seat is held for {held}: this client keeps trying to "
                            "come back until then.",
                            "yellow",
                        )
                    )
                return True
            case Reconnected():
                self.reconnected()
                return True
            case wire.TableJoined(balance=balance):
                self.balance = balance  # the buy-in is out of it
                return True
            case wire.TableLeft(
                table_id=self.table_id, balance=balance, cashed_out=0, ref=None
            ) if self.leave.id is None:
                self.balance = balance
                self.busted = options = self.last_options
                offer = self.rebuy_default()
                self.say(
                    Text(
                        f"You're out of chips. Your balance is {chips(balance)}: type rebuy to "
                        f"buy in again at this table with {chips(offer)} (rebuy N for another "
                        "amount), "
                        "or quit."
                        if offer is not None
                        else f"You're out of chips. Your balance is {chips(balance)}, less than "
                        f"this table's least buy-in ({chips(options.min_buy_in)}): there is no "
                        "rebuying "
                        "here, so quit to leave.",
                        "bold yellow",
                    )
                )
                return True
            case wire.TableLeft(
                table_id=self.table_id, balance=balance, cashed_out=cashed, ref=None
            ) if self.leave.id is None:
                # Nobody here asked: the server stood the seat up (it is stopping).
                self.balance = balance
                self.say(
                    Text(
                        f"The server stopped: it stood your seat up, and your {chips(cashed)} "
                        f"chips went back to your balance (now {chips(balance)}).",
                        "bold yellow",
                    )
                )
                self._left = self.cut_short = True
                return False
            case wire.TableLeft(table_id=self.table_id, balance=balance):
                # Also a bust while leaving: no rebuy to offer, and no more input to
                # wait for (the leave that follows it is refused: the seat is gone).
                self.balance = balance
                self.say(Text(f"You left the table. Your balance is {chips(balance)}.", "bold"))
                self._left = True
                return False
        if state is None:
            return True
        if getattr(message, "table_id", self.table_id) != self.table_id:
            return True
        if isinstance(message, wire.Error) and self.leave.refused_by(message):
            return self.leave_refused(message)
        if isinstance(message, wire.Error):
            self._answered = None  # refused: the turn is still open
        self.last_options = state.options
        self.played[self.table_id] = any(
            not s.is_bot and s.seat != state.you for s in state.seats.values()
        )
        if isinstance(message, wire.PotAwarded) and state.you in {s.seat for s in message.shares}:
            self.tally.pot_won(message.hand_id, message.amount)
        if isinstance(message, wire.HandEnded) and state.you is not None:
            net = state.net(state.you)
            if net is not None and state.hand is not None and not state.hand.voided:
                self.tally.record(self.table_id, message.hand_id, net)
            self.tally.counted.add((self.table_id, message.hand_id))
        if isinstance(message, wire.TableSnapshot) and self.table_id not in self._rules_told:
            self._rules_told.add(self.table_id)
            self.say(render.rules(state.options))
        if isinstance(message, wire.HandStarted):
            self._hand_told = (self.table_id, message.hand_id)
            if state.you in {s.seat for s in message.stacks}:
                self.tally.dealt = self._hand_told
        hand = state.hand
        if (
            isinstance(message, wire.TableSnapshot)
            and hand is not None
            and state.me is not None
            and state.me.in_hand
            and self._hand_told != (self.table_id, hand.hand_id)
        ):
            # Dealt while the connection was down (a new host voids the hand its dead
            # server was playing and deals another): said as its start would have been.
            found = render.hand_found(state, self.unicode)
            if found is not None:
                self._hand_told = (self.table_id, hand.hand_id)
                self.say(found)
        line = render.event(message, state, self.unicode)
        if isinstance(message, wire.SeedSet) and message.client_seed not in self._seeds_typed:
            # Sent by the connection itself, seated with no seed sent from this process
            # (a session resumed): "Your seed is now ..." spoke of a seed nobody chose.
            line = Text(
                "Back at the table, this client sent a new random seed for you: it goes "
                "into every shuffle from the next hand, so the server cannot pick your "
                "tiles alone (seed TEXT sets one of your own).",
                "dim",
            )
        if line is not None and line.plain:
            self.say(line)
        failure = state.deals.tampered
        if failure is not None and failure is not self._told:
            # Said once; at a hand's end and at the close the line above said it already.
            if not isinstance(message, wire.HandEnded | wire.TableClosed):
                self.say(render.tampered(failure))
            self._told = failure
        if isinstance(message, wire.PlayerLeft) and state.you is None:
            if self.leave.id is not None:
                return True  # the table_left with the balance is on its way
            self.say_summary()
            return False
        if state.closed:
            return False
        if isinstance(message, wire.TurnStarted | wire.CuttingStarted | wire.TableSnapshot):
            self.show_turn(state)
        return True

    async def count_unseen(self, message: Notice) -> None:
        """Before a snapshot of this table is shown, say how each hand the seat was
        dealt into ended while this client did not see it (its connection down), and
        count it: the session's net is then what the balance says."""
        state = self.state
        if not isinstance(message, wire.TableSnapshot) or state is None:
            return
        if message.table.table_id != self.table_id:
            return
        missed = self.tally.unseen(self.table_id, state)
        if missed:
            self._say_unseen(await self.tally.count_unseen(self.conn, self.table_id, missed))

    async def stood_up_away(self, welcome: wire.Welcome) -> None:
        """Back to find the seat stood up: say so, and how each hand the server's timer
        played for it went, counted as the hands seen were."""
        dealt = self.tally.dealt
        if dealt is not None and dealt[0] == self.table_id:
            nets = await self.tally.count_unseen(self.conn, self.table_id, [], since=dealt[1])
            self._say_unseen(nets)
        self.balance = welcome.balance
        self.say(
            Text(
                f"Your seat at table {self.table_id} stood up while the connection was down "
                "(its grace period ran out, or you had asked to leave): its chips went back "
                f"to your balance, now {chips(welcome.balance)}.",
                "bold yellow",
            )
        )
        self._left = True

    def _say_unseen(self, nets: dict[int, int] | ClientError) -> None:
        if isinstance(nets, ClientError):
            self.say(
                Text(
                    "The hands played while you were away are not in this session's "
                    f"count: the server could not list them ({nets}).",
                    "yellow",
                )
            )
            return
        for hand_id, net in nets.items():
            self.say(
                Text(
                    f"Hand #{hand_id} was played out while you were away: {net:+,} net for you.",
                    "yellow",
                )
            )

    def _seat_gone(self, welcome: wire.Welcome) -> bool:
        """Whether the seat this client sat at is not among those ``welcome`` finds."""
        return self.busted is None and self.table_id not in (*welcome.tables, *welcome.moving)

    def leave_refused(self, error: wire.Error) -> bool:
        """A request to stand up refused; ``False`` when the game is over for this client."""
        if error.code is ErrorCode.ALREADY_LEAVING:
            return True  # asked again: the request before stands, and table_left answers it
        if error.code in RETRIED:
            return True  # see leave_again
        if self.leave.again_later(error):
            self.say(Text(f"Not left yet: {error.message}. Asking again{self.ellipsis}", "dim"))
            return True
        self.say(Text(f"Leaving was refused: {error.message}", "red"))
        if self.leave.after_hand:
            # The player is still at the table, playing: it is theirs to ask again.
            self.leave.give_up()
            if self.screen is not None:
                self.screen.standing = None
            self.say(Text("You are still seated: type quit to ask again.", "red"))
            return True
        self.say_summary()
        return False

    def show_turn(self, state: TableState) -> None:
        """The whole table when it is this player's turn; whose turn it is otherwise."""
        hand = state.hand
        if hand is None or hand.deadline_ms is None:
            return
        if state.legal is None:
            to_act = render.to_act(state, now_ms())
            if to_act is not None and self.screen is None:
                self.say(to_act)
            return
        key = (hand.hand_id, hand.deadline_ms)
        if key == self._turn_shown or self.screen is not None:
            return  # the live view shows the table and the turn all the time
        self._turn_shown, self._reminded = key, set()
        self.say(render.table(state, now_ms(), self.unicode))
        self.say(
            Text.assemble(("Your turn: ", "bold cyan"), render.legal(state.legal, self.unicode))
        )

    def remind(self) -> None:
        state = self.state
        if self.screen is not None or state is None or state.legal is None or state.hand is None:
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

    async def command(self, line: str) -> Quit | None:
        """Carry out one typed line; the ``Quit`` when the person wants to stand up."""
        self._prompt_open = False
        state = self.state
        words = line.split()
        if self.busted is not None and words and words[0].lower() in ACTIONS:
            # With no seat there is no table state, and a move would be told to wait
            # for a deal that never comes.
            self.say(Text("You have no seat: type rebuy to buy in again, or quit.", "red"))
            return None
        match read(line, state):
            case Quit() as asked:
                return asked
            case Help():
                self.show_help(HELP)
            case Rebuy(amount=None) if self.busted is not None and self.rebuy_default() is None:
                # Else it asked for 500, and the refusal named a sum nobody chose.
                self.say(
                    Text(
                        f"Your balance is {chips(self.balance)}, less than this table's least "
                        f"buy-in ({chips(self.busted.min_buy_in)}): there is no rebuying here.",
                        "red",
                    )
                )
            case Rebuy(amount=amount):
                default = self.rebuy_default()
                await self.rebuy((default or DEFAULT_REBUY) if amount is None else amount)
            case Seed(client_seed=seed):
                await self.seed(seed)
            case Nothing():
                pass
            case Refusal(reason=reason):
                self.say(Text(reason, "red"))
                if self.scripted and state is not None and line.split()[0].lower() in ACTIONS:
                    # A script's move is for one turn: the next one waits for the next
                    # turn, as its author counted, and this turn runs out.
                    self._answered = _turn_key(state)
            case action:
                await self.act(action)
        return None

    def rebuy_default(self) -> int | None:
        """What ``rebuy`` alone buys in with: 500, or all the balance if less, within
        the table's range; ``None`` when the balance cannot reach its least buy-in."""
        options = self.busted
        if options is None or self.balance < options.min_buy_in:
            return None
        return max(options.min_buy_in, min(DEFAULT_REBUY, self.balance, options.max_buy_in))

    async def rebuy(self, amount: int) -> None:
        options = self.busted
        if options is None:
            self.say(Text("You still have chips here: rebuy is for after losing them.", "red"))
            return
        try:
            try:
                joined = await self.conn.join_table(self.table_id, amount)
                table_id = joined.table_id
            except ServerRefused as refused:
                if refused.code not in (ErrorCode.UNKNOWN_TABLE, ErrorCode.TABLE_CLOSED):
                    raise
                self.say(Text(f"Table {self.table_id} has closed: opening one like it.", "dim"))
                # Refused there too (a buy-in above the balance) it is said, not fatal.
                table, _ = await self.conn.open_table(options, amount)
                table_id = table.table_id
        except ServerRefused as refused:
            self.say(render.rebuy_refused(refused, amount, self.balance, options))
            return
        except ConnectionLost:
            self.say(Text("Not connected; try again in a moment.", "red"))
            return
        self.busted, self.table_id = None, table_id
        self.played.setdefault(table_id, False)
        self.say(
            Text(f"You sat down again at table {table_id} with {chips(amount)} chips.", "bold")
        )

    async def seed(self, seed: str | None) -> None:
        deals = self.conn.deals_of(self.table_id)
        if seed is None:
            current = deals.pending_seed or deals.seed
            if current is None:
                self.say(Text("This client has not sent a seed at this table yet.", "dim"))
            else:
                self.say(Text(f"Your seed at table {self.table_id}: {current}", "dim"))
            return
        self._seeds_typed.add(seed)
        try:
            await self.conn.set_seed(self.table_id, seed)
        except ConnectionLost:
            self.say(Text("Not connected; try again in a moment.", "red"))

    async def check_shuffle(self, table_id: str, patience: float) -> None:
        """Rebuild every deck of ``table_id`` from its seed, if it has closed."""
        try:
            verified = await self.conn.verify_table(table_id, patience)
        except DealTampered as failure:
            self.say(render.tampered(failure))
        except ShuffleNotRevealed as not_yet:
            self.say(Text(f"Not checked: {not_yet} (it is revealed when the table closes).", "dim"))
        except (ConnectionLost, ServerRefused) as error:
            self.say(Text(f"Could not check table {table_id}'s shuffle: {error}", "red"))
        else:
            self.say(render.shuffle(table_id, verified))

    async def act(self, action: Action | Split) -> None:
        state = self.state
        assert state is not None
        assert state.hand is not None
        try:
            await self.conn.send(action_message(action, self.table_id, state.hand.hand_id))
            self._answered = _turn_key(state)
        except ConnectionLost:
            self.say(Text("Not connected; try again in a moment.", "red"))
            return
        me = state.me
        if isinstance(action, Split) and me is not None and len(me.tiles) == 4:
            hand = Hand(parse_tiles(" ".join(me.tiles)))
            chosen = cut_with(hand, Tile.parse(action.first[0]), Tile.parse(action.first[1]))
            best = rank(hand).cut
            if chosen.pairs < best.pairs:
                self.say(
                    Text(
                        f"Note: {chosen.pairs[0]}-{chosen.pairs[1]} is worse than your best cut, "
                        f"{best.pairs[0]}-{best.pairs[1]}; a declared cut is final.",
                        "yellow",
                    )
                )

    async def quit(self, *, now: bool) -> Leaving:
        """Ask to stand up: in a hand, after it, unless ``now`` or asked already. The
        hand in play and the ``table_left`` still come as messages, so the tally counts
        every hand the seat played, the one it is leaving in too."""
        state = self.state
        if self.busted is not None or state is None:
            self._left = True
            return Leaving.DONE
        playing = in_hand(state)
        plays_out = playing and not (now or self.leave.after_hand)
        # Said once sent: with the connection down the server hears nothing of it.
        if not await self._ask_to_leave(state, plays_out=plays_out):
            self.say(
                Text(
                    "Not connected: the server has not heard you leave. It holds your seat "
                    "for its grace period, then stands it up and your chips go back to your "
                    "balance; the same command run before then takes the seat back.",
                    "bold yellow",
                )
            )
            self.say_summary()
            return Leaving.DONE
        if plays_out:
            self.say(
                Text(
                    "You will leave after this hand: play it out (quit again, or quit now, "
                    "to leave at once, checking or folding the rest of it).",
                    "bold yellow",
                )
            )
        elif playing:
            self.say(
                Text(
                    f"Leaving: your seat plays out this hand (check or fold), and stands up "
                    f"as it ends (Ctrl-C: stop waiting){self.ellipsis}",
                    "dim",
                )
            )
        return Leaving.AFTER_HAND if plays_out else Leaving.AT_ONCE

    async def _ask_to_leave(self, state: TableState, *, plays_out: bool) -> bool:
        """Send ``leave_table``; ``False`` if it could not be (the connection is down)."""
        if self.screen is not None:
            self.screen.standing = (
                Text("Leaving after this hand (quit now: at once).", "bold yellow")
                if plays_out
                else None
            )
        asked_in = 0 if state.hand is None else state.hand.hand_id
        return await self.leave.send(after_hand=plays_out, asked_in=asked_in)

    async def leave_again(self, message: Notice) -> None:
        """Ask to stand up again when the request may have gone with a server that
        died: its table's new host sends a snapshot, and deals the seat in again if it
        did not hear of it. The server refuses it (``already_leaving``) where it had."""
        state = self.state
        if self.leave.id is None or state is None or state.me is None:
            return
        match message:
            case wire.TableSnapshot(table=wire.TableView(table_id=self.table_id)):
                pass
            case wire.HandStarted(table_id=self.table_id, hand_id=hand_id) if (
                hand_id > self.leave.asked_in and state.me.in_hand
            ):
                if self.leave.after_hand:
                    self.say(
                        Text(
                            "You were dealt into this hand all the same: you will leave "
                            "after it (quit now to leave at once).",
                            "bold yellow",
                        )
                    )
            case _:
                return
        # Not sent with the connection down: the snapshot after the reconnect asks again.
        await self._ask_to_leave(state, plays_out=self.leave.after_hand and in_hand(state))

    def stop_waiting(self) -> None:
        """Ctrl-C again while the seat waits for its hand to end: the client goes, and
        the server, which has the request, stands the seat up all the same."""
        self.say(
            Text(
                "Stopped waiting: your seat stands up as this hand ends, and its chips go "
                "back to your balance then.",
                "bold yellow",
            )
        )
        self.say_summary()

    def say_summary(self, *, account_gone: bool = False) -> None:
        s = self.tally
        if account_gone:
            balance = "The server no longer has this account, nor its balance."
        else:
            # Seated still (the connection gone for good): the balance is not all there is.
            me = None if self.state is None else self.state.me
            at_table = "" if me is None else f" (and {chips(me.stack)} still at the table)"
            balance = f"Balance: {chips(self.balance)}{at_table}."
        self.say(
            Text(
                f"This session: {s.hands} hand{'s' * (s.hands != 1)}, won {s.won}, lost {s.lost}, "
                f"net {s.net:+,}, biggest pot won {chips(s.biggest)}. {balance}",
                "bold",
            )
        )


def _turn_key(state: TableState) -> tuple[int, int | None] | None:
    """Which turn it is: each has its own deadline."""
    return None if state.hand is None else (state.hand.hand_id, state.hand.deadline_ms)
