"""Who may do what: a seat is its account's alone, tokens are secrets kept hashed,
names are cleaned before anyone sees them, and an account has one connection."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from websockets.asyncio.client import connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.protocol.common import NAME_LENGTH
from qiuqiu.server.accounts import TAKEN_OVER_REASON
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.redis_store import RedisStore
from tests.server.conftest import FAST, WAIT, Client, at_bot_table, chip_total, my_turn
from tests.server.faulty_store import Fault, FaultPlan, FaultyStore

Connect = Callable[[], Any]


async def heads_up(connect_client: Connect) -> tuple[Client, Client, dict[str, Any]]:
    """Ann and Bob at a two-seat table with no bot, and the first turn's message."""
    ann, bob = await connect_client(), await connect_client()
    await ann.hello("Ann")
    await bob.hello("Bob")
    options = {"seats": 2, "dealer_bot": False}
    created = await ann.reply("create_table", options=options, buy_in=300)
    table_id = created["table"]["table_id"]
    await bob.reply("join_table", table_id=table_id, buy_in=300)
    turn = await ann.wait(lambda m: m["type"] == "turn_started" and m["table_id"] == table_id)
    return ann, bob, turn


async def test_a_seat_takes_actions_only_from_its_own_account(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    ann, bob, turn = await heads_up(connect_client)
    table_id, hand_id = turn["table_id"], turn["hand_id"]
    actor, other = (ann, bob) if "legal" in turn else (bob, ann)
    before = await chip_total(server)

    # The other player acts out of turn, and an account with no seat acts at all.
    refused = await other.reply("check", table_id=table_id, hand_id=hand_id)
    assert refused["code"] == "not_your_turn"
    cara = await connect_client()
    await cara.hello("Cara")
    refused = await cara.reply("check", table_id=table_id, hand_id=hand_id)
    assert refused["code"] == "not_seated"

    # Nothing happened: the turn is still the actor's, who can play it.
    assert not [m for m in [*ann.frames, *bob.frames] if m["type"] == "checked"]
    played = await actor.send("check", table_id=table_id, hand_id=hand_id)
    checked = await actor.expect("checked", table_id=table_id)
    assert checked["ref"] == played
    assert await chip_total(server) == before == 0


async def test_a_resume_token_is_long_random_and_kept_only_as_its_hash(
    redis_store: RedisStore, redis_url: str
) -> None:
    server = QiuQiuServer(FAST, store=redis_store)
    await server.start()
    tokens = []
    for name in ("Ann", "Bob", "Cara"):
        async with connect(server.url) as ws:
            client = Client(ws)
            tokens.append((await client.hello(name))["token"])
            await client.close()
    await server.stop()

    assert len(set(tokens)) == 3
    for token in tokens:
        # 32 random bytes, URL-safe base64: 256 bits nobody can guess.
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
    stored = b""
    async with Redis.from_url(redis_url, decode_responses=True) as redis:
        async for key in redis.scan_iter():
            stored += key.encode() + repr(await redis.dump(key)).encode()
    for token in tokens:
        assert token.encode() not in stored
        assert hashlib.sha256(token.encode()).hexdigest().encode() in stored


async def test_a_token_resumes_its_own_account_and_cannot_act_at_another_seat(
    connect_client: Connect,
) -> None:
    ann, turn = await at_bot_table(connect_client)
    bob = await connect_client()
    bob_token = (await bob.hello("Bob"))["token"]
    await bob.close()

    again = await connect_client()
    welcome = await again.reply("hello", version=PROTOCOL_VERSION, token=bob_token)
    assert (welcome["name"], welcome["tables"]) == ("Bob", [])
    for action in ("check", "fold"):
        refused = await again.reply(action, table_id=turn["table_id"], hand_id=turn["hand_id"])
        assert refused["code"] == "not_seated"
    # Ann's turn is untouched: she plays it.
    await ann.send("check", table_id=turn["table_id"], hand_id=turn["hand_id"])
    await ann.expect("checked", table_id=turn["table_id"], seat=turn["seat"])


async def test_names_reach_other_players_cleaned_and_cut_to_length(
    connect_client: Connect,
) -> None:
    ann = await connect_client()
    await ann.hello("Ann")
    mallory = await connect_client()
    sneaky = "\u202e\u200bMal\x07lory\u0000\n\t  the   " + "x" * 40
    welcome = await mallory.hello(sneaky)
    assert welcome["name"].startswith("Mallory the xxx")
    assert len(welcome["name"]) == NAME_LENGTH

    created = await ann.reply("create_table", options={"seats": 3, "dealer_bot": False}, buy_in=100)
    table_id = created["table"]["table_id"]
    await mallory.reply("join_table", table_id=table_id, buy_in=100)
    seated = await ann.expect("player_seated", table_id=table_id)
    assert seated["name"] == welcome["name"]
    assert all(ch.isprintable() for ch in seated["name"])


async def test_a_name_with_nothing_visible_is_refused(connect_client: Connect) -> None:
    client = await connect_client()
    refused = await client.hello("\u200b\u202e\x07 \t")
    assert refused["code"] == "invalid_message"
    assert "visible character" in refused["message"]


async def test_a_name_too_long_to_be_a_name_is_refused(connect_client: Connect) -> None:
    client = await connect_client()
    refused = await client.hello("x" * 65)
    assert refused["code"] == "invalid_message"


async def test_an_account_has_one_connection_and_a_newer_one_closes_the_older_with_4000(
    connect_client: Connect,
) -> None:
    ann, turn = await at_bot_table(connect_client)
    token = next(m["token"] for m in ann.frames if m["type"] == "welcome")
    again = await connect_client()
    welcome = await again.reply("hello", version=PROTOCOL_VERSION, token=token)
    assert welcome["tables"] == [turn["table_id"]]
    await ann.closed()
    assert ann.connection.close_code == 4000
    assert ann.connection.close_reason == TAKEN_OVER_REASON
    # The seat plays on through the newer connection, which gets the turn again.
    snapshot = await again.expect("table_snapshot")
    assert snapshot["table"]["table_id"] == turn["table_id"]
    assert snapshot["table"]["legal"]["check"] is True
    await again.send("check", table_id=turn["table_id"], hand_id=turn["hand_id"])
    await again.expect("checked", table_id=turn["table_id"])
    assert (await my_turn(again, turn["table_id"]))["hand_id"] >= turn["hand_id"]


@dataclass
class TwoProcesses:
    """Two servers on one Redis, one of them on a store that fails as told, and every
    client connected to either, closed at the end."""

    redis_url: str
    here: QiuQiuServer
    there: QiuQiuServer
    opened: list[Client] = field(default_factory=list)

    async def connect_to(self, server: QiuQiuServer) -> Client:
        self.opened.append(Client(await connect(server.url)))
        return self.opened[-1]

    async def hello_claimed(self, client: Client, token: str, account_id: str) -> None:
        """Say hello with ``token`` on ``client``, and return once its claim on the
        account's connection is in Redis (its answer may still be on its way)."""
        claim = f"qiuqiu:connection:{account_id}"
        async with Redis.from_url(self.redis_url, decode_responses=True) as raw:
            held = await raw.lindex(claim, -1)
            await client.send("hello", version=PROTOCOL_VERSION, token=token)
            async with asyncio.timeout(WAIT):
                while await raw.lindex(claim, -1) == held:
                    await asyncio.sleep(0.01)


@asynccontextmanager
async def two_processes(
    redis_url: str, plan: FaultPlan, *, slowed: str
) -> AsyncIterator[TwoProcesses]:
    """``slowed`` ("here" or "there") is the server whose store follows ``plan``."""
    faulty = await FaultyStore.open(redis_url, plan)
    plain = await RedisStore.from_url(redis_url)
    here, there = (faulty, plain) if slowed == "here" else (plain, faulty)
    servers = TwoProcesses(
        redis_url, QiuQiuServer(FAST, store=here), QiuQiuServer(FAST, store=there)
    )
    for server in (servers.here, servers.there):
        await server.start()
    try:
        yield servers
    finally:
        for client in servers.opened:
            await client.close()
        for server in (servers.here, servers.there):
            await server.stop()
        await faulty.close()
        await plain.close()


async def test_saying_hello_with_the_token_elsewhere_takes_the_account_over(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    first, turn = await at_bot_table(connect_client, buy_in=300)
    welcome = next(m for m in first.frames if m["type"] == "welcome")
    second = await connect_client()
    resumed = await second.reply("hello", version=PROTOCOL_VERSION, token=welcome["token"])
    assert resumed["tables"] == [turn["table_id"]]
    snapshot = await second.expect("table_snapshot")
    assert snapshot["table"]["you"] == 0
    await first.closed()
    assert first.connection.close_code == 4000
    # The seat never counted as disconnected: it simply moved to the new connection.
    assert not [m for m in second.frames if m["type"] == "player_disconnected"]
    await second.send("check", table_id=turn["table_id"], hand_id=turn["hand_id"])
    await second.expect("checked", seat=0)


async def test_two_hellos_with_one_token_at_once_leave_one_connection_on_any_process(
    redis_url: str,
) -> None:
    """Two hellos with Ann's token reach one process at once, the first slowed after
    it has claimed the account in Redis: the claims must move the seats, and close
    the older connection, in the order Redis took them. Else the first, finishing
    last, closed the second here while Redis named the second as Ann's connection,
    and a third hello on another process closed only that one: the first stayed
    open beside the third, two live connections of one account."""
    # seated_tables' 2nd call is the first token hello's, made once it has claimed.
    plan = FaultPlan((Fault("seated_tables", call=2, mode="stall", stall=1.0),))
    async with two_processes(redis_url, plan, slowed="here") as servers:
        here, there = servers.here, servers.there
        ann = await servers.connect_to(here)
        welcome = await ann.hello("Ann")
        token = welcome["token"]
        first, second = await servers.connect_to(here), await servers.connect_to(here)
        await servers.hello_claimed(first, token, welcome["account_id"])
        await second.reply("hello", version=PROTOCOL_VERSION, token=token)
        await first.expect("welcome")
        third = await servers.connect_to(there)
        await third.reply("hello", version=PROTOCOL_VERSION, token=token)
        for older in (ann, first, second):
            await older.closed()
            assert older.connection.close_code == 4000
        listed = await third.reply("list_tables")
        assert listed["type"] == "table_list"


async def test_a_seat_stays_with_the_newer_of_two_hellos_whatever_order_they_reach_it(
    redis_url: str,
) -> None:
    """Ann's token says hello on the process that does not host her table, which is
    slowed once it has claimed the account, then on the host. The host seats her again
    from the newer hello first, and the older one's word reaches it after: it must
    not take the seat back. Else the older connection, closed by the newer, took the
    seat away with it: the newer, still open, was told not_at_table at her own table."""
    # table_host's 1st call on the other process is the older hello's, once it has claimed.
    plan = FaultPlan((Fault("table_host", call=1, mode="stall", stall=1.0),))
    async with two_processes(redis_url, plan, slowed="there") as servers:
        here, there = servers.here, servers.there
        ann, turn = await at_bot_table(lambda: servers.connect_to(here))
        table_id = turn["table_id"]
        welcome = next(m for m in ann.frames if m["type"] == "welcome")
        token = welcome["token"]
        older = await servers.connect_to(there)
        await servers.hello_claimed(older, token, welcome["account_id"])
        newer = await servers.connect_to(here)
        await newer.reply("hello", version=PROTOCOL_VERSION, token=token)
        await older.closed()
        assert older.connection.close_code == 4000
        async with asyncio.timeout(WAIT):
            while there._outboxes:  # the older hello has sent the host all it will
                await asyncio.sleep(0.01)
        # Messages from one process reach the host in the order they were sent: once a
        # spectator's watch_table from there is answered, the older hello's word is in.
        watcher = await servers.connect_to(there)
        await watcher.hello("Wes")
        assert (await watcher.reply("watch_table", table_id=table_id))["type"] == "table_watched"
        snapshot = await newer.reply("request_snapshot", table_id=table_id)
        assert snapshot["type"] == "table_snapshot", snapshot
        you = snapshot["table"]["you"]
        assert snapshot["table"]["seats"][you]["connected"] is True
        await newer.send("check", table_id=table_id, hand_id=turn["hand_id"])
        await newer.expect("checked", table_id=table_id)
