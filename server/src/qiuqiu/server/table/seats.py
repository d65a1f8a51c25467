"""Who sits at a table and who sees it: seats, viewers, and what a buy-in must be."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol

from qiuqiu.protocol import MAX_CHIPS, ErrorCode, TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId
from qiuqiu.server.errors import Refused
from qiuqiu.server.frames import Frame
from qiuqiu.server.store import SeatRecord


class Viewer(Protocol):
    """Whoever gets a table's messages: a client connection, one on another process
    (through the relay), or the dealer bot. Compared by identity."""

    def deliver(self, message: wire.Reply) -> None:
        """Queue ``message``; never blocks, never raises."""


class FrameViewer(Viewer, Protocol):
    """A viewer the table's runner hands frames to: a connection sends their text on,
    the dealer bot reads the models of those it learns from."""

    def deliver_frame(self, frame: Frame) -> None:
        """Queue ``frame``, written once for every connection of its audience."""


@dataclass(slots=True)
class Seat:
    seat: int
    account_id: str
    name: str
    stack: int
    """Chips in front of the seat between hands; in a hand, as it was before it."""
    is_bot: bool = False
    viewer: Viewer | None = None
    claim: int = 0
    """The number of the claim on its account of the connection it was last seated
    again from: one with an older claim does not take it back."""
    connected: bool = True
    leaving: bool = False
    """Stands up (is cashed out) as soon as it is not in a hand."""
    plays_out: bool = False
    """Leaving, but plays its own turns until the hand ends (``after_hand``)."""
    leave_ref: MessageId | None = None
    leave_asker: Viewer | None = None
    """The connection whose request ``table_left`` answers: a newer one of the same
    player may ask again, since the old one's answer goes nowhere."""
    grace_ran_out: bool = False
    """Leaving because its grace period ran out, not by choice: coming back undoes it."""
    client_seed: str = ""
    """What the seat puts into the next hand's shuffle."""
    missed_since: int = 0
    """The first hand whose end its player, away, has not been told (0: none)."""

    @property
    def ready(self) -> bool:
        return self.stack > 0 and not self.leaving

    def record(self, stack: int | None = None, client_seed: str | None = None) -> SeatRecord:
        """The seat as a write leaves it in the store: with ``stack`` and ``client_seed``
        where given, else its own (made directly: ``dataclasses.replace`` of a made record
        costs three times as much, for each seat at every write)."""
        return SeatRecord(
            self.seat,
            self.account_id,
            self.name,
            self.stack if stack is None else stack,
            self.is_bot,
            self.client_seed if client_seed is None else client_seed,
            self.missed_since,
        )


@dataclass(frozen=True, slots=True)
class BuyIn:
    """A seat asked for, waiting for its chips to be written."""

    account_id: str
    name: str
    seat: int
    chips: int
    viewer: Viewer
    ref: MessageId | None
    client_seed: str = ""


@dataclass(frozen=True, slots=True)
class LeaveAsked:
    """A ``leave_table`` sent while the seat's buy-in was being written: answered once
    the buy-in is, after it, as the client sent them."""

    viewer: Viewer
    ref: MessageId | None
    after_hand: bool


@dataclass(frozen=True, slots=True)
class SeedAsked:
    """A ``set_seed`` sent while the seat's buy-in was being written: made once the
    buy-in is, after it, as the client sent them."""

    viewer: Viewer
    ref: MessageId | None
    client_seed: str


@dataclass(frozen=True, slots=True)
class SnapshotAsked:
    """A ``request_snapshot`` sent while the seat's buy-in was being written: answered
    once the buy-in is, after it."""

    viewer: Viewer
    ref: MessageId | None


Asked = LeaveAsked | SeedAsked | SnapshotAsked
"""A request that waits for its account's buy-in to be answered (rule 7 in :mod:`.core`)."""


def unseated(asked: Asked, table_id: str) -> tuple[ErrorCode, str]:
    """How ``asked`` is refused to an account with no seat at the table: a seed as by
    one who only watches, the rest as by one who is not at it at all."""
    if isinstance(asked, SeedAsked):
        return ErrorCode.NOT_SEATED, f"you have no seat at table {table_id}"
    return ErrorCode.NOT_AT_TABLE, f"you are not at table {table_id}"


@dataclass(frozen=True, slots=True)
class SeedChange:
    """A ``set_seed`` waiting to be written: confirmed once it is, as a hand's deal
    that would not have it after a restart must not follow its ``seed_set``."""

    account_id: str
    client_seed: str
    viewer: Viewer
    ref: MessageId | None


def verify_buy_in(options: TableOptions, buy_in: int) -> None:
    if not options.min_buy_in <= buy_in <= options.max_buy_in:
        raise Refused(
            ErrorCode.INVALID_BUY_IN,
            f"buy in with {options.min_buy_in:,} to {options.max_buy_in:,} chips, not {buy_in:,}",
        )


def verify_room(held: int, buy_in: int) -> None:
    """A pot may come to every chip at the table, so they must all fit in one amount:
    a winner can hold more than ``max_buy_in``, and a buy-in comes on top."""
    if held + buy_in > MAX_CHIPS:
        raise Refused(
            ErrorCode.INVALID_BUY_IN,
            f"the table holds {held:,} chips, and every chip at it must fit in one amount"
            f" (at most {MAX_CHIPS:,}): buy in with at most {MAX_CHIPS - held:,}",
        )


def free_seat(
    table_id: str, options: TableOptions, taken: Collection[int | None], wanted: int | None
) -> int:
    """The seat a buy-in gets at a table where ``taken`` are not free: ``wanted``, or the
    first free one."""
    free = [n for n in range(options.seats) if n not in taken]
    if wanted is None:
        if not free:
            raise Refused(ErrorCode.TABLE_FULL, f"table {table_id} has no free seat")
        return free[0]
    if not 0 <= wanted < options.seats:
        raise Refused(ErrorCode.NO_SUCH_SEAT, f"the seats are 0 to {options.seats - 1}")
    if wanted not in free:
        raise Refused(ErrorCode.SEAT_TAKEN, f"seat {wanted} is not free (free: {free})")
    return wanted
