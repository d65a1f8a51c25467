"""A seat's own requests: sitting down, a client seed, standing up.

The rules they keep are :mod:`.core`'s: a seat appears only once its buy-in is
written (rule 2), and a leave or a seed asked while that write is in flight waits
for it and is answered after it (rule 7).
"""

from __future__ import annotations

from qiuqiu.protocol import ErrorCode
from qiuqiu.protocol.common import MessageId
from qiuqiu.server.errors import Refused
from qiuqiu.server.table.audience import DESERTED, Disarm, TablePhase
from qiuqiu.server.table.hand import HandFlow
from qiuqiu.server.table.seats import (
    BuyIn,
    LeaveAsked,
    SeedAsked,
    SeedChange,
    Viewer,
    free_seat,
    verify_buy_in,
    verify_room,
)


class Seating(HandFlow):
    """The requests that change who sits at the table, and with what seed."""

    def sit(
        self,
        account_id: str,
        name: str,
        viewer: Viewer,
        chips: int,
        wanted: int | None = None,
        ref: MessageId | None = None,
        client_seed: str = "",
    ) -> None:
        self._verify_open()
        if self.seat_of(account_id) is not None or self.buying_in(account_id):
            raise Refused(ErrorCode.ALREADY_SEATED, f"you have a seat at table {self.table_id}")
        taken = {*self.seats, *(b.seat for b in self._buy_ins), self.bot_seat}
        number = free_seat(self.table_id, self.options, taken, wanted)
        verify_buy_in(self.options, chips)
        held = sum(s.stack for s in self.seats.values()) + sum(b.chips for b in self._buy_ins)
        verify_room(held, chips)
        self._verify_store()
        self._buy_ins.append(BuyIn(account_id, name, number, chips, viewer, ref, client_seed))
        self._arrive(viewer)
        self._timers.append(Disarm(DESERTED))

    def set_seed(
        self, account_id: str, viewer: Viewer, client_seed: str, ref: MessageId | None = None
    ) -> None:
        """Put ``client_seed`` into the shuffles of the seat's hands from the first one
        whose start is written after it: confirmed with ``seed_set`` once it is written.
        Asked while the seat's buy-in is being written, it waits for it (rule 7)."""
        if self.seat_of(account_id) is None and self.buying_in(account_id):
            self._asked.setdefault(account_id, []).append(SeedAsked(viewer, ref, client_seed))
            return
        self._seat_for(account_id)
        self._verify_open()
        self._verify_store()
        self._seed_changes.append(SeedChange(account_id, client_seed, viewer, ref))

    def leave(
        self,
        account_id: str,
        viewer: Viewer,
        ref: MessageId | None = None,
        after_hand: bool = False,
    ) -> None:
        """Stand up; a seat in the hand stands up when the hand ends, played meanwhile
        (check if it can, else fold), or by its player (``after_hand``). Asked while the
        seat's buy-in is being written, it waits for it (rule 7). Stopping to watch is
        :meth:`unwatch`."""
        if self.seat_of(account_id) is None and self.buying_in(account_id):
            asked = self._asked.setdefault(account_id, [])
            if any(isinstance(request, LeaveAsked) for request in asked):
                raise Refused(
                    ErrorCode.ALREADY_LEAVING,
                    "you are leaving already: table_left comes once your seat is written",
                )
            asked.append(LeaveAsked(viewer, ref, after_hand))
            return
        seat = self._seat_for(account_id)
        self._verify_open()
        self._verify_sure()
        if not self._in_hand(seat.seat):
            self._verify_store()
        hurried = seat.plays_out and not after_hand  # played out, then asked to go now
        if seat.leaving and not seat.grace_ran_out and seat.leave_asker is viewer and not hurried:
            # One answer a request: the first one's comes when the hand ends, or out of
            # one once the cash-out is written (held while the store refuses it).
            when = "the hand ends" if self._in_hand(seat.seat) else "your chips are written back"
            raise Refused(
                ErrorCode.ALREADY_LEAVING, f"you are leaving already: table_left comes when {when}"
            )
        seat.leaving, seat.leave_ref, seat.viewer, seat.grace_ran_out = True, ref, viewer, False
        seat.leave_asker = viewer
        seat.plays_out = after_hand and self._in_hand(seat.seat)
        if self.state is TablePhase.PLAYING and self._in_hand(seat.seat) and not seat.plays_out:
            self._after(())

    def buying_in(self, account_id: str) -> bool:
        """Whether a buy-in of ``account_id`` waits to be written here."""
        return any(b.account_id == account_id for b in self._buy_ins)
