"""The SDK's connection against a real server: hello and resume, replies, gaps, and
connections refused or lost before the welcome. Drops and reconnects are
test_connection_drops.py; the client's own seed, test_connection_seeds.py; tables that
move and a spectator's watches, test_connection_moves.py."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from websockets.asyncio.server import ServerConnection, serve

from qiuqiu.cli import connection
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.errors import ConnectionLost, ServerRefused
from qiuqiu.protocol import MAX_BALANCE, MAX_CHIPS, TableOptions, encode
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.store import TableRecord
from tests.server.processes import until
from tests.server.store_helpers import OPTIONS, saved


async def test_a_new_account_gets_a_token_and_the_token_opens_it_again(
    server: QiuQiuServer,
) -> None:
    issued: list[str] = []
    first = await Connection.open(server.url, name="Ann", on_token=issued.append)
    await first.close()
    again = await Connection.open(server.url, token=issued[0])
    await again.close()
    assert again.welcome is not None
    assert again.welcome.resumed
    assert again.account_id == first.account_id


async def test_a_balance_past_the_chips_of_any_table_is_read_as_it_is(
    server: QiuQiuServer,
) -> None:
    """A balance sums every table's winnings: up to 2^53 - 1, not a table's 10^12."""
    issued: list[str] = []
    first = await Connection.open(server.url, name="Ann", on_token=issued.append)
    await first.close()
    store = server.store
    assert isinstance(store, MemoryStore)
    rich = MAX_BALANCE - MAX_CHIPS
    store._accounts[first.account_id] = replace(store._accounts[first.account_id], balance=rich)
    async with await Connection.open(server.url, token=issued[0]) as again:
        assert again.welcome is not None
        assert again.welcome.balance == rich
        joined = await again.open_table(TableOptions(), 500)
    assert joined[1].balance == rich - 500


async def test_a_lobby_of_thousands_of_tables_comes_through_in_one_listing(
    server: QiuQiuServer,
) -> None:
    # Tables hosted by no Table of this server, as their records: the lobby lists them all.
    for number in range(5000):
        assert await server.store.acquire_table(f"t{number}", 60)
        await server.store.commit(saved(TableRecord(f"t{number}", OPTIONS)))
    conn = await Connection.open(server.url, name="Ann")
    try:
        listed = await conn.request(cmd.ListTables(), wire.TableList)
    finally:
        await conn.close()
    assert len(listed.tables) >= 5000
    assert len(encode(listed)) > 2**20


async def test_an_unknown_token_with_a_name_opens_a_new_account(server: QiuQiuServer) -> None:
    issued: list[str] = []
    conn = await Connection.open(server.url, name="Bo", token="forgotten", on_token=issued.append)
    await conn.close()
    assert conn.welcome is not None
    assert not conn.welcome.resumed
    assert conn.token == issued[0] != "forgotten"


async def test_an_unknown_token_alone_is_refused_with_the_servers_code(
    server: QiuQiuServer,
) -> None:
    with pytest.raises(ServerRefused) as refused:
        await Connection.open(server.url, token="forgotten")
    assert refused.value.code == "unknown_token"


async def test_a_refused_request_raises_the_code_and_the_connection_goes_on(
    server: QiuQiuServer,
) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        with pytest.raises(ServerRefused) as refused:
            await conn.request(cmd.JoinTable(table_id="nowhere", buy_in=100), wire.TableJoined)
        assert refused.value.code == "unknown_table"
        listed = await conn.request(cmd.ListTables(), wire.TableList)
        assert listed.tables == ()


async def test_a_server_that_is_not_there_is_a_connection_lost(server: QiuQiuServer) -> None:
    with pytest.raises(ConnectionLost, match="cannot connect"):
        await Connection.open("ws://127.0.0.1:9", name="Ann")


async def test_a_gap_in_seq_brings_a_snapshot_instead_of_the_event(server: QiuQiuServer) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        table, _ = await conn.open_table(TableOptions(), buy_in=500)
        table_id = table.table_id
        messages = conn.messages()
        async with asyncio.timeout(5):
            while not isinstance(await anext(messages), wire.TurnStarted):
                pass
            seen = conn.tables[table_id].seq
            # As if the network had lost two events: the next one the client sees is ahead.
            conn._messages.put_nowait(
                wire.PlayerReconnected(table_id=table_id, seq=seen + 3, seat=0)
            )
            after_gap = await anext(messages)
        assert isinstance(after_gap, wire.TableSnapshot)
        assert after_gap.seq == seen
        assert conn.tables[table_id].legal is not None


async def test_a_hand_voided_after_a_gap_comes_out_and_a_snapshot_after_it(
    server: QiuQiuServer,
) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        table, _ = await conn.open_table(TableOptions(), buy_in=500)
        table_id = table.table_id
        messages = conn.messages()
        async with asyncio.timeout(5):
            while not isinstance(turn := await anext(messages), wire.TurnStarted):
                pass
            seen = conn.tables[table_id].seq
            # As from the table's new host after its server died: far ahead in seq.
            conn._messages.put_nowait(
                wire.HandVoided(
                    table_id=table_id,
                    seq=seen + 1_000_000,
                    hand_id=turn.hand_id,
                    reason="the server hosting the table stopped",
                    refunds=(),
                )
            )
            voided = await anext(messages)
            after_gap = await anext(messages)
        assert isinstance(voided, wire.HandVoided)
        assert isinstance(after_gap, wire.TableSnapshot)
        assert after_gap.seq == seen


async def test_a_refused_hello_closes_the_socket_it_was_said_on(server: QiuQiuServer) -> None:
    with pytest.raises(ServerRefused):
        await Connection.open(server.url, token="forgotten")
    await until(lambda: no_connections(server))


async def no_connections(server: QiuQiuServer) -> bool:
    return server.metrics.registry.get_sample_value("qiuqiu_connections") == 0


async def test_a_connection_cut_before_the_welcome_is_a_connection_lost() -> None:
    """A server (here a bare WebSocket one) that drops the socket on hello."""

    async def hang_up(ws: ServerConnection) -> None:
        await ws.recv()
        ws.transport.abort()

    async with serve(hang_up, "127.0.0.1", 0) as hanging_up:
        port = next(iter(hanging_up.sockets)).getsockname()[1]
        with pytest.raises(ConnectionLost, match="before the welcome"):
            await Connection.open(f"ws://127.0.0.1:{port}", name="Ann")


async def test_a_wss_address_for_a_server_without_tls_says_why_and_names_its_ws_address(
    server: QiuQiuServer,
) -> None:
    """qiuqiu-server speaks no TLS: it cuts the TLS handshake off, and the reset that
    makes has no words of its own."""
    plain = server.url.removeprefix("ws://")
    with pytest.raises(ConnectionLost) as lost:
        await Connection.open(f"wss://{plain}", name="Ann")
    assert f"try ws://{plain}" in str(lost.value)


async def test_a_websocket_server_that_is_not_a_qiuqiu_one_is_a_connection_lost() -> None:
    """A bare WebSocket server answering hello with JSON that is no QiuQiu message."""

    async def say_something_else(ws: ServerConnection) -> None:
        await ws.recv()
        await ws.send('{"hello": 1}')
        await ws.wait_closed()

    async with serve(say_something_else, "127.0.0.1", 0) as other:
        port = next(iter(other.sockets)).getsockname()[1]
        with pytest.raises(ConnectionLost, match="no QiuQiu server"):
            await Connection.open(f"ws://127.0.0.1:{port}", name="Ann")


async def test_a_server_that_never_answers_hello_is_a_connection_lost_in_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server (a bare WebSocket one) that takes the socket and the hello, then says
    nothing: the SDK gives up after its open timeout instead of waiting for ever."""
    monkeypatch.setattr(connection, "OPEN_TIMEOUT", 0.3)
    heard = asyncio.Event()

    async def say_nothing(ws: ServerConnection) -> None:
        await ws.recv()
        heard.set()
        await ws.wait_closed()

    async with serve(say_nothing, "127.0.0.1", 0) as silent:
        port = next(iter(silent.sockets)).getsockname()[1]
        url = f"ws://127.0.0.1:{port}"
        with pytest.raises(ConnectionLost, match=r"no welcome from .* in 0\.3 s after hello"):
            await Connection.open(url, name="Ann")
    assert heard.is_set()
