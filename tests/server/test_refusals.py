"""Well-formed messages the rules refuse, over real WebSocket connections (PROTOCOL.md).

Out of turn, a stale hand, an amount the table does not allow, a seat or a buy-in
that cannot be had, a table that is not there or not yours, a repeated ``id``: each
gets an ``error`` with a stable ``code`` naming the message's ``id`` in ``ref``;
the connection stays and nothing changes.
"""

from __future__ import annotations

import json

import pytest
from websockets.asyncio.client import connect

from qiuqiu.protocol import MAX_CHIPS, PROTOCOL_VERSION
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.store import HOUSE
from tests.server.conftest import FAST, at_bot_table, chip_total, my_turn
from tests.server.refusal_helpers import (
    BUY_IN,
    NOWHERE,
    THREE_SEATS,
    Connect,
    MakeMessage,
    Message,
    assert_nothing_changed,
    identified,
    play_out,
    raw_send,
    raw_until,
    refused,
    three_handed,
    two_playing_one_waiting,
    world,
)

STARTING_BALANCE = FAST.starting_balance


# -- repeated ids --------------------------------------------------------------------------


async def test_a_repeated_id_gets_duplicate_id_and_no_second_table(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await identified(connect_client)
    create = {"type": "create_table", "id": "table-1", "buy_in": BUY_IN}
    await client.send_raw(json.dumps(create))
    created = await client.expect("table_created", ref="table-1")
    await my_turn(client, created["table"]["table_id"])
    before = await world(server)
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
    assert await chip_total(server) == 0


async def test_a_repeated_id_is_refused_whatever_the_message_type(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, turn = await at_bot_table(connect_client)
    await client.send_raw(json.dumps({"type": "list_tables", "id": "twice"}))
    await client.expect("table_list", ref="twice")
    before = await world(server)
    # A check that would be legal: only its id is wrong.
    check = {
        "type": "check",
        "id": "twice",
        "table_id": turn["table_id"],
        "hand_id": turn["hand_id"],
    }
    await refused(client, check, "duplicate_id")
    await assert_nothing_changed(server, client, before)


async def test_an_id_counts_once_a_message_is_handled_after_hello_refused_or_not(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """What PROTOCOL.md says of ids: nothing was applied for a frame that is not a
    message, for any message before ``hello``, nor for ``hello`` itself, so none of
    those uses its id up; a message refused after ``hello`` does."""
    client = await connect_client()
    await refused(client, {"type": "list_tables", "id": "early"}, "hello_required")
    welcome = await client.reply("hello", version=PROTOCOL_VERSION, name="Ann")
    assert welcome["type"] == "welcome"
    hello_id = welcome["ref"]
    await refused(client, {"type": "list_tables", "id": "loose", "x": 1}, "invalid_message")
    await refused(client, {"type": "list_tabels", "id": "typo"}, "unknown_type")
    for used in ("early", hello_id, "loose", "typo"):
        await client.send_raw(json.dumps({"type": "list_tables", "id": used}))
        await client.expect("table_list", ref=used)
    watch = {"type": "watch_table", "id": "nowhere", "table_id": NOWHERE}
    await refused(client, watch, "unknown_table")
    await refused(client, {"type": "list_tables", "id": "nowhere"}, "duplicate_id")


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
    before = await world(server)
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
    before = await world(server)
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
    before = await world(server)
    for seat in waiting:
        error = await refused(players[seat], {**action, **ids}, "not_your_turn")
        assert str(turn["seat"]) in error["message"]
        await assert_nothing_changed(server, players[seat], before)


async def test_acting_in_a_hand_you_were_not_dealt_into_is_refused(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    players, turn = await two_playing_one_waiting(connect_client)
    late = players[2]
    before = await world(server)
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
    before = await world(server)
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
            {"type": "bet", "amount": BUY_IN},
            "bet_too_large",
            id="a bet over the stack and max_bet, which is the limit named",
        ),
        pytest.param({"type": "bet", "amount": MAX_CHIPS}, "bet_too_large", id="a bet of 10**12"),
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
    before = await world(server)
    ids = {"table_id": turn["table_id"], "hand_id": turn["hand_id"]}
    await refused(client, {**action, **ids}, code)
    await assert_nothing_changed(server, client, before)


@pytest.mark.parametrize(
    ("action", "code"),
    [
        pytest.param({"type": "raise", "to": 30}, "raise_too_small", id="a raise under min"),
        pytest.param({"type": "raise", "to": 71}, "raise_too_large", id="a raise over max_bet"),
        pytest.param(
            {"type": "raise", "to": BUY_IN + 1},
            "raise_too_large",
            id="a raise over the stack and max_bet, which is the limit named",
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
    before = await world(server)
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
        before = await world(server)
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
        assert await world(server) == before


# -- seats and buy-ins ---------------------------------------------------------------------


async def test_joining_a_full_table_gets_table_full(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    _, turn = await at_bot_table(connect_client, "Ann")
    late = await identified(connect_client, "Bea")
    before = await world(server)
    join = {"type": "join_table", "table_id": turn["table_id"], "buy_in": BUY_IN}
    await refused(late, join, "table_full")
    await assert_nothing_changed(server, late, before)


async def test_joining_a_full_table_of_three_gets_table_full(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    _, turn = await two_playing_one_waiting(connect_client)
    late = await identified(connect_client, "Dee")
    before = await world(server)
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
    before = await world(server)
    join = {"type": "join_table", "table_id": table_id, "buy_in": BUY_IN, "seat": seat}
    error = await refused(bea, join, "seat_taken")
    assert str(seat) in error["message"]
    await assert_nothing_changed(server, bea, before)


async def test_joining_a_table_twice_gets_already_seated(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    players, turn = await two_playing_one_waiting(connect_client)
    before = await world(server)
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
    before = await world(server)
    join = {"type": "join_table", "table_id": table_id, "buy_in": STARTING_BALANCE + 1}
    error = await refused(bob, join, "insufficient_balance")
    assert f"{STARTING_BALANCE:,}" in error["message"]
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
    before = await world(server)
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
    before = await world(server)
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
    before = await world(server)
    create = {"type": "create_table", "options": options, "buy_in": BUY_IN}
    error = await refused(client, create, "invalid_message")
    assert field in error["message"], error
    await assert_nothing_changed(server, client, before)


async def test_a_buy_in_outside_the_range_says_what_the_balance_is(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    ann = await identified(connect_client, "Ann")
    created = await ann.reply("create_table", options=THREE_SEATS)
    join = {"type": "join_table", "table_id": created["table"]["table_id"], "buy_in": 99_999}
    error = await refused(ann, join, "invalid_buy_in")
    assert f"your balance is {STARTING_BALANCE:,} chips" in error["message"], error


async def test_the_hands_of_a_table_that_never_was_get_unknown_table(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    ann = await identified(connect_client, "Ann")
    before = await world(server)
    await refused(ann, {"type": "list_hands", "table_id": NOWHERE}, "unknown_table")
    await assert_nothing_changed(server, ann, before)


async def test_an_ante_no_buy_in_could_pay_gets_invalid_message(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    ann = await identified(connect_client, "Ann")
    options = {"ante": 700, "min_buy_in": 100, "max_buy_in": 600}
    error = await refused(ann, {"type": "create_table", "options": options}, "invalid_message")
    assert "ante" in error["message"]


async def test_a_hello_with_a_name_and_a_token_gets_invalid_message(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    ann = await connect_client()
    token = (await ann.hello("Ann"))["token"]
    again = await connect_client()
    hello = {"type": "hello", "version": PROTOCOL_VERSION, "name": "Bob", "token": token}
    error = await refused(again, hello, "invalid_message")
    assert "not both" in error["message"]


@pytest.mark.parametrize("name", ["Dealer", "dealer", " DEALER "])
async def test_the_dealer_bots_name_is_refused_to_players(
    server: QiuQiuServer, connect_client: Connect, name: str
) -> None:
    client = await connect_client()
    hello = {"type": "hello", "version": PROTOCOL_VERSION, "name": name}
    await refused(client, hello, "reserved_name")
