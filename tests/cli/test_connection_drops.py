"""The SDK's connection dropped, against a real server: it comes back by itself and the
bot plays on, a turn or an answer is asked again once back, a reconnect goes on while
the server cannot reach its store and for the grace period, a server back without the
account ends the bot, and closing ends a reconnect under way."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli import connection
from qiuqiu.cli.bot import Action, Turn, play
from qiuqiu.cli.connection import Closed, Connection, Disconnected, Reconnected
from qiuqiu.cli.errors import ConnectionLost
from qiuqiu.cli.game import Move
from qiuqiu.protocol import PROTOCOL_VERSION, ErrorCode, TableOptions, encode
from qiuqiu.protocol import server as wire
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.redis_store import RedisStore
from tests.cli.conftest import cut_the_network
from tests.conftest import free_port, own_redis
from tests.server.conftest import FAST, chip_total
from tests.server.processes import listening, until


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
