"""What a table writes to the store, and what each write makes happen.

The middle layer of the table's state machine (:mod:`.core`): the one write in
flight, the choice of the next from the state as it is when the last is done,
the commit each kind of write makes (docs/ARCHITECTURE.md, "Commit points"),
and what the table tells its viewers once a write is done.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import partial
from typing import Any

from qiuqiu import engine
from qiuqiu.protocol import MAX_CHIPS, ErrorCode, decode_server, encode
from qiuqiu.protocol import server as wire
from qiuqiu.server.frames import Frame
from qiuqiu.server.store import HOUSE, HandRecord, TableCommit, TableRecord
from qiuqiu.server.table.audience import Audience, Disarm, TablePhase, Timer
from qiuqiu.server.table.deal import Deal, next_button
from qiuqiu.server.table.deferred import Deferred, Work
from qiuqiu.server.table.reasons import LEFT, LOST, MOVED_WHILE_WRITTEN
from qiuqiu.server.table.seats import Asked, BuyIn, Seat, SeedChange, unseated
from qiuqiu.server.views import Publication

SEQ_WINDOW = 1_000_000
"""Seqs each write reserves above the current one, so that a table adopted after its
host died counts on above any seq that host sent."""


class WriteKind(StrEnum):
    OPEN = "open"
    BUY_IN = "buy_in"
    CASH_OUT = "cash_out"
    HAND_START = "hand_start"
    HAND_END = "hand_end"
    SEED = "seed"
    CLOSE = "close"
    RESERVE = "reserve"


@dataclass(frozen=True, slots=True)
class Write:
    kind: WriteKind
    commit: TableCommit
    seats: tuple[int, ...] = ()
    """The seats it cashes out."""
    stacks: tuple[tuple[int, int], ...] = ()
    """A hand's end: every seat's stack after it, those cashed out included."""
    seeds: tuple[SeedChange, ...] = ()
    """The client seeds it writes."""


class Ledger(Audience):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deal: Deal | None = None
        """The hand whose start is written (or being written) and whose end is not."""
        self.store_up = True
        self.sure = True
        """Whether this process is sure it still holds the table's lease (rule 6 in
        :mod:`.core`), as the runner says before each input."""
        self._reserved = 0
        """The ``seq`` the store's record allows this table to reach."""
        self._buy_ins: deque[BuyIn] = deque()
        self._asked: dict[str, list[Asked]] = {}
        """By account: its requests that wait for its buy-in to be answered, in order."""
        self._seed_changes: list[SeedChange] = []
        self._first: Write | None = None
        """A write that must come before any other (the table's opening)."""
        self._writing: Write | None = None
        self._closing: str | None = None
        self._held: list[Publication] = []
        """The hand's last events, waiting for its end to be written."""
        self._deferred = Deferred()
        self._had_players = self._bust_out = False

    def _seated(self, b: BuyIn, balances: dict[str, int]) -> None:
        seat = Seat(b.seat, b.account_id, b.name, b.chips, client_seed=b.client_seed)
        self.seats[b.seat] = seat
        self.seat_changes += 1
        self._had_players, self._bust_out = True, False
        unsure = self._error(b.ref, ErrorCode.OUTCOME_UNKNOWN, MOVED_WHILE_WRITTEN)
        self._when_settled(
            lambda: self._announce_seat(seat, b, balances),
            moved=partial(self._deliver, b.viewer, unsure),
        )

    def _asked_refused(self, b: BuyIn, code: ErrorCode | None, why: str = "") -> None:
        """The buy-in ``b`` was refused: so are the requests that waited on it, after it,
        with ``code``, or (``None``) as from an account with no seat here."""
        for asked in self._asked.pop(b.account_id, []):
            refusal = (code, why) if code is not None else unseated(asked, self.table_id)
            error = self._error(asked.ref, *refusal)
            self._deliver(asked.viewer, error)

    def _void_adopted(self, record: TableRecord) -> Write:
        """The write that voids the hand a dead host was playing. Its record keeps the
        notice, as a hand's record keeps its end: should this host die too before a
        player who was away is back, the next one tells it again."""
        notice = self._voided_event(record.hand_id, LOST)
        hand = replace(HandRecord.voided_in(record), events=(encode(notice),))
        return Write(WriteKind.HAND_END, self._commit(hand=hand, hand_open=False))

    def _hand_settled(self, write: Write, balances: dict[str, int]) -> None:
        for number, chips in write.stacks:
            self.seats[number].stack = chips
        hand = write.commit.hand
        if hand is not None and hand.voided and self.deal is None:
            # Adopted with it open: voided here, and told to whoever comes back.
            voided = Frame.of(decode_server(hand.events[-1]))
            self._ended(hand.hand_id, (a for _, a in hand.accounts), voided)
            self._adopted_until = self._clock() + self.timings.grace
        elif hand is not None:
            ended = next(
                p.public_frame for p in self._held if p.public_frame.kind is wire.HandEnded
            )
            self._ended(hand.hand_id, (a for _, a in hand.accounts), ended)
        self.deal, self.state = None, TablePhase.WAITING
        held, self._held = self._held, []
        for publication in held:
            self._publish(publication)
        self._cashed_out(write.seats, balances)
        self._settled()

    def _cashed_out(self, numbers: tuple[int, ...], balances: dict[str, int]) -> None:
        gone = [self.seats.pop(number) for number in numbers]
        self.seat_changes += bool(gone)
        self._refuse_seed_changes({s.account_id for s in gone}, ErrorCode.NOT_SEATED, LEFT)
        if gone:
            # Any seat gone bust keeps the table open for its rebuy, whatever its seat
            # number beside a player who asked to leave in the same hand.
            self._bust_out = any(seat.stack == 0 and not seat.leaving for seat in gone)
        for seat in gone:
            self._missed.pop(seat.account_id, None)
            self._timers.append(Disarm(Timer("grace", seat.account_id)))
            # Told at once, the lease in doubt or not (rule 6): held, it was lost if the
            # table then closed or moved, its player waiting for ever.
            if seat.viewer is not None:
                left = wire.TableLeft(
                    ref=seat.leave_ref,
                    table_id=self.table_id,
                    seat=seat.seat,
                    cashed_out=seat.stack,
                    balance=balances.get(seat.account_id, 0),
                )
                self._deliver(seat.viewer, left)
        self._when_settled(lambda: self._announce_left(gone))

    def _announce_left(self, gone: list[Seat]) -> None:
        for seat in gone:
            self._publish(
                Publication.of(
                    wire.PlayerLeft(
                        table_id=self.table_id,
                        seq=self._next_seq(),
                        seat=seat.seat,
                        name=seat.name,
                        cashed_out=seat.stack,
                    )
                )
            )

    def _seeds_written(self, write: Write) -> None:
        for change in write.seeds:
            seat = self.seat_of(change.account_id)
            assert seat is not None, "a seat leaves only by a write, and this one was in flight"
            seat.client_seed = change.client_seed
            confirmed = wire.SeedSet(
                ref=change.ref, table_id=self.table_id, client_seed=change.client_seed
            )
            self._deliver(change.viewer, confirmed)

    def _refuse_waiting(self, code: ErrorCode, why: str, kept: int = 0) -> None:
        """Refuse the buy-ins waiting past the first ``kept``, and every seed change not
        yet written: none of them reached the store."""
        while len(self._buy_ins) > kept:
            buy_in = self._buy_ins.pop()
            self._still_here(buy_in.viewer)
            self._deliver(buy_in.viewer, self._error(buy_in.ref, code, why))
            self._asked_refused(buy_in, code, why)
        self._refuse_seed_changes(None, code, why)

    def _refuse_seed_changes(self, accounts: set[str] | None, code: ErrorCode, why: str) -> None:
        """Drop the seed changes not yet written of ``accounts`` (``None``: everyone's)."""
        kept: list[SeedChange] = []
        for change in self._seed_changes:
            if accounts is None or change.account_id in accounts:
                self._deliver(change.viewer, self._error(change.ref, code, why))
            else:
                kept.append(change)
        self._seed_changes = kept

    def _when_settled(self, work: Work, moved: Work | None = None) -> None:
        """Do ``work`` now, or once nothing holds it: a hand's end being written (what it
        sends must not show an end nobody has seen yet, rule 2, nor take a ``seq`` above
        the end's held events, rule 5), or a lease in doubt (another process may have
        adopted the table: a snapshot would show what it moved on from, rule 6). Should
        the table move meanwhile, ``moved`` is done instead: the answer a request is owed."""
        self._deferred.add(work, moved)
        self._settled()

    def _settled(self) -> None:
        if self.state is not TablePhase.SETTLING and self.sure:
            self._deferred.do()

    @property
    def awaiting_rebuy(self) -> bool:
        """Its last player went bust: it stays open a while for them to buy in again."""
        return self._bust_out and not self._humans() and self._closing is None

    @property
    def holding(self) -> bool:
        """Whether a hand's last events wait for its end to be written."""
        return bool(self._held)

    @property
    def closing_reason(self) -> str | None:
        return self._closing

    def _closed(self, balances: dict[str, int]) -> None:
        # The close is written, so the lease held to the end: what waited on a doubt
        # (an answer to a watch, a seat written) is told before the close, not lost.
        self._deferred.do()
        held, self._held = self._held, []
        for publication in held:
            self._publish(publication)
        for seat in self.seats.values():
            if seat.viewer is not None and not seat.is_bot:
                left = wire.TableLeft(
                    table_id=self.table_id,
                    seat=seat.seat,
                    cashed_out=seat.stack,
                    balance=balances.get(seat.account_id, 0),
                )
                self._deliver(seat.viewer, left)
        self._publish(Publication.of(self._closed_event(self._closing or "", self.table_seed)))
        self.state, self.deal = TablePhase.CLOSED, None
        self._forget_everyone()

    def _forget_everyone(self) -> None:
        """A closed table holds no viewer: the dealer bot holds the table, and a closed
        table must go with its last reference, not wait for the cycle collector."""
        self.seats.clear()
        self.spectators.clear()
        self.arriving.clear()
        self._seed_changes.clear()
        self._deferred.clear()
        self._held.clear()

    def next_write(self) -> Write | None:
        """The write to make now, if none is in flight (rule 3); it is in flight then."""
        if self._writing is not None or self.state is TablePhase.CLOSED:
            return None
        write = self._first or self._choose_write()
        self._first, self._writing = None, write
        return write

    def _choose_write(self) -> Write | None:
        if self.state is TablePhase.SETTLING:
            return self._end_write()
        if self._closing is not None and self.state is not TablePhase.OPENING:
            return self._close_write()
        if self._buy_ins:
            b = self._buy_ins[0]
            seat = Seat(b.seat, b.account_id, b.name, b.chips, client_seed=b.client_seed)
            return Write(WriteKind.BUY_IN, self._commit(((b.account_id, b.chips),), add=seat))
        if self._seed_changes:
            return self._seed_write()
        leavers = tuple(
            n for n, s in self.seats.items() if s.leaving and not self._in_hand(n) and not s.is_bot
        )
        if leavers:
            moves = tuple((self.seats[n].account_id, -self.seats[n].stack) for n in leavers)
            return Write(WriteKind.CASH_OUT, self._commit(moves, drop=leavers), leavers)
        if self.state is TablePhase.STARTING:
            return self._start_write()
        if self.seq > self._reserved - SEQ_WINDOW // 2:
            return Write(WriteKind.RESERVE, self._commit())
        return None

    def _seed_write(self) -> Write:
        """Every seed change asked for, in one write."""
        changes, self._seed_changes = tuple(self._seed_changes), []
        seeds: dict[int, str] = {}
        for change in changes:
            seat = self.seat_of(change.account_id)
            assert seat is not None, "a seat that leaves takes its seed changes with it"
            seeds[seat.seat] = change.client_seed
        return Write(WriteKind.SEED, self._commit(seeds=seeds), seeds=changes)

    def _start_write(self) -> Write | None:
        ready = self._ready()
        if not ready:
            self.state = TablePhase.WAITING
            return None
        seeds = {n: self.seats[n].client_seed for n in ready}
        last = None if self.hand is None else self.hand.button
        button = next_button(ready, self.bot_seat, last)
        self.deal = Deal.shuffle(
            self.table_seed, self.table_id, self.hand_id + 1, button, ready, seeds
        )
        return Write(WriteKind.HAND_START, self._commit(hand_id=self.hand_id + 1))

    def _end_write(self) -> Write:
        """The hand's one end commit: the hand, every stack, the cash-outs, the top-up."""
        hand, deal = self.hand, self.deal
        assert hand is not None
        assert deal is not None
        ended = hand.log[-1]
        assert isinstance(ended, engine.HandEnded)
        after = dict(ended.stacks)
        stacks = {n: after.get(n, s.stack) for n, s in self.seats.items()}
        out = tuple(
            n for n, s in self.seats.items() if not s.is_bot and (s.leaving or stacks[n] == 0)
        )
        moves = [(self.seats[n].account_id, -stacks[n]) for n in out]
        bot = self.bot_seat
        if bot is not None and bot in self.seats:
            # Only as far as every chip at the table still fits in one amount: a player
            # who won the house's chips keeps them, and a pot of them all is paid. The
            # chips of seats cashed out now are leaving it.
            others = sum(chips for n, chips in stacks.items() if n != bot and n not in out)
            topped = min(self.options.max_buy_in, MAX_CHIPS - others)
            if stacks[bot] < topped:
                moves.append((HOUSE, topped - stacks[bot]))
                stacks[bot] = topped
        record = HandRecord(
            table_id=self.table_id,
            hand_id=self.hand_id,
            accounts=tuple((n, self.seats[n].account_id) for n, _ in deal.stacks),
            names=tuple((n, self.seats[n].name) for n, _ in deal.stacks),
            stacks_before=deal.stacks,
            stacks_after=ended.stacks,
            events=tuple(self._frames),
            voided=any(isinstance(e, engine.HandVoided) for e in hand.log),
        )
        commit = self._commit(tuple(moves), drop=out, stacks=stacks, hand=record, hand_open=False)
        return Write(WriteKind.HAND_END, commit, out, tuple(stacks.items()))

    def _close_write(self) -> Write:
        """Every seat cashed out (the bot's chips back to the house) and the table
        dropped. A hand in play was voided first, with its own end write; one whose
        start was written while the table began to close was never dealt."""
        record: HandRecord | None = None
        if self.deal is not None:
            record = HandRecord(
                table_id=self.table_id,
                hand_id=self.deal.hand_id,
                accounts=tuple((n, self.seats[n].account_id) for n, _ in self.deal.stacks),
                names=tuple((n, self.seats[n].name) for n, _ in self.deal.stacks),
                stacks_before=self.deal.stacks,
                stacks_after=self.deal.stacks,
                events=(),
                voided=True,
            )
        self.state = TablePhase.CLOSING
        moves = tuple((s.account_id, -s.stack) for s in self.seats.values())
        commit = TableCommit(self.table_id, None, moves, record, revealed_seed=self.table_seed)
        return Write(WriteKind.CLOSE, commit, tuple(self.seats))

    def _commit(
        self,
        moves: tuple[tuple[str, int], ...] = (),
        *,
        add: Seat | None = None,
        drop: tuple[int, ...] = (),
        stacks: dict[int, int] | None = None,
        hand: HandRecord | None = None,
        hand_id: int | None = None,
        hand_open: bool | None = None,
        seeds: dict[int, str] | None = None,
    ) -> TableCommit:
        seats = [
            s.record(
                stack=None if stacks is None else stacks[n],
                client_seed=None if seeds is None else seeds.get(n),
            )
            for n, s in self.seats.items()
            if n not in drop
        ]
        if add is not None:
            seats.append(add.record())
        deal = self.deal if hand_open is None else None
        record = TableRecord(
            self.table_id,
            self.options,
            tuple(sorted(seats, key=lambda s: s.seat)),
            hand_id=self.hand_id if hand_id is None else hand_id,
            hand_open=deal is not None or bool(hand_open),
            dealt=() if deal is None else tuple(n for n, _ in deal.stacks),
            seq=self.seq + SEQ_WINDOW,
            created_by=self.created_by,
            table_seed=self.table_seed,
        )
        return TableCommit(self.table_id, record, moves, hand)

    def _ready(self) -> dict[int, int]:
        """The seats a hand would deal in now, with their stacks."""
        ready = {n: s.stack for n, s in sorted(self.seats.items()) if s.ready}
        if len(ready) < self.options.min_players:
            return {}
        if self.bot_seat is not None and all(self.seats[n].is_bot for n in ready):
            return {}
        return ready

    def _in_hand(self, seat: int) -> bool:
        """Dealt into the hand whose end is not written: its stack is the engine's."""
        return self.deal is not None and any(n == seat for n, _ in self.deal.stacks)
