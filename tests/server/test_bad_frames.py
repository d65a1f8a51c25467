"""Frames and messages the server cannot take, over real WebSocket connections (PROTOCOL.md).

Malformed JSON, a shape or a field that is not a message's, an ``id`` that is not an
id, a binary frame, a wrong or missing ``hello``: each gets an ``error`` with a
stable ``code`` (naming the message's ``id`` in ``ref`` when one can be read), the
connection stays, and nothing changes.
"""

from __future__ import annotations

import json

import pytest
from websockets.asyncio.client import connect

from qiuqiu.protocol import MAX_CHIPS, PROTOCOL_VERSION
from qiuqiu.server.gateway import QiuQiuServer
from tests.server.conftest import at_bot_table
from tests.server.refusal_helpers import (
    BUY_IN,
    NOWHERE,
    Connect,
    MakeMessage,
    Message,
    assert_anonymous_and_unchanged,
    assert_nothing_changed,
    raw_send,
    raw_until,
    refused,
    refused_frame,
    world,
)

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
    before = await world(server)
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
    before = await world(server)
    error = await refused_frame(client, frame, "invalid_message")
    assert "object" in error["message"]
    await assert_nothing_changed(server, client, before)


@pytest.mark.parametrize("type_", ["shuffle", "BET", "", "welcome", 5, None])
async def test_an_unknown_type_gets_unknown_type_naming_the_message(
    server: QiuQiuServer, connect_client: Connect, type_: object
) -> None:
    client, _ = await at_bot_table(connect_client)
    before = await world(server)
    await refused(client, {"type": type_}, "unknown_type")
    await assert_nothing_changed(server, client, before)


async def test_a_message_without_a_type_gets_invalid_message_naming_the_message(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, _ = await at_bot_table(connect_client)
    before = await world(server)
    error = await refused(client, {"table_id": "t1"}, "invalid_message")
    assert "type" in error["message"]
    await assert_nothing_changed(server, client, before)


async def test_a_bet_with_its_amount_given_twice_gets_invalid_message_and_nothing_changes(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """Read as its last value, as pydantic reads it, the bet was played: a message
    that says two things means neither."""
    client, turn = await at_bot_table(connect_client)
    amounts = turn["legal"]["bet"]
    before = await world(server)
    fields = f'"id":"twice","table_id":"{turn["table_id"]}","hand_id":{turn["hand_id"]}'
    twice = f'"amount":{amounts["min"]},"amount":{amounts["max"]}'
    await client.send_raw(f'{{"type":"bet",{fields},{twice}}}')
    error = await client.wait(lambda m: m["type"] == "error")
    assert (error["code"], error["ref"]) == ("invalid_message", "twice"), error
    assert error["message"] == "amount: given twice; send each key once"
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
    before = await world(server)
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
    before = await world(server)
    error = await refused(client, message, "invalid_message")
    assert field in error["message"], error
    await assert_nothing_changed(server, client, before)


@pytest.mark.parametrize("id_", [True, -1, 1.5, 2**53 + 1, "", "x" * 65, [1], {"n": 1}])
async def test_an_id_that_is_not_an_id_gets_invalid_message_naming_nothing(
    server: QiuQiuServer, connect_client: Connect, id_: object
) -> None:
    client, _ = await at_bot_table(connect_client)
    before = await world(server)
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
        before = await world(server)
        # Escaped in the JSON text, so the frame itself is valid UTF-8.
        await raw.send('{"type": "list_tables", "id": "\\ud800"}')
        error = await raw_until(raw, lambda m: m["type"] == "error")
        assert error["code"] == "bad_json"  # a lone surrogate is not Unicode text
        assert "ref" not in error
        await raw_send(raw, {"type": "list_tables", "id": "after"})
        await raw_until(raw, lambda m: m.get("ref") == "after")
        assert await world(server) == before


async def test_a_binary_frame_gets_binary_frame_and_is_not_read(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, turn = await at_bot_table(connect_client)
    before = await world(server)
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
    before = await world(server)
    await refused(client, message, "hello_required")
    await assert_anonymous_and_unchanged(server, client, before)


@pytest.mark.parametrize("again_with", ["name", "token"])
async def test_a_second_hello_gets_already_identified(
    server: QiuQiuServer, connect_client: Connect, again_with: str
) -> None:
    client = await connect_client()
    welcome = await client.hello("Ann")
    await at_bot_table(connect_client, "Bea")
    before = await world(server)
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
    before = await world(server)
    error = await refused(
        client, {"type": "hello", "version": version, "name": "Ann"}, "unsupported_version"
    )
    assert str(PROTOCOL_VERSION) in error["message"]
    await assert_anonymous_and_unchanged(server, client, before)


async def test_an_unknown_token_gets_unknown_token_and_opens_no_account(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    before = await world(server)
    hello = {"type": "hello", "version": PROTOCOL_VERSION, "token": "not-a-token"}
    await refused(client, hello, "unknown_token")
    await assert_anonymous_and_unchanged(server, client, before)


async def test_a_hello_without_name_or_token_gets_name_required(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    before = await world(server)
    await refused(client, {"type": "hello", "version": PROTOCOL_VERSION}, "name_required")
    await assert_anonymous_and_unchanged(server, client, before)
