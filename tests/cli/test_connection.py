"""The SDK's connection against a real server: hello and resume, replies, gaps, drops."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli import connection
from qiuqiu.cli.bot import Action, Turn, play
from qiuqiu.cli.connection import Closed, Connection, Disconnected, Reconnected
from qiuqiu.cli.deals import DealChecked
from qiuqiu.cli.errors import ConnectionLost, ServerRefused
from qiuqiu.cli.game import Move
from qiuqiu.protocol import (
    MAX_BALANCE,
    MAX_CHIPS,
    PROTOCOL_VERSION,
    DealTampered,
    ErrorCode,
    TableOptions,
    encode,
)
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import TableRecord
from qiuqiu.server.table.reasons import MOVED
from tests.cli.conftest import cut_the_network
from tests.cli.proxy import Send, proxy, refusing
from tests.conftest import free_port, own_redis
from tests.server.conftest import FAST, WAIT, chip_total
from tests.server.processes import Servers, listening, until
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


class DroppedAtHandThree(AlwaysCall):
    """Plays like AlwaysCall, but cuts the network under itself once, in hand 3."""

    def __init__(self, server: QiuQiuServer) -> None:
        self.server = server
        self.dropped = False

    def decide(self, turn: Turn) -> Action:
        if turn.hand_id == 3 and not self.dropped:
            self.dropped = True
            cut_the_network(self.server)
        return super().decide(turn)


async def test_a_dropped_connection_comes_back_by_itself_and_the_bot_plays_on(
    server: QiuQiuServer,
) -> None:
    bot = DroppedAtHandThree(server)
    conn = await Connection.open(server.url, name="Ann")
    # Small stakes: the deck depends on the client's own random seed; no luck busts it.
    table, _ = await conn.open_table(TableOptions(ante=1, min_bet=1, max_bet=2), buy_in=500)
    table_id = table.table_id
    summary = await asyncio.wait_for(play(bot, conn, table_id, hands=8), 30)
    await conn.close()
    assert summary.verified == 8, "the snapshot after the drop brings the hand's openings"
    assert bot.dropped
    assert conn.welcome is not None
    assert conn.welcome.resumed, "the second welcome, after the drop"
    assert summary.hands == 8
    assert summary.balance == 1_000 + summary.net
    hands = await server.store.account_hands(conn.account_id)
    assert {h.hand_id: h.net(conn.account_id) for h in hands} == summary.per_hand
    assert await chip_total(server) == 0


class DroppedInTheSecondRound(AlwaysCall):
    """Plays like AlwaysCall, keeping each turn's history, and cuts the network under
    itself once, at its first turn of a second betting round."""

    def __init__(self, server: QiuQiuServer) -> None:
        self.server = server
        self.dropped_at: tuple[int, int] | None = None
        self.histories: list[tuple[int, int, tuple[Move, ...]]] = []

    def decide(self, turn: Turn) -> Action:
        self.histories.append((turn.hand_id, turn.round, turn.history))
        if turn.round == 2 and self.dropped_at is None:
            self.dropped_at = (turn.hand_id, turn.round)
            cut_the_network(self.server)
        return super().decide(turn)


async def test_after_a_drop_mid_hand_a_turn_asked_again_has_the_moves_made_before_it(
    server: QiuQiuServer,
) -> None:
    """The turn open as the connection dropped is asked again once it is back, from the
    snapshot's state: its history is the hand's, not only the moves since."""
    bot = DroppedInTheSecondRound(server)
    conn = await Connection.open(server.url, name="Ann")
    options = TableOptions(ante=1, min_bet=1, max_bet=2, betting_rounds=2)
    table, _ = await conn.open_table(options, buy_in=500)
    await asyncio.wait_for(play(bot, conn, table.table_id, hands=4), 30)
    await conn.close()
    assert bot.dropped_at is not None
    asked = [history for hand, round_, history in bot.histories if (hand, round_) == bot.dropped_at]
    # The turn as first asked, then asked again (then any later turn of that round).
    first, again = asked[:2]
    assert first, "the first round's moves"
    assert again == first


class DroppedWhileThinking(AlwaysCall):
    """Plays like AlwaysCall, but in hand 2 answers only once its connection is down:
    the answer meets a dropped connection."""

    def __init__(self, server: QiuQiuServer, conn: Connection) -> None:
        self.server, self.conn = server, conn
        self.loop = asyncio.get_running_loop()
        self.dropped = False

    def decide(self, turn: Turn) -> Action:
        if turn.hand_id == 2 and not self.dropped:
            self.dropped = True
            asyncio.run_coroutine_threadsafe(self.drop(), self.loop).result()
        return super().decide(turn)

    async def drop(self) -> None:
        cut_the_network(self.server)
        assert self.conn._ws is not None
        await self.conn._ws.wait_closed()


async def test_an_answer_given_as_the_connection_drops_is_asked_again_once_it_is_back(
    server: QiuQiuServer,
) -> None:
    conn = await Connection.open(server.url, name="Ann")
    bot = DroppedWhileThinking(server, conn)
    table, _ = await conn.open_table(TableOptions(ante=1, min_bet=1, max_bet=2), buy_in=500)
    summary = await asyncio.wait_for(play(bot, conn, table.table_id, hands=4), 30)
    await conn.close()
    assert bot.dropped
    assert summary.hands >= 4
    assert await chip_total(server) == 0


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


async def test_a_reconnect_tries_again_while_the_server_cannot_reach_its_store(
    tmp_path: Path,
) -> None:
    """Redis stops, the connection drops: resuming is answered store_unavailable until
    Redis is back, with what it had written, and the SDK keeps trying rather than
    giving the account up."""
    port = free_port()
    durable = ("--appendonly", "yes", "--appendfsync", "always")
    redis = own_redis(port, tmp_path, *durable)
    try:
        await until(lambda: listening(port))
        store = await RedisStore.from_url(f"redis://127.0.0.1:{port}/0")
        server = QiuQiuServer(FAST, store=store)
        await server.start()
        conn = await Connection.open(server.url, name="Ann")
        account_id = conn.account_id
        messages = conn.messages()
        redis.kill()
        redis.wait()
        cut_the_network(server)
        assert isinstance(await anext(messages), Disconnected)
        # Give the SDK a refused try or two before Redis is back.
        await asyncio.sleep(0.5)
        redis = own_redis(port, tmp_path, *durable)
        async with asyncio.timeout(30):
            while not isinstance(notice := await anext(messages), Reconnected):
                assert not isinstance(notice, Closed), notice
        assert notice.welcome.resumed
        assert notice.welcome.account_id == account_id
        await conn.close()
        await server.stop()
        await store.close()
    finally:
        redis.kill()
        redis.wait()


async def test_a_reconnect_goes_on_until_the_server_is_back_within_the_grace_period(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server is gone for many more tries than the first quick ones: the SDK keeps
    trying, the seat being held for the grace period, and comes back when it does."""
    monkeypatch.setattr(connection, "RECONNECT_DELAYS", (0.05,))
    store = await RedisStore.from_url(redis_url)
    config = FAST.model_copy(update={"port": free_port()})
    server = QiuQiuServer(config, store=store)
    await server.start()
    conn = await Connection.open(server.url, name="Ann")
    try:
        messages = conn.messages()
        cut_the_network(server)
        await server.stop()
        assert isinstance(await anext(messages), Disconnected)
        await asyncio.sleep(1.0)  # some twenty tries, refused
        server = QiuQiuServer(config, store=store)
        await server.start()
        async with asyncio.timeout(30):
            notice = await anext(messages)
        assert isinstance(notice, Reconnected), notice
        assert notice.welcome.account_id == conn.account_id
    finally:
        await conn.close()
        await server.stop()
        await store.close()


async def test_a_server_back_without_the_account_ends_the_bot_instead_of_a_new_account(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An in-memory server dies mid-play and another starts on its port, knowing no
    account: the bot stops, saying so, rather than opening an account there with its
    name and waiting for ever at a table that account never sat at; and it stops at
    that first answer, not once the grace period it would have tried for is over."""
    monkeypatch.setattr(connection, "RECONNECT_DELAYS", (0.05,))
    monkeypatch.setattr(connection, "DEFAULT_GRACE", 1.0)
    monkeypatch.setattr(connection, "GRACE_MARGIN", 0.5)
    config = FAST.model_copy(update={"port": free_port()})
    server = QiuQiuServer(config, store=MemoryStore())
    await server.start()
    conn = await Connection.open(server.url, name="Ann")
    table, _ = await conn.open_table(TableOptions(ante=1, min_bet=1, max_bet=2), buy_in=500)
    playing = asyncio.create_task(play(AlwaysCall(), conn, table.table_id, hands=1_000))
    await until(lambda: hands_played(server, table.table_id))
    cut_the_network(server)
    await server.stop()
    server = QiuQiuServer(config, store=MemoryStore())
    await server.start()
    accounts = set(await server.store.balances())
    try:
        with pytest.raises(ConnectionLost, match="no longer knows this account"):
            await asyncio.wait_for(playing, 30)
        assert set(await server.store.balances()) == accounts
        refused = {"code": ErrorCode.UNKNOWN_TOKEN.value}
        assert server.metrics.registry.get_sample_value("qiuqiu_errors_total", refused) == 1
    finally:
        await conn.close()
        await server.stop()


async def hands_played(server: QiuQiuServer, table_id: str) -> bool:
    return len(await server.store.table_hands(table_id)) >= 2


async def test_closing_while_a_reconnect_is_under_way_ends_the_connection() -> None:
    """close() lands while the reconnect's handshake is in flight: the socket that
    handshake opens is closed too, rather than read for ever."""
    welcome = wire.Welcome(
        version=PROTOCOL_VERSION, account_id="a1", name="Ann", balance=1_000, token="t"
    )
    handshakes = 0

    async def slow_second_handshake(connection: ServerConnection, request: Request) -> None:
        nonlocal handshakes
        handshakes += 1
        if handshakes == 2:
            await asyncio.sleep(0.5)

    async def greet_then_drop(ws: ServerConnection) -> None:
        hello = json.loads(await ws.recv())
        await ws.send(encode(welcome.model_copy(update={"ref": hello.get("id")})))
        if handshakes == 1:
            ws.transport.abort()
        await ws.wait_closed()

    async with serve(
        greet_then_drop, "127.0.0.1", 0, process_request=slow_second_handshake
    ) as fake:
        port = next(iter(fake.sockets)).getsockname()[1]
        conn = await Connection.open(f"ws://127.0.0.1:{port}", name="Ann")
        assert isinstance(await anext(conn.messages()), Disconnected)
        await asyncio.sleep(0.3)  # the reconnect is waiting on its handshake now
        async with asyncio.timeout(5):
            await conn.close()
    assert handshakes == 2


async def test_a_seat_taken_without_a_seed_of_this_clients_gets_one_for_the_next_hands(
    server: QiuQiuServer,
) -> None:
    """As after a restart: seated, but this process never sent the seat's seed."""
    async with await Connection.open(server.url, name="Ann") as conn:
        created = await conn.request(cmd.CreateTable(buy_in=500), wire.TableCreated)
        table_id = created.table.table_id
        summary = await asyncio.wait_for(play(AlwaysCall(), conn, table_id, hands=3), 30)
    deals = conn.deals[table_id]
    assert deals.seed is not None
    assert len(deals.seed) == 64
    # The first hand may have begun before the server had the seed; the last did not.
    last = max(deals.kept)
    assert deals.seed in deals.kept[last].client_seeds.values()
    assert deals.checks[last] == DealChecked(tiles=8, own_seed=True, paid=True)
    assert summary.verified == summary.hands


async def test_hands_dealt_before_a_seed_went_out_count_not_against_it_read_however_late(
    server: QiuQiuServer,
) -> None:
    """Seated without a seed of this process's, whose messages nobody reads while the
    table deals two hands (the turns time out): the seed goes out as the snapshot is
    read, after both were heard. They began before the server could have it, and were
    counted as two hands dealt without it: an honest table failed."""
    quick = TableOptions(turn_seconds=0.05)
    async with await Connection.open(server.url, name="Ann") as conn:
        created = await conn.request(cmd.CreateTable(options=quick, buy_in=500), wire.TableCreated)
        table_id = created.table.table_id
        async with await Connection.open(server.url, name="Wes") as wes:
            await wes.request(cmd.WatchTable(table_id=table_id), wire.TableWatched)
            async with asyncio.timeout(WAIT):
                async for message in wes.messages():
                    if isinstance(message, wire.HandStarted) and message.hand_id == 3:
                        break
        summary = await asyncio.wait_for(play(AlwaysCall(), conn, table_id, hands=3), 30)
    deals = conn.deals[table_id]
    assert deals.tampered is None
    assert summary.hands == 3


async def test_a_seed_sent_by_a_resumed_session_before_its_snapshot_fails_no_hand(
    server: QiuQiuServer,
) -> None:
    """A new process, resumed by its token, sets a seed of its own before it has read
    the table (the snapshot comes after the welcome): sent then, the table's commitment
    would be seen only after it, which fails the table."""
    issued: list[str] = []
    async with await Connection.open(server.url, name="Ann", on_token=issued.append) as first:
        table, _ = await first.open_table(TableOptions(), buy_in=500)
    async with await Connection.open(server.url, token=issued[0]) as again:
        await again.set_seed(table.table_id, "my-own-seed")
        summary = await asyncio.wait_for(play(AlwaysCall(), again, table.table_id, hands=2), 30)
    deals = again.deals[table.table_id]
    assert deals.tampered is None
    assert deals.seed_commitment == table.seed_commitment
    assert (deals.seed, summary.verified) == ("my-own-seed", summary.hands)


async def test_a_seed_set_before_the_snapshot_counts_not_the_hand_in_it_as_dealt_without_it(
    server: QiuQiuServer,
) -> None:
    """The hand in play when a resumed session reads its snapshot began before its seed
    went out. Held to at most one hand dealt without an unconfirmed seed (here never
    confirmed: the proxy keeps it from the server), the session lets the first hand
    that starts after the snapshot through, as the one the seed came too late for."""
    issued: list[str] = []
    withheld: list[str] = []

    async def withhold(message: dict[str, Any], to_client: Send, to_server: Send) -> bool:
        if message["type"] == "set_seed":
            withheld.append(message["client_seed"])
            return True
        return False

    async with proxy(server.url, up=withhold) as url:
        first = await Connection.open(url, name="Ann", on_token=issued.append)
        table, _ = await first.open_table(TableOptions(), buy_in=500)
        async with asyncio.timeout(WAIT):  # a hand in play, that waits for Ann's turn
            async for message in first.messages():
                if isinstance(message, wire.TurnStarted):
                    break
        async with await Connection.open(url, token=issued[0]) as again:
            await again.set_seed(table.table_id, "my-own-seed")
            with pytest.raises(DealTampered, match="a second hand was dealt without"):
                await asyncio.wait_for(play(AlwaysCall(), again, table.table_id, hands=5), 30)
        await first.close()
    assert withheld == ["my-own-seed"]
    deals = again.deals[table.table_id]
    in_play = min(deals.checks)  # the snapshot's hand
    assert isinstance(deals.checks[in_play + 1], DealChecked)
    assert deals.tampered is not None
    assert deals.tampered.hand_id == in_play + 2


async def test_a_seed_never_confirmed_is_sent_again_with_the_next_snapshot(
    server: QiuQiuServer,
) -> None:
    """As when the server that got the seed stopped before writing it."""
    async with await Connection.open(server.url, name="Ann") as conn:
        table, _ = await conn.open_table(TableOptions(), buy_in=500)
        deals = conn.deals[table.table_id]
        deals.sent_seed("lost-on-the-way")
        await conn.send(cmd.RequestSnapshot(table_id=table.table_id))
        async with asyncio.timeout(10):
            async for message in conn.messages():
                if isinstance(message, wire.SeedSet):
                    break
    assert (deals.seed, deals.pending_seed) == ("lost-on-the-way", None)


async def test_a_seat_taken_just_after_its_last_player_left_checks_no_hand_it_was_not_in(
    server: QiuQiuServer,
) -> None:
    """Bo plays two hands at Ann's table and leaves; Cy sits in his seat while the table
    still shows the last hand, which was Bo's: hers to play, not hers to check."""
    async with (
        await Connection.open(server.url, name="Ann") as ann,
        await Connection.open(server.url, name="Bo") as bo,
        await Connection.open(server.url, name="Cy") as cy,
    ):
        table, _ = await ann.open_table(TableOptions(dealer_bot=False), buy_in=500)
        table_id = table.table_id
        hosting = asyncio.create_task(play(AlwaysCall(), ann, table_id, hands=50))
        try:
            await bo.join_table(table_id, 500)
            await asyncio.wait_for(play(AlwaysCall(), bo, table_id, hands=2), 30)
            joined = await cy.join_table(table_id, 500)
            summary = await asyncio.wait_for(play(AlwaysCall(), cy, table_id, hands=2), 30)
        finally:
            hosting.cancel()
    assert joined.seat is not None
    assert summary.hands == 2
    assert summary.verified == 2


async def kill_the_host(
    host: asyncio.subprocess.Process, store: RedisStore, redis_url: str, table_id: str
) -> str:
    """Kill the process hosting ``table_id`` and wait until Redis knows it is gone (its
    channels closed); the dead host's name, which the table's record still holds."""
    dead = await store.table_host(table_id)
    assert dead is not None
    host.kill()
    await host.wait()
    async with Redis.from_url(redis_url) as redis:

        async def gone() -> bool:
            return not await redis.pubsub_channels(f"*{dead}*")

        await until(gone)
    return dead


async def test_joining_a_table_while_it_moves_to_another_server_is_asked_again_until_it_has(
    redis_url: str,
) -> None:
    """Bo's table's server is killed; Ann, at the other server, joins it before that one
    has adopted it (the lease is 3 s): refused table_moving, nothing changed, and the
    SDK sends it again until the table is adopted and takes her."""
    servers = Servers(redis_url)
    store = await RedisStore.from_url(redis_url)
    try:
        hosting, other = free_port(), free_port()
        host = await servers.start(hosting, lease=3.0)
        await servers.start(other, lease=3.0)
        async with await Connection.open(
            f"ws://127.0.0.1:{hosting}", name="Bo", reconnect=False
        ) as bo:
            table, _ = await bo.open_table(TableOptions(dealer_bot=False), 500)
            dead = await kill_the_host(host, store, redis_url, table.table_id)
            assert await store.table_host(table.table_id) == dead, "adopted before the test"
            async with await Connection.open(f"ws://127.0.0.1:{other}", name="Ann") as ann:
                joined = await ann.join_table(table.table_id, 500)
        assert joined.table_id == table.table_id
    finally:
        await servers.kill_remaining()
        await store.close()


async def test_a_spectator_watches_its_tables_again_after_a_drop_and_keeps_no_table_it_left(
    server: QiuQiuServer,
) -> None:
    """Eve watches two tables and stops watching one. The network drops: back, she
    watches the other again (its events come, and its state is the new snapshot's),
    and the one she left is not among her tables. The SDK resumed her account and
    watched nothing: her table state stood still."""
    ann = await Connection.open(server.url, name="Ann")
    options = TableOptions(seats=3, dealer_bot=False, min_players=3)
    watched, _ = await ann.open_table(options, 200)
    left, _ = await ann.open_table(options, 200)
    eve = await Connection.open(server.url, name="Eve")
    for table in (watched, left):
        await eve.request(cmd.WatchTable(table_id=table.table_id), wire.TableWatched)
    await eve.request(cmd.LeaveTable(table_id=left.table_id), wire.TableLeft)
    messages = eve.messages()

    async def next_of(kind: type[object], table_id: str) -> object:
        async with asyncio.timeout(10):
            async for message in messages:
                if isinstance(message, kind) and table_of(message) == table_id:
                    return message
        raise AssertionError("the messages ended")

    await next_of(wire.TableLeft, left.table_id)
    assert set(eve.tables) == {watched.table_id}
    before = eve.tables[watched.table_id]
    cut_the_network(server)
    await next_of(wire.TableSnapshot, watched.table_id)
    assert eve.tables[watched.table_id] is not before
    bo = await Connection.open(server.url, name="Bo")
    await bo.join_table(watched.table_id, 200)
    seated = await next_of(wire.PlayerSeated, watched.table_id)
    assert isinstance(seated, wire.PlayerSeated)
    assert seated.name == "Bo"
    assert set(eve.tables) == {watched.table_id}
    for conn in (ann, eve, bo):
        await conn.close()


@pytest.mark.parametrize(
    "config", [pytest.param(FAST.model_copy(update={"max_watched_tables": 2}), id="two watched")]
)
async def test_a_spectator_at_the_cap_of_watched_tables_watches_them_all_again_after_a_drop(
    server: QiuQiuServer,
) -> None:
    """The server caps the tables one connection watches; the SDK watches again, on its
    new connection, as many as it watched: all of them fit."""
    ann = await Connection.open(server.url, name="Ann")
    options = TableOptions(seats=3, dealer_bot=False, min_players=3)
    tables = [(await ann.open_table(options, 200))[0].table_id for _ in range(2)]
    eve = await Connection.open(server.url, name="Eve")
    for table_id in tables:
        await eve.request(cmd.WatchTable(table_id=table_id), wire.TableWatched)
    messages = eve.messages()
    cut_the_network(server)
    again: set[str] = set()
    async with asyncio.timeout(10):
        async for message in messages:
            assert not isinstance(message, wire.Error), message
            if isinstance(message, wire.TableSnapshot):
                again.add(message.table.table_id)
            if again == set(tables):
                break
    assert eve.watching == set(tables)
    for conn in (ann, eve):
        await conn.close()


def table_of(message: object) -> str | None:
    if isinstance(message, wire.TableSnapshot):
        return message.table.table_id
    return getattr(message, "table_id", None)


async def test_a_spectator_back_while_its_table_moves_to_another_server_watches_it_again(
    redis_url: str,
) -> None:
    """Eve, on one server, watches Bo's table, hosted by another. That one is killed, and
    Eve's network drops: back before her server has adopted the table (the lease is
    3 s), her watch is refused table_moving, nothing changed, and the SDK sends it again
    until the table is adopted and its snapshot comes. It took the refusal as final:
    she came back watching nothing."""
    servers = Servers(redis_url)
    store = await RedisStore.from_url(redis_url)
    other = QiuQiuServer(FAST.model_copy(update={"port": free_port()}), store=store)
    await other.start()
    try:
        hosting = free_port()
        host = await servers.start(hosting, lease=3.0)
        async with await Connection.open(
            f"ws://127.0.0.1:{hosting}", name="Bo", reconnect=False
        ) as bo:
            table, _ = await bo.open_table(TableOptions(dealer_bot=False), 500)
        eve = await Connection.open(other.url, name="Eve")
        await eve.request(cmd.WatchTable(table_id=table.table_id), wire.TableWatched)
        messages = eve.messages()
        async with asyncio.timeout(WAIT):
            async for message in messages:
                if isinstance(message, wire.TableSnapshot):
                    break
        await kill_the_host(host, store, redis_url, table.table_id)
        cut_the_network(other)
        refused = False
        snapshot = None
        async with asyncio.timeout(30):
            async for message in messages:
                if isinstance(message, wire.Error):
                    refused |= message.code is ErrorCode.TABLE_MOVING
                if isinstance(message, wire.TableSnapshot):
                    snapshot = message
                    break
        assert refused, "adopted before the watch was sent again"
        assert snapshot is not None
        assert snapshot.table.table_id == table.table_id
        assert eve.watching == {table.table_id}
        await eve.close()
    finally:
        await other.stop()
        await servers.kill_remaining()
        await store.close()


async def test_a_watch_sent_again_after_a_move_and_refused_store_unavailable_is_sent_again(
    server: QiuQiuServer,
) -> None:
    """A watched table moved (``table_closed`` without a seed), and its new host, making
    sure of its lease, refused the watch sent again ``store_unavailable``, nothing
    changed: the SDK took that as final, and a watcher in a terminal ended while the
    table played on (a full run here). A proxy in front of a real server plays the
    move and the refusal; the watch must be sent again and the snapshot come."""
    refused: list[int] = []
    moved = asyncio.Event()
    refuse = refusing("watch_table", 1, refused)

    async def refuse_once_moved(message: dict[str, Any], to_client: Send, to_server: Send) -> bool:
        return moved.is_set() and await refuse(message, to_client, to_server)

    async def move_after_the_snapshot(
        message: dict[str, Any], to_client: Send, to_server: Send
    ) -> bool:
        if message["type"] != "table_snapshot" or moved.is_set():
            return False
        moved.set()
        await to_client(json.dumps(message))
        table_id, seq = message["table"]["table_id"], message["seq"] + 1
        await to_client(encode(wire.TableClosed(table_id=table_id, seq=seq, reason=MOVED)))
        return True

    async with await Connection.open(server.url, name="Bo") as bo:
        table, _ = await bo.open_table(TableOptions(), 500)
        async with (
            proxy(server.url, up=refuse_once_moved, down=move_after_the_snapshot) as url,
            await Connection.open(url, name="Eve") as eve,
        ):
            await eve.request(cmd.WatchTable(table_id=table.table_id), wire.TableWatched)
            snapshots = 0
            async with asyncio.timeout(WAIT):
                async for message in eve.messages():
                    snapshots += isinstance(message, wire.TableSnapshot)
                    if snapshots == 2:
                        break
            assert refused, "the proxy refused no watch sent again"
            assert eve.watching == {table.table_id}
