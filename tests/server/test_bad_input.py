"""Bad input over real WebSocket connections (DESIGN §3).

Anything the server cannot read, or a rule broken, gets an ``error`` with a
stable ``code`` that names the message's ``id`` in ``ref``; the connection stays
and nothing changes. Every test compares balances, seats, each table's ``seq``,
the hand in play and the chip total before and after the refusal, at a moment
when nothing else can move (the table waits for a person to act, or no hand can
start), so the comparison is exact.

A frame over the size limit or a flood past the rate limit closes that one
connection with a proper close code, and the other tables play on.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode

from qiuqiu.protocol import MAX_CHIPS, PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.store import HOUSE, MemoryStore
from tests.server.conftest import FAST, WAIT, Client, at_bot_table, chip_total, my_turn

Message = dict[str, Any]
Connect = Callable[[], Awaitable[Client]]
MakeMessage = Callable[[str, int], Message]
"""A message for the table and hand in play, made once a test knows them."""

BUY_IN = 500
STARTING_BALANCE = FAST.starting_balance
THREE_SEATS = {"seats": 3, "dealer_bot": False}
NOWHERE = "tnosuchtable"

# String ids never collide with the integer ids that ``Client.send`` counts up,
# so a test cannot trip over duplicate_id by accident.
_ids = itertools.count(1)


def fresh_id() -> str:
    return f"bad-{next(_ids)}"


# -- the audit: what "nothing changed" means -----------------------------------------------


def world(server: QiuQiuServer) -> Message:
    """Everything a refused message must leave alone."""
    store = server.store
    assert isinstance(store, MemoryStore)
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
        "balances": store.balances(),
        "sessions": sorted(server.lobby.sessions),
        "tables": tables,
        "chips": chip_total(server),
    }


async def assert_nothing_changed(server: QiuQiuServer, client: Client, before: Message) -> None:
    """The connection still answers, and the server is as it was."""
    listing = await client.reply("list_tables")
    assert listing["type"] == "table_list", listing
    assert world(server) == before
    assert chip_total(server) == 0


async def assert_anonymous_and_unchanged(
    server: QiuQiuServer, client: Client, before: Message
) -> None:
    """For a connection refused before it is identified: still open, and a proper
    hello is welcomed afterwards (checked after the audit, as it opens an account)."""
    assert world(server) == before
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


async def drain(connection: ClientConnection) -> None:
    while True:
        await connection.recv()


async def close_code(connection: ClientConnection) -> int:
    """Read until the server closes ``connection``; the close code it sent."""
    async with asyncio.timeout(WAIT):
        with pytest.raises(ConnectionClosed) as closed:
            await drain(connection)
    assert closed.value.rcvd is not None, "the server sent no close frame"
    assert connection.close_code == closed.value.rcvd.code
    return closed.value.rcvd.code


async def seated_victim(server: QiuQiuServer) -> ClientConnection:
    """A bare connection, seated at a table of its own, for a test in which the server
    closes it: the test reads the close itself."""
    victim = await connect(server.url)
    await raw_send(victim, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Vic"})
    await raw_until(victim, lambda m: m["type"] == "welcome")
    await raw_send(victim, {"type": "create_table", "buy_in": BUY_IN})
    await raw_until(victim, lambda m: m["type"] == "turn_started" and "legal" in m)
    return victim


# -- frames the server cannot read ---------------------------------------------------------


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param("", id="an empty frame"),
        pytest.param('{"type": "list_tables"', id="an unclosed object"),
        pytest.param("{'type': 'list_tables'}", id="single quotes"),
        pytest.param('{"type": "list_tables",}', id="a trailing comma"),
        pytest.param('{"type": "list_tables"} {}', id="two objects"),
        pytest.param("[" * 1000 + "]" * 1000, id="nesting too deep"),
    ],
)
async def test_malformed_json_gets_bad_json_and_nothing_changes(
    server: QiuQiuServer, connect_client: Connect, frame: str
) -> None:
    client, _ = await at_bot_table(connect_client)
    before = world(server)
    await refused_frame(client, frame, "bad_json")
    await assert_nothing_changed(server, client, before)


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param('[{"type": "list_tables", "id": "x"}]', id="an array"),
        pytest.param('"list_tables"', id="a string"),
        pytest.param("42", id="a number"),
        pytest.param("null", id="null"),
        pytest.param("true", id="true"),
    ],
)
async def test_json_that_is_not_an_object_gets_invalid_message(
    server: QiuQiuServer, connect_client: Connect, frame: str
) -> None:
    client, _ = await at_bot_table(connect_client)
    before = world(server)
    error = await refused_frame(client, frame, "invalid_message")
    assert "object" in error["message"]
    await assert_nothing_changed(server, client, before)


@pytest.mark.parametrize("type_", ["shuffle", "BET", "", "welcome", 5, None])
async def test_an_unknown_type_gets_unknown_type_naming_the_message(
    server: QiuQiuServer, connect_client: Connect, type_: object
) -> None:
    client, _ = await at_bot_table(connect_client)
    before = world(server)
    await refused(client, {"type": type_}, "unknown_type")
    await assert_nothing_changed(server, client, before)


async def test_a_message_without_a_type_gets_invalid_message_naming_the_message(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, _ = await at_bot_table(connect_client)
    before = world(server)
    error = await refused(client, {"table_id": "t1"}, "invalid_message")
    assert "type" in error["message"]
    await assert_nothing_changed(server, client, before)


WRONG_FIELDS = [
    pytest.param(
        lambda t, h: {"type": "bet", "table_id": t, "hand_id": h, "amount": "20"},
        "amount",
        id="an amount as a string",
    ),
    pytest.param(
        lambda t, h: {"type": "bet", "table_id": t, "hand_id": h, "amount": 20.0},
        "amount",
        id="an amount as a float",
    ),
    pytest.param(
        lambda t, h: {"type": "bet", "table_id": t, "hand_id": h, "amount": True},
        "amount",
        id="an amount as a bool",
    ),
    pytest.param(
        lambda t, h: {"type": "bet", "table_id": t, "hand_id": h},
        "amount",
        id="a bet without an amount",
    ),
    pytest.param(lambda t, h: {"type": "bet"}, "table_id", id="a bet with no fields"),
    pytest.param(
        lambda t, h: {"type": "check", "table_id": t},
        "hand_id",
        id="a check without a hand_id",
    ),
    pytest.param(
        lambda t, h: {"type": "check", "table_id": t, "hand_id": str(h)},
        "hand_id",
        id="a hand_id as a string",
    ),
    pytest.param(
        lambda t, h: {"type": "check", "table_id": t, "hand_id": 0},
        "hand_id",
        id="hand_id 0",
    ),
    pytest.param(
        lambda t, h: {"type": "check", "table_id": 42, "hand_id": h},
        "table_id",
        id="a table_id as a number",
    ),
    pytest.param(
        lambda t, h: {"type": "check", "table_id": "../" + t, "hand_id": h},
        "table_id",
        id="a table_id with a path in it",
    ),
    pytest.param(
        lambda t, h: {"type": "check", "table_id": t, "hand_id": h, "amount": 20},
        "amount",
        id="a field the message does not have",
    ),
    pytest.param(
        lambda t, h: {"type": "join_table", "table_id": t},
        "buy_in",
        id="a join without a buy_in",
    ),
    pytest.param(
        lambda t, h: {"type": "join_table", "table_id": t, "buy_in": BUY_IN, "seat": "0"},
        "seat",
        id="a seat as a string",
    ),
    pytest.param(
        lambda t, h: {"type": "join_table", "table_id": t, "buy_in": BUY_IN, "seat": 6},
        "seat",
        id="a seat no table has",
    ),
    pytest.param(
        lambda t, h: {"type": "create_table", "options": {"seats": "3"}},
        "seats",
        id="seats as a string",
    ),
    pytest.param(
        lambda t, h: {"type": "create_table", "options": {"seats": 7}},
        "seats",
        id="more seats than a table has",
    ),
    pytest.param(
        lambda t, h: {"type": "create_table", "options": {"colour": "red"}},
        "colour",
        id="an option that does not exist",
    ),
    pytest.param(
        lambda t, h: {"type": "create_table", "options": []},
        "options",
        id="options as an array",
    ),
    pytest.param(
        lambda t, h: {
            "type": "declare_cut",
            "table_id": t,
            "hand_id": h,
            "pairs": [["7-1", "6-6"], ["0-0", "1-1"]],
        },
        "pairs",
        id="a tile that does not exist",
    ),
    pytest.param(
        lambda t, h: {"type": "hello", "version": "1", "name": "Ann"},
        "version",
        id="a version as a string",
    ),
    pytest.param(
        lambda t, h: {"type": "hello", "version": PROTOCOL_VERSION, "name": "\u200b\u0007"},
        "name",
        id="a name with nothing visible in it",
    ),
]


@pytest.mark.parametrize(("make", "field"), WRONG_FIELDS)
async def test_wrong_field_types_and_missing_fields_get_invalid_message_naming_the_field(
    server: QiuQiuServer, connect_client: Connect, make: MakeMessage, field: str
) -> None:
    client, turn = await at_bot_table(connect_client)
    before = world(server)
    error = await refused(client, make(turn["table_id"], turn["hand_id"]), "invalid_message")
    assert field in error["message"], error
    await assert_nothing_changed(server, client, before)


AMOUNTS_OUT_OF_RANGE = [
    pytest.param("bet", "amount", -20, id="a negative bet"),
    pytest.param("bet", "amount", 0, id="a bet of nothing"),
    pytest.param("bet", "amount", MAX_CHIPS + 1, id="a bet over 10**12"),
    pytest.param("bet", "amount", 10**40, id="a bet of 10**40"),
    pytest.param("raise", "to", -1, id="a raise to a negative"),
    pytest.param("raise", "to", MAX_CHIPS + 1, id="a raise over 10**12"),
    pytest.param("join_table", "buy_in", -BUY_IN, id="a negative buy-in"),
    pytest.param("join_table", "buy_in", 0, id="a buy-in of nothing"),
    pytest.param("join_table", "buy_in", MAX_CHIPS + 1, id="a buy-in over 10**12"),
    pytest.param("create_table", "buy_in", -BUY_IN, id="a negative buy-in at a new table"),
    pytest.param("create_table", "buy_in", MAX_CHIPS + 1, id="a new table's buy-in over 10**12"),
    pytest.param("create_table", "ante", -1, id="a negative ante"),
    pytest.param("create_table", "min_bet", 0, id="a minimum bet of nothing"),
    pytest.param("create_table", "max_bet", MAX_CHIPS + 1, id="a maximum bet over 10**12"),
    pytest.param("create_table", "min_buy_in", -100, id="a negative minimum buy-in"),
]


@pytest.mark.parametrize(("type_", "field", "amount"), AMOUNTS_OUT_OF_RANGE)
async def test_negative_and_oversized_amounts_get_invalid_message_naming_the_field(
    server: QiuQiuServer, connect_client: Connect, type_: str, field: str, amount: int
) -> None:
    client, turn = await at_bot_table(connect_client)
    message: Message = {"type": type_}
    if type_ == "create_table":
        message |= {"buy_in": amount} if field == "buy_in" else {"options": {field: amount}}
    elif type_ == "join_table":
        message |= {"table_id": turn["table_id"], "buy_in": amount}
    else:
        message |= {"table_id": turn["table_id"], "hand_id": turn["hand_id"], field: amount}
    before = world(server)
    error = await refused(client, message, "invalid_message")
    assert field in error["message"], error
    await assert_nothing_changed(server, client, before)


@pytest.mark.parametrize("id_", [True, -1, 1.5, 2**53 + 1, "", "x" * 65, [1], {"n": 1}])
async def test_an_id_that_is_not_an_id_gets_invalid_message_naming_nothing(
    server: QiuQiuServer, connect_client: Connect, id_: object
) -> None:
    client, _ = await at_bot_table(connect_client)
    before = world(server)
    error = await refused_frame(
        client, json.dumps({"type": "list_tables", "id": id_}), "invalid_message"
    )
    assert "id" in error["message"]
    await assert_nothing_changed(server, client, before)


async def test_an_id_with_a_lone_surrogate_gets_bad_json_and_the_connection_stays(
    server: QiuQiuServer,
) -> None:
    # A bare connection, so that a connection the server drops fails the test itself
    # rather than the fixture's teardown.
    async with connect(server.url) as raw:
        await raw_send(raw, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Ann"})
        await raw_until(raw, lambda m: m["type"] == "welcome")
        before = world(server)
        # Escaped in the JSON text, so the frame itself is valid UTF-8.
        await raw.send('{"type": "list_tables", "id": "\\ud800"}')
        error = await raw_until(raw, lambda m: m["type"] == "error")
        assert error["code"] == "bad_json"  # a lone surrogate is not Unicode text
        assert "ref" not in error
        await raw_send(raw, {"type": "list_tables", "id": "after"})
        await raw_until(raw, lambda m: m.get("ref") == "after")
        assert world(server) == before


async def test_a_binary_frame_gets_binary_frame_and_is_not_read(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, turn = await at_bot_table(connect_client)
    before = world(server)
    # A perfectly good action, but in a binary frame: refused, not played.
    frame = {"type": "check", "table_id": turn["table_id"], "hand_id": turn["hand_id"]}
    await refused_frame(client, json.dumps(frame).encode(), "binary_frame")
    await assert_nothing_changed(server, client, before)


# -- hello ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        pytest.param({"type": "list_tables"}, id="list_tables"),
        pytest.param({"type": "create_table", "buy_in": BUY_IN}, id="create_table"),
        pytest.param({"type": "join_table", "table_id": NOWHERE, "buy_in": 100}, id="join_table"),
        pytest.param({"type": "check", "table_id": NOWHERE, "hand_id": 1}, id="check"),
    ],
)
async def test_anything_before_hello_gets_hello_required(
    server: QiuQiuServer, connect_client: Connect, message: Message
) -> None:
    client = await connect_client()
    before = world(server)
    await refused(client, message, "hello_required")
    await assert_anonymous_and_unchanged(server, client, before)


@pytest.mark.parametrize("again_with", ["name", "token"])
async def test_a_second_hello_gets_already_identified(
    server: QiuQiuServer, connect_client: Connect, again_with: str
) -> None:
    client = await connect_client()
    welcome = await client.hello("Ann")
    await at_bot_table(connect_client, "Bea")
    before = world(server)
    hello: Message = {"type": "hello", "version": PROTOCOL_VERSION}
    hello |= {"name": "Eve"} if again_with == "name" else {"token": welcome["token"]}
    error = await refused(client, hello, "already_identified")
    assert "Ann" in error["message"]
    await assert_nothing_changed(server, client, before)


@pytest.mark.parametrize("version", [0, PROTOCOL_VERSION + 1, 2**31])
async def test_a_wrong_protocol_version_gets_unsupported_version(
    server: QiuQiuServer, connect_client: Connect, version: int
) -> None:
    client = await connect_client()
    before = world(server)
    error = await refused(
        client, {"type": "hello", "version": version, "name": "Ann"}, "unsupported_version"
    )
    assert str(PROTOCOL_VERSION) in error["message"]
    await assert_anonymous_and_unchanged(server, client, before)


async def test_an_unknown_token_gets_unknown_token_and_opens_no_account(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    before = world(server)
    hello = {"type": "hello", "version": PROTOCOL_VERSION, "token": "not-a-token"}
    await refused(client, hello, "unknown_token")
    await assert_anonymous_and_unchanged(server, client, before)


async def test_a_hello_without_name_or_token_gets_name_required(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    before = world(server)
    await refused(client, {"type": "hello", "version": PROTOCOL_VERSION}, "name_required")
    await assert_anonymous_and_unchanged(server, client, before)


# -- repeated ids --------------------------------------------------------------------------


async def test_a_repeated_id_gets_duplicate_id_and_no_second_table(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await identified(connect_client)
    create = {"type": "create_table", "id": "table-1", "buy_in": BUY_IN}
    await client.send_raw(json.dumps(create))
    created = await client.expect("table_created", ref="table-1")
    await my_turn(client, created["table"]["table_id"])
    before = world(server)
    await refused(client, create, "duplicate_id")
    await assert_nothing_changed(server, client, before)
    assert len(server.lobby.tables) == 1
    players = {a: b for a, b in before["balances"].items() if a != HOUSE}
    assert list(players.values()) == [STARTING_BALANCE - BUY_IN]


async def test_a_repeated_id_on_an_action_is_played_once(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, turn = await at_bot_table(connect_client)
    table_id, hand_id = turn["table_id"], turn["hand_id"]
    check = {"type": "check", "id": "act-1", "table_id": table_id, "hand_id": hand_id}
    # Both in flight at once, as a client that retries too early would send them.
    await client.send_raw(json.dumps(check))
    await client.send_raw(json.dumps(check))
    error = await client.expect("error", ref="act-1")
    assert error["code"] == "duplicate_id"
    checks = [
        m
        for m in client.frames
        if m["type"] == "checked" and m["hand_id"] == hand_id and m["seat"] == turn["seat"]
    ]
    assert [m.get("ref") for m in checks] == ["act-1"]
    listing = await client.reply("list_tables")
    assert listing["type"] == "table_list"
    assert chip_total(server) == 0


async def test_a_repeated_id_is_refused_whatever_the_message_type(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, turn = await at_bot_table(connect_client)
    await client.send_raw(json.dumps({"type": "list_tables", "id": "twice"}))
    await client.expect("table_list", ref="twice")
    before = world(server)
    # A check that would be legal: only its id is wrong.
    check = {
        "type": "check",
        "id": "twice",
        "table_id": turn["table_id"],
        "hand_id": turn["hand_id"],
    }
    await refused(client, check, "duplicate_id")
    await assert_nothing_changed(server, client, before)


# -- tables that are not there, or not yours -----------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        pytest.param({"type": "join_table", "table_id": NOWHERE, "buy_in": 100}, id="join_table"),
        pytest.param({"type": "leave_table", "table_id": NOWHERE}, id="leave_table"),
        pytest.param({"type": "watch_table", "table_id": NOWHERE}, id="watch_table"),
        pytest.param({"type": "request_snapshot", "table_id": NOWHERE}, id="request_snapshot"),
        pytest.param({"type": "check", "table_id": NOWHERE, "hand_id": 1}, id="check"),
        pytest.param({"type": "bet", "table_id": NOWHERE, "hand_id": 1, "amount": 20}, id="bet"),
    ],
)
async def test_an_unknown_table_gets_unknown_table(
    server: QiuQiuServer, connect_client: Connect, message: Message
) -> None:
    client, _ = await at_bot_table(connect_client)
    before = world(server)
    error = await refused(client, message, "unknown_table")
    assert NOWHERE in error["message"]
    await assert_nothing_changed(server, client, before)


@pytest.mark.parametrize(
    ("make", "code"),
    [
        pytest.param(
            lambda t, h: {"type": "check", "table_id": t, "hand_id": h},
            "not_seated",
            id="acting",
        ),
        pytest.param(
            lambda t, h: {"type": "leave_table", "table_id": t},
            "not_at_table",
            id="leaving",
        ),
        pytest.param(
            lambda t, h: {"type": "request_snapshot", "table_id": t},
            "not_at_table",
            id="asking for a snapshot",
        ),
    ],
)
async def test_a_table_you_are_not_at_refuses_you(
    server: QiuQiuServer, connect_client: Connect, make: MakeMessage, code: str
) -> None:
    _, turn = await at_bot_table(connect_client, "Ann")
    stranger = await identified(connect_client, "Eve")
    before = world(server)
    await refused(stranger, make(turn["table_id"], turn["hand_id"]), code)
    await assert_nothing_changed(server, stranger, before)


# -- turns and hands -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "action",
    [
        pytest.param({"type": "check"}, id="check"),
        pytest.param({"type": "bet", "amount": 20}, id="bet"),
        pytest.param({"type": "call"}, id="call"),
        pytest.param({"type": "raise", "to": 40}, id="raise"),
        pytest.param({"type": "fold"}, id="fold"),
    ],
)
async def test_acting_when_it_is_not_your_turn_gets_not_your_turn(
    server: QiuQiuServer, connect_client: Connect, action: Message
) -> None:
    players, turn = await three_handed(connect_client)
    ids = {"table_id": turn["table_id"], "hand_id": turn["hand_id"]}
    waiting = [seat for seat in players if seat != turn["seat"]]
    assert len(waiting) == 2
    before = world(server)
    for seat in waiting:
        error = await refused(players[seat], {**action, **ids}, "not_your_turn")
        assert str(turn["seat"]) in error["message"]
        await assert_nothing_changed(server, players[seat], before)


async def test_acting_in_a_hand_you_were_not_dealt_into_is_refused(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    players, turn = await two_playing_one_waiting(connect_client)
    late = players[2]
    before = world(server)
    check = {"type": "check", "table_id": turn["table_id"], "hand_id": turn["hand_id"]}
    await refused(late, check, "not_in_hand")
    await assert_nothing_changed(server, late, before)


@pytest.mark.parametrize(
    "which", [pytest.param(-1, id="the hand before"), pytest.param(+5, id="a hand to come")]
)
async def test_acting_on_a_stale_hand_id_gets_stale_hand(
    server: QiuQiuServer, connect_client: Connect, which: int
) -> None:
    client, first = await at_bot_table(connect_client)
    await play_out(client, first)
    turn = await my_turn(client, first["table_id"])
    assert turn["hand_id"] == first["hand_id"] + 1
    before = world(server)
    check = {"type": "check", "table_id": turn["table_id"], "hand_id": turn["hand_id"] + which}
    error = await refused(client, check, "stale_hand")
    # The message says which hand is in play, so a client can catch up.
    assert str(turn["hand_id"]) in error["message"]
    await assert_nothing_changed(server, client, before)


@pytest.mark.parametrize(
    ("action", "code"),
    [
        pytest.param({"type": "bet", "amount": 9}, "bet_too_small", id="a bet under min_bet"),
        pytest.param({"type": "bet", "amount": 51}, "bet_too_large", id="a bet over max_bet"),
        pytest.param(
            {"type": "bet", "amount": BUY_IN}, "not_enough_chips", id="a bet over the stack"
        ),
        pytest.param(
            {"type": "bet", "amount": MAX_CHIPS}, "not_enough_chips", id="a bet of 10**12"
        ),
        pytest.param({"type": "call"}, "nothing_to_call", id="a call with nothing to call"),
        pytest.param({"type": "raise", "to": 40}, "cannot_raise", id="a raise before any bet"),
        pytest.param({"type": "fold"}, "cannot_fold", id="a fold when a check is free"),
        pytest.param(
            {"type": "declare_cut", "pairs": [["6-6", "5-5"], ["4-4", "3-3"]]},
            "not_cutting",
            id="a cut before the showdown",
        ),
    ],
)
async def test_a_rule_broken_on_your_turn_gets_its_code(
    server: QiuQiuServer, connect_client: Connect, action: Message, code: str
) -> None:
    client, turn = await at_bot_table(connect_client, max_bet=50)
    assert turn["legal"]["bet"] == {"min": 10, "max": 50}
    before = world(server)
    ids = {"table_id": turn["table_id"], "hand_id": turn["hand_id"]}
    await refused(client, {**action, **ids}, code)
    await assert_nothing_changed(server, client, before)


@pytest.mark.parametrize(
    ("action", "code"),
    [
        pytest.param({"type": "raise", "to": 30}, "raise_too_small", id="a raise under min"),
        pytest.param({"type": "raise", "to": 71}, "raise_too_large", id="a raise over max_bet"),
        pytest.param(
            {"type": "raise", "to": BUY_IN + 1}, "not_enough_chips", id="a raise over the stack"
        ),
        pytest.param({"type": "check"}, "cannot_check", id="a check facing a bet"),
        pytest.param({"type": "bet", "amount": 20}, "cannot_bet", id="a bet facing a bet"),
    ],
)
async def test_a_rule_broken_facing_a_bet_gets_its_code(
    server: QiuQiuServer, connect_client: Connect, action: Message, code: str
) -> None:
    players, turn = await three_handed(connect_client, max_bet=50)
    ann, table_id, hand_id = players[0], turn["table_id"], turn["hand_id"]
    await players[turn["seat"]].send("bet", table_id=table_id, hand_id=hand_id, amount=20)
    facing = await ann.expect("turn_started", table_id=table_id, hand_id=hand_id)
    assert facing["to_call"] == 20
    before = world(server)
    actor = players[facing["seat"]]
    await refused(actor, {**action, "table_id": table_id, "hand_id": hand_id}, code)
    await assert_nothing_changed(server, actor, before)


async def test_a_cut_naming_one_tile_twice_gets_an_error_and_the_connection_stays(
    server: QiuQiuServer,
) -> None:
    async with connect(server.url) as raw:
        await raw_send(raw, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Ann"})
        await raw_until(raw, lambda m: m["type"] == "welcome")
        await raw_send(raw, {"type": "create_table", "buy_in": BUY_IN})
        turn = await raw_until(raw, lambda m: m["type"] == "turn_started" and "legal" in m)
        before = world(server)
        cut = {
            "type": "declare_cut",
            "id": "cut",
            "table_id": turn["table_id"],
            "hand_id": turn["hand_id"],
            "pairs": [["6-1", "1-6"], ["0-0", "1-1"]],
        }
        await raw_send(raw, cut)
        error = await raw_until(raw, lambda m: m.get("ref") == "cut")
        assert error["type"] == "error"
        await raw_send(raw, {"type": "list_tables", "id": "after"})
        await raw_until(raw, lambda m: m.get("ref") == "after")
        assert world(server) == before


# -- seats and buy-ins ---------------------------------------------------------------------


async def test_joining_a_full_table_gets_table_full(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    _, turn = await at_bot_table(connect_client, "Ann")
    late = await identified(connect_client, "Bea")
    before = world(server)
    join = {"type": "join_table", "table_id": turn["table_id"], "buy_in": BUY_IN}
    await refused(late, join, "table_full")
    await assert_nothing_changed(server, late, before)


async def test_joining_a_full_table_of_three_gets_table_full(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    _, turn = await two_playing_one_waiting(connect_client)
    late = await identified(connect_client, "Dee")
    before = world(server)
    join = {"type": "join_table", "table_id": turn["table_id"], "buy_in": BUY_IN}
    await refused(late, join, "table_full")
    await assert_nothing_changed(server, late, before)


@pytest.mark.parametrize(
    "seat", [pytest.param(0, id="a player's seat"), pytest.param(2, id="the bot's seat")]
)
async def test_joining_a_taken_seat_gets_seat_taken(
    server: QiuQiuServer, connect_client: Connect, seat: int
) -> None:
    ann = await identified(connect_client, "Ann")
    created = await ann.reply(
        "create_table", options={"seats": 3, "dealer_bot": True}, buy_in=BUY_IN
    )
    table_id = created["table"]["table_id"]
    await my_turn(ann, table_id)
    bea = await identified(connect_client, "Bea")
    before = world(server)
    join = {"type": "join_table", "table_id": table_id, "buy_in": BUY_IN, "seat": seat}
    error = await refused(bea, join, "seat_taken")
    assert str(seat) in error["message"]
    await assert_nothing_changed(server, bea, before)


async def test_joining_a_table_twice_gets_already_seated(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    players, turn = await two_playing_one_waiting(connect_client)
    before = world(server)
    for player in players.values():
        join = {"type": "join_table", "table_id": turn["table_id"], "buy_in": BUY_IN}
        await refused(player, join, "already_seated")
        await assert_nothing_changed(server, player, before)


async def test_buying_in_beyond_the_balance_gets_insufficient_balance(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    ann = await identified(connect_client, "Ann")
    created = await ann.reply("create_table", options=THREE_SEATS, buy_in=BUY_IN)
    table_id = created["table"]["table_id"]
    await ann.expect("table_joined", table_id=table_id)
    bob = await identified(connect_client, "Bob")
    before = world(server)
    join = {"type": "join_table", "table_id": table_id, "buy_in": STARTING_BALANCE + 1}
    error = await refused(bob, join, "insufficient_balance")
    assert str(STARTING_BALANCE) in error["message"]
    await assert_nothing_changed(server, bob, before)


@pytest.mark.parametrize(
    "buy_in",
    [
        pytest.param(99, id="under the minimum"),
        pytest.param(601, id="over the maximum"),
        pytest.param(10_000, id="over the maximum and the balance"),
    ],
)
async def test_buying_in_outside_the_tables_range_gets_invalid_buy_in(
    server: QiuQiuServer, connect_client: Connect, buy_in: int
) -> None:
    ann = await identified(connect_client, "Ann")
    options = {**THREE_SEATS, "min_buy_in": 100, "max_buy_in": 600}
    created = await ann.reply("create_table", options=options, buy_in=BUY_IN)
    table_id = created["table"]["table_id"]
    await ann.expect("table_joined", table_id=table_id)
    bob = await identified(connect_client, "Bob")
    before = world(server)
    join = {"type": "join_table", "table_id": table_id, "buy_in": buy_in}
    error = await refused(bob, join, "invalid_buy_in")
    assert "100" in error["message"]
    assert "600" in error["message"]
    await assert_nothing_changed(server, bob, before)


@pytest.mark.parametrize(
    ("buy_in", "code"),
    [
        pytest.param(STARTING_BALANCE + 1, "insufficient_balance", id="beyond the balance"),
        pytest.param(99, "invalid_buy_in", id="under the minimum"),
    ],
)
async def test_creating_a_table_with_a_refused_buy_in_creates_no_table(
    server: QiuQiuServer, connect_client: Connect, buy_in: int, code: str
) -> None:
    client = await identified(connect_client)
    before = world(server)
    await refused(client, {"type": "create_table", "buy_in": buy_in}, code)
    await assert_nothing_changed(server, client, before)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        pytest.param({"min_bet": 50, "max_bet": 20}, "max_bet", id="max_bet under min_bet"),
        pytest.param(
            {"min_buy_in": 600, "max_buy_in": 500}, "min_buy_in", id="min_buy_in over max_buy_in"
        ),
        pytest.param({"seats": 2, "min_players": 3}, "min_players", id="min_players over seats"),
    ],
)
async def test_options_that_contradict_each_other_get_invalid_message(
    server: QiuQiuServer, connect_client: Connect, options: Message, field: str
) -> None:
    # Each option is fine alone, so only a check across them keeps such a table (one
    # nobody can join, or the engine would refuse to deal) from being made.
    client, _ = await at_bot_table(connect_client)
    before = world(server)
    create = {"type": "create_table", "options": options, "buy_in": BUY_IN}
    error = await refused(client, create, "invalid_message")
    assert field in error["message"], error
    await assert_nothing_changed(server, client, before)


# -- connections the server closes ---------------------------------------------------------


async def assert_the_others_carry_on(
    server: QiuQiuServer, connect_client: Connect, bystander: Client, turn: Message
) -> None:
    """The bystander finishes its hand and is dealt the next; a newcomer is welcomed."""
    ended = await play_out(bystander, turn)
    assert ended["hand_id"] == turn["hand_id"]
    following = await my_turn(bystander, turn["table_id"])
    assert following["hand_id"] == turn["hand_id"] + 1
    newcomer = await connect_client()
    welcome = await newcomer.hello("Nia")
    assert welcome["type"] == "welcome"
    assert chip_total(server) == 0


async def test_a_frame_at_the_size_limit_is_read(
    server: QiuQiuServer, connect_client: Connect, config: ServerConfig
) -> None:
    client, _ = await at_bot_table(connect_client)
    before = world(server)
    head = '{"type": "list_tables", "id": "edge"'
    frame = head + " " * (config.max_frame - len(head) - 1) + "}"
    assert len(frame.encode()) == config.max_frame == 4096
    await client.send_raw(frame)
    listing = await client.expect("table_list", ref="edge")
    assert len(listing["tables"]) == 1
    await assert_nothing_changed(server, client, before)


@pytest.mark.parametrize("kind", ["text", "binary"])
async def test_a_frame_over_the_size_limit_closes_that_connection_with_1009(
    server: QiuQiuServer, connect_client: Connect, config: ServerConfig, kind: str
) -> None:
    bystander, turn = await at_bot_table(connect_client, "Bea")
    victim = await seated_victim(server)
    head = '{"type": "list_tables", "id": "big"'
    text = head + " " * (config.max_frame - len(head)) + "}"
    assert len(text.encode()) == config.max_frame + 1
    await victim.send(text if kind == "text" else text.encode())
    assert await close_code(victim) == CloseCode.MESSAGE_TOO_BIG
    await assert_the_others_carry_on(server, connect_client, bystander, turn)


# Refilling a token every 11 days: the bucket holds exactly ``burst`` messages, whatever
# the speed of the machine, so the test can say where the limit is to the message.
NO_REFILL = replace(FAST, rate=1e-6)


@pytest.mark.parametrize("config", [pytest.param(NO_REFILL, id="a bucket that never refills")])
async def test_the_message_past_the_burst_closes_that_connection_with_1008(
    server: QiuQiuServer, connect_client: Connect, config: ServerConfig
) -> None:
    bystander, turn = await at_bot_table(connect_client, "Bea")
    victim = await seated_victim(server)
    spent = 2  # hello and create_table
    for n in range(config.burst - spent):
        await raw_send(victim, {"type": "list_tables", "id": f"l{n}"})
    # Every message within the burst is answered...
    last = f"l{config.burst - spent - 1}"
    await raw_until(victim, lambda m: m.get("ref") == last)
    # ...and the one past it closes the connection.
    await raw_send(victim, {"type": "list_tables", "id": "one-too-many"})
    assert await close_code(victim) == CloseCode.POLICY_VIOLATION
    await assert_the_others_carry_on(server, connect_client, bystander, turn)


async def test_a_flood_at_the_default_rate_closes_that_connection_with_1008(
    server: QiuQiuServer, connect_client: Connect, config: ServerConfig
) -> None:
    bystander, turn = await at_bot_table(connect_client, "Bea")
    victim = await seated_victim(server)
    try:
        # Twenty times the burst, sent at once: at the configured rate it would take
        # 38 seconds to be allowed, so no machine is slow enough to let it through.
        for n in range(20 * config.burst):
            await raw_send(victim, {"type": "list_tables", "id": f"f{n}"})
    except ConnectionClosed:
        pass  # closed while still flooding: what the test is about
    try:
        await assert_the_others_carry_on(server, connect_client, bystander, turn)
        assert await close_code(victim) == CloseCode.POLICY_VIOLATION
    finally:
        # Else the server's stop would wait out the lingering connection too.
        victim.transport.abort()
