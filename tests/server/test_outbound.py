"""Every frame a client gets is a message of the protocol, field for field.

The server writes a hand's events straight to JSON text (``qiuqiu.server.views``),
not through the protocol's models, so nothing but this checks that the text
still has the models' shape: real games over real WebSockets (a duel against
the dealer bot, a three-seat table with two betting rounds and cuts declared by
hand, a spectator, a seat coming back, the server stopping mid-hand), and each
frame any client received parsed by the protocol's own parser and written back
by its model to the same JSON.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from typing import Any

from qiuqiu.protocol import PROTOCOL_VERSION, decode_server, encode
from qiuqiu.protocol import server as wire
from qiuqiu.server.gateway import QiuQiuServer
from tests.server.conftest import Client

HANDS = 6
HAND_EVENTS = [
    cls.model_fields["type"].default
    for cls in vars(wire).values()
    if isinstance(cls, type) and issubclass(cls, wire.HandEvent) and cls is not wire.HandEvent
]
"""Every kind of hand event: the games below meet each (but a time-out and a bet
nobody matched, which they leave to chance)."""


class Player:
    """Plays a seat from what it is sent: a random legal action on each of its turns,
    a cut of its own four tiles when the table asks for one. At the three-seat table
    one bets often, one folds to every bet, so that every kind of event comes."""

    def __init__(
        self, client: Client, table_id: str, seed: int, aggression: int = 1, folds: bool = False
    ) -> None:
        self.client, self.table_id, self.rng = client, table_id, random.Random(seed)
        self.aggression, self.folds = aggression, folds
        """How many times a bet or raise counts among its choices; whether it folds
        whenever it may (facing a bet)."""
        self.tiles: list[str] = []
        self.seat: int | None = None

    async def play(self, hands: int) -> None:
        ended = 0
        while ended < hands:
            message = await self.client.wait(self._about_table)
            match message:
                case {"type": "table_snapshot", "table": {"you": seat}}:
                    self.seat = seat
                case {"type": "tiles_dealt", "tiles": tiles}:
                    self.tiles = list(tiles)
                case {"type": "fourth_tile_dealt", "tile": tile}:
                    self.tiles.append(tile)
                case {"type": "turn_started", "legal": legal}:
                    await self._act(message["hand_id"], legal)
                case {"type": "cutting_started", "seats": seats} if self.seat in seats:
                    a, b, c, d = self.tiles
                    await self.client.send(
                        "declare_cut",
                        table_id=self.table_id,
                        hand_id=message["hand_id"],
                        pairs=[[a, b], [c, d]],
                    )
                case {"type": "hand_ended"}:
                    ended += 1

    def _about_table(self, message: dict[str, Any]) -> bool:
        table_id = message.get("table_id", message.get("table", {}).get("table_id"))
        return bool(table_id == self.table_id)

    async def _act(self, hand_id: int, legal: dict[str, Any]) -> None:
        if legal.get("fold") and self.folds:
            await self.client.send("fold", table_id=self.table_id, hand_id=hand_id)
            return
        choices: list[tuple[str, dict[str, int]]] = []
        if legal.get("check"):
            choices.append(("check", {}))
        if legal.get("call") is not None:
            choices.append(("call", {}))
        if (bet := legal.get("bet")) is not None:
            choices += [("bet", {"amount": min(bet["max"], bet["min"] * 2)})] * self.aggression
        if (raise_to := legal.get("raise_to")) is not None:
            choices += [("raise", {"to": raise_to["min"]})] * self.aggression
        kind, fields = self.rng.choice(choices)
        await self.client.send(kind, table_id=self.table_id, hand_id=hand_id, **fields)


def drifted(frame: str) -> str | None:
    """What is wrong with ``frame`` as a server message, or ``None``."""
    message = decode_server(frame)
    if json.loads(frame) != json.loads(encode(message)):
        return f"{frame} is not what its model writes: {encode(message)}"
    return None


async def test_every_frame_of_real_games_is_a_protocol_message_field_for_field(
    server: QiuQiuServer, connect_client: Callable[[], Any]
) -> None:
    clients: list[Client] = [await connect_client() for _ in range(5)]
    duelist, ann, bo, cy, watcher = clients
    for client, name in zip(clients, ("Dee", "Ann", "Bo", "Cy", "Wes"), strict=True):
        await client.hello(name)

    # Small bets, so that no run of luck against the dealer bot ends the seat early.
    small = {"betting_rounds": 2, "max_bet": 20, "max_raises": 1}
    duel = await duelist.reply("create_table", options=small, buy_in=1000)
    options = {
        "seats": 3,
        "dealer_bot": False,
        "min_players": 3,
        "betting_rounds": 2,
        "manual_split": True,
        "max_raises": 2,
    }
    three = await ann.reply("create_table", options=options, buy_in=1000)
    table_id = three["table"]["table_id"]
    await watcher.reply("watch_table", table_id=table_id)
    for client in (bo, cy):
        await client.reply("join_table", table_id=table_id, buy_in=1000)
    players = [
        Player(duelist, duel["table"]["table_id"], 1),
        Player(ann, table_id, 2, aggression=3),
        Player(bo, table_id, 3),
        Player(cy, table_id, 4, folds=True),
    ]
    await asyncio.gather(*(p.play(HANDS) for p in players))

    # A seat coming back on a new connection gets the table again.
    back = await connect_client()
    token = next(f["token"] for f in bo.frames if f["type"] == "welcome")
    await back.reply("hello", version=PROTOCOL_VERSION, token=token)
    await back.expect("table_snapshot")
    clients.append(back)

    # The server stopping voids the hand in play, cashes every seat out and closes.
    await server.stop()
    await asyncio.gather(*(c.closed() for c in clients))

    frames = [frame for client in clients for frame in client.texts]
    assert [p for p in map(drifted, frames) if p is not None] == []
    types = {json.loads(frame)["type"] for frame in frames}
    assert set(HAND_EVENTS) - {"turn_timed_out", "bet_returned"} <= types
