"""A table on the event loop: the thin asyncio shell around :class:`.core.TableCore`.

It feeds the core one input at a time and carries out what the core asks
(docs/ARCHITECTURE.md, "The table"):

- it delivers the core's messages, in order, to viewers that never block;
- it arms and disarms the core's timers, and runs the dealer bot's answers
  (:meth:`Table.later`), all cancelled when it stops (:mod:`.background`);
- it makes the core's writes, one at a time, in a task of their own
  (:mod:`.writer`), so no request ever waits on the store inside the table.

Every input is a plain method call that returns at once: two never interleave,
because the core changes only between awaits, and none needs a lock.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import cast

from qiuqiu.engine import HandState
from qiuqiu.protocol import ErrorCode, TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.errors import LeaseLost, Refused, StoreUnavailable
from qiuqiu.server.health import StoreHealth
from qiuqiu.server.logs import TableLog, hand_fields, hand_result
from qiuqiu.server.store import HandRecord, Store, TableRecord
from qiuqiu.server.table.audience import Arm, TablePhase, TableTimings, Timer
from qiuqiu.server.table.background import Background
from qiuqiu.server.table.core import TableCore
from qiuqiu.server.table.deal import Random
from qiuqiu.server.table.ledger import Write, WriteKind
from qiuqiu.server.table.reasons import MOVED, UNAVAILABLE
from qiuqiu.server.table.seats import FrameViewer, Seat, Viewer
from qiuqiu.server.table.writer import write_all

log = logging.getLogger("qiuqiu.server.table")


class Table:
    """A table, compared by identity: there is one object per table in a process."""

    def __init__(
        self,
        table_id: str,
        options: TableOptions,
        store: Store,
        rng: Random,
        timings: TableTimings | None = None,
        *,
        health: StoreHealth | None = None,
        bot_factory: Callable[[Table, int], FrameViewer] | None = None,
        on_closed: Callable[[Table], None] | None = None,
        on_seats_changed: Callable[[Table], None] | None = None,
        on_hand_ended: Callable[[], None] | None = None,
        on_error: Callable[[wire.Error], None] | None = None,
        created_by: str = "",
        seat_limit: int = 0,
        spectator_limit: int = 0,
    ) -> None:
        self.table_id, self.options, self.store, self.rng = table_id, options, store, rng
        self.timings = timings or TableTimings()
        self.health = health or StoreHealth()
        self.core = TableCore(
            table_id, options, rng, time.time, self.timings, created_by, spectator_limit
        )
        self._bot_factory, self._on_closed = bot_factory, on_closed
        self._on_seats_changed, self._seat_changes = on_seats_changed, 0
        self._once_sent: list[Callable[[], None]] = []
        self._bot: FrameViewer | None = None
        self._on_hand_ended, self._on_error = on_hand_ended, on_error
        self.seat_limit = seat_limit
        """The most tables an account may sit at, this one counted (0: no limit)."""
        self._background = Background(TableLog(log, self.core))
        self._writer: asyncio.Task[None] | None = None
        self._opened: asyncio.Future[None] | None = None
        self._closed = asyncio.Event()
        self._handed_over = False
        self.health.listen(self._store_changed)
        self.core.store_up = self.health.up

    # -- what the lobby, sessions and the dealer bot ask of it ---------------------------

    @property
    def log(self) -> TableLog:
        """A logger naming the table and its hand; made on each use, so a closed table
        is no reference cycle and goes with its last reference."""
        return TableLog(log, self.core)

    @property
    def seats(self) -> dict[int, Seat]:
        return self.core.seats

    @property
    def hand(self) -> HandState | None:
        return self.core.hand

    @property
    def seq(self) -> int:
        return self.core.seq

    @property
    def hand_id(self) -> int:
        return self.core.hand_id

    @property
    def playing(self) -> bool:
        return self.core.playing

    @property
    def closed(self) -> bool:
        return self.core.state is TablePhase.CLOSED

    @property
    def handed_over(self) -> bool:
        """Left in the store for another process to adopt, as this one stops."""
        return self._handed_over

    @property
    def bot_seat(self) -> int | None:
        return self.core.bot_seat

    def seat_of(self, account_id: str) -> Seat | None:
        return self.core.seat_of(account_id)

    def sees(self, viewer: Viewer) -> bool:
        return self.core.sees(viewer)

    def summary(self) -> wire.TableSummary:
        return self.core.summary()

    async def open(self) -> None:
        """Write the new table (and the bot's chips): done when this returns."""
        self._opened = asyncio.get_running_loop().create_future()
        bot = self._bot = self._new_bot()
        self._input(lambda: self.core.open(bot))
        await self._opened

    def adopt(self, record: TableRecord, hands: Sequence[HandRecord] = ()) -> None:
        """Host a table whose server died (see :meth:`TableCore.adopt`)."""
        bot = self._bot = self._new_bot() if self.options.dealer_bot else None
        self._input(lambda: self.core.adopt(record, bot, hands))
        self.log.info(
            "adopted with %d seats%s",
            len(record.seats),
            f"; hand {record.hand_id} was in play and is voided" if record.hand_open else "",
        )

    def serve(self, account_id: str, name: str, viewer: Viewer, message: cmd.TableMessage) -> None:
        """Do what a client's message about this table asks, for ``account_id``,
        connected here or elsewhere (``viewer`` is how it gets its answers). Returns at
        once; raises :class:`Refused` when nothing changed."""
        core = self.core
        match message:
            case cmd.JoinTable(buy_in=buy_in, seat=seat, client_seed=seed):
                self._input(
                    lambda: core.sit(account_id, name, viewer, buy_in, seat, message.id, seed or "")
                )
            case cmd.SetSeed(client_seed=seed):
                self._input(lambda: core.set_seed(account_id, viewer, seed, message.id))
            case cmd.LeaveTable() if core.seat_of(account_id) is None and not core.buying_in(
                account_id
            ):
                if viewer not in core.spectators:
                    raise Refused(ErrorCode.NOT_AT_TABLE, f"you are not at table {self.table_id}")
                self._background.spawn(self._stop_watching(account_id, viewer, message))
            case cmd.LeaveTable(after_hand=after_hand):
                self._input(lambda: core.leave(account_id, viewer, message.id, after_hand))
            case cmd.WatchTable():
                self._input(lambda: core.watch(viewer, message.id))
            case cmd.RequestSnapshot():
                self._input(lambda: core.show(viewer, message.id, account_id))
            case _:
                self._input(lambda: core.act(account_id, message, viewer))

    def when_sent(self, then: Callable[[], None]) -> None:
        """Run ``then`` once what the table has just done has gone out: now, or, after a
        hand's last action, once the hand's end is written and its events are sent."""
        if self.core.holding:
            self._once_sent.append(then)
        else:
            then()

    def act(self, account_id: str, action: cmd.TableAction) -> None:
        """Play ``action`` (the dealer bot's way in); raises :class:`Refused` when
        nothing changed."""
        self._input(lambda: self.core.act(account_id, action))

    def snapshot(self, viewer: Viewer) -> wire.TableSnapshot:
        """The table as ``viewer`` may see it now."""
        if not self.core.sees(viewer):
            raise Refused(ErrorCode.NOT_AT_TABLE, f"you are not at table {self.table_id}")
        return self.core.snapshot(viewer, None)

    def disconnect(self, account_id: str, viewer: Viewer) -> None:
        self._input(lambda: self.core.disconnect(account_id, viewer))

    def reconnect(self, account_id: str, viewer: Viewer, claim: int | None = 0) -> None:
        self._input(lambda: self.core.reconnect(account_id, viewer, claim))

    def forget(self, viewer: Viewer) -> None:
        """A spectator's connection closed."""
        self.core.unwatch(viewer)

    async def close(self, reason: str = "the server is shutting down") -> None:
        """Void the hand in play, cash every seat out and drop the table; returns once
        that is written (the caller bounds the wait: the store may be away)."""
        self._input(lambda: self.core.close(reason))
        await self._closed.wait()

    def recheck_lease(self) -> None:
        """A lease renewal has answered: a table that was not sure of its lease plays
        again if it is now (rule 6 in :mod:`.core`)."""
        if not self.core.sure and not self.closed:
            self._input(lambda: None)

    def hand_over(self) -> None:
        """Stop hosting the table, for another process to adopt (see
        :meth:`TableCore.hand_over`); the caller releases the lease."""
        if not self.closed:
            self._handed_over = True
            self.stop_work()
            self._input(self.core.hand_over)

    def abandon(self, unwritten: bool = False) -> None:
        """Stop hosting the table without writing to it: another process hosts it now
        (``unwritten``: the store refused the write in flight for that)."""
        if not self.closed:
            self._input(lambda: self.core.lease_lost(unwritten))

    def stop_work(self) -> None:
        """Stop writing, timing and every background task: the process is stopping."""
        if self._writer is not None:
            self._writer.cancel()
        self._background.cancel()

    def later(self, delay: float, work: Callable[[], None]) -> None:
        """Run ``work`` in ``delay`` seconds unless the table closes first."""
        self._background.later(delay, work)

    async def wait_tasks(self) -> None:
        """Let the background work that was cancelled finish unwinding."""
        await self._background.wait()

    # -- inside ------------------------------------------------------------------------

    def _input(self, work: Callable[[], None]) -> None:
        try:
            # Asked at each input, not by a timer: a process woken from a stop reads its
            # sockets and fires its overdue timers before any timer of its own.
            self.core.lease_certain(self.store.holds(self.table_id))
            work()
        finally:
            self._carry_out()

    def _carry_out(self) -> None:
        deliveries, timers = self.core.take_outputs()
        if self.core.seat_changes != self._seat_changes and self._on_seats_changed is not None:
            self._seat_changes = self.core.seat_changes
            self._on_seats_changed(self)
        for viewer, frame in deliveries:
            if frame.kind is wire.Error and self._on_error is not None:
                self._on_error(cast(wire.Error, frame.message))
            cast(FrameViewer, viewer).deliver_frame(frame)
        if self._once_sent and not self.core.holding:
            sent, self._once_sent = self._once_sent, []
            for then in sent:
                then()
        for change in timers:
            if isinstance(change, Arm):
                self._background.arm(change.timer, change.seconds, self._fire)
            else:
                self._background.disarm(change.timer)
        if self.closed:
            self._shut()
        elif self._writer is None:
            if self.core.state is TablePhase.SETTLING:
                # A hand's end commit, a sixth of the work of the action that ended the
                # hand, is made once that action's frames are out (the outboxes flush
                # first): its player waits for none of it.
                self._writer = self._background.loop.create_task(self._write(None))
            elif (write := self.core.next_write()) is not None:
                self._writer = self._background.loop.create_task(self._write(write))

    def _new_bot(self) -> FrameViewer | None:
        return (
            None if self._bot_factory is None else self._bot_factory(self, self.options.seats - 1)
        )

    def _fire(self, timer: Timer) -> None:
        self._input(lambda: self.core.fire(timer))

    async def _write(self, first: Write | None) -> None:
        try:
            await write_all(self, first, self._input, self._written)
        finally:
            self._writer = None

    def _written(self, write: Write) -> None:
        if write.kind is WriteKind.OPEN and self._opened is not None:
            self._opened.set_result(None)
        hand = write.commit.hand
        if write.kind is WriteKind.HAND_END and hand is not None:
            if self._on_hand_ended is not None and not hand.voided:
                self._on_hand_ended()
            if log.isEnabledFor(logging.INFO):  # its fields cost more than all the rest here
                self.log.info(
                    "hand %d ended: %s", hand.hand_id, hand_result(hand), extra=hand_fields(hand)
                )

    def _store_changed(self, up: bool) -> None:
        if not self.closed:
            self._input(lambda: self.core.store_changed(up))

    async def _stop_watching(
        self, account_id: str, viewer: Viewer, message: cmd.LeaveTable
    ) -> None:
        """A spectator leaves: its balance is read first, so that a store away means an
        error with nothing changed (it still watches)."""
        try:
            account = await self.store.account(account_id)
        except StoreUnavailable as error:
            self.health.failed(error)
            refusal = wire.Error(
                ref=message.id, code=ErrorCode.STORE_UNAVAILABLE, message=UNAVAILABLE
            )
            if self._on_error is not None:
                self._on_error(refusal)
            viewer.deliver(refusal)
            return
        if self.core.unwatch(viewer):
            balance = 0 if account is None else account.balance
            viewer.deliver(wire.TableLeft(ref=message.id, table_id=self.table_id, balance=balance))

    def _shut(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._bot = None  # the bot holds the table: a closed one must go with its last reference
        self.health.ignore(self._store_changed)
        self._background.cancel()
        if self._opened is not None and not self._opened.done():
            self._opened.set_exception(LeaseLost(self.table_id))
        if self._handed_over:
            self.log.info("left for another server to adopt: this one is stopping")
        elif self.core.closing_reason is None:
            self.log.warning("closed: %s", MOVED)  # lost to another process
        else:
            self.log.info("closed: %s", self.core.closing_reason)
        if self._on_closed is not None:
            self._on_closed(self)
