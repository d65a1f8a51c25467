"""What the bad-input tests share: the audit of "nothing changed", the assertions
on the ``error`` a refusal gets, and the tables they set up (PROTOCOL.md).

The audit compares balances, sessions, seats, each table's ``seq``, the hand in
play and the chip total before and after a refusal. A test takes it at a moment
when nothing else can move (the table waits for a person to act, or no hand can
start), so the comparison is exact.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from websockets.asyncio.client import ClientConnection

from qiuqiu.server.gateway import QiuQiuServer
from tests.server.conftest import WAIT, Client, chip_total

Message = dict[str, Any]
Connect = Callable[[], Awaitable[Client]]
MakeMessage = Callable[[str, int], Message]
"""A message for the table and hand in play, made once a test knows them."""

BUY_IN = 500
THREE_SEATS = {"seats": 3, "dealer_bot": False}
NOWHERE = "tnosuchtable"

# String ids never collide with the integer ids that ``Client.send`` counts up,
# so a test cannot trip over duplicate_id by accident.
_ids = itertools.count(1)


def fresh_id() -> str:
    return f"bad-{next(_ids)}"


# -- the audit: what "nothing changed" means -----------------------------------------------


async def world(server: QiuQiuServer) -> Message:
    """Everything a refused message must leave alone."""
    tables: Message = {}
    for table in server.lobby.tables.values():
        hand = table.hand
        tables[table.table_id] = {
            "seq": table.seq,
            "hand_id": table.hand_id,
            "seats": sorted(
                (n, s.account_id, s.stack, s.connected, s.leaving) for n, s in table.seats.items()
            ),
            "hand": None
            if hand is None
            else (
                len(hand.log),
                hand.pot,
                hand.actor,
                sorted((n, s.stack, s.round_bet, s.folded) for n, s in hand.seats.items()),
            ),
        }
    return {
        "balances": await server.store.balances(),
        "sessions": sorted(server.lobby.accounts.sessions),
        "tables": tables,
        "chips": await chip_total(server),
    }


async def assert_nothing_changed(server: QiuQiuServer, client: Client, before: Message) -> None:
    """The connection still answers, and the server is as it was."""
    listing = await client.reply("list_tables")
    assert listing["type"] == "table_list", listing
    assert await world(server) == before
    assert await chip_total(server) == 0


async def assert_anonymous_and_unchanged(
    server: QiuQiuServer, client: Client, before: Message
) -> None:
    """For a connection refused before it is identified: still open, and a proper
    hello is welcomed afterwards (checked after the audit, as it opens an account)."""
    assert await world(server) == before
    welcome = await client.hello("Late")
    assert welcome["type"] == "welcome", welcome


# -- refusals ------------------------------------------------------------------------------


async def refused(client: Client, message: Message, code: str) -> Message:
    """Send ``message`` (under a fresh id unless it has one); the ``error`` it gets,
    which must name that id."""
    ref = message.get("id", fresh_id())
    await client.send_raw(json.dumps({**message, "id": ref}))
    # Anything naming the id counts, so an accepted message fails here instead of timing out.
    answer = await client.wait(lambda m: m["type"] == "error" or m.get("ref") == ref)
    assert answer["type"] == "error", answer
    assert answer["code"] == code, answer
    assert answer.get("ref") == ref, answer
    assert isinstance(answer["message"], str)
    assert answer["message"], answer
    return answer


async def refused_frame(client: Client, frame: str | bytes, code: str) -> Message:
    """Send a frame no id can be read from; the ``error`` it gets, naming nothing."""
    await client.send_raw(frame)
    answer = await client.wait(lambda m: m["type"] == "error")
    assert answer["code"] == code, answer
    assert "ref" not in answer, answer
    assert answer["message"], answer
    return answer


# -- getting to a table --------------------------------------------------------------------


async def identified(connect: Connect, name: str = "Ann") -> Client:
    client = await connect()
    welcome = await client.hello(name)
    assert welcome["type"] == "welcome", welcome
    return client


async def play_out(client: Client, turn: Message) -> Message:
    """Play the hand of ``turn`` to its ``hand_ended``, checking when it can and folding
    otherwise: it never loses more than the ante, so the player is never busted."""
    table_id, hand_id = turn["table_id"], turn["hand_id"]
    while True:
        action = "check" if turn["legal"]["check"] else "fold"
        await client.send(action, table_id=table_id, hand_id=hand_id)
        turn = await client.wait(
            lambda m: (
                m["type"] == "error"
                or (
                    m.get("table_id") == table_id
                    and m.get("hand_id") == hand_id
                    and (
                        m["type"] == "hand_ended" or (m["type"] == "turn_started" and "legal" in m)
                    )
                )
            )
        )
        assert turn["type"] != "error", turn
        if turn["type"] == "hand_ended":
            return turn


async def two_playing_one_waiting(
    connect: Connect, **options: Any
) -> tuple[dict[int, Client], Message]:
    """Three players at a table without the bot: seats 0 and 1 in hand 1, seat 2 sat
    down after the deal. Returns the clients by seat and hand 1's first turn as seat 0
    sees it; the table waits for that turn."""
    ann, bob, cy = [await identified(connect, name) for name in ("Ann", "Bob", "Cy")]
    created = await ann.reply("create_table", options={**THREE_SEATS, **options}, buy_in=BUY_IN)
    table_id = created["table"]["table_id"]
    joined = await bob.reply("join_table", table_id=table_id, buy_in=BUY_IN)
    assert joined["type"] == "table_joined", joined
    # The hand starts as soon as two are seated; Cy sits down only once it has.
    turn = await ann.expect("turn_started", table_id=table_id)
    assert turn["hand_id"] == 1
    late = await cy.reply("join_table", table_id=table_id, buy_in=BUY_IN)
    assert late["type"] == "table_joined", late
    return {0: ann, 1: bob, late["seat"]: cy}, turn


async def three_handed(connect: Connect, **options: Any) -> tuple[dict[int, Client], Message]:
    """Three players at a table without the bot, where ``min_players`` holds the first
    deal until all three sit. Returns the clients by seat and hand 1's first turn as
    seat 0 sees it; the table waits for that turn."""
    players = [await identified(connect, name) for name in ("Ann", "Bob", "Cy")]
    options = {**THREE_SEATS, "min_players": 3, **options}
    created = await players[0].reply("create_table", options=options, buy_in=BUY_IN)
    table_id = created["table"]["table_id"]
    for player in players[1:]:
        joined = await player.reply("join_table", table_id=table_id, buy_in=BUY_IN)
        assert joined["type"] == "table_joined", joined
    turn = await players[0].expect("turn_started", table_id=table_id)
    return dict(enumerate(players)), turn


# -- bare connections, for tests in which the server may close them ------------------------


async def raw_send(connection: ClientConnection, message: Message) -> None:
    await connection.send(json.dumps(message))


async def raw_until(connection: ClientConnection, found: Callable[[Message], bool]) -> Message:
    """Read from a bare connection (one the server may close) until ``found``."""
    async with asyncio.timeout(WAIT):
        while True:
            message: Message = json.loads(await connection.recv())
            if found(message):
                return message
