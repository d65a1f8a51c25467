"""Who sits at a table and who sees it: seats, viewers, and what a buy-in must be."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from qiuqiu.protocol import TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId
from qiuqiu.server.errors import Refused
from qiuqiu.server.store import SeatRecord


class Viewer(Protocol):
    """Whoever gets a table's messages: a client connection or the dealer bot."""

    def deliver(self, message: wire.Reply) -> None:
        """Queue ``message``; never blocks, never raises."""


@dataclass(slots=True)
class Seat:
    seat: int
    account_id: str
    name: str
    stack: int
    is_bot: bool = False
    viewer: Viewer | None = None
    connected: bool = True
    leaving: bool = False
    leave_ref: MessageId | None = None
    grace: asyncio.TimerHandle | None = None
    grace_ran_out: bool = False
    """Leaving because its grace period ran out mid-hand, not by choice: coming back undoes it."""

    @property
    def ready(self) -> bool:
        return self.stack > 0 and not self.leaving

    def record(self) -> SeatRecord:
        return SeatRecord(self.seat, self.account_id, self.name, self.stack, self.is_bot)


def verify_buy_in(options: TableOptions, buy_in: int) -> None:
    if not options.min_buy_in <= buy_in <= options.max_buy_in:
        raise Refused(
            "invalid_buy_in", f"buy in with {options.min_buy_in} to {options.max_buy_in} chips"
        )
