"""The dealer bot: a seat the server plays, through the same view a client gets.

It is a :class:`~qiuqiu.server.table.Viewer` like any connection: it receives
the wire messages made for its seat, and when a ``turn_started`` names it, it
asks the table for the same ``table_snapshot`` a client would get and sends an
ordinary action message. It cannot see another seat's tiles because nothing it
is given holds them. What it plays is :mod:`qiuqiu.server.strategy`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from qiuqiu import engine
from qiuqiu.engine import Hand, parse_tiles, rank
from qiuqiu.protocol import ChipRange, LegalActions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.errors import Refused
from qiuqiu.server.store import HOUSE
from qiuqiu.server.strategy import Decision, decide, win_chance
from qiuqiu.server.table import Table

log = logging.getLogger(__name__)


class DealerBot:
    def __init__(self, table: Table, seat: int) -> None:
        self.table = table
        self.seat = seat

    def deliver(self, message: wire.Reply) -> None:
        my_turn = isinstance(message, wire.TurnStarted) and message.seat == self.seat
        my_cut = isinstance(message, wire.CuttingStarted) and self.seat in message.seats
        if my_turn or my_cut:
            assert isinstance(message, wire.HandEvent)
            self.table.spawn(self._play(message.hand_id))

    async def _play(self, hand_id: int) -> None:
        await asyncio.sleep(self.table.timings.bot_delay)
        try:
            view = self.table.snapshot(self).table
        except Refused:
            return  # the table closed while the bot was thinking
        if view.hand is None or view.hand.hand_id != hand_id or view.legal is None:
            return
        mine = next(s for s in view.seats if s.seat == self.seat)
        tiles = parse_tiles(" ".join(mine.tiles or ()))
        action: cmd.TableAction
        if view.legal.declare_cut:
            action = _best_cut(view.table_id, hand_id, tiles)
        else:
            opponents = sum(
                1 for s in view.seats if s.in_hand and not s.folded and s.seat != self.seat
            )
            chance = win_chance(tiles, max(opponents, 1), view.options.tie_rule)
            legal = view.legal
            decision = decide(
                chance, pot=view.hand.pot, to_call=legal.call or 0, legal=_engine_legal(legal)
            )
            action = _message(view.table_id, hand_id, decision)
        try:
            await self.table.act(HOUSE, action)
        except Refused as refused:
            # The turn timer can get there first; the bot is then simply too late.
            log.debug(
                "table %s: the dealer bot's %s was refused: %s", view.table_id, action, refused
            )


def _engine_legal(legal: LegalActions) -> engine.LegalActions:
    def chips(r: ChipRange | None) -> engine.ChipRange | None:
        return None if r is None else engine.ChipRange(r.min, r.max)

    return engine.LegalActions(
        check=legal.check,
        fold=legal.fold,
        call=legal.call,
        bet=chips(legal.bet),
        raise_to=chips(legal.raise_to),
        declare_cut=legal.declare_cut,
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
