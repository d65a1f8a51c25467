"""The lobby, and coming and going at tables."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import weakref
from dataclasses import replace
from random import Random
from typing import Any

import pytest

from qiuqiu.engine import Hand, Tile, rank
from qiuqiu.protocol import PROTOCOL_VERSION, encode
from qiuqiu.server import lobby as lobby_module
from qiuqiu.server.accounts import Accounts
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.health import StoreHealth
from qiuqiu.server.lobby import EMPTY_TABLES_PER_ACCOUNT, Lobby
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import TableRecord
from tests.server.conftest import FAST, at_bot_table, check_or_call_to, chip_total
from tests.server.store_helpers import OPTIONS, saved, seat
from tests.server.test_play import Connect, call_or_check, play_hand


@pytest.fixture
def config() -> ServerConfig:
    # A short grace period, for the test of a player who never comes back.
    return FAST.model_copy(update={"grace": 0.3})


async def test_the_lobby_lists_tables_with_their_stakes_seats_and_players(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    host, guest = await connect_client(), await connect_client()
    await host.hello("Host")
    await guest.hello("Guest")
    options = {"seats": 4, "dealer_bot": False, "ante": 5, "min_bet": 20, "betting_rounds": 2}
    created = await host.reply("create_table", options=options)
    table_id = created["table"]["table_id"]
    await guest.reply("join_table", table_id=table_id, buy_in=400, seat=2)

    listing = await host.reply("list_tables")
    (table,) = [t for t in listing["tables"] if t["table_id"] == table_id]
    assert table["options"]["ante"] == 5
    assert table["options"]["min_bet"] == 20
    assert table["options"]["betting_rounds"] == 2
    assert table["seats"] == [{"seat": 2, "name": "Guest", "is_bot": False, "stack": 400}]
    assert table["free_seats"] == 3
    assert table["playing"] is False


async def test_a_table_opening_is_logged_with_the_table_as_a_field(
    server: QiuQiuServer, connect_client: Connect, caplog: pytest.LogCaptureFixture
) -> None:
    # An operator filters the JSON log on its table field: the table's first line too.
    host = await connect_client()
    await host.hello("Host")
    with caplog.at_level(logging.INFO, logger="qiuqiu.server"):
        created = await host.reply("create_table", options={"dealer_bot": False})
    table_id = created["table"]["table_id"]
    (opened,) = [r for r in caplog.records if "opened" in r.getMessage()]
    assert getattr(opened, "table", None) == table_id
    assert table_id in opened.getMessage()


async def test_each_listing_shows_the_tables_as_they_are_at_that_moment(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    host, guest = await connect_client(), await connect_client()
    await host.hello("Host")
    await guest.hello("Guest")
    options = {"seats": 4, "dealer_bot": False}
    table_id = (await host.reply("create_table", options=options))["table"]["table_id"]

    async def listed() -> dict[str, Any]:
        listing = await host.reply("list_tables")
        (table,) = [t for t in listing["tables"] if t["table_id"] == table_id]
        live = server.lobby.tables[table_id].summary()
        assert table == json.loads(encode(live))
        shown: dict[str, Any] = table
        return shown

    assert (await listed())["seats"] == []
    await guest.reply("join_table", table_id=table_id, buy_in=400, seat=1)
    assert (await listed())["seats"] == [
        {"seat": 1, "name": "Guest", "is_bot": False, "stack": 400}
    ]
    await host.reply("join_table", table_id=table_id, buy_in=300, seat=3)
    await host.expect("hand_started")
    table = await listed()
    assert table["playing"] is True
    assert [s["name"] for s in table["seats"]] == ["Guest", "Host"]
    assert table["free_seats"] == 2


async def test_a_listing_summarises_again_only_the_tables_elsewhere_that_changed(
    redis_store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A list_tables on a process beside others reads every table they host: making
    # each one's summary again at each one held the event loop ~10 ms a thousand.
    made: list[str] = []

    def summary_of(record: TableRecord) -> Any:
        made.append(record.table_id)
        return real_summary_of(record)

    real_summary_of = lobby_module.summary_of
    monkeypatch.setattr(lobby_module, "summary_of", summary_of)
    tables = [TableRecord(t, OPTIONS, table_seed="00" * 32) for t in ("t1", "t2")]
    for table in tables:
        assert await redis_store.acquire_table(table.table_id, 60.0)
        await redis_store.commit(saved(table))
    lobby = Lobby(redis_store, Random(0), Accounts(redis_store, StoreHealth()))
    first = json.loads((await lobby.listing(None)).text)
    assert json.loads((await lobby.listing(None)).text) == first
    assert made == ["t1", "t2"]
    await redis_store.commit(saved(replace(tables[1], seats=(seat(0, "ann", 400),))))
    third = json.loads((await lobby.listing(None)).text)
    assert made == ["t1", "t2", "t2"]
    assert third["tables"][0] == first["tables"][0]
    assert [s["name"] for s in third["tables"][1]["seats"]] == ["Ann"]


async def test_an_account_coming_back_is_told_each_table_it_sits_at_and_no_other(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    ann = await connect_client()
    token = (await ann.hello("Ann"))["token"]
    no_bot = {"seats": 4, "dealer_bot": False, "min_players": 3}  # no hand starts
    table_ids = [
        (await ann.reply("create_table", options=no_bot, buy_in=200))["table"]["table_id"]
        for _ in range(2)
    ]

    async def told() -> list[str]:
        again = await connect_client()
        welcome = await again.reply("hello", version=PROTOCOL_VERSION, token=token)
        tables: list[str] = welcome["tables"]
        return tables

    assert await told() == table_ids
    bob = await connect_client()
    await bob.hello("Bob")
    await bob.reply("join_table", table_id=table_ids[0], buy_in=200)
    ann = await connect_client()
    await ann.reply("hello", version=PROTOCOL_VERSION, token=token)
    await ann.send("leave_table", table_id=table_ids[0])
    await ann.expect("table_left")
    assert table_ids[0] in server.lobby.tables  # Bob still sits there
    assert await told() == table_ids[1:]
    ann = await connect_client()
    await ann.reply("hello", version=PROTOCOL_VERSION, token=token)
    await ann.send("leave_table", table_id=table_ids[1])
    await ann.expect("table_left")
    assert await told() == []


async def test_a_table_against_the_dealer_bot_is_one_message_away(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    await client.hello()
    await client.send("create_table", buy_in=300)
    created = await client.expect("table_created")
    assert [s["is_bot"] for s in created["table"]["seats"]] == [True]
    await client.expect("table_joined", seat=0)
    started = await client.expect("hand_started")
    assert started["button"] == 1  # the bot deals; the player acts first
    await client.expect("turn_started", seat=0)


async def test_leaving_returns_the_stack_and_balances_follow_the_account_between_tables(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    await client.hello()
    await client.send("create_table", buy_in=300)
    joined = await client.expect("table_joined")
    table_id = joined["table_id"]
    await play_hand(client, table_id, call_or_check)

    # The next hand has started already (no pause in tests): the stack comes back when it ends.
    await client.send("leave_table", table_id=table_id)
    left = await client.expect("table_left")
    assert left["balance"] == 700 + left["cashed_out"]

    await client.send("create_table", buy_in=left["balance"])
    rejoined = await client.expect("table_joined")
    assert rejoined["balance"] == 0
    assert await chip_total(server) == 0


async def test_a_player_who_leaves_mid_hand_is_played_out_and_paid_when_it_ends(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, turn = await at_bot_table(connect_client, buy_in=300)
    ref = await client.send("leave_table", table_id=turn["table_id"])
    # Its own turn: it is played at once (a check, since nobody has bet), with no
    # time-out, as no deadline passed.
    await client.expect("checked", seat=0)
    ended = await client.expect("hand_ended")
    left = await client.expect("table_left")
    assert left["ref"] == ref
    stack = next(s["amount"] for s in ended["stacks"] if s["seat"] == 0)
    assert left["cashed_out"] == stack
    assert left["balance"] == 700 + stack
    assert await chip_total(server) == 0


async def test_a_player_who_never_comes_back_loses_the_seat_and_keeps_the_chips(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    player, other = await connect_client(), await connect_client()
    welcome = await player.hello("Gone")
    await other.hello("Stays")
    created = await player.reply("create_table", options={"dealer_bot": False}, buy_in=200)
    table_id = created["table"]["table_id"]
    await other.reply("watch_table", table_id=table_id)
    await player.close()

    await other.expect("player_disconnected", seat=0)
    await other.expect("player_left", seat=0)
    again = await connect_client()
    resumed = await again.reply("hello", version=PROTOCOL_VERSION, token=welcome["token"])
    assert resumed["tables"] == []
    assert resumed["balance"] == 1000
    assert await chip_total(server) == 0


async def test_a_client_that_missed_events_asks_for_a_snapshot_and_gets_the_current_seq(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, turn = await at_bot_table(connect_client, buy_in=300)
    snapshot = await client.reply("request_snapshot", table_id=turn["table_id"])
    assert snapshot["type"] == "table_snapshot"
    assert snapshot["seq"] == turn["seq"]
    assert snapshot["table"]["hand"]["actor"] == 0
    seqs = [m["seq"] for m in client.frames if "seq" in m and m["type"] != "table_snapshot"]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))


async def test_at_a_manual_split_table_each_player_declares_a_cut_that_is_binding(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, turn = await at_bot_table(connect_client, buy_in=300, manual_split=True)
    cutting = await check_or_call_to(client, turn, "cutting_started")
    assert 0 in cutting["seats"]
    mine = [
        t
        for m in client.frames
        if m["type"] in ("tiles_dealt", "fourth_tile_dealt") and m["seat"] == 0
        for t in (m.get("tiles") or [m.get("tile")])
    ]
    # Deliberately the first two and the last two tiles, which is rarely the best cut.
    pairs = [mine[:2], mine[2:]]
    await client.send(
        "declare_cut", table_id=turn["table_id"], hand_id=turn["hand_id"], pairs=pairs
    )
    declared = await client.expect("cut_declared", seat=0)
    assert sorted(map(sorted, declared["cut"]["pairs"])) == sorted(map(sorted, pairs))
    showdown = await client.expect("showdown")
    shown = next(h for h in showdown["hands"] if h["seat"] == 0)
    assert sorted(map(sorted, shown["cut"]["pairs"])) == sorted(map(sorted, pairs))
    await asyncio.wait_for(client.expect("hand_ended"), 5)


async def test_a_cut_not_declared_in_time_is_the_best_cut(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client, turn = await at_bot_table(
        connect_client, buy_in=300, manual_split=True, turn_seconds=0.2
    )
    await check_or_call_to(client, turn, "cutting_started")
    await client.expect("turn_timed_out", seat=0)
    declared = await client.expect("cut_declared", seat=0)
    tiles = [
        Tile.parse(t)
        for m in client.frames
        if m["type"] in ("tiles_dealt", "fourth_tile_dealt") and m["seat"] == 0
        for t in (m.get("tiles") or [m["tile"]])
    ]
    best = rank(Hand(tiles))
    assert tuple(declared["cut"]["values"]) == best.pairs
    await client.expect("hand_ended")


async def test_a_seated_player_cannot_also_watch_the_same_table(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    await client.hello()
    await client.send("create_table", buy_in=300)
    joined = await client.expect("table_joined")
    error = await client.reply("watch_table", table_id=joined["table_id"])
    assert error["code"] == "already_seated"


async def test_a_player_back_after_the_grace_period_but_before_the_hand_ends_keeps_the_seat(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    away, other = await connect_client(), await connect_client()
    welcome = await away.hello("Away")
    await other.hello("Other")
    options = {"dealer_bot": False, "turn_seconds": 30}
    created = await away.reply("create_table", options=options, buy_in=200)
    table_id = created["table"]["table_id"]
    await other.reply("join_table", table_id=table_id, buy_in=200)
    # Seat 0 acts first: it checks, then drops while seat 1 thinks past its grace period.
    turn = await away.expect("turn_started", seat=0)
    await away.send("check", table_id=table_id, hand_id=turn["hand_id"])
    await other.expect("turn_started", seat=1)
    await away.close()
    await other.expect("player_disconnected", seat=0)
    seat = server.lobby.tables[table_id].seats[0]
    async with asyncio.timeout(5):
        while not seat.leaving:  # the grace period has run out, with the hand still in play
            await asyncio.sleep(0.01)

    back = await connect_client()
    resumed = await back.reply("hello", version=PROTOCOL_VERSION, token=welcome["token"])
    assert resumed["tables"] == [table_id]
    await other.send("check", table_id=table_id, hand_id=turn["hand_id"])
    await back.expect("hand_ended")
    await back.expect("hand_started", hand_id=turn["hand_id"] + 1)
    assert not [m for m in back.frames if m["type"] == "table_left"]


async def test_a_table_whose_last_player_leaves_closes_and_leaves_the_lobby(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    player, turn = await at_bot_table(connect_client, buy_in=300)
    table_id = turn["table_id"]
    watcher = await connect_client()
    await watcher.hello("Watcher")
    await watcher.reply("watch_table", table_id=table_id)

    await player.send("leave_table", table_id=table_id)
    await player.expect("table_left")
    closed = await watcher.expect("table_closed")
    assert closed["reason"] == "the last player left"
    listing = await watcher.reply("list_tables")
    assert table_id not in [t["table_id"] for t in listing["tables"]]
    # The dealer's chips went back to the house, so nothing is left on the table.
    assert table_id not in server.lobby.tables
    assert await chip_total(server) == 0
    snapshot = await watcher.reply("request_snapshot", table_id=table_id)
    assert snapshot["code"] == "unknown_table"


async def test_a_new_table_never_takes_the_id_of_a_closed_one_whose_hands_are_kept(
    server: QiuQiuServer, connect_client: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    player, turn = await at_bot_table(connect_client, buy_in=300)
    closed_id = turn["table_id"]
    await player.send("leave_table", table_id=closed_id)
    await player.expect("table_left")
    kept = await player.reply("list_hands", table_id=closed_id)
    assert [h["hand_id"] for h in kept["hands"]] == [1]
    # Ids drawn at random: here the first one drawn is the closed table's.
    drawn = iter([closed_id, "tfeedf00d"])
    monkeypatch.setattr(lobby_module, "new_table_id", lambda: next(drawn))
    created = await player.reply("create_table", buy_in=300)
    assert created["table"]["table_id"] == "tfeedf00d"
    # Ann's turn waits for her: no hand of the new table has ended, nor is any listed.
    listed = await player.reply("list_hands", table_id="tfeedf00d")
    assert listed["hands"] == []


async def test_an_account_may_keep_only_a_few_tables_open_that_nobody_sits_at(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    await client.hello()
    for _ in range(EMPTY_TABLES_PER_ACCOUNT):
        created = await client.reply("create_table", options={"dealer_bot": False})
        assert created["type"] == "table_created"
    refused = await client.reply("create_table", options={"dealer_bot": False})
    assert refused["code"] == "too_many_tables"
    # Sitting at one of them makes room for another.
    await client.reply("join_table", table_id=created["table"]["table_id"], buy_in=100)
    again = await client.reply("create_table", buy_in=100)
    assert again["type"] == "table_created"


async def test_a_server_holding_the_most_tables_refuses_one_more_and_a_seat_still_works(
    server: QiuQiuServer, connect_client: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lobby_module, "MAX_TABLES", 2)
    client = await connect_client()
    await client.hello()
    for _ in range(2):
        created = await client.reply("create_table", options={"dealer_bot": False})
        assert created["type"] == "table_created"
    refused = await client.reply("create_table", buy_in=100)
    assert (refused["code"], refused["message"]) == (
        "too_many_tables",
        "this server holds 2 tables, the most it may: join one that is open",
    )
    joined = await client.reply("join_table", table_id=created["table"]["table_id"], buy_in=100)
    assert joined["type"] == "table_joined"


async def test_a_closed_table_is_freed_at_once_and_not_left_to_the_garbage_collector(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    player, turn = await at_bot_table(connect_client, buy_in=300)
    table = weakref.ref(server.lobby.tables[turn["table_id"]])
    gc.disable()  # only reference counting frees it now: a reference cycle would keep it
    try:
        await player.send("leave_table", table_id=turn["table_id"])  # played out, then paid
        await player.expect("hand_ended")
        await player.expect("table_left")
        await asyncio.sleep(0.05)  # the closing table's last tasks end
        assert table() is None
    finally:
        gc.enable()


TWO_SEATS = FAST.model_copy(update={"max_seats_per_account": 2})


@pytest.mark.parametrize("config", [pytest.param(TWO_SEATS, id="two tables an account")])
async def test_an_account_sits_at_no_more_tables_than_the_limit(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """One account sat at a thousand tables at once, each dealt in and timing out."""
    host = await connect_client()
    await host.hello("Host")
    other = (await host.reply("create_table", options={"dealer_bot": False}))["table"]
    client = await connect_client()
    account_id = (await client.hello())["account_id"]
    for _ in range(2):
        assert (await client.reply("create_table", buy_in=100))["type"] == "table_created"
    tables, balances = set(server.lobby.tables), await server.store.balances()
    refused = await client.reply("create_table", buy_in=100)
    assert refused["code"] == "too_many_tables"
    assert "you sit at 2 tables already" in refused["message"]
    refused = await client.reply("join_table", table_id=other["table_id"], buy_in=100)
    assert refused["code"] == "too_many_tables"
    assert set(server.lobby.tables) == tables
    assert await server.store.balances() == balances
    # Leaving one makes room for another.
    first, _ = server.lobby.seated_at(account_id)
    await client.send("leave_table", table_id=first.table_id)
    await client.expect("table_left", table_id=first.table_id)
    joined = await client.reply("join_table", table_id=other["table_id"], buy_in=100)
    assert joined["type"] == "table_joined"


@pytest.mark.parametrize("config", [pytest.param(TWO_SEATS, id="two tables an account")])
async def test_joins_sent_all_at_once_seat_an_account_at_no_more_tables_than_the_limit(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """Each join is checked as it comes; the store checks again as it writes the
    buy-in, so that joins in flight together cannot pass the limit between them."""
    table_ids = []
    for name in ("Hal", "Ivy"):
        host = await connect_client()
        await host.hello(name)
        for _ in range(EMPTY_TABLES_PER_ACCOUNT):
            made = await host.reply("create_table", options={"dealer_bot": False})
            table_ids.append(made["table"]["table_id"])
    client = await connect_client()
    welcome = await client.hello()
    refs = [await client.send("join_table", table_id=t, buy_in=100) for t in table_ids]
    answers: dict[int, dict[str, Any]] = {}
    while len(answers) < len(refs):
        answer = await client.wait(lambda m: m["type"] in ("table_joined", "error"))
        answers[answer["ref"]] = answer
    assert [a["type"] for a in answers.values()].count("table_joined") == 2
    assert {a.get("code") for a in answers.values() if a["type"] == "error"} == {"too_many_tables"}
    assert len(server.lobby.seated_at(welcome["account_id"])) == 2
    assert await chip_total(server) == 0


NO_SEAT_CAP = FAST.model_copy(update={"max_seats_per_account": 0})


@pytest.mark.parametrize("config", [pytest.param(NO_SEAT_CAP, id="no cap")])
async def test_a_seat_cap_of_0_lets_an_account_sit_at_as_many_tables_as_it_pays_for(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    account_id = (await client.hello())["account_id"]
    for _ in range(10):
        assert (await client.reply("create_table", buy_in=100))["type"] == "table_created"
    assert len(server.lobby.seated_at(account_id)) == 10


TWO_SPECTATORS = FAST.model_copy(update={"max_spectators": 2})


@pytest.mark.parametrize("config", [pytest.param(TWO_SPECTATORS, id="two spectators a table")])
async def test_a_table_takes_no_more_spectators_than_the_limit_and_its_players_are_none(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """Two thousand spectators slowed one table's round trip from 1 ms to 318 ms."""
    host = await connect_client()
    await host.hello("Host")
    made = await host.reply("create_table", options={"seats": 4, "dealer_bot": False}, buy_in=100)
    table_id = made["table"]["table_id"]
    table = server.lobby.tables[table_id]
    ann, bo, cy, dan = [await connect_client() for _ in range(4)]
    for client, name in ((ann, "Ann"), (bo, "Bo"), (cy, "Cy"), (dan, "Dan")):
        await client.hello(name)
    for watcher in (ann, bo):
        assert (await watcher.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    refused = await cy.reply("watch_table", table_id=table_id)
    assert refused["code"] == "too_many_spectators"
    assert len(table.core.spectators) == 2
    # A full audience keeps no one from sitting down...
    assert (await dan.reply("join_table", table_id=table_id, buy_in=100))["type"] == "table_joined"
    # ...and a spectator who sits down is one no more: there is room for another.
    assert (await ann.reply("join_table", table_id=table_id, buy_in=100))["type"] == "table_joined"
    assert (await cy.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    assert len(table.core.spectators) == 2
    assert await chip_total(server) == 0


@pytest.mark.parametrize(
    "config", [pytest.param(FAST.model_copy(update={"max_watched_tables": 0}), id="no cap")]
)
async def test_one_connection_watches_many_tables_and_a_seat_there_ends_its_watching(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """With no cap (``--max-watched-tables 0``) a connection watches more tables than
    the default cap; as PROTOCOL.md says under watch_table, a second watch_table is
    answered as the first, and a spectator who sits down and stands up again neither
    sits nor watches there."""
    hosts = [await connect_client() for _ in range(4)]
    table_ids = []
    for n, host in enumerate(hosts):
        await host.hello(f"Host{n}")
        for _ in range(EMPTY_TABLES_PER_ACCOUNT):
            options = {"seats": 3, "dealer_bot": False, "min_players": 3}
            made = await host.reply("create_table", options=options)
            table_ids.append(made["table"]["table_id"])
    eve = await connect_client()
    await eve.hello("Eve")
    for table_id in table_ids:
        assert (await eve.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    again = await eve.reply("watch_table", table_id=table_ids[0])
    assert again["type"] == "table_watched", again
    snapshot = await eve.expect("table_snapshot")
    assert snapshot["table"]["table_id"] == table_ids[0]
    assert [len(server.lobby.tables[t].core.spectators) for t in table_ids] == [1] * len(table_ids)

    table_id = table_ids[0]
    sat = await hosts[0].reply("join_table", table_id=table_id, buy_in=100)  # keeps it open
    assert sat["type"] == "table_joined", sat
    assert (await eve.reply("join_table", table_id=table_id, buy_in=100))["type"] == "table_joined"
    assert (await eve.reply("leave_table", table_id=table_id))["type"] == "table_left"
    refused = await eve.reply("request_snapshot", table_id=table_id)
    assert refused["code"] == "not_at_table", refused
