"""The dealer bot: a seat the server plays, through the same view a client gets.

It is a :class:`~qiuqiu.server.table.Viewer` like any connection, and plays as
a client bot does: it keeps the hand's record (its own tiles from its own copies
of ``tiles_dealt`` and ``fourth_tile_dealt``, every seat's stack and ante, each
check, bet, call, raise and fold) in a :class:`~qiuqiu.server.house.record.SeenHand`,
answers a ``turn_started`` that names it from that record and what the message
carries (the pot, its ``legal`` actions), and sends an ordinary action message.
It cannot see another seat's tiles because nothing it is given holds them. What
it plays is :func:`qiuqiu.server.house.policy.decide`, sampled with the
operating system's CSPRNG.

It does not ask the table for a snapshot on each turn: building one costs a
tenth of what the bot's turn costs the server.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any, cast

from qiuqiu import engine
from qiuqiu.engine import Hand, Tile, rank
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.errors import Refused
from qiuqiu.server.frames import Frame
from qiuqiu.server.house.policy import decide
from qiuqiu.server.house.record import HAND_EVENTS, OBSERVED, SeenHand
from qiuqiu.server.store import HOUSE
from qiuqiu.server.strategy import Decision
from qiuqiu.server.table import Table

log = logging.getLogger(__name__)

_READ = OBSERVED | {wire.TurnStarted, wire.CuttingStarted}
_OWN_COPIES = frozenset({wire.TurnStarted, wire.TilesDealt, wire.FourthTileDealt})
"""What the bot learns from in its own copy alone: another seat's turn, or its tiles
dealt face down, tell the bot's record nothing, and are a quarter of a hand's messages."""

TURN_SHARE = 0.25
"""The most of a turn the bot waits before acting, whatever ``--bot-delay`` says: at a
table whose turns are shorter than that delay the timer would play every turn of the
bot's, folding it to any bet. The rest of the turn is room for a busy event loop."""


class DealerBot:
    def __init__(self, table: Table, seat: int) -> None:
        self.table = table
        self.seat = seat
        self._record = SeenHand(seat)
        self._rng = table.rng
        """The server's (a ``SystemRandom``, :mod:`qiuqiu.server.csprng`, when serving), so
        a test that seeds the server's deals gets the same bot."""
        self._turn: wire.TurnStarted | None = None
        """The bot's turn, until an event says it is over (an action, a time-out)."""
        self._delay = min(table.timings.bot_delay, table.options.turn_seconds * TURN_SHARE)

    def deliver_frame(self, frame: Frame) -> None:
        """Read the messages the bot learns from; of the rest, that a hand's event came
        (a hand's end, another seat's tiles or turn, the pots) ends its turn and nothing
        more."""
        kind = frame.kind
        if kind in _READ and (kind not in _OWN_COPIES or frame.own_seat == self.seat):
            self.deliver(frame.message)
        elif kind in HAND_EVENTS:
            self._turn = None

    def deliver(self, message: wire.Reply) -> None:
        self._record.observe(message)
        # By class, not by a match: each case would be an isinstance check through
        # ABCMeta, for every message of every hand.
        kind = type(message)
        if kind is wire.TurnStarted:
            turn = cast(wire.TurnStarted, message)
            if turn.seat == self.seat and turn.legal:
                self._turn = turn
                self.table.later(self._delay, partial(self._bet, turn))
                return
        elif kind is wire.CuttingStarted:
            cutting = cast(wire.CuttingStarted, message)
            if self.seat in cutting.seats:
                self.table.later(self._delay, partial(self._cut, cutting.hand_id))
                return
        if kind in HAND_EVENTS:
            self._turn = None

    def _mine(self, hand_id: int) -> tuple[Tile, ...]:
        """The bot's tiles in ``hand_id``; from a snapshot if it missed their deal
        (it was seated, or its table adopted, mid-hand)."""
        record = self._record
        if hand_id == record.hand_id and len(record.tiles) >= 3:
            return tuple(record.tiles)
        mine = next(s for s in self.table.snapshot(self).table.seats if s.seat == self.seat)
        return tuple(Tile.parse(t) for t in mine.tiles or ())

    def _bet(self, turn: wire.TurnStarted) -> None:
        if self._turn is not turn:
            return  # the timer played the turn while the bot was thinking
        try:
            tiles = self._mine(turn.hand_id)
        except Refused:
            return  # the table closed while the bot was thinking
        situation = self._record.situation(turn, self.table.options, tiles)
        decision = decide(situation, self._rng)
        self._act(_message(turn.table_id, turn.hand_id, decision))

    def _cut(self, hand_id: int) -> None:
        try:
            tiles = self._mine(hand_id)
        except Refused:
            return
        self._act(_best_cut(self.table.table_id, hand_id, tiles))

    def _act(self, action: cmd.TableAction) -> None:
        try:
            self.table.act(HOUSE, action)
        except Refused as refused:
            # The turn timer can get there first; the bot is then simply too late. Its
            # action's type alone: a cut names the bot's tiles, which no log should hold.
            log.debug(
                "table %s: the dealer bot's %s was refused: %s",
                action.table_id,
                action.type,
                refused,
            )


def _message(table_id: str, hand_id: int, decision: Decision) -> cmd.TableAction:
    ids: dict[str, Any] = {"table_id": table_id, "hand_id": hand_id}
    amount = decision.amount or 0
    match decision.action:
        case "check":
            return cmd.Check(**ids)
        case "call":
            return cmd.Call(**ids)
        case "fold":
            return cmd.Fold(**ids)
        case "bet":
            return cmd.Bet(**ids, amount=amount)
        case "raise":
            return cmd.Raise(**ids, to=amount)


def _best_cut(table_id: str, hand_id: int, tiles: tuple[engine.Tile, ...]) -> cmd.DeclareCut:
    cut = rank(Hand(tiles)).cut
    (a, b), (c, d) = cut.high_pair, cut.low_pair
    return cmd.DeclareCut(
        table_id=table_id, hand_id=hand_id, pairs=((str(a), str(b)), (str(c), str(d)))
    )
