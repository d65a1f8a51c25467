"""One table's whole behaviour as a state machine, without I/O.

As ``websockets`` keeps its protocol apart from its asyncio wrappers, this
module only takes inputs and says what must happen; :mod:`.runner` carries it
out (docs/ARCHITECTURE.md, "The table"). Inputs are the methods: a request
(:meth:`sit`, :meth:`leave`, :meth:`watch`, :meth:`act`, :meth:`show`), a
connection lost or back, a timer firing (:meth:`fire`), the outcome of the
write it asked for (:meth:`written`, :meth:`refused`, :meth:`lease_lost`), the
store going away or coming back, and :meth:`close`. Outputs are taken by the
runner after each input: messages to deliver, timers to arm or disarm
(:meth:`take_outputs`), and the next store write (:meth:`next_write`).

States::

    OPENING ─▶ WAITING ─▶ STARTING ─▶ PLAYING ─▶ SETTLING ─▶ WAITING ...
                  └────────────┴───────────┴──────────┴─▶ CLOSING ─▶ CLOSED

- OPENING: the table's first write (its record, the bot's chips) is in flight.
- WAITING: between hands.
- STARTING: a hand is wanted; its start is written before anyone sees it.
- PLAYING: a hand is in play; the engine alone moves chips.
- SETTLING: the hand is over and its one end commit is pending; its last
  events (showdown, pots, ``hand_ended``) wait for it.
- CLOSING: the closing commit is pending; CLOSED: nothing more happens.

Rules:

1. An input is checked first: a refusal raises :class:`Refused` and changes
   nothing.
2. Nobody is told of anything before the write it depends on is done: a seat
   appears when its buy-in is written, a hand when its start is, a hand's end
   (what its last action caused: showdown, payouts, ``hand_ended``) and the
   cash-outs after it when its end is. A hand's actions, its last one too, are
   told as they are played: none is written by itself, and a hand its server
   dies in is voided. So no error ever follows an event about the same thing,
   and a server that dies with a write pending leaves a record the next host
   turns into what the clients saw.
3. One write at a time, chosen from the state when the last is done
   (:meth:`next_write`), so it always holds every seat as it is then. A failed
   write is retried by the runner, the same write, until the store answers.
4. While the store is away, requests that need a write are refused with
   ``store_unavailable``; hands in play go on (their end waits), none starts,
   and no turn runs out: it starts again, whole, once the store is back.
5. Every table event takes the next ``seq``. Each write reserves
   :data:`SEQ_WINDOW` more in the record, and a table adopted after its host
   died counts on from there: ``seq`` never goes back for anyone.
6. A table whose process is not sure it still holds its lease (neither taken
   nor renewed for the lease's length: the process was stopped, its loop held,
   or the store is away) plays and shows nothing: actions, leaving, watching and
   snapshots are refused with ``store_unavailable``, a player back waits for
   their snapshot, and no turn runs out, until a renewal answers. Only a seat's
   cash-out, once written, is told its player at once: the write proves the
   lease, and held back it would be lost if the table closed or moved meanwhile.
   Another process may have adopted the table and voided its hand; the renewal
   then says so, and the table closes as moved, without a word more of that hand;
   what it held gets ``table_moving``, a seat written ``outcome_unknown``.
7. A leave, a client seed or a snapshot asked while the seat's buy-in is being
   written waits for it, checked and answered once the buy-in is, after it, as the
   client sent them.
"""

from __future__ import annotations

from collections.abc import Sequence

from qiuqiu.engine import IllegalAction
from qiuqiu.protocol import ErrorCode
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId
from qiuqiu.server.errors import Refused
from qiuqiu.server.store import HOUSE, HandRecord, TableRecord
from qiuqiu.server.table import reasons
from qiuqiu.server.table.audience import DESERTED, NEXT_HAND, TURN, Disarm, TablePhase, Timer
from qiuqiu.server.table.deal import engine_action
from qiuqiu.server.table.ledger import Write, WriteKind
from qiuqiu.server.table.seating import Seating
from qiuqiu.server.table.seats import LeaveAsked, Seat, SeedAsked, SnapshotAsked, Viewer
from qiuqiu.server.views import Publication

BOT_NAME = "Dealer"


class TableCore(Seating):
    """A table, fed one input at a time by its runner (see the module's rules)."""

    # -- what the lobby asks of a table ----------------------------------------------

    def open(self, bot: Viewer | None) -> None:
        """A new table: its record and, at a dealer-bot table, the bot's chips."""
        moves: tuple[tuple[str, int], ...] = ()
        if self.bot_seat is not None and bot is not None:
            chips = self.options.max_buy_in
            self.seats[self.bot_seat] = Seat(self.bot_seat, HOUSE, BOT_NAME, chips, True, bot)
            moves = ((HOUSE, chips),)
        self._first = Write(WriteKind.OPEN, self._commit(moves=moves))

    def adopt(
        self, record: TableRecord, bot: Viewer | None, hands: Sequence[HandRecord] = ()
    ) -> None:
        """Reopen a table whose host died. Every player is away, with the grace period to
        come back; a hand that was in play is voided, its chips where they were before it,
        and whoever comes back is told so before anything else, and how the hands it
        missed ended (:meth:`_tell_again`, of the ``hands`` that
        :meth:`TableRecord.hands_to_tell` says to read)."""
        self.hand_id, self.seq = record.hand_id, record.seq
        self._reserved, self._had_players = record.seq, True
        if record.table_seed:
            self.table_seed = record.table_seed
        for kept in record.seats:
            seat = Seat(kept.seat, kept.account_id, kept.name, kept.stack, kept.is_bot)
            seat.client_seed, seat.missed_since = kept.client_seed, kept.missed_since
            self.seats[seat.seat] = seat
            self.seat_changes += 1
            if seat.is_bot:
                seat.viewer = bot
            else:
                seat.connected = False
                self._arm(Timer("grace", seat.account_id), self.timings.grace)
        self.state = TablePhase.WAITING
        if not self._humans():
            self.close(reasons.LAST_LEFT)  # its host died closing it
        self._tell_again(hands)
        if record.hand_open:
            self.state = TablePhase.SETTLING
            self._first = self._void_adopted(record)

    def close(self, reason: str) -> None:
        """Void the hand in play (every chip back to who put it in), cash every seat out
        and drop the table: each a write, once the write in flight is done."""
        if self._closing is not None or self.state is TablePhase.CLOSED:
            return
        self._closing = reason
        # The buy-in being written stays: its chips are on their way to the seat, which
        # the close then cashes out like any other.
        kept = int(self._writing is not None and self._writing.kind is WriteKind.BUY_IN)
        self._refuse_waiting(ErrorCode.TABLE_CLOSED, reason, kept)
        for timer in (TURN, NEXT_HAND, DESERTED):
            self._timers.append(Disarm(timer))
        if self.state is TablePhase.STARTING and self.deal is None:
            self.state = TablePhase.WAITING
        if self.playing and self.hand is not None:
            self._after(self.hand.void(), reason=reason)

    def lease_lost(self, unwritten: bool = False) -> None:
        """Another process hosts the table now: stop, and say so to everyone here. A
        buy-in or seed change not yet written is refused; the one being written is
        ``outcome_unknown`` (it may have reached the store first, and the adopter has
        it), unless the store refused that very write for the lease (``unwritten``)."""
        writing, self._writing = self._writing, None
        unsure = ErrorCode.TABLE_MOVED if unwritten else ErrorCode.OUTCOME_UNKNOWN
        why = reasons.MOVED_WHILE_WRITTEN
        if writing is not None and writing.kind is WriteKind.BUY_IN:
            buy_in = self._buy_ins.popleft()
            self._deliver(buy_in.viewer, self._error(buy_in.ref, unsure, why))
            self._asked_refused(buy_in, ErrorCode.TABLE_MOVED, reasons.MOVED)
        for change in () if writing is None else writing.seeds:
            self._deliver(change.viewer, self._error(change.ref, unsure, why))
        self._refuse_waiting(ErrorCode.TABLE_MOVED, reasons.MOVED)
        self._deferred.moved()
        self._held.clear()
        self._publish(Publication.of(self._closed_event(reasons.MOVED, None)))
        self.state = TablePhase.CLOSED
        self._forget_everyone()

    def hand_over(self) -> None:
        """The process is stopping and another shares the store: stop here without a
        word or a write. That one adopts the table as the store has it (a hand in play
        voided, every chip back, every seat kept), as if this process had died."""
        self.state = TablePhase.CLOSED
        self._forget_everyone()

    # -- requests ----------------------------------------------------------------------

    def watch(self, viewer: Viewer, ref: MessageId | None = None) -> None:
        self._verify_open()
        self._verify_sure()
        if any(s.viewer is viewer for s in self.seats.values()):
            raise Refused(ErrorCode.ALREADY_SEATED, "you are seated here: you see the table")
        self._verify_room(viewer)
        self._arrive(viewer)
        self._when_settled(lambda: self._watched(viewer, ref), moved=self._unanswered(viewer, ref))

    def unwatch(self, viewer: Viewer) -> bool:
        """Stop sending ``viewer`` the table (a spectator left, or its connection closed)."""
        self.arriving.pop(viewer, None)
        return self.spectators.pop(viewer, False) is None

    def show(self, viewer: Viewer, ref: MessageId | None = None, account_id: str = "") -> None:
        """Send ``viewer`` the table as it may see it (``request_snapshot``, for
        ``account_id``). Asked while its seat's buy-in is being written, it waits for
        it (rule 7)."""
        if not self.sees(viewer):
            if self.buying_in(account_id):
                self._asked.setdefault(account_id, []).append(SnapshotAsked(viewer, ref))
                return
            raise Refused(ErrorCode.NOT_AT_TABLE, f"you are not at table {self.table_id}")
        self._verify_sure()
        owed = self._unanswered(viewer, ref)
        self._when_settled(lambda: self._deliver(viewer, self.snapshot(viewer, ref)), moved=owed)

    def act(self, account_id: str, action: cmd.TableAction, viewer: Viewer | None = None) -> None:
        """Play ``action``, sent by ``viewer``, for the seat of ``account_id`` (the house
        plays the bot's)."""
        self._verify_sure()
        if account_id == HOUSE:
            seat = None if self.bot_seat is None else self.seats.get(self.bot_seat)
        else:
            seat = self.seat_of(account_id)
        if seat is None:
            raise Refused(ErrorCode.NOT_SEATED, f"you have no seat at table {self.table_id}")
        hand = self.hand
        if hand is None or not self.playing or action.hand_id != self.hand_id:
            self._refuse_stale(action, viewer)
            return
        if seat.seat not in hand.order:  # the seats dealt in, read without copying them
            raise Refused(ErrorCode.NOT_IN_HAND, "you were not dealt into this hand")
        try:
            events = engine_action(hand, seat.seat, action)
        except IllegalAction as error:
            raise Refused(ErrorCode(error.code), error.message) from None
        self._after(events, actor=seat.seat, ref=action.id)

    # -- connections -------------------------------------------------------------------

    def disconnect(self, account_id: str, viewer: Viewer) -> None:
        """The seat's connection ``viewer`` dropped: the seat keeps its grace period. A
        connection the seat has moved on from changes nothing."""
        self.arriving.pop(viewer, None)  # a seat or return on its way finds it gone
        seat = self.seat_of(account_id)
        if seat is None or not seat.connected or seat.viewer is not viewer:
            return
        seat.connected, seat.viewer = False, None
        self._missing(seat)
        self._arm(Timer("grace", account_id), self.timings.grace)
        # Told after a hand's end being written: its held events have the lower seqs.
        self._when_settled(lambda: self._disconnected(seat.seat))

    def reconnect(self, account_id: str, viewer: Viewer, claim: int | None = 0) -> None:
        """The seat's player is back, on this connection or another (on any process):
        the others are told, and ``viewer`` gets the table first. ``claim`` numbers the
        connection's claim on its account: two hellos at once on two processes reach the
        table in either order, and the seat stays with the later claim."""
        self._arrive(viewer)
        self._when_settled(lambda: self._reconnected(account_id, viewer, claim))

    def _reconnected(self, account_id: str, viewer: Viewer, claim: int | None) -> None:
        seat = self.seat_of(account_id)
        if not self._still_here(viewer) or seat is None or self.state is TablePhase.CLOSED:
            return
        if claim is not None:
            if claim < seat.claim:
                return
            seat.claim = claim
        self._timers.append(Disarm(Timer("grace", account_id)))
        cashing = self._writing is not None and seat.seat in self._writing.seats
        if seat.grace_ran_out and not cashing:
            seat.leaving = seat.grace_ran_out = False
        if not seat.connected or seat.viewer is not viewer:
            seat.connected = True
            self._publish(
                Publication.of(
                    wire.PlayerReconnected(
                        table_id=self.table_id, seq=self._next_seq(), seat=seat.seat
                    )
                )
            )
        if seat.leave_asker is not viewer:
            seat.leave_ref = None  # an id of the connection that asked, not of this one
        seat.viewer = viewer
        self._greet(viewer, account_id)
        self._schedule_hand()

    # -- timers ------------------------------------------------------------------------

    def fire(self, timer: Timer) -> None:
        match timer.kind:
            case "turn":
                self._time_out()
            case "next_hand":
                if self.state is TablePhase.WAITING and self.store_up and self._ready():
                    self.state = TablePhase.STARTING
            case "grace":
                seat = self.seat_of(timer.account_id)
                if seat is not None and not seat.connected and not seat.leaving:
                    seat.leaving = seat.grace_ran_out = True
                    if self.state is TablePhase.PLAYING and self._in_hand(seat.seat):
                        self._after(())
            case "deserted":
                if not self._humans() and not self._buy_ins:
                    self.close(reasons.NOBODY_BACK if self._bust_out else reasons.NOBODY_SAT)

    # -- the write's outcome -----------------------------------------------------------

    def written(self, write: Write, balances: dict[str, int]) -> None:
        self._writing = None
        commit = write.commit
        if commit.table is not None:
            self._reserved = commit.table.seq
        match write.kind:
            case WriteKind.OPEN:
                self.state = TablePhase.WAITING
            case WriteKind.BUY_IN:
                buy_in = self._buy_ins.popleft()
                self._seated(buy_in, balances)
                self._play_asked(buy_in.account_id)
            case WriteKind.HAND_START:
                self._hand_started()
            case WriteKind.HAND_END:
                self._hand_settled(write, balances)
            case WriteKind.CASH_OUT:
                self._cashed_out(write.seats, balances)
            case WriteKind.SEED:
                self._seeds_written(write)
            case WriteKind.CLOSE:
                self._closed(balances)
                return
        self._after_write()

    def refused(self, write: Write, refusal: Refused) -> None:
        """A buy-in the store refused (the balance is short), or a buy-in or seed change
        it certainly never got (it was away): nothing changed."""
        self._writing = None
        if write.kind is WriteKind.SEED:
            for change in write.seeds:
                self._deliver(change.viewer, self._error(change.ref, refusal.code, refusal.message))
        else:
            assert write.kind is WriteKind.BUY_IN, write
            buy_in = self._buy_ins.popleft()
            self._still_here(buy_in.viewer)
            self._deliver(buy_in.viewer, self._error(buy_in.ref, refusal.code, refusal.message))
            self._asked_refused(buy_in, None)
        self._after_write()

    def _play_asked(self, account_id: str) -> None:
        """The seat of ``account_id`` is written: make the requests that waited for that,
        in order, once the seat is told (rule 7)."""
        asked = self._asked.pop(account_id, [])
        if not asked:
            return

        def play() -> None:
            for request in asked:
                try:
                    match request:
                        case LeaveAsked(viewer, ref, after_hand):
                            self.leave(account_id, viewer, ref, after_hand)
                        case SeedAsked(viewer, ref, client_seed):
                            self.set_seed(account_id, viewer, client_seed, ref)
                        case SnapshotAsked(viewer, ref):
                            self.show(viewer, ref, account_id)
                except Refused as refused:
                    error = self._error(request.ref, refused.code, refused.message)
                    self._deliver(request.viewer, error)

        def moved() -> None:
            for request in asked:
                error = self._error(request.ref, ErrorCode.TABLE_MOVED, reasons.MOVED)
                self._deliver(request.viewer, error)

        self._when_settled(play, moved=moved)

    def _after_write(self) -> None:
        if self._closing is None and not self._humans() and not self._buy_ins:
            if self._had_players and not self._bust_out:
                self.close(reasons.LAST_LEFT)
            else:
                # Left open a while for a rebuy, or for a first player: a buy-in refused
                # just after the table was made must not leave it in the lobby for good.
                self._arm(DESERTED, self.timings.grace)
        self._schedule_hand()
