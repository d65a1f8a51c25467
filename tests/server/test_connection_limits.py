"""Connections the server closes, over real WebSocket connections (PROTOCOL.md).

A frame over the size limit or a flood past the rate limit closes that one
connection with a proper close code, and the other tables play on.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from tests.server.conftest import FAST, WAIT, Client, at_bot_table, chip_total, my_turn
from tests.server.processes import until
from tests.server.refusal_helpers import (
    BUY_IN,
    Connect,
    Message,
    assert_nothing_changed,
    play_out,
    raw_send,
    raw_until,
    world,
)
from tests.server.test_http import get, samples

# -- the victim and the others -------------------------------------------------------------


async def drain(connection: ClientConnection) -> None:
    while True:
        await connection.recv()


DRAINED = 30.0
"""Seconds to read what a flooded connection was sent before its close frame (tens of
megabytes, on a machine that may be busy): a bound, never a timing assertion."""


async def close_code(connection: ClientConnection) -> int:
    """Read until the server closes ``connection``; the close code it sent."""
    async with asyncio.timeout(DRAINED):
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
    assert await chip_total(server) == 0


# -- size and rate limits ------------------------------------------------------------------


async def test_a_frame_at_the_size_limit_is_read(
    server: QiuQiuServer, connect_client: Connect, config: ServerConfig
) -> None:
    client, _ = await at_bot_table(connect_client)
    before = await world(server)
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
NO_REFILL = FAST.model_copy(update={"rate": 1e-6})


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


@pytest.mark.parametrize("config", [pytest.param(NO_REFILL, id="a bucket that never refills")])
async def test_a_flood_of_pings_closes_that_connection_with_1008(
    server: QiuQiuServer, connect_client: Connect, config: ServerConfig
) -> None:
    """``websockets`` answers each ping with a pong by itself, read or not: uncounted,
    a client that sends pings and never reads grew the server by tens of megabytes
    a second. A ping counts as a message."""
    bystander, turn = await at_bot_table(connect_client, "Bea")
    victim = await seated_victim(server)
    for n in range(config.burst):
        await victim.ping(f"p{n}")
    await raw_send(victim, {"type": "list_tables", "id": "after-the-pings"})
    with pytest.raises(ConnectionClosed) as closed:
        await raw_until(victim, lambda m: m.get("ref") == "after-the-pings")
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == CloseCode.POLICY_VIOLATION
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


async def test_an_honest_bot_at_full_speed_is_no_flood() -> None:
    """Actions on the seat's own turn do not count against the rate limit: a bot that
    answers at once, at a table with no pause between hands, plays on."""
    config = FAST.model_copy(update={"rate": 1.0, "burst": 5})
    server = QiuQiuServer(config)
    await server.start()
    try:
        client = Client(await connect(server.url))
        created = await client.hello("Quick")
        assert created["type"] == "welcome"
        # Small bets, so that no run of luck against the dealer bot ends the seat early.
        small = {"max_bet": 10, "max_raises": 1}
        made = await client.reply("create_table", options=small, buy_in=1000)
        table_id = made["table"]["table_id"]
        for _ in range(40):
            turn = await my_turn(client, table_id)
            legal = turn["legal"]
            kind = "check" if legal.get("check") else "call" if "call" in legal else "fold"
            await client.send(kind, table_id=table_id, hand_id=turn["hand_id"])
        assert client.connection.close_code is None
        await client.close()
    finally:
        await server.stop()


@pytest.mark.parametrize("config", [FAST.model_copy(update={"rate": 1e6, "burst": 10**6})])
async def test_a_client_that_does_not_read_is_closed_with_1008(
    server: QiuQiuServer, connect_client: Connect, config: ServerConfig
) -> None:
    bystander, turn = await at_bot_table(connect_client, "Bea")
    victim = await connect(server.url, max_queue=1)
    await raw_send(victim, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Vic"})
    await raw_until(victim, lambda m: m["type"] == "welcome")
    await raw_send(victim, {"type": "watch_table", "table_id": turn["table_id"]})
    await raw_until(victim, lambda m: m["type"] == "table_snapshot")
    victim.transport.pause_reading()
    try:
        # Snapshots of some 2 kB each, far more than the sockets at both ends hold, and
        # than the limit: the server cannot but see that nobody reads them.
        for _ in range(20_000):
            await raw_send(victim, {"type": "request_snapshot", "table_id": turn["table_id"]})
        async with asyncio.timeout(WAIT):
            while not any(o.closing for o in server._outboxes):
                await asyncio.sleep(0.01)
        victim.transport.resume_reading()
        assert await close_code(victim) == CloseCode.POLICY_VIOLATION
        await assert_the_others_carry_on(server, connect_client, bystander, turn)
    finally:
        victim.transport.abort()


@pytest.mark.parametrize("config", [FAST.model_copy(update={"rate": 1e6, "burst": 10**6})])
async def test_what_a_client_sends_once_its_connection_is_being_closed_is_not_carried_out(
    server: QiuQiuServer, config: ServerConfig
) -> None:
    """Closed for not reading, the seat's player then asks to leave: the server, which
    read on to finish the close, carried that out (and built each snapshot still asked
    for, to drop it), telling nobody. The seat is held, away, as for any dropped one."""
    victim = await connect(server.url, max_queue=1)
    await raw_send(victim, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Vic"})
    await raw_until(victim, lambda m: m["type"] == "welcome")
    await raw_send(victim, {"type": "create_table", "buy_in": BUY_IN})
    turn = await raw_until(victim, lambda m: m["type"] == "turn_started" and "legal" in m)
    table = server.lobby.tables[turn["table_id"]]
    victim.transport.pause_reading()
    try:
        for _ in range(20_000):
            await raw_send(victim, {"type": "request_snapshot", "table_id": table.table_id})
        async with asyncio.timeout(WAIT):
            while not any(o.closing for o in server._outboxes):
                await asyncio.sleep(0.01)
        await raw_send(victim, {"type": "leave_table", "table_id": table.table_id})
        victim.transport.resume_reading()
        assert await close_code(victim) == CloseCode.POLICY_VIOLATION
        humans = [s for s in table.core.seats.values() if not s.is_bot]
        assert [s.name for s in humans] == ["Vic"], "the leave sent after the close was played"
        (vic,) = humans
        async with asyncio.timeout(WAIT):
            while vic.connected:  # the server's end of the close
                await asyncio.sleep(0.01)
        assert not vic.leaving
    finally:
        victim.transport.abort()


TABLES = 1_500
"""Some 690 kB of lobby: more than the 512 KiB the server lets wait unread."""
BIG_LOBBY = FAST.model_copy(
    update={
        "rate": 1e6,
        "burst": 10**6,
        "starting_balance": 10**7,
        "max_seats_per_account": TABLES,
    }
)


@pytest.mark.parametrize("config", [BIG_LOBBY])
async def test_a_client_that_reads_a_reply_over_the_unread_limit_is_not_closed(
    server: QiuQiuServer, config: ServerConfig
) -> None:
    """A lobby of 1,500 tables lists in some 690 kB, more than a socket takes at once
    across the internet: the reply waits in the server, read as it goes. Small
    socket buffers at both ends stand in for such a link; the client reads, and must
    not be closed as one that does not."""
    host = await connect(server.url)
    await raw_send(host, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Host"})
    await raw_until(host, lambda m: m["type"] == "welcome")
    for n in range(TABLES):
        await raw_send(host, {"type": "create_table", "id": n, "buy_in": 100})
        await raw_until(host, lambda m: m["type"] == "table_joined")
    link = socket.socket()
    link.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    link.connect(("127.0.0.1", server.port))
    reader = await connect(server.url, sock=link, max_size=None)
    await raw_send(reader, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Rea"})
    await raw_until(reader, lambda m: m["type"] == "welcome")
    (outbox,) = (o for o in server._outboxes if o.connection.remote_address == link.getsockname())
    outbox.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    for n in range(2):
        await raw_send(reader, {"type": "list_tables", "id": n})
        listing = await raw_until(reader, lambda m: m["type"] == "table_list")
        assert len(listing["tables"]) == TABLES
    await reader.close()
    await host.close()


async def closed_with(server: QiuQiuServer, code: str, times: int) -> bool:
    """Whether /metrics counts ``times`` connections closed with ``code``."""
    _, _, body = await get(server, "/metrics")
    return samples(body).get(("qiuqiu_connections_closed_total", (("code", code),)), 0) == times


# -- the time to say hello -----------------------------------------------------------------

SHORT_HELLO = FAST.model_copy(update={"hello_timeout": 2.0})
"""Long enough for a client that says hello at once to say it on a busy machine."""


@pytest.mark.parametrize("config", [pytest.param(SHORT_HELLO, id="hello within 2 s")])
async def test_a_connection_without_a_successful_hello_in_time_is_closed_with_1008(
    server: QiuQiuServer, connect_client: Connect, config: ServerConfig
) -> None:
    """Idle connections that never said hello held the server's file descriptors for
    as long as their client liked; a refused hello is no hello either."""
    bystander, turn = await at_bot_table(connect_client, "Bea")
    silent = await connect(server.url)
    refused = await connect(server.url)
    await raw_send(refused, {"type": "hello", "version": PROTOCOL_VERSION + 1, "name": "Old"})
    error = await raw_until(refused, lambda m: m["type"] == "error")
    assert error["code"] == "unsupported_version"
    for connection in (silent, refused):
        assert await close_code(connection) == CloseCode.POLICY_VIOLATION
        assert connection.close_reason == "no hello within 2 seconds"
    await until(lambda: closed_with(server, "1008", 2))
    # The bystander said hello before either and is past the same deadline: it plays on.
    await assert_the_others_carry_on(server, connect_client, bystander, turn)


# -- connections from one address ------------------------------------------------------

THREE_PER_ADDRESS = FAST.model_copy(update={"max_connections_per_address": 3})


@pytest.mark.parametrize("config", [pytest.param(THREE_PER_ADDRESS, id="three per address")])
async def test_a_connection_past_the_cap_of_its_address_is_closed_with_1008(
    server: QiuQiuServer, connect_client: Connect, config: ServerConfig
) -> None:
    """One client held connections up to the server's file-descriptor limit. Past the
    cap its next connection is closed at once; its others, and other addresses, stay."""
    bystander, turn = await at_bot_table(connect_client, "Bea")
    quiet = await connect_client()
    await quiet.hello("Qui")
    third = await connect(server.url)
    past = await connect(server.url)
    assert await close_code(past) == CloseCode.POLICY_VIOLATION
    assert past.close_reason == "too many connections from your address (at most 3)"
    await until(lambda: closed_with(server, "1008", 1))
    elsewhere = await connect(server.url, local_addr=("127.0.0.2", 0))
    await raw_send(elsewhere, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Far"})
    assert (await raw_until(elsewhere, lambda m: m["type"] == "welcome"))["name"] == "Far"
    # A connection closed makes room for another from the same address.
    await third.close()
    async with asyncio.timeout(WAIT):
        while len(server._outboxes) > 3:
            await asyncio.sleep(0.01)
    await assert_the_others_carry_on(server, connect_client, bystander, turn)
    await elsewhere.close()


# An hour to finish a handshake: what drops a socket here is the cap, never the timeout.
THREE_HANDSHAKES = THREE_PER_ADDRESS.model_copy(update={"open_timeout": 3600.0})


@pytest.mark.parametrize("config", [pytest.param(THREE_HANDSHAKES, id="three per address")])
async def test_a_socket_past_the_cap_of_handshakes_under_way_from_its_address_is_dropped(
    server: QiuQiuServer, connect_client: Connect, config: ServerConfig
) -> None:
    """Sockets that never send a request counted against no cap: one client held one
    each until the handshake timed out, and opened more meanwhile."""
    bystander, turn = await at_bot_table(connect_client, "Bea")
    silent = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(3)]
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    async with asyncio.timeout(WAIT):
        with contextlib.suppress(ConnectionResetError):
            assert await reader.read() == b""
    writer.close()
    elsewhere = await connect(server.url, local_addr=("127.0.0.2", 0))
    await raw_send(elsewhere, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Far"})
    await raw_until(elsewhere, lambda m: m["type"] == "welcome")
    await elsewhere.close()
    # Gone, the silent sockets make room again.
    for _, silent_writer in silent:
        silent_writer.close()
    async with asyncio.timeout(WAIT):
        while server._handshakes._open:
            await asyncio.sleep(0.01)
    await assert_the_others_carry_on(server, connect_client, bystander, turn)


# -- accounts opened from one address ---------------------------------------------------

TWO_ACCOUNTS = FAST.model_copy(update={"new_accounts_per_address": 2})


@pytest.mark.parametrize("config", [pytest.param(TWO_ACCOUNTS, id="two accounts an hour")])
async def test_a_hello_past_the_accounts_of_its_address_is_refused_and_nothing_is_made(
    server: QiuQiuServer, config: ServerConfig
) -> None:
    """One client opened 5,910 accounts in 5 s, each kept for good. Past the allowance
    a named hello is refused; a hello with a token, and other addresses, still work."""
    first = await connect(server.url)
    await raw_send(first, {"type": "hello", "version": PROTOCOL_VERSION, "name": "One"})
    token = (await raw_until(first, lambda m: m["type"] == "welcome"))["token"]
    await first.close()
    second = await connect(server.url)
    await raw_send(second, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Two"})
    await raw_until(second, lambda m: m["type"] == "welcome")
    balances = await server.store.balances()

    third = await connect(server.url)
    await raw_send(third, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Three"})
    error = await raw_until(third, lambda m: m["type"] == "error")
    assert error["code"] == "too_many_accounts"
    assert "at most 2 an hour" in error["message"]
    assert await server.store.balances() == balances
    # A name no account may have is refused as such, not for the allowance.
    await raw_send(third, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Dealer"})
    error = await raw_until(third, lambda m: m["type"] == "error")
    assert error["code"] == "reserved_name"
    # The connection stays, and its owner comes back as an account it has.
    await raw_send(third, {"type": "hello", "version": PROTOCOL_VERSION, "token": token})
    assert (await raw_until(third, lambda m: m["type"] == "welcome"))["name"] == "One"

    elsewhere = await connect(server.url, local_addr=("127.0.0.2", 0))
    await raw_send(elsewhere, {"type": "hello", "version": PROTOCOL_VERSION, "name": "Far"})
    assert (await raw_until(elsewhere, lambda m: m["type"] == "welcome"))["name"] == "Far"
    for connection in (second, third, elsewhere):
        await connection.close()


async def test_the_server_pings_as_protocol_md_says(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """A ping every 20 s; one left unanswered 20 s closes the connection with 1011
    (websockets' keepalive). Waiting that out takes 40 s, so the settings are read."""
    client = await connect_client()
    await client.hello()
    (outbox,) = server._outboxes
    assert (outbox.connection.ping_interval, outbox.connection.ping_timeout) == (20, 20)
