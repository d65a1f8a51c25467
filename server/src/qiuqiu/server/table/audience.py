"""Who is at a table, and what each of them is sent.

The base of the table's state machine (:mod:`.core`): the table's states and
the outputs it hands the runner, its seats and spectators, its ``seq``, and
the one way a table event reaches its viewers (:meth:`Audience._publish`), each
in its own view (:mod:`qiuqiu.server.views`). Nothing here decides anything.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from typing import Literal

from qiuqiu.engine import HandState
from qiuqiu.protocol import ErrorCode, TableOptions, decode_server, encode
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId
from qiuqiu.protocol.fairness import seed_commitment
from qiuqiu.server.errors import Refused
from qiuqiu.server.frames import Frame
from qiuqiu.server.store import HandRecord
from qiuqiu.server.table.deal import Random, new_table_seed
from qiuqiu.server.table.reasons import MOVED_UNANSWERED
from qiuqiu.server.table.seats import BuyIn, Seat, Viewer
from qiuqiu.server.views import HandWire, Publication, hand_view, legal_view, seat_views


class TablePhase(StrEnum):
    """Where the table is in its state machine (docs/ARCHITECTURE.md, "The table")."""

    OPENING = "opening"
    WAITING = "waiting"
    STARTING = "starting"
    PLAYING = "playing"
    SETTLING = "settling"
    CLOSING = "closing"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class TableTimings:
    """How long things take. Tests shorten them; production keeps the defaults."""

    hand_pause: float = 2.0
    """Seconds between one hand's end and the next hand's start, to see the showdown."""
    grace: float = 60.0
    """Seconds a disconnected player keeps the seat, a table whose last player went
    bust stays open for a rebuy, and a new table for its first player."""
    bot_delay: float = 0.5
    """Seconds the dealer bot waits before it acts, so people can follow."""


@dataclass(frozen=True, slots=True)
class Timer:
    kind: Literal["turn", "next_hand", "grace", "deserted"]
    account_id: str = ""


@dataclass(frozen=True, slots=True)
class Arm:
    timer: Timer
    seconds: float


@dataclass(frozen=True, slots=True)
class Disarm:
    timer: Timer


TURN, NEXT_HAND, DESERTED = Timer("turn"), Timer("next_hand"), Timer("deserted")

ENDS_KEPT = 4
"""Hands whose end a seat coming back is told again, whether or not the table saw it
go (its connection may have dropped with them unsent): more than pass in a reconnect."""


class Audience:
    def __init__(
        self,
        table_id: str,
        options: TableOptions,
        rng: Random,
        clock: Callable[[], float],
        timings: TableTimings,
        created_by: str = "",
        spectator_limit: int = 0,
    ) -> None:
        self.table_id, self.options, self.created_by = table_id, options, created_by
        self.spectator_limit = spectator_limit
        """The most spectators the table takes at once (0: no limit); its players, who
        see it from their seats, are none of them."""
        self.rules = options.rules()
        self._rng, self._clock, self.timings = rng, clock, timings
        self.table_seed = new_table_seed(rng)
        """Every deck of the table derives from it; revealed when the table closes."""
        self.state = TablePhase.OPENING
        self.seats: dict[int, Seat] = {}
        self.seat_changes = 0
        """Players seated (by a buy-in or by adopting the table) and cashed out so far:
        whoever keeps an index of who sits where reads the seats again when it moves."""
        self.spectators: dict[Viewer, None] = {}
        self.arriving: dict[Viewer, int] = {}
        """Viewers whose greetings (a player back, a spectator) are put off, and how many
        (see :meth:`_when_settled`): one that goes meanwhile is dropped from here."""
        self.hand: HandState | None = None
        """The hand in play, or the last one played here."""
        self._wire: HandWire | None = None
        self._frames: list[str] = []
        """The hand's events as a spectator saw them: its record, and in a snapshot."""
        self._dealt: dict[int, str] = {}
        """The account at each seat dealt into :attr:`hand`: a seat someone else has
        taken since shows nothing of that hand, its last player's tiles least of all."""
        self.hand_id = self.seq = 0
        self._deadline_ms: int | None = None
        self._ends: deque[tuple[int, frozenset[str], Frame]] = deque(maxlen=ENDS_KEPT)
        """How the last hands ended (``hand_ended``, or ``hand_voided`` for one a dead host
        left open), with the accounts dealt into each: whoever of them comes back is told
        again, as its old connection may have gone before it was."""
        self._listed: tuple[tuple[object, ...], str] | None = None
        """What the lobby last listed of the table, and its summary as text."""
        self._missed: dict[str, list[Frame]] = {}
        """The ends of the hands each away player was dealt into since it went, however
        many its grace period held: it is told them all when it comes back."""
        self._adopted_until = 0.0
        """Spectators who come back until then (the grace period after an adoption) are
        told how the hand the dead host was playing ended."""
        """The accounts seated in that hand that have not come back since."""
        self._deliveries: list[tuple[Viewer, Frame]] = []
        self._timers: list[Arm | Disarm] = []

    def take_outputs(self) -> tuple[list[tuple[Viewer, Frame]], list[Arm | Disarm]]:
        """What to deliver and which timers to change, in order, since the last call."""
        out = self._deliveries, self._timers
        self._deliveries, self._timers = [], []
        return out

    @property
    def bot_seat(self) -> int | None:
        """The dealer bot sits in the last seat, so the players' seats come first."""
        return self.options.seats - 1 if self.options.dealer_bot else None

    @property
    def seed_commitment(self) -> str:
        return seed_commitment(self.table_seed)

    def summary(self) -> wire.TableSummary:
        """The table as the lobby lists it."""
        return wire.TableSummary(
            table_id=self.table_id,
            options=self.options,
            seed_commitment=self.seed_commitment,
            seats=tuple(
                wire.SeatSummary(seat=s.seat, name=s.name, is_bot=s.is_bot, stack=s.stack)
                for s in sorted(self.seats.values(), key=lambda s: s.seat)
            ),
            free_seats=self.options.seats - len(self.seats),
            playing=self.state is TablePhase.PLAYING,
        )

    def summary_text(self) -> str:
        """:meth:`summary` as JSON text, made again only when what it shows changed:
        making every table's at each ``list_tables`` holds the event loop for tens of
        ms at a thousand tables."""
        shown = (
            self.state,
            self.table_seed,  # what the commitment is made from, without hashing it
            *[(s.seat, s.name, s.is_bot, s.stack) for s in self.seats.values()],
        )
        if self._listed is None or self._listed[0] != shown:
            self._listed = (shown, encode(self.summary()))
        return self._listed[1]

    def seat_of(self, account_id: str) -> Seat | None:
        return next(
            (s for s in self.seats.values() if s.account_id == account_id and not s.is_bot), None
        )

    def _seat_for(self, account_id: str) -> Seat:
        """The seat of ``account_id``, refused ``not_seated`` if it has none."""
        seat = self.seat_of(account_id)
        if seat is None:
            raise Refused(ErrorCode.NOT_SEATED, f"you have no seat at table {self.table_id}")
        return seat

    def _humans(self) -> list[Seat]:
        return [s for s in self.seats.values() if not s.is_bot]

    def sees(self, viewer: Viewer) -> bool:
        return viewer in self.spectators or any(s.viewer is viewer for s in self.seats.values())

    def watches(self, viewer: Viewer) -> bool:
        """Whether ``viewer`` is a spectator here, or on its way to be one."""
        seated = any(s.viewer is viewer for s in self.seats.values())
        return not seated and (viewer in self.spectators or viewer in self.arriving)

    def snapshot(self, viewer: Viewer, ref: MessageId | None) -> wire.TableSnapshot:
        """The table as ``viewer`` may see it, as of the last event it was sent."""
        you = next((s.seat for s in self.seats.values() if s.viewer is viewer), None)
        seats = (
            wire.SeatView(
                seat=s.seat, name=s.name, is_bot=s.is_bot, connected=s.connected, stack=s.stack
            )
            for s in sorted(self.seats.values(), key=lambda s: s.seat)
        )
        hand, made = self.hand, self._wire
        table = wire.TableView(
            table_id=self.table_id,
            options=self.options,
            seed_commitment=self.seed_commitment,
            seats=seat_views(hand, made, seats, you, self._same_players()),
            you=you,
            hand=None
            if hand is None or made is None
            else hand_view(hand, made, self._deadline_ms, self._frames),
            legal=None if hand is None or you is None else legal_view(hand.legal_actions(you)),
        )
        return wire.TableSnapshot(ref=ref, seq=self.seq, table=table)

    def _same_players(self) -> frozenset[int]:
        """The seats held by the account dealt into the hand there."""
        return frozenset(n for n, s in self.seats.items() if self._dealt.get(n) == s.account_id)

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def _publish(self, published: Publication) -> None:
        """To everyone the table's events go to, each the copy for its seat: the seated
        first, then the spectators (a loop, not a list of them made at every event)."""
        deliveries = self._deliveries
        for s in self.seats.values():
            if s.viewer is not None:
                deliveries.append((s.viewer, published.frame_for(s.seat)))
        if self.spectators:
            public = published.public_frame
            for viewer in self.spectators:
                deliveries.append((viewer, public))

    def _deliver(self, viewer: Viewer, message: wire.Reply) -> None:
        self._deliveries.append((viewer, Frame.of(message)))

    def _greet(self, viewer: Viewer, account_id: str | None = None) -> None:
        """What a viewer gets first: how the last hands it was dealt into ended, then the
        table. A connection that saw an end drops it by its ``seq`` (the session does),
        so only one that missed it gets it."""
        spectator = account_id is None and self._clock() < self._adopted_until
        ends = {id(end): end for end in self._missed.pop(account_id or "", ())}
        seat = None if account_id is None else self.seat_of(account_id)
        if seat is not None:
            seat.missed_since = 0
        for _, accounts, end in self._ends:
            if account_id in accounts or spectator:
                ends[id(end)] = end
        for end in sorted(ends.values(), key=lambda end: end.seq or 0):
            self._deliveries.append((viewer, end))
        self._deliver(viewer, self.snapshot(viewer, None))

    def _ended(self, hand_id: int, accounts: Iterable[str], end: Frame) -> None:
        dealt = frozenset(accounts)
        self._ends.append((hand_id, dealt, end))
        for seat in self.seats.values():
            if seat.account_id in dealt and not seat.connected and not seat.is_bot:
                self._missed.setdefault(seat.account_id, []).append(end)
                seat.missed_since = seat.missed_since or hand_id

    def _tell_again(self, hands: Sequence[HandRecord]) -> None:
        """An adopted table's last ``hands`` (finished, oldest first): whoever comes back
        is told how the last one ended, and each one it missed while away, voided ones
        too (by an adopter before this one). Told to all, even before a voided one: the
        dead host may have written a hand's end and the next one's start and died
        before either reached anyone."""
        last = hands[-1].hand_id if hands else None
        for hand in hands:
            ended = decode_server(hand.events[-1]) if hand.events else None
            if not isinstance(ended, wire.HandEnded | wire.HandVoided):
                continue
            number = hand.hand_id
            away = {s.account_id for s in self.seats.values() if 0 < s.missed_since <= number}
            self._ended(
                number,
                [a for _, a in hand.accounts if number == last or a in away],
                Frame.of(ended),
            )
            if number == last:
                self._adopted_until = self._clock() + self.timings.grace

    def _verify_room(self, viewer: Viewer) -> None:
        """Refuse one more spectator to a table that has as many as it takes: each is
        sent every event, and a thousand of them slowed the table's play a hundredfold."""
        limit = self.spectator_limit
        if limit and viewer not in self.spectators and len(self.spectators) >= limit:
            raise Refused(
                ErrorCode.TOO_MANY_SPECTATORS,
                f"table {self.table_id} has {limit} spectator{'s' * (limit > 1)}, the most it"
                " takes",
            )

    def _announce_seat(self, seat: Seat, b: BuyIn, balances: dict[str, int]) -> None:
        self.spectators.pop(b.viewer, None)
        self._publish(
            Publication.of(
                wire.PlayerSeated(
                    table_id=self.table_id,
                    seq=self._next_seq(),
                    seat=b.seat,
                    name=b.name,
                    is_bot=False,
                    stack=b.chips,
                )
            )
        )
        if not self._still_here(b.viewer):
            # Its connection went while the seat was written: away, or it would stay
            # held by a connection that is gone, and never stand up.
            seat.connected = False
            self._arm(Timer("grace", b.account_id), self.timings.grace)
            self._disconnected(b.seat)
            return
        # Seen only now, so the snapshot below holds the seat and no event repeats it.
        seat.viewer = b.viewer
        joined = wire.TableJoined(
            ref=b.ref,
            table_id=self.table_id,
            seat=b.seat,
            buy_in=b.chips,
            balance=balances.get(b.account_id, 0),
        )
        self._deliver(b.viewer, joined)
        self._deliver(b.viewer, self.snapshot(b.viewer, None))

    def _missing(self, seat: Seat) -> None:
        """The seat's connection is gone: the ends of its last hands may have gone down
        with it unread (its process died, and the table heard of it only later), so
        they are told again when it is back, as the ones it misses from now on are."""
        missed = self._missed.setdefault(seat.account_id, [])
        for hand_id, accounts, end in self._ends:
            if seat.account_id in accounts and end not in missed:
                missed.append(end)
                seat.missed_since = min(seat.missed_since or hand_id, hand_id)

    def _arm(self, timer: Timer, seconds: float) -> None:
        self._timers.append(Arm(timer, seconds))

    def _disconnected(self, number: int) -> None:
        seat = self.seats.get(number)
        if self.state is TablePhase.CLOSED or seat is None or seat.connected:
            return  # back (a reconnection put off like this) or gone meanwhile
        self._publish(
            Publication.of(
                wire.PlayerDisconnected(
                    table_id=self.table_id,
                    seq=self._next_seq(),
                    seat=number,
                    grace_ms=int(self.timings.grace * 1000),
                )
            )
        )

    def _arrive(self, viewer: Viewer) -> None:
        self.arriving[viewer] = self.arriving.get(viewer, 0) + 1

    def _still_here(self, viewer: Viewer) -> bool:
        """Whether ``viewer``, greeted now, has not gone since it came (see
        :attr:`arriving`)."""
        count = self.arriving.pop(viewer, 0)
        if count > 1:
            self.arriving[viewer] = count - 1
        return count > 0

    def _watched(self, viewer: Viewer, ref: MessageId | None) -> None:
        if not self._still_here(viewer):
            return
        try:
            self._verify_room(viewer)  # again: others may have come while this waited
        except Refused as full:
            self._deliver(viewer, self._error(ref, full.code, full.message))
            return
        self.spectators[viewer] = None
        self._deliver(viewer, wire.TableWatched(ref=ref, table_id=self.table_id))
        self._greet(viewer)

    def _error(self, ref: MessageId | None, code: ErrorCode, message: str) -> wire.Error:
        return wire.Error(ref=ref, code=code, message=message)

    def _unanswered(self, viewer: Viewer, ref: MessageId | None) -> partial[None]:
        error = self._error(ref, ErrorCode.TABLE_MOVING, MOVED_UNANSWERED)
        return partial(self._deliver, viewer, error)

    def _closed_event(self, reason: str, table_seed: str | None) -> wire.TableClosed:
        return wire.TableClosed(
            table_id=self.table_id, seq=self._next_seq(), reason=reason, table_seed=table_seed
        )

    def _voided_event(self, hand_id: int, reason: str) -> wire.HandVoided:
        return wire.HandVoided(
            table_id=self.table_id, seq=self._next_seq(), hand_id=hand_id, reason=reason, refunds=()
        )
