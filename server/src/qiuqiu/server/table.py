"""One table: its seats, the hand in play, its turn timer and who watches it.

Rules this module keeps:

1. Everything that changes a table runs under the table's lock, one request at
   a time, and in this order: check (raise :class:`Refused`, change nothing),
   apply through the engine, then publish. So two actions never interleave,
   and a refused one leaves no trace.
2. Every table event gets the next ``seq`` and goes to every viewer (seats
   and spectators), each in its own view (:mod:`qiuqiu.server.views`).
3. A hand starts when ``min_players`` seats (at least two) are ready: chips in front of them,
   not leaving, and connected or within their grace period. At a dealer-bot
   table the bot is always the button, so the player acts first.
4. Chips reach a table only through the store's ``move_chips`` (buy-in,
   cash-out, the bot's top-up from the house); within a hand only the
   engine moves them.
5. A seat that leaves mid-hand is played by its timer at once (check if it
   can, else fold) and cashed out when the hand ends. A disconnected seat is
   played by the normal timer until its grace period runs out.
6. The store's record of the table is saved when a hand starts (every stack as
   before it, ``hand_open`` set) and when it ends (with the hand, in one step).
   A server that dies in between leaves a table that :meth:`Table.adopt`
   reopens with that hand voided: every chip back where it was before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from qiuqiu import engine
from qiuqiu.engine import HandState, IllegalAction, Phase, Shuffler, TableRules, Tile
from qiuqiu.protocol import TableOptions, commitment
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId
from qiuqiu.server import views
from qiuqiu.server.errors import LeaseLost, Refused, StoreUnavailable
from qiuqiu.server.logs import TableLog
from qiuqiu.server.seat import Seat, Viewer, verify_buy_in
from qiuqiu.server.store import HOUSE, HandRecord, Store, TableRecord

log = logging.getLogger(__name__)

BOT_NAME = "Dealer"

MOVED = "the table moved to another server: reconnect to go on playing"
"""Why a table closes for this server's clients when another server takes it over."""

STORE_RETRY_MIN, STORE_RETRY_MAX = 0.1, 2.0
"""Seconds between tries of a store write that must happen, doubling up to the most."""

CUTTING = -1
"""Stands for the log length in the timer key of a cutting phase, which has one deadline."""


class Random(Shuffler, Protocol):
    """Where decks and seeds come from: ``secrets.SystemRandom()`` when serving, a
    seeded ``random.Random`` in tests that need the same deals every run."""

    def getrandbits(self, k: int, /) -> int: ...


@dataclass(frozen=True, slots=True)
class TableTimings:
    """How long things take. Tests shorten them; production keeps the defaults."""

    hand_pause: float = 2.0
    """Seconds between one hand's end and the next hand's start, to see the showdown."""
    grace: float = 60.0
    """Seconds a disconnected player keeps the seat."""
    bot_delay: float = 0.5
    """Seconds the dealer bot waits before it acts, so people can follow."""


@dataclass(eq=False)
class Table:
    """A table, compared by identity: there is one object per table in a process."""

    table_id: str
    options: TableOptions
    store: Store
    rng: Random
    timings: TableTimings = field(default_factory=TableTimings)
    bot_factory: Callable[[Table, int], Viewer] | None = None
    on_closed: Callable[[Table], None] | None = None
    on_hand_ended: Callable[[], None] | None = None
    created_by: str = ""
    frames: views.SharedFrames = field(default_factory=views.SharedFrames)
    """The lobby's, which its sessions write through: a hand's record then reuses
    the frame just sent to the viewers who saw the public copy of an event."""

    seats: dict[int, Seat] = field(default_factory=dict)
    hand: HandState | None = None
    hand_id: int = 0
    seq: int = 0
    _spectators: set[Viewer] = field(default_factory=set)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _timer: asyncio.TimerHandle | None = None
    _timer_key: tuple[int, int] | None = None
    _next_hand: asyncio.TimerHandle | None = None
    _deadline_ms: int | None = None
    _seed: str = ""
    _deck: tuple[str, ...] = ()
    _commitment: str = ""
    _frames: list[str] = field(default_factory=list)
    _pot: int = 0
    """The pot as of the event being published (the engine's is as of its last event)."""
    _stacks_before: tuple[tuple[int, int], ...] = ()
    closed: bool = False

    def __post_init__(self) -> None:
        o = self.options
        self.rules = TableRules(
            ante=o.ante,
            min_bet=o.min_bet,
            max_bet=o.max_bet,
            max_raises=o.max_raises,
            betting_rounds=o.betting_rounds,
            tie_rule=o.tie_rule,
            manual_split=o.manual_split,
        )

    @property
    def log(self) -> TableLog:
        """A logger naming the table and its hand. Made on each use: kept, it would tie
        the table into a reference cycle, and a closed table, its last hand and its
        frames would then wait for a full collection to be freed."""
        return TableLog(log, self)

    # -- what the lobby and sessions ask of a table -----------------------------------

    @property
    def bot_seat(self) -> int | None:
        """The dealer bot sits in the last seat, so the players' seats come first."""
        return self.options.seats - 1 if self.options.dealer_bot else None

    @property
    def playing(self) -> bool:
        return self.hand is not None and not self.hand.is_over

    def record(self) -> TableRecord:
        """The table as the store keeps it; in a hand, every stack as it was before it."""
        return TableRecord(
            self.table_id,
            self.options,
            tuple(s.record() for s in self.seats.values()),
            hand_id=self.hand_id,
            hand_open=self.playing,
            seq=self.seq,
            created_by=self.created_by,
        )

    async def adopt(self, record: TableRecord) -> None:
        """Reopen a table from its record, after the server that hosted it stopped
        without closing it. Every player is away, with the grace period to come back;
        a hand that was in play is voided, its chips where they were before it."""
        async with self._lock:
            self.hand_id, self.seq = record.hand_id, record.seq
            for kept in record.seats:
                seat = Seat(kept.seat, kept.account_id, kept.name, kept.stack, kept.is_bot)
                self.seats[seat.seat] = seat
                if seat.is_bot and self.bot_factory is not None:
                    seat.viewer = self.bot_factory(self, seat.seat)
                elif not seat.is_bot:
                    seat.connected = False
                    seat.grace = self._later(self.timings.grace, self._grace_over, seat.account_id)
            if record.hand_open:
                await self.store.record_hand(HandRecord.voided_in(record), self.record())
                self.log.warning(
                    "hand %d was in play when its server stopped; voided, every "
                    "stack as it was before the hand",
                    record.hand_id,
                )
            self.log.info("adopted with %d seats", len(self.seats))
            await self._close_if_deserted()  # its server died while closing it

    def abandon(self, reason: str) -> None:
        """Stop hosting the table without writing to the store: another server has
        taken it over (this one lost its lease), and the store's record is its now."""
        if self.closed:
            return
        self._stop()
        for seat in self.seats.values():
            if seat.grace is not None:
                seat.grace.cancel()
        for task in list(self._tasks):
            task.cancel()
        self._publish(wire.TableClosed(table_id=self.table_id, seq=self._next_seq(), reason=reason))
        self.log.warning("abandoned: %s", reason)
        if self.on_closed is not None:
            self.on_closed(self)

    def summary(self) -> wire.TableSummary:
        return wire.TableSummary(
            table_id=self.table_id,
            options=self.options,
            seats=tuple(
                wire.SeatSummary(seat=s.seat, name=s.name, is_bot=s.is_bot, stack=s.stack)
                for s in sorted(self.seats.values(), key=lambda s: s.seat)
            ),
            free_seats=self.options.seats - len(self.seats),
            playing=self.playing,
        )

    def seat_of(self, account_id: str) -> Seat | None:
        return next(
            (s for s in self.seats.values() if s.account_id == account_id and not s.is_bot), None
        )

    async def open(self) -> None:
        """Save the new table and seat the dealer bot with chips from the house."""
        await self.store.save_table(self.record())
        if self.bot_seat is not None and self.bot_factory is not None:
            async with self._lock:
                seat = Seat(self.bot_seat, HOUSE, BOT_NAME, 0, is_bot=True)
                seat.viewer = self.bot_factory(self, seat.seat)
                self.seats[seat.seat] = seat
                await self._top_up_bot()

    async def sit(
        self,
        account_id: str,
        name: str,
        viewer: Viewer,
        buy_in: int,
        seat: int | None = None,
        ref: MessageId | None = None,
    ) -> None:
        """Seat ``account_id`` with ``buy_in`` chips from its balance."""
        async with self._lock:
            number = self._free_seat(account_id, seat)
            verify_buy_in(self.options, buy_in)
            new = Seat(number, account_id, name, buy_in)
            account = await self.store.move_chips(
                account_id, buy_in, self.record().with_seat(new.record())
            )
            self.seats[number] = new
            self._publish(
                wire.PlayerSeated(
                    table_id=self.table_id,
                    seq=self._next_seq(),
                    seat=number,
                    name=name,
                    is_bot=False,
                    stack=buy_in,
                )
            )
            # Seen only now, so the snapshot below already holds the seat and no event repeats it.
            new.viewer = viewer
            self._spectators.discard(viewer)
            viewer.deliver(
                wire.TableJoined(
                    ref=ref,
                    table_id=self.table_id,
                    seat=number,
                    buy_in=buy_in,
                    balance=account.balance,
                )
            )
            viewer.deliver(self._snapshot(viewer, None))
            self._schedule_hand()

    async def leave(self, account_id: str, viewer: Viewer, ref: MessageId | None = None) -> None:
        """Stand up, or stop watching. A seat still in the hand leaves when it ends."""
        async with self._lock:
            seat = self.seat_of(account_id)
            if seat is None:
                if viewer not in self._spectators:
                    raise Refused("not_at_table", f"you are not at table {self.table_id}")
                self._spectators.discard(viewer)
                balance = await self._balance(account_id)
                viewer.deliver(wire.TableLeft(ref=ref, table_id=self.table_id, balance=balance))
                return
            seat.leaving, seat.leave_ref, seat.viewer = True, ref, viewer
            if self._in_hand(seat.seat):
                self._play_for_leavers()
            else:
                await self._cash_out(seat)
                await self._close_if_deserted()
            self._schedule_hand()

    async def watch(self, viewer: Viewer, ref: MessageId | None = None) -> None:
        async with self._lock:
            if any(s.viewer is viewer for s in self.seats.values()):
                raise Refused("already_seated", "you are seated here: you see the table already")
            self._spectators.add(viewer)
            viewer.deliver(wire.TableWatched(ref=ref, table_id=self.table_id))
            viewer.deliver(self._snapshot(viewer, None))

    def snapshot(self, viewer: Viewer, ref: MessageId | None = None) -> wire.TableSnapshot:
        """The table as ``viewer`` may see it. Reading needs no lock: it changes nothing."""
        if not self._sees(viewer):
            raise Refused("not_at_table", f"you are not at table {self.table_id}")
        return self._snapshot(viewer, ref)

    async def serve(
        self, account_id: str, name: str, viewer: Viewer, message: cmd.TableMessage
    ) -> None:
        """Do what a client's message about this table asks, for ``account_id``,
        connected here or elsewhere (``viewer`` is how it gets the answer)."""
        match message:
            case cmd.JoinTable(buy_in=buy_in, seat=seat):
                await self.sit(account_id, name, viewer, buy_in, seat, message.id)
            case cmd.LeaveTable():
                await self.leave(account_id, viewer, message.id)
            case cmd.WatchTable():
                await self.watch(viewer, message.id)
            case cmd.RequestSnapshot():
                viewer.deliver(self.snapshot(viewer, message.id))
            case _:
                await self.act(account_id, message)

    async def act(self, account_id: str, action: cmd.TableAction) -> None:
        """Play ``action`` for the seat of ``account_id``."""
        async with self._lock:
            # The house plays only the dealer bot's seat; everyone else only their own.
            if account_id == HOUSE:
                seat = None if self.bot_seat is None else self.seats.get(self.bot_seat)
            else:
                seat = self.seat_of(account_id)
            if seat is None:
                raise Refused("not_seated", f"you have no seat at table {self.table_id}")
            if self.hand is None or action.hand_id != self.hand_id or self.hand.is_over:
                raise Refused(
                    "stale_hand",
                    f"hand {action.hand_id} is not in play at table {self.table_id}"
                    + (f" (hand {self.hand_id} is)" if self.playing else ""),
                )
            if seat.seat not in self.hand.seats:
                raise Refused("not_in_hand", "you were not dealt into this hand: wait for the next")
            try:
                events = self._apply(self.hand, seat.seat, action)
            except IllegalAction as error:
                raise Refused(error.code, error.message) from None
            await self._after(events, ref=action.id, actor=seat.seat)

    async def disconnect(self, account_id: str, viewer: Viewer | None = None) -> None:
        """The seat's connection (``viewer``, if it is known) dropped: keep the seat for
        the grace period. A connection the seat has already moved on from changes nothing."""
        async with self._lock:
            seat = self.seat_of(account_id)
            if seat is None or not seat.connected:
                return
            if viewer is not None and seat.viewer is not viewer:
                return
            seat.connected, seat.viewer = False, None
            grace = self.timings.grace
            seat.grace = self._later(grace, self._grace_over, account_id)
            self._publish(
                wire.PlayerDisconnected(
                    table_id=self.table_id,
                    seq=self._next_seq(),
                    seat=seat.seat,
                    grace_ms=int(grace * 1000),
                )
            )

    async def reconnect(self, account_id: str, viewer: Viewer) -> None:
        """The seat's player is back (on this or a new connection): a snapshot follows."""
        async with self._lock:
            seat = self.seat_of(account_id)
            if seat is None:
                return
            if seat.grace is not None:
                seat.grace.cancel()
                seat.grace = None
            if seat.grace_ran_out:
                seat.leaving = seat.grace_ran_out = False
            if not seat.connected:
                seat.connected = True
                self._publish(
                    wire.PlayerReconnected(
                        table_id=self.table_id, seq=self._next_seq(), seat=seat.seat
                    )
                )
            # Seen only now, so the snapshot below is the first thing this viewer gets.
            seat.viewer = viewer
            viewer.deliver(self._snapshot(viewer, None))
            self._schedule_hand()

    def forget(self, viewer: Viewer) -> None:
        """A spectator's connection closed."""
        self._spectators.discard(viewer)

    async def close(self, reason: str = "the server is shutting down") -> None:
        """Shut the table: void the hand in play (every chip back to who put it in),
        cash every seat out to its balance, and stop everything still running."""
        async with self._lock:
            await self._shut(reason)
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _stop(self) -> None:
        """No more hands, no more turns: the table is closing."""
        self.closed = True
        for handle in (self._timer, self._next_hand):
            if handle is not None:
                handle.cancel()

    async def _shut(self, reason: str) -> None:
        self._stop()
        if self.hand is not None and self.hand.can_void():
            await self._after(self.hand.void(), reason=reason)
        for seat in list(self.seats.values()):
            await self._cash_out(seat)
        self._publish(wire.TableClosed(table_id=self.table_id, seq=self._next_seq(), reason=reason))
        await self.store.drop_table(self.table_id)
        self.log.info("closed: %s", reason)
        if self.on_closed is not None:
            self.on_closed(self)

    async def _close_if_deserted(self) -> None:
        """A table whose last player has left closes (the bot's chips go back to the house)."""
        if not self.closed and all(s.is_bot for s in self.seats.values()):
            await self._shut("the last player left")

    # -- the hand ------------------------------------------------------------------

    def _schedule_hand(self) -> None:
        if self.closed or self.playing or self._next_hand is not None:
            return
        if len(self._ready_seats()) < self.options.min_players:
            return
        pause = self.timings.hand_pause if self.hand is not None else 0
        self._next_hand = self._later(pause, self._start_hand)

    def _ready_seats(self) -> dict[int, Seat]:
        ready = {n: s for n, s in self.seats.items() if s.ready}
        if self.bot_seat is not None and not any(not s.is_bot for s in ready.values()):
            return {}
        return ready

    async def _start_hand(self) -> None:
        async with self._lock:
            self._next_hand = None
            ready = self._ready_seats()
            if self.closed or self.playing or len(ready) < self.options.min_players:
                return
            button = self._button(sorted(ready))
            self._seed = f"{self.rng.getrandbits(256):064x}"
            deck = engine.shuffled_deck(self.rng)
            self._deck = views.tiles_text(deck)
            self._commitment = commitment(self._seed, self._deck)
            self._stacks_before = tuple((n, s.stack) for n, s in sorted(ready.items()))
            previous, self.hand = (
                self.hand,
                HandState.start(self.rules, dict(self._stacks_before), button, deck),
            )
            self.hand_id += 1
            self._frames = []
            self._pot = 0
            try:
                await self.store.save_table(self.record())
            except StoreUnavailable:
                # Nobody has seen this hand: take it back and try again after a pause.
                self.log.exception("could not save the hand's start")
                self.hand, self.hand_id = previous, self.hand_id - 1
                self._next_hand = self._later(STORE_RETRY_MAX, self._start_hand)
                return
            self.log.debug("hand started: seats %s", sorted(self.hand.seats))
            self._publish(
                wire.HandStarted(
                    table_id=self.table_id,
                    seq=self._next_seq(),
                    hand_id=self.hand_id,
                    button=button,
                    stacks=views.amounts(self._stacks_before),
                    commitment=self._commitment,
                )
            )
            await self._after(self.hand.log[1:])

    def _button(self, ready: list[int]) -> int:
        if self.bot_seat is not None:
            return self.bot_seat
        if self.hand is None:
            return ready[-1]  # so the first hand opens with the lowest seat
        return next((n for n in ready if n > self.hand.button), ready[0])

    def _apply(
        self, hand: HandState, seat: int, action: cmd.TableAction
    ) -> tuple[engine.Event, ...]:
        match action:
            case cmd.Check():
                return hand.check(seat)
            case cmd.Bet(amount=amount):
                return hand.bet(seat, amount)
            case cmd.Call():
                return hand.call(seat)
            case cmd.Raise(to=to):
                return hand.raise_to(seat, to)
            case cmd.Fold():
                return hand.fold(seat)
            case cmd.DeclareCut(pairs=((a, b), (c, d))):
                cut = engine.Cut((Tile.parse(a), Tile.parse(b)), (Tile.parse(c), Tile.parse(d)))
                return hand.declare_cut(seat, cut)
        raise AssertionError(f"unhandled action {action!r}")

    async def _after(
        self,
        events: tuple[engine.Event, ...],
        *,
        ref: MessageId | None = None,
        actor: int | None = None,
        reason: str = "",
    ) -> None:
        """Publish what the engine did, then start the next turn or finish the hand."""
        hand = self.hand
        assert hand is not None
        for event in events:
            self._publish_event(
                hand, event, ref=ref if actor is not None else None, actor=actor, reason=reason
            )
        if hand.is_over:
            self._cancel_timer()
            await self._settle(hand)
            return
        self._start_turn(hand)

    def _publish_event(
        self,
        hand: HandState,
        event: engine.Event,
        *,
        ref: MessageId | None,
        actor: int | None,
        reason: str,
    ) -> None:
        ids: dict[str, Any] = {"table_id": self.table_id, "hand_id": self.hand_id}
        self._pot += views.pot_change(event)
        made: wire.HandEvent | None = None
        match event:
            case engine.HandStarted():
                return
            case engine.BettingRoundEnded(round):
                made = wire.BettingRoundEnded(
                    **ids, seq=self._next_seq(), round=round, pot=self._pot
                )
            case engine.CuttingStarted(seats):
                self._deadline_ms = self._deadline()
                made = wire.CuttingStarted(
                    **ids, seq=self._next_seq(), seats=seats, deadline_ms=self._deadline_ms
                )
            case engine.HandVoided(refunds):
                made = wire.HandVoided(
                    **ids, seq=self._next_seq(), reason=reason, refunds=views.amounts(refunds)
                )
            case engine.HandEnded(stacks):
                made = wire.HandEnded(
                    **ids,
                    seq=self._next_seq(),
                    stacks=views.amounts(stacks),
                    seed=self._seed,
                    deck=self._deck,
                )
        if made is not None:
            self._publish(made)
            return
        seq = self._next_seq()
        public = views.hand_event(event, None, seq=seq, **ids)
        if public is None:
            return
        for viewer, seat in self._viewers():
            message = (
                views.hand_event(event, seat, seq=seq, **ids)
                if views.sees_more(event, seat)
                else public
            )
            if message is not None:
                viewer.deliver(
                    message.model_copy(update={"ref": ref})
                    if seat == actor and ref is not None
                    else message
                )
        self._frames.append(self.frames.encode(public))

    def _start_turn(self, hand: HandState) -> None:
        if hand.phase is Phase.CUTTING:
            # One deadline for the whole cutting phase: a declared cut does not reset it.
            if self._timer_key != (self.hand_id, CUTTING):
                self._set_timer((self.hand_id, CUTTING))
            self._play_for_leavers()
            return
        actor = hand.actor
        if actor is None:
            return
        self._deadline_ms = self._deadline()
        base = wire.TurnStarted(
            table_id=self.table_id,
            seq=self._next_seq(),
            hand_id=self.hand_id,
            seat=actor,
            to_call=hand.to_call(actor),
            deadline_ms=self._deadline_ms,
            pot=hand.pot,
            seats=views.seat_chips(hand),
        )
        legal = views.legal_view(hand.legal_actions(actor))
        for viewer, seat in self._viewers():
            viewer.deliver(base.model_copy(update={"legal": legal}) if seat == actor else base)
        self._frames.append(self.frames.encode(base))
        self._set_timer((self.hand_id, len(hand.log)))
        self._play_for_leavers()

    def _set_timer(self, key: tuple[int, int]) -> None:
        """Time out the turn named by ``key``: (hand, length of its log) for a betting
        turn, so a stale timer finds the log grown; (hand, ``CUTTING``) for a cutting phase."""
        self._cancel_timer()
        self._timer_key = key
        self._timer = self._later(self.options.turn_seconds, self._time_out, key)

    def _play_for_leavers(self) -> None:
        hand = self.hand
        if hand is None or hand.is_over:
            return
        waiting = hand.pending_cuts if hand.phase is Phase.CUTTING else (hand.actor,)
        if any(n is not None and self.seats[n].leaving for n in waiting):
            self.spawn(self._time_out((self.hand_id, len(hand.log)), leavers_only=True))

    async def _time_out(self, key: tuple[int, int], *, leavers_only: bool = False) -> None:
        async with self._lock:
            hand = self.hand
            if hand is None or hand.is_over or key[0] != self.hand_id:
                return
            if hand.phase is Phase.CUTTING and (leavers_only or key[1] == CUTTING):
                waiting = [
                    n for n in hand.pending_cuts if self.seats[n].leaving or not leavers_only
                ]
                events = tuple(e for n in waiting for e in hand.time_out(n))
            elif hand.phase is Phase.BETTING and key[1] == len(hand.log):
                assert hand.actor is not None
                events = hand.time_out(hand.actor)
            else:
                return  # the turn this timer was for is over
            await self._after(events)

    async def _settle(self, hand: HandState) -> None:
        """The hand is over: stacks back to the seats, the record kept, leavers paid out."""
        ended = hand.log[-1]
        assert isinstance(ended, engine.HandEnded)
        for number, stack in ended.stacks:
            self.seats[number].stack = stack
        record = HandRecord(
            table_id=self.table_id,
            hand_id=self.hand_id,
            accounts=tuple((n, self.seats[n].account_id) for n, _ in self._stacks_before),
            stacks_before=self._stacks_before,
            stacks_after=ended.stacks,
            events=tuple(self._frames),
            voided=any(isinstance(e, engine.HandVoided) for e in hand.log),
        )
        delay = STORE_RETRY_MIN
        while True:
            # The hand is over for everyone who watched it: its outcome must reach the
            # store, so while the store is out of reach, try until it is back.
            try:
                await self.store.record_hand(record, self.record())
                break
            except StoreUnavailable:
                self.log.exception("could not save the hand's end")
                await asyncio.sleep(delay)
                delay = min(delay * 2, STORE_RETRY_MAX)
        self.log.debug("hand ended: %s", "voided" if record.voided else "played")
        if self.on_hand_ended is not None:
            self.on_hand_ended()
        for seat in list(self.seats.values()):
            if seat.is_bot:
                continue
            if seat.leaving or seat.stack == 0:
                seat.leaving = True
                await self._cash_out(seat)
                await self._close_if_deserted()
        if not self.closed:
            await self._top_up_bot()
        self._schedule_hand()

    # -- chips in and out ------------------------------------------------------------

    async def _cash_out(self, seat: Seat) -> None:
        # The seat goes only once the store has paid it out: if that fails, it stays,
        # so no later write can save the table without it while its chips are unpaid.
        account = await self.store.move_chips(
            seat.account_id, -seat.stack, self.record().without_seat(seat.seat)
        )
        del self.seats[seat.seat]
        if seat.grace is not None:
            seat.grace.cancel()
        if seat.viewer is not None and not seat.is_bot:
            seat.viewer.deliver(
                wire.TableLeft(
                    ref=seat.leave_ref,
                    table_id=self.table_id,
                    seat=seat.seat,
                    cashed_out=seat.stack,
                    balance=account.balance,
                )
            )
        self._publish(
            wire.PlayerLeft(
                table_id=self.table_id,
                seq=self._next_seq(),
                seat=seat.seat,
                name=seat.name,
                cashed_out=seat.stack,
            )
        )

    async def _top_up_bot(self) -> None:
        """The house keeps the bot's stack full, so a player always has someone to play."""
        if self.bot_seat is None or self.bot_seat not in self.seats:
            return
        bot = self.seats[self.bot_seat]
        missing = self.options.max_buy_in - bot.stack
        if missing > 0:
            topped = replace(bot.record(), stack=self.options.max_buy_in)
            await self.store.move_chips(HOUSE, missing, self.record().with_seat(topped))
            bot.stack += missing

    async def _balance(self, account_id: str) -> int:
        account = await self.store.account(account_id)
        return 0 if account is None else account.balance

    async def _grace_over(self, account_id: str) -> None:
        async with self._lock:
            seat = self.seat_of(account_id)
            if seat is None or seat.connected:
                return
            seat.grace = None
            self.log.info("seat %d left after its grace period", seat.seat)
            seat.leaving = True
            if self._in_hand(seat.seat):
                seat.grace_ran_out = True
                self._play_for_leavers()
            else:
                await self._cash_out(seat)
                await self._close_if_deserted()

    # -- publishing ------------------------------------------------------------------

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def _viewers(self) -> list[tuple[Viewer, int | None]]:
        seated = [(s.viewer, s.seat) for s in self.seats.values() if s.viewer is not None]
        return [*seated, *((v, None) for v in self._spectators)]

    def _publish(self, message: wire.TableEvent) -> None:
        """Send an event that looks the same to every viewer."""
        for viewer, _ in self._viewers():
            viewer.deliver(message)
        if isinstance(message, wire.HandEvent):
            self._frames.append(self.frames.encode(message))

    def _snapshot(self, viewer: Viewer, ref: MessageId | None) -> wire.TableSnapshot:
        you = next((s.seat for s in self.seats.values() if s.viewer is viewer), None)
        seats = (
            wire.SeatView(
                seat=s.seat, name=s.name, is_bot=s.is_bot, connected=s.connected, stack=s.stack
            )
            for s in sorted(self.seats.values(), key=lambda s: s.seat)
        )
        hand = self.hand
        table = wire.TableView(
            table_id=self.table_id,
            options=self.options,
            seats=views.seat_views(hand, seats, you),
            you=you,
            hand=None
            if hand is None
            else views.hand_view(hand, self.hand_id, self._commitment, self._deadline_ms),
            legal=None
            if hand is None or you is None
            else views.legal_view(hand.legal_actions(you)),
        )
        return wire.TableSnapshot(ref=ref, seq=self.seq, table=table)

    # -- small helpers ---------------------------------------------------------------

    def _free_seat(self, account_id: str, wanted: int | None) -> int:
        if self.closed:
            raise Refused("table_closed", f"table {self.table_id} is closed")
        if self.seat_of(account_id) is not None:
            raise Refused("already_seated", f"you already have a seat at table {self.table_id}")
        free = [n for n in range(self.options.seats) if n not in self.seats and n != self.bot_seat]
        if wanted is None:
            if not free:
                raise Refused("table_full", f"table {self.table_id} has no free seat")
            return free[0]
        if not 0 <= wanted < self.options.seats:
            raise Refused("no_such_seat", f"the seats are 0 to {self.options.seats - 1}")
        if wanted not in free:
            raise Refused("seat_taken", f"seat {wanted} is not free (free: {free or 'none'})")
        return wanted

    def _in_hand(self, seat: int) -> bool:
        """Dealt into the hand in play: its stack is the engine's until the hand ends."""
        return self.playing and seat in dict(self._stacks_before)

    def _sees(self, viewer: Viewer) -> bool:
        return viewer in self._spectators or any(s.viewer is viewer for s in self.seats.values())

    def _deadline(self) -> int:
        return int((time.time() + self.options.turn_seconds) * 1000)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._timer_key = None

    def _later(
        self, delay: float, work: Callable[..., Coroutine[Any, Any, None]], *args: Any
    ) -> asyncio.TimerHandle:
        # The coroutine is made when the timer fires, so a cancelled timer leaves none unawaited.
        return asyncio.get_running_loop().call_later(delay, lambda: self.spawn(work(*args)))

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in the background; :meth:`close` cancels what is left of it."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if task.cancelled() or task.exception() is None:
            return
        if isinstance(task.exception(), LeaseLost):
            self.abandon(MOVED)
        else:
            self.log.error("background work failed", exc_info=task.exception())
