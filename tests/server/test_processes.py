"""Two ``qiuqiu-server`` processes on one Redis: one lobby, tables shared across them.

Each table is hosted by one process; a player connected to the other plays at it
all the same, through the relay (:mod:`qiuqiu.server.relay`), and may move from
one process to the other with its token.
"""

from __future__ import annotations

import asyncio
import json
import signal

import pytest
from redis.asyncio import Redis
from websockets.asyncio.client import connect

from qiuqiu.cli.bot import leave, play
from qiuqiu.cli.connection import Connection
from qiuqiu.protocol import PROTOCOL_VERSION, TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.accounts import TAKEN_OVER_REASON
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.lobby import EMPTY_TABLES_PER_ACCOUNT
from qiuqiu.server.redis_store import RedisStore
from tests.conftest import free_port
from tests.server.conftest import FAST, Client
from tests.server.faulty_store import Fault, FaultPlan
from tests.server.processes import Caller, Servers, chips_in_redis, hands_dealt, until

HEADS_UP = TableOptions(seats=2, dealer_bot=False, turn_seconds=10)
TWO_SEATS = {"seats": 2, "dealer_bot": False}


async def test_players_on_two_processes_share_a_table_to_showdown_and_may_switch_process(
    redis_url: str, servers: Servers
) -> None:
    store = await RedisStore.from_url(redis_url)
    ports = free_port(), free_port()
    started = [await servers.start(port) for port in ports]
    here, there = (f"ws://127.0.0.1:{port}" for port in ports)
    tokens: list[str] = []
    xia = await Connection.open(here, name="Xia")
    yan = await Connection.open(there, name="Yan", on_token=tokens.append)

    created = await xia.request(cmd.CreateTable(options=HEADS_UP, buy_in=500), wire.TableCreated)
    table_id = created.table.table_id
    listed = await yan.request(cmd.ListTables(), wire.TableList)
    assert [t.table_id for t in listed.tables] == [table_id], "one lobby for both processes"
    joined = await yan.request(cmd.JoinTable(table_id=table_id, buy_in=500), wire.TableJoined)
    assert (joined.seat, joined.balance) == (1, 500)
    players = [asyncio.create_task(play(Caller(), c, table_id)) for c in (xia, yan)]

    async def dealt(at_least: int) -> bool:
        return (await hands_dealt(store, [table_id]))[table_id] >= at_least

    await until(lambda: dealt(4))
    # Yan moves to the process hosting the table: the seat waits for the token there.
    players[1].cancel()
    await yan.close()
    moved = await Connection.open(here, token=tokens[0])
    assert moved.welcome is not None
    assert moved.welcome.tables == (table_id,)
    players[1] = asyncio.create_task(play(Caller(), moved, table_id))
    so_far = (await hands_dealt(store, [table_id]))[table_id]
    await until(lambda: dealt(so_far + 3))

    for player in players:
        assert not player.done()
        player.cancel()
    xia_balance, yan_balance = await asyncio.gather(leave(xia, table_id), leave(moved, table_id))
    for conn in (xia, moved):
        await conn.close()
    for server in started:
        assert await servers.stop(server) == 0

    assert await chips_in_redis(store) == 0
    hands = await store.table_hands(table_id)
    assert len(hands) >= 7
    played = [h for h in hands if not h.voided]
    assert all(any('"showdown"' in e for e in h.events) for h in played), "callers show down"
    for hand in played:
        assert hand.net(xia.account_id) + hand.net(moved.account_id) == 0
    assert xia_balance == 1_000 + sum(h.net(xia.account_id) for h in hands)
    assert yan_balance == 1_000 + sum(h.net(moved.account_id) for h in hands)
    await store.close()


async def test_the_same_token_on_another_process_takes_the_account_over(
    redis_url: str, servers: Servers
) -> None:
    """An account has one connection, whichever process each is on: the older one
    is closed with 4000 and the newer one plays on."""
    ports = free_port(), free_port()
    started = [await servers.start(port) for port in ports]
    here, there = (f"ws://127.0.0.1:{port}" for port in ports)
    hello = {"type": "hello", "version": PROTOCOL_VERSION}
    async with connect(here) as first:
        await first.send(json.dumps({**hello, "name": "Wu"}))
        token = json.loads(await first.recv())["token"]
        async with connect(there) as second:
            await second.send(json.dumps({**hello, "token": token}))
            assert json.loads(await second.recv())["resumed"] is True
            async with asyncio.timeout(10):
                await first.wait_closed()
            assert (first.close_code, first.close_reason) == (4000, TAKEN_OVER_REASON)
            await second.send(json.dumps({"type": "list_tables", "id": 1}))
            assert json.loads(await second.recv())["type"] == "table_list"
    for server in started:
        assert await servers.stop(server) == 0


async def test_a_takeover_whose_claim_was_written_but_not_answered_still_closes_the_older(
    servers: Servers,
) -> None:
    """Wu is connected to one process. His token says hello on the other, whose claim of
    the account's connection is written but its answer lost (Redis slow, a connection
    cut): that hello is refused, store_unavailable. His client tries again on a new
    connection, which is welcomed: the first connection, on the first process, is closed
    with 4000 all the same, so the account never has two."""
    first_port, faulty_port = free_port(), free_port()
    await servers.start(first_port)
    lost_answer = FaultPlan((Fault("claim_connection", 1, "fail_after"),))
    await servers.start(faulty_port, plan=lost_answer)
    hello = {"type": "hello", "version": PROTOCOL_VERSION}
    async with connect(f"ws://127.0.0.1:{first_port}") as socket:
        first = Client(socket)
        token = (await first.reply("hello", version=PROTOCOL_VERSION, name="Wu"))["token"]
        async with connect(f"ws://127.0.0.1:{faulty_port}") as refused:
            await refused.send(json.dumps({**hello, "token": token}))
            assert json.loads(await refused.recv())["code"] == "store_unavailable"
        async with connect(f"ws://127.0.0.1:{faulty_port}") as second:
            await second.send(json.dumps({**hello, "token": token}))
            assert json.loads(await second.recv())["resumed"] is True
            await first.closed()
            assert (socket.close_code, socket.close_reason) == (4000, TAKEN_OVER_REASON)


async def test_one_action_sent_twice_at_once_through_another_process_is_applied_once(
    redis_url: str, servers: Servers
) -> None:
    """Xia moves to the process that does not host her table and sends the same check
    twice at the same moment: the host applies one and refuses the other."""
    store = await RedisStore.from_url(redis_url)
    ports = free_port(), free_port()
    started = [await servers.start(port) for port in ports]
    here, there = (f"ws://127.0.0.1:{port}" for port in ports)
    tokens: list[str] = []
    at_host = await Connection.open(here, name="Xia", on_token=tokens.append)
    created = await at_host.request(cmd.CreateTable(buy_in=500), wire.TableCreated)
    table_id = created.table.table_id
    await at_host.close()
    elsewhere = await Connection.open(there, token=tokens[0])

    messages = elsewhere.messages()
    async with asyncio.timeout(10):
        # The table waits for Xia, who acts first against the bot.
        while (state := elsewhere.tables.get(table_id)) is None or state.legal is None:
            await anext(messages)
    assert state.hand is not None
    hand_id, seat = state.hand.hand_id, state.you
    await asyncio.gather(
        elsewhere.send(cmd.Check(id="first", table_id=table_id, hand_id=hand_id)),
        elsewhere.send(cmd.Check(id="second", table_id=table_id, hand_id=hand_id)),
    )
    # Both answers are in within moments: the bot acts at once, and nobody else can.
    seen = await drain(elsewhere)
    refusals = [m for m in seen if isinstance(m, wire.Error)]
    checks = [
        m for m in seen if isinstance(m, wire.Checked) and (m.hand_id, m.seat) == (hand_id, seat)
    ]
    assert len(checks) == 1, "one check applied"
    assert len(refusals) == 1, "the other refused"
    # The bot has not acted yet, has bet (so Xia must call), or checked (hand over).
    assert refusals[0].code in ("not_your_turn", "cannot_check", "stale_hand")

    await elsewhere.close()
    for server in started:
        assert await servers.stop(server) == 0
    assert await chips_in_redis(store) == 0
    await store.close()


async def drain(conn: Connection) -> list[object]:
    """What ``conn`` has received and nobody has read yet."""
    found: list[object] = []
    messages = conn.messages()
    while True:
        try:
            found.append(await asyncio.wait_for(anext(messages), 0.5))
        except TimeoutError:
            return found


async def test_an_account_keeps_only_a_few_empty_tables_open_across_processes(
    servers: Servers,
) -> None:
    """Wu opens as many tables as an account may have with nobody at them on one
    process, then moves to the other: one more there is refused all the same, or each
    process would let him open that many again."""
    ports = free_port(), free_port()
    for port in ports:
        await servers.start(port)
    async with connect(f"ws://127.0.0.1:{ports[0]}") as socket:
        first = Client(socket)
        token = (await first.hello("Wu"))["token"]
        for _ in range(EMPTY_TABLES_PER_ACCOUNT):
            assert (await first.reply("create_table"))["type"] == "table_created"
        async with connect(f"ws://127.0.0.1:{ports[1]}") as other:
            second = Client(other)
            await second.reply("hello", version=PROTOCOL_VERSION, token=token)
            refused = await second.reply("create_table")
            assert (refused["type"], refused.get("code")) == ("error", "too_many_tables")
            listing = await second.reply("list_tables")
            assert len(listing["tables"]) == EMPTY_TABLES_PER_ACCOUNT


async def test_every_process_lists_the_lobby_in_the_same_order(servers: Servers) -> None:
    """By table id: a process used to list its own tables before the others'."""
    ports = free_port(), free_port()
    for port in ports:
        await servers.start(port)
    listings = []
    async with (
        connect(f"ws://127.0.0.1:{ports[0]}") as one,
        connect(f"ws://127.0.0.1:{ports[1]}") as two,
    ):
        clients = Client(one), Client(two)
        for name, client in zip(("Wu", "Xia"), clients, strict=True):
            await client.hello(name)
            for _ in range(2):
                assert (await client.reply("create_table"))["type"] == "table_created"
        for client in clients:
            listing = await client.reply("list_tables")
            listings.append([t["table_id"] for t in listing["tables"]])
    assert listings[0] == listings[1] == sorted(listings[0])
    assert len(listings[0]) == 4


@pytest.mark.parametrize("relayed", [False, True], ids=["on the host", "on another process"])
async def test_a_seat_written_after_its_connection_was_taken_over_is_away(
    servers: Servers, relayed: bool
) -> None:
    """Ann asks for a seat and, while it is written (the store slow), her token says
    hello on a new connection, which closes the one that asked. The seat is hers once
    written, but the connection it was for is gone: it is away, with its grace period,
    rather than connected to nothing for as long as the table lasts."""
    port = free_port()
    # The table's opening, Bo's seat, then Ann's: her seat is the third write.
    slow_seat = FaultPlan((Fault("commit", 3, "stall", stall=1.5),))
    await servers.start(port, lease=5.0, plan=slow_seat)
    url = ann_url = f"ws://127.0.0.1:{port}"
    if relayed:
        other = free_port()
        await servers.start(other, lease=5.0)
        ann_url = f"ws://127.0.0.1:{other}"
    async with (
        connect(url) as bo_socket,
        connect(ann_url) as ann_socket,
        connect(ann_url) as again,
    ):
        bo, ann = Client(bo_socket), Client(ann_socket)
        await bo.hello("Bo")
        created = await bo.reply("create_table", options=TWO_SEATS, buy_in=500)
        table_id = created["table"]["table_id"]
        token = (await ann.hello("Ann"))["token"]
        await ann.send("join_table", table_id=table_id, buy_in=300)
        await asyncio.sleep(0.5)  # the seat is being written
        welcome = await Client(again).reply("hello", version=PROTOCOL_VERSION, token=token)
        assert welcome["tables"] == []  # not written yet
        await ann.closed()
        seated = await bo.expect("player_seated", table_id=table_id)
        away = await bo.expect("player_disconnected", table_id=table_id)
        assert away["seat"] == seated["seat"]


async def test_a_welcome_counts_a_buy_in_written_as_it_was_made_in_its_balance(
    servers: Servers,
) -> None:
    """Ann's token says hello on another process, whose claim on her account waits (the
    store slow), and meanwhile her first connection's buy-in is written: the welcome
    lists the table, and its balance has the buy-in taken."""
    hosting, other = free_port(), free_port()
    await servers.start(hosting, lease=5.0)
    slow_claim = FaultPlan((Fault("claim_connection", 1, "stall", stall=1.0),))
    # The stall must not count as Redis away: on a loaded machine a 1 s stall and the
    # calls around it could outlast the default 2 s, and the hello get store_unavailable.
    await servers.start(other, lease=5.0, plan=slow_claim, flags=("--store-timeout", "4"))
    async with (
        connect(f"ws://127.0.0.1:{hosting}") as bo_socket,
        connect(f"ws://127.0.0.1:{hosting}") as ann_socket,
        connect(f"ws://127.0.0.1:{other}") as again_socket,
    ):
        bo, ann, again = Client(bo_socket), Client(ann_socket), Client(again_socket)
        await bo.hello("Bo")
        created = await bo.reply("create_table", options=TWO_SEATS, buy_in=500)
        table_id = created["table"]["table_id"]
        welcome = await ann.hello("Ann")
        hello = await again.send("hello", version=PROTOCOL_VERSION, token=welcome["token"])
        await asyncio.sleep(0.3)  # its account is read, its claim waits
        await ann.reply("join_table", table_id=table_id, buy_in=300)
        resumed = await again.wait(lambda m: m.get("ref") == hello)
        assert resumed["type"] == "welcome", resumed
        assert resumed["tables"] == [table_id]
        assert resumed["balance"] == welcome["balance"] - 300


async def test_a_player_leaving_two_tables_hosted_elsewhere_is_away_at_both(
    servers: Servers,
) -> None:
    """Cy, connected to one process, sits at two tables the other hosts, and her
    connection drops: Bo, at both, sees her away at both."""
    hosting, relaying = free_port(), free_port()
    for port in (hosting, relaying):
        await servers.start(port)
    async with connect(f"ws://127.0.0.1:{hosting}") as socket:
        bo = Client(socket)
        await bo.hello("Bo")
        tables = []
        for _ in range(2):
            created = await bo.reply("create_table", options=TWO_SEATS, buy_in=500)
            tables.append(created["table"]["table_id"])
        async with connect(f"ws://127.0.0.1:{relaying}") as other:
            cy = Client(other)
            await cy.hello("Cy")
            for table_id in tables:
                joined = await cy.reply("join_table", table_id=table_id, buy_in=500)
                assert joined["type"] == "table_joined", joined
                await bo.expect("player_seated", table_id=table_id)
        away: set[str] = set()
        while away != set(tables):
            away.add((await bo.expect("player_disconnected"))["table_id"])
        await bo.close()


async def test_a_player_whose_process_is_killed_is_away_then_stood_up_after_the_grace(
    redis_store: RedisStore, servers: Servers
) -> None:
    """Cy, connected to one process, sits at a table the other hosts, and her process is
    killed (SIGKILL: it sends no word of her going). The host finds her process gone
    when what it sends her reaches no process: Bo sees her away, then stood up once her
    grace period is over, with her chips back in her balance, rather than her seat dealt
    in and its antes taken for as long as the table lasts."""
    hosting, relaying = free_port(), free_port()
    await servers.start(hosting, flags=("--grace", "1"))
    dying = await servers.start(relaying, flags=("--grace", "1"))
    async with connect(f"ws://127.0.0.1:{hosting}") as socket:
        bo = Client(socket)
        await bo.hello("Bo")
        options = {**TWO_SEATS, "turn_seconds": 0.5}
        created = await bo.reply("create_table", options=options, buy_in=500)
        table_id = created["table"]["table_id"]
        async with connect(f"ws://127.0.0.1:{relaying}") as other:
            cy = Client(other)
            cy_id = (await cy.hello("Cy"))["account_id"]
            joined = await cy.reply("join_table", table_id=table_id, buy_in=500)
            assert joined["type"] == "table_joined", joined
            await bo.expect("hand_started", table_id=table_id)
            dying.send_signal(signal.SIGKILL)
            await dying.wait()
            await cy.closed()
        await bo.expect("player_disconnected", table_id=table_id, seat=joined["seat"])
        await bo.expect("player_left", table_id=table_id, seat=joined["seat"])
        await bo.close()
    assert await chips_in_redis(redis_store) == 0
    cy_account = await redis_store.account(cy_id)
    assert cy_account is not None
    hands = await redis_store.table_hands(table_id)
    assert cy_account.balance == 1_000 + sum(h.net(cy_id) for h in hands)
    assert table_id not in await redis_store.seated_tables(cy_id)


async def test_a_server_stopped_beside_another_leaves_it_its_tables_and_nobody_loses_a_seat(
    redis_url: str, servers: Servers
) -> None:
    """A rolling restart: the process hosting Xia's and Yan's table is stopped (SIGTERM)
    while the other runs. It leaves the table to the other, which adopts it (the hand in
    play voided, every chip back); Yan, on the other process, plays on without standing
    up, and Xia, whose connection the stop closed, comes back to her seat there."""
    store = await RedisStore.from_url(redis_url)
    ports = free_port(), free_port()
    stopping, staying = [await servers.start(port) for port in ports]
    here, there = (f"ws://127.0.0.1:{port}" for port in ports)
    tokens: list[str] = []
    xia = await Connection.open(here, name="Xia", on_token=tokens.append, reconnect=False)
    yan = await Connection.open(there, name="Yan")
    created = await xia.request(cmd.CreateTable(options=HEADS_UP, buy_in=500), wire.TableCreated)
    table_id = created.table.table_id
    await yan.request(cmd.JoinTable(table_id=table_id, buy_in=500), wire.TableJoined)
    xia_playing = asyncio.create_task(play(Caller(), xia, table_id))
    yan_playing = asyncio.create_task(play(Caller(), yan, table_id))

    async def dealt(at_least: int) -> bool:
        return (await hands_dealt(store, [table_id]))[table_id] >= at_least

    await until(lambda: dealt(3))
    old_host = await store.table_host(table_id)
    assert await servers.stop(stopping) == 0
    await asyncio.gather(xia_playing, return_exceptions=True)  # its connection is gone

    async def adopted() -> bool:
        return await store.table_host(table_id) not in (None, old_host)

    await until(adopted)
    back = await Connection.open(there, token=tokens[0])
    assert back.welcome is not None
    assert back.welcome.tables == (table_id,), "Xia's seat was kept"
    xia_playing = asyncio.create_task(play(Caller(), back, table_id))
    so_far = (await hands_dealt(store, [table_id]))[table_id]
    await until(lambda: dealt(so_far + 3))
    assert not yan_playing.done(), "Yan was stood up"
    for player in (xia_playing, yan_playing):
        player.cancel()
    balances = await asyncio.gather(leave(back, table_id), leave(yan, table_id))
    for conn in (back, yan):
        await conn.close()
    assert await servers.stop(staying) == 0
    assert await chips_in_redis(store) == 0
    hands = await store.table_hands(table_id)
    for conn, balance in zip((back, yan), balances, strict=True):
        assert balance == 1_000 + sum(h.net(conn.account_id) for h in hands)
    await store.close()


async def test_a_server_stopped_beside_another_sends_every_client_to_reconnect_with_1012(
    servers: Servers,
) -> None:
    """The stopping process hosts no table: Yan plays through it at a table the other
    hosts, and Zed, seated nowhere, looks at the lobby. Both play on once they connect
    again (to the other process, behind a load balancer), so both are told to
    reconnect (1012), not that the server is shutting down (1001), on which the
    browser page says every hand in play was called off."""
    hosting, stopping = free_port(), free_port()
    await servers.start(hosting)
    process = await servers.start(stopping)
    xia = Client(await connect(f"ws://127.0.0.1:{hosting}"))
    yan, zed = [Client(await connect(f"ws://127.0.0.1:{stopping}")) for _ in range(2)]
    for client, name in ((xia, "Xia"), (yan, "Yan"), (zed, "Zed")):
        await client.hello(name)
    created = await xia.reply("create_table", options=TWO_SEATS, buy_in=500)
    table_id = created["table"]["table_id"]
    joined = await yan.reply("join_table", table_id=table_id, buy_in=500)
    assert joined["type"] == "table_joined", joined
    assert (await zed.reply("list_tables"))["type"] == "table_list"
    assert await servers.stop(process) == 0
    for client in (yan, zed):
        await client.closed()
        assert client.connection.close_code == 1012
    await xia.close()


async def test_a_server_on_another_database_of_the_same_redis_is_not_one_of_its_processes(
    redis_server: str,
) -> None:
    """Redis has one set of channels for all its databases: a server on database 2 (a
    deployment of its own) was heard by a server stopping alone on database 1 as
    another of its processes, so that one left its table to nobody instead of closing
    it, and Ann's chips stayed there. It stops as the only process it is."""
    urls = [f"{redis_server}/{db}" for db in (1, 2)]
    for url in urls:
        async with Redis.from_url(url) as raw:
            await raw.flushdb()
    stores = [await RedisStore.from_url(url) for url in urls]
    here, elsewhere = (QiuQiuServer(FAST, store=store) for store in stores)
    await elsewhere.start()
    await here.start()
    try:
        ann = Client(await connect(here.url))
        welcome = await ann.hello("Ann")
        await ann.reply("create_table", options={"dealer_bot": True}, buy_in=300)
        await ann.expect("table_joined")
        await here.stop()
        await ann.closed()
        assert ann.connection.close_code == 1001
        assert await stores[0].tables() == ()
        account = await stores[0].account(welcome["account_id"])
        assert account is not None
        assert account.balance == welcome["balance"]
    finally:
        await here.stop()
        await elsewhere.stop()
        for store in stores:
            await store.close()
