"""``list_hands``: finished hands recalled from the store, a table's or an account's."""

from __future__ import annotations

from typing import Any

import pytest

from qiuqiu.protocol import fairness
from qiuqiu.server import history
from qiuqiu.server.gateway import QiuQiuServer
from tests.server.conftest import Client
from tests.server.test_play import Connect, call_or_check, play_hand


async def three_hands(connect: Connect, name: str) -> tuple[Client, str]:
    client = await connect()
    await client.hello(name)
    # Bets and raises capped: a caller of everything could otherwise lose all 500 to the
    # dealer bot before its third hand (the decks are new every run).
    options = {"max_bet": 50, "max_raises": 2}
    created = await client.reply("create_table", options=options, buy_in=500)
    table_id = created["table"]["table_id"]
    for _ in range(3):
        await play_hand(client, table_id, call_or_check)
    return client, table_id


async def test_an_account_recalls_its_last_hands_oldest_first_with_what_each_won(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, table_id = await three_hands(connect_client, "Ann")
    listed = await client.reply("list_hands")
    assert listed["type"] == "hand_list"
    hands = listed["hands"]
    assert [(h["table_id"], h["hand_id"]) for h in hands] == [(table_id, n) for n in (1, 2, 3)]
    ended = [f for f in client.frames if f["type"] == "hand_ended"]
    for hand, end in zip(hands, ended, strict=True):
        mine = next(s for s in hand["seats"] if s["seat"] == 0)
        assert mine["after"] == next(s["amount"] for s in end["stacks"] if s["seat"] == 0)
        assert not hand["voided"]


async def test_each_recalled_hand_carries_the_deal_so_it_can_be_checked_afterwards(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, table_id = await three_hands(connect_client, "Ann")
    listed = await client.reply("list_hands", table_id=table_id, limit=2)
    hands = listed["hands"]
    assert [h["hand_id"] for h in hands] == [2, 3]
    for hand in hands:
        events: list[dict[str, Any]] = hand["events"]
        started, ended = events[0], events[-1]
        assert (started["type"], ended["type"]) == ("hand_started", "hand_ended")
        assert "seed" not in ended
        assert "deck" not in ended
        leaves = b"".join(bytes.fromhex(x) for x in started["leaves"])
        assert fairness.commitment(started["leaves"]) == started["commitment"]
        assert len(leaves) == 28 * 32
        dealt = [e for e in events if e["type"] == "tiles_dealt"]
        assert dealt, "the deal is there"
        assert all("tiles" not in e for e in dealt), "as a spectator saw it: face down"


async def test_another_players_table_history_holds_no_tile_they_did_not_show(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    _, table_id = await three_hands(connect_client, "Ann")
    other = await connect_client()
    await other.hello("Bo")
    listed = await other.reply("list_hands", table_id=table_id)
    assert len(listed["hands"]) == 3
    mine = await other.reply("list_hands")
    assert mine["hands"] == [], "Bo has played no hand"


async def test_a_limit_outside_one_to_a_hundred_is_refused(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    await client.hello("Ann")
    refused = await client.reply("list_hands", limit=101)
    assert (refused["type"], refused["code"]) == ("error", "invalid_message")


async def test_each_recalled_hand_names_its_players_as_they_sat_in_it(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, table_id = await three_hands(connect_client, "Ann")
    listed = await client.reply("list_hands", table_id=table_id)
    for hand in listed["hands"]:
        named = {s["seat"]: (s["account_id"] == "house", s["name"]) for s in hand["seats"]}
        assert named == {0: (False, "Ann"), 1: (True, "Dealer")}


async def test_a_listed_hand_goes_out_with_its_recorded_events_not_read_and_made_again(
    server: QiuQiuServer, connect_client: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reading and making again every event of a hundred hands of six seats held the
    # event loop some 50 ms a list_hands: five clients asking in a loop, within the
    # message rate, slowed every table of the server a hundredfold.
    read: list[str] = []
    real_private = history._private

    def private(event: dict[str, Any]) -> dict[str, Any]:
        read.append(event["type"])
        return real_private(event)

    monkeypatch.setattr(history, "_private", private)
    client, table_id = await three_hands(connect_client, "Ann")
    listed = await client.reply("list_hands", table_id=table_id)
    assert read == []
    recorded = await server.lobby.store.table_hands(table_id)
    assert [len(h["events"]) for h in listed["hands"]] == [len(h.events) for h in recorded]
    text = client.texts[-1]
    assert all(event in text for hand in recorded for event in hand.events)
