"""Whole hands over real WebSocket connections to a real server on a free port."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.gateway import QiuQiuServer
from tests.server.conftest import Client, chip_total

Connect = Callable[[], Awaitable[Client]]
NO_BOT_3 = {"seats": 3, "dealer_bot": False, "min_players": 3}


async def play_hand(
    client: Client, table_id: str, choose: Callable[[dict[str, Any]], dict[str, Any]]
) -> list[dict[str, Any]]:
    """Answer each of ``client``'s turns with ``choose(legal)`` until a hand ends; its frames."""
    start = len(client.frames)
    while True:
        message = await client.wait(
            lambda m: (
                m.get("table_id") == table_id
                and (m["type"] == "hand_ended" or (m["type"] == "turn_started" and "legal" in m))
            )
        )
        if message["type"] == "hand_ended":
            # Up to the end: a seat that lost every chip gets its table_left right after.
            frames = client.frames[start:]
            return frames[: frames.index(message) + 1]
        action = choose(message["legal"])
        await client.send(**action, table_id=table_id, hand_id=message["hand_id"])


def call_or_check(legal: dict[str, Any]) -> dict[str, Any]:
    return {"type": "call"} if "call" in legal else {"type": "check"}


def all_in(legal: dict[str, Any]) -> dict[str, Any]:
    if "raise_to" in legal:
        return {"type": "raise", "to": legal["raise_to"]["max"]}
    if "bet" in legal:
        return {"type": "bet", "amount": legal["bet"]["max"]}
    return call_or_check(legal)


async def seat_three(
    connect_client: Connect, buy_ins: tuple[int, int, int], **options: Any
) -> tuple[list[Client], str]:
    """Three players at a table without the dealer bot; the first one made it."""
    clients = [await connect_client() for _ in buy_ins]
    for i, client in enumerate(clients):
        await client.hello(f"P{i}")
    created = await clients[0].reply("create_table", options={**NO_BOT_3, **options})
    table_id = created["table"]["table_id"]
    for client, buy_in in zip(clients, buy_ins, strict=True):
        joined = await client.reply("join_table", table_id=table_id, buy_in=buy_in)
        assert joined["type"] == "table_joined"
    return clients, table_id


async def test_a_player_plays_a_whole_hand_against_the_dealer_bot(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    welcome = await client.hello()
    assert welcome["balance"] == 1000
    assert welcome["token"]
    await client.reply("create_table", buy_in=500)
    joined = await client.expect("table_joined")
    assert joined["balance"] == 500
    table_id = joined["table_id"]

    frames = await play_hand(client, table_id, call_or_check)

    types = [f["type"] for f in frames]
    assert types[0] == "hand_started"
    assert types[-1] == "hand_ended"
    assert "pot_awarded" in types
    ended = frames[-1]
    assert sum(s["amount"] for s in ended["stacks"]) == 500 + 10_000
    assert await chip_total(server) == 0


async def test_three_players_go_all_in_and_the_side_pots_are_paid_at_showdown(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    clients, table_id = await seat_three(connect_client, (100, 200, 300))
    frames = await asyncio.gather(*(play_hand(c, table_id, all_in) for c in clients))

    seen = frames[0]
    showdown = next(f for f in seen if f["type"] == "showdown")
    assert len(showdown["hands"]) == 3
    pots = [f for f in seen if f["type"] == "pot_awarded"]
    assert [p["amount"] for p in pots] == [300, 200]
    assert [sorted(p["eligible"]) for p in pots] == [[0, 1, 2], [1, 2]]
    # Nobody could answer a raise from seat 2, so it only called: 100 stay in front of it.
    called = [f for f in seen if f["type"] == "called" and f["seat"] == 2]
    assert called
    assert not called[-1]["all_in"]
    assert await chip_total(server) == 0


async def test_when_everyone_else_folds_the_last_player_takes_the_pot_and_no_tile_is_shown(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    clients, table_id = await seat_three(connect_client, (300, 300, 300))

    def bet_or_fold(seat: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
        return lambda legal: (
            {"type": "bet", "amount": 50} if seat == 0 and "bet" in legal else {"type": "fold"}
        )

    frames = await asyncio.gather(
        *(play_hand(c, table_id, bet_or_fold(i)) for i, c in enumerate(clients))
    )
    for seen in frames:
        assert not [f for f in seen if f["type"] in ("showdown", "fourth_tile_dealt")]
        (pot,) = [f for f in seen if f["type"] == "pot_awarded"]
        assert pot["shares"] == [{"seat": 0, "amount": 30}]
        ended = seen[-1]
        assert {s["seat"]: s["amount"] for s in ended["stacks"]} == {0: 320, 1: 290, 2: 290}


async def test_a_player_who_drops_mid_hand_resumes_with_the_token_and_a_snapshot(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    welcome = await client.hello()
    await client.reply("create_table", buy_in=500)
    turn = await client.expect("turn_started", seat=0)
    my_tiles = next(f for f in client.frames if f["type"] == "tiles_dealt" and f["seat"] == 0)[
        "tiles"
    ]
    await client.close()

    again = await connect_client()
    resumed = await again.reply("hello", version=PROTOCOL_VERSION, token=welcome["token"])
    assert resumed["resumed"]
    assert resumed["account_id"] == welcome["account_id"]
    assert "token" not in resumed
    assert resumed["tables"] == [turn["table_id"]]
    snapshot = await again.expect("table_snapshot")
    table = snapshot["table"]
    assert table["you"] == 0
    assert table["hand"]["hand_id"] == turn["hand_id"]
    assert table["hand"]["actor"] == 0
    mine = next(s for s in table["seats"] if s["seat"] == 0)
    assert mine["tiles"] == my_tiles
    assert "tiles" not in next(s for s in table["seats"] if s["seat"] == 1)
    assert table["legal"]["check"] is True

    await again.send("check", table_id=turn["table_id"], hand_id=turn["hand_id"])
    await again.expect("checked", seat=0)
    frames = await play_hand(again, turn["table_id"], call_or_check)
    assert frames[-1]["type"] == "hand_ended"
    assert await chip_total(server) == 0


async def test_a_snapshot_mid_hand_carries_the_hand_so_far_as_a_spectator_saw_it(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    first, second, early, late = [await connect_client() for _ in range(4)]
    for client, name in ((first, "First"), (second, "Second"), (early, "Early"), (late, "Late")):
        await client.hello(name)
    created = await first.reply("create_table", options={"dealer_bot": False}, buy_in=300)
    table_id = created["table"]["table_id"]
    await early.reply("watch_table", table_id=table_id)
    await second.reply("join_table", table_id=table_id, buy_in=300)
    by_seat = {0: first, 1: second}
    opened = await early.expect("turn_started")
    await by_seat[opened["seat"]].send(
        "bet", table_id=table_id, hand_id=opened["hand_id"], amount=20
    )
    answered = await early.expect("turn_started", seat=1 - opened["seat"])
    await by_seat[answered["seat"]].send(
        "raise", table_id=table_id, hand_id=opened["hand_id"], to=60
    )
    await early.expect("raised")

    await late.reply("watch_table", table_id=table_id)
    snapshot = await late.expect("table_snapshot")
    events = snapshot["table"]["hand"]["events"]
    started = next(i for i, f in enumerate(early.frames) if f["type"] == "hand_started")
    seen = [f for f in early.frames[started:] if f["seq"] <= snapshot["seq"]]
    assert events == seen
    assert [e["type"] for e in events if e["type"] in ("bet_placed", "raised")] == [
        "bet_placed",
        "raised",
    ]
    assert not [e for e in events if "tiles" in e], "face down, as a spectator saw them"


async def two_players(connect_client: Connect, turn_seconds: float) -> tuple[Client, Client, str]:
    """First and Second at a table of their own (no dealer bot), 300 chips each."""
    first, second = await connect_client(), await connect_client()
    await first.hello("First")
    await second.hello("Second")
    options = {"dealer_bot": False, "turn_seconds": turn_seconds}
    created = await first.reply("create_table", options=options, buy_in=300)
    table_id: str = created["table"]["table_id"]
    await second.reply("join_table", table_id=table_id, buy_in=300)
    return first, second, table_id


async def test_a_turn_that_times_out_checks_when_it_can_and_folds_when_it_cannot(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    first, second, table_id = await two_players(connect_client, turn_seconds=0.2)

    # The last seat has the first button, so seat 0 acts first; it lets its time run out.
    await first.expect("turn_started", seat=0)
    timed_out = await first.expect("turn_timed_out", seat=0)
    checked = await first.expect("checked", seat=0)
    assert checked["seq"] == timed_out["seq"] + 1

    turn = await second.wait(lambda m: m["type"] == "turn_started" and "legal" in m)
    assert turn["seat"] == 1
    assert turn["legal"]["bet"] == {"min": 10, "max": 290}
    await second.send("bet", table_id=table_id, hand_id=turn["hand_id"], amount=40)
    await first.expect("turn_started", seat=0)
    await first.expect("turn_timed_out", seat=0)
    await first.expect("folded", seat=0)
    ended = await first.expect("hand_ended")
    assert {s["seat"]: s["amount"] for s in ended["stacks"]} == {0: 290, 1: 310}


async def test_an_action_sent_in_time_beats_a_turn_clock_that_ran_out_while_the_server_stalled(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """A server that stalls (a long collection, a frozen VM) finds, when it wakes, both
    the turn's clock run out and the player's action waiting to be read: the action
    was sent in time, so it is the action that counts."""
    first, _, table_id = await two_players(connect_client, turn_seconds=0.5)

    turn = await first.wait(lambda m: m["type"] == "turn_started" and "legal" in m)
    await first.send("check", table_id=table_id, hand_id=turn["hand_id"])
    # The server shares this event loop: blocking it stalls the server with the check
    # unread in its socket, until well past the turn's clock.
    time.sleep(1.0)
    acted = await first.wait(lambda m: m["type"] in ("checked", "turn_timed_out"))
    assert acted["type"] == "checked"
    assert not any(m["type"] == "turn_timed_out" for m in first.frames)


async def test_a_seat_leaving_after_the_hand_plays_it_out_and_is_not_dealt_the_next(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """leave_table with after_hand: the seat's turns stay its own (no check or fold is
    played for it), it stands up as the hand ends, and the next hand goes on without it."""
    players = [await connect_client() for _ in range(4)]
    for n, player in enumerate(players):
        await player.hello(f"P{n}")
    # Dealt from three players on: the fourth may come in the first hand or the next.
    options = {"dealer_bot": False, "seats": 4, "min_players": 3}
    made = await players[0].reply("create_table", options=options, buy_in=300)
    table_id = made["table"]["table_id"]
    for player in players[1:]:
        await player.reply("join_table", table_id=table_id, buy_in=300)
    leaver = players[0]
    await leaver.expect("hand_started")
    ref = await leaver.send("leave_table", table_id=table_id, after_hand=True)
    # Every seat plays the hand out itself: checks, or the leaver bets and the others call.
    while True:
        message = await players[1].wait(
            lambda m: m["type"] in ("turn_started", "hand_ended") and m.get("hand_id") == 1
        )
        if message["type"] == "hand_ended":
            break
        actor, seq = players[message["seat"]], message["seq"]
        turn = message
        if actor is not players[1]:  # whose own copy of the turn was just read
            turn = await actor.wait(
                lambda m, seq=seq: m["type"] == "turn_started" and "legal" in m and m["seq"] == seq
            )
        legal = turn["legal"]
        if actor is leaver and legal.get("bet"):
            move = {"type": "bet", "amount": legal["bet"]["min"]}
        else:
            move = {"type": "check"} if legal.get("check") else {"type": "call"}
        await actor.send(table_id=table_id, hand_id=1, **move)
    left = await leaver.expect("table_left", table_id=table_id)
    assert left["ref"] == ref
    assert not any(m["type"] == "turn_timed_out" for m in leaver.frames)
    # Its moves answer its own messages: none was played for it.
    moves = ("checked", "folded", "bet_placed", "called")
    own = [m for m in leaver.frames if m["type"] in moves and m["seat"] == 0]
    assert own
    assert all(m.get("ref") is not None for m in own)
    # The next hand is dealt to those who stayed.
    next_hand = await players[1].expect("hand_started", hand_id=2)
    assert {s["seat"] for s in next_hand["stacks"]} == {1, 2, 3}
    assert await chip_total(server) == 0


async def test_a_leave_that_hurries_one_after_the_hand_takes_its_place(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """leave_table after one with after_hand: the seat stands up now (its turns checked
    or folded for it), and table_left answers the second request; the first gets no
    answer of its own (PROTOCOL.md, leave_table)."""
    player = await connect_client()
    await player.hello("Ann")
    made = await player.reply("create_table", options={}, buy_in=300)
    table_id = made["table"]["table_id"]
    await player.expect("hand_started")
    first = await player.send("leave_table", table_id=table_id, after_hand=True)
    second = await player.send("leave_table", table_id=table_id)
    left = await player.expect("table_left", table_id=table_id)
    assert left["ref"] == second
    assert not [m for m in player.frames if m.get("ref") == first]
    assert await chip_total(server) == 0
