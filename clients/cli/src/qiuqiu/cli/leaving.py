"""A player's request to stand up from its table, as the terminal client keeps it.

The request is sent once, and sent again where the server did not take it: when the
table's new host sends its snapshot (the request may have gone with a server that
died), and a moment after a ``store_unavailable`` (nothing changed; the table's host
is making sure of its lease, or waits for Redis). The ``table_left`` that answers it
names its id.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from qiuqiu.cli.connection import MOVING_RETRIES
from qiuqiu.cli.game import TableState
from qiuqiu.protocol import ErrorCode

RETRIED = frozenset({ErrorCode.TABLE_MOVING, ErrorCode.OUTCOME_UNKNOWN})
"""Refusals of a request to leave that it is asked again for, with the snapshot its
table's new host sends."""


class Leaving(Enum):
    """Where asking to stand up leaves the game."""

    DONE = "done"
    """Nothing to wait for: no seat, or the request could not be sent."""
    AT_ONCE = "at once"
    """Out of the hand, or with its turns checked or folded: input is ignored until then."""
    AFTER_HAND = "after the hand"
    """The player plays the hand out, and stands up as it ends."""


@dataclass
class LeaveRequest:
    id: int | None = None
    """The last request's message id; ``None`` before one is made."""
    plays_out: bool = False
    """It lets the seat play its hand out (``after_hand``)."""
    asked_in: int = 0
    """The hand in play, or last played, when it was asked: a later one dealt to the
    seat means the request was lost (its table moved to another server)."""
    due: float | None = None
    """When to send it again, after a ``store_unavailable``."""
    waits: int = 0
    """The waits after a ``store_unavailable`` since the player asked."""

    def asked(self, message_id: int, state: TableState, *, plays_out: bool) -> None:
        self.id, self.plays_out = message_id, plays_out
        self.asked_in = 0 if state.hand is None else state.hand.hand_id

    def wait(self, now: float) -> bool:
        """Send it again a moment after a ``store_unavailable``; ``False`` once the
        server has refused it so for some 15 s."""
        if self.waits >= len(MOVING_RETRIES):
            return False
        self.due = now + MOVING_RETRIES[self.waits]
        self.waits += 1
        return True

    def is_due(self, now: float) -> bool:
        """Whether its wait is over (once: the wait is then spent)."""
        if self.due is None or now < self.due:
            return False
        self.due = None
        return self.id is not None


def in_hand(state: TableState) -> bool:
    """Whether the seat is dealt into the hand in play and has not folded: the hand
    is still its own to play out."""
    me, hand = state.me, state.hand
    return (
        me is not None
        and hand is not None
        and hand.phase != "ended"
        and me.in_hand
        and not me.folded
    )
