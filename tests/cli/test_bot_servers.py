"""A bot whose server dies, comes back without its account, stops, or moves its table:
it counts what was played and what was voided, and says nothing of reconnecting to a
server that stood it up."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli import connection
from qiuqiu.cli.bot import Action, Turn, main, play
from qiuqiu.cli.connection import Connection
from qiuqiu.protocol import ErrorCode, TableOptions, encode
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.redis_store import RedisStore
from tests.cli.conftest import cut_the_network
from tests.cli.proxy import Send, proxy
from tests.cli.test_bot import PATIENCE, SMALL
from tests.conftest import free_port
from tests.server.processes import Servers, until

ACTIONS = {"check", "call", "bet", "raise", "fold", "declare_cut"}


async def test_a_bot_whose_server_came_back_without_its_account_still_reports_its_hands(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An in-memory server dies mid-run and another starts on its port: the command
    fails (status 1) saying why, and standard output still has the hands played."""
    monkeypatch.setattr(connection, "RECONNECT_DELAYS", (0.05,))
    monkeypatch.setattr(connection, "DEFAULT_GRACE", 5.0)
    monkeypatch.setattr(connection, "GRACE_MARGIN", 0.5)
    caplog.set_level(logging.INFO, logger="qiuqiu.cli.connection")
    config = ServerConfig(port=free_port(), hand_pause=0.0, bot_delay=0.0, rate=1e6, burst=10**6)
    server = QiuQiuServer(config, store=MemoryStore())
    await server.start()
    argv = ["--server", server.url, "--hands", "100000", "--ante", "1", "--min-bet", "1"]
    argv += ["--max-bet", "2"]
    running = asyncio.create_task(asyncio.to_thread(main, AlwaysCall(), argv))
    await until(lambda: some_hands_played(server))
    cut_the_network(server)
    await server.stop()

    def tries() -> list[str]:
        said = (r.getMessage() for r in caplog.records)
        return [line for line in said if line.startswith("reconnecting")]

    async def tried() -> bool:
        return bool(tries())

    await until(tried)
    await asyncio.sleep(0.5)  # more tries, each failing the same way, while nothing listens
    server = QiuQiuServer(config, store=MemoryStore())
    await server.start()
    try:
        assert await asyncio.wait_for(running, PATIENCE) == 1
    finally:
        await server.stop()
    out, err = capsys.readouterr()
    assert "the server no longer knows this account" in err
    said = tries()
    assert len(said) == len(set(said)), "each way a reconnect failed, said once"
    summary = json.loads(out)
    assert summary["hands"] >= 2
    assert summary["won"] + summary["lost"] <= summary["hands"]


async def test_a_bot_its_stopping_server_stood_up_ends_without_saying_it_reconnects(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """A lone server stops (SIGTERM does this): it stands every seat up, then closes
    with 1001. The bot, with no seat left, ends with its summary; it said "reconnecting,
    for up to 70 s" all the same, and then stopped at once."""
    caplog.set_level(logging.INFO, logger="qiuqiu.cli")
    config = ServerConfig(port=0, hand_pause=0.0, bot_delay=0.0, rate=1e6, burst=10**6)
    server = QiuQiuServer(config, store=MemoryStore())
    await server.start()
    argv = ["--server", server.url, "--hands", "100000", "--ante", "1", "--min-bet", "1"]
    running = asyncio.create_task(asyncio.to_thread(main, AlwaysCall(), [*argv, "--max-bet", "2"]))
    try:
        await until(lambda: some_hands_played(server))
    finally:
        await server.stop()
    assert await asyncio.wait_for(running, PATIENCE) == 0
    assert "stood up from table" in caplog.text
    assert "reconnecting" not in caplog.text
    summary = json.loads(capsys.readouterr().out)
    assert summary["hands"] >= 1
    # The server closed the table as it stopped, and its table_closed revealed the seed.
    assert summary["shuffle_verified"] == summary["hands"] + summary["voided"]


async def some_hands_played(server: QiuQiuServer) -> bool:
    tables = await server.store.tables()
    return any([len(await server.store.table_hands(t.table_id)) >= 2 for t in tables])


class KillsTheHostOnItsFirstTurn(AlwaysCall):
    """Plays like AlwaysCall, but kills the process hosting its table on its first turn."""

    def __init__(self, host: asyncio.subprocess.Process) -> None:
        self.host = host

    def decide(self, turn: Turn) -> Action:
        if self.host.returncode is None:
            self.host.kill()
        return super().decide(turn)


@pytest.mark.parametrize("hands", [1, 2])
async def test_a_hand_its_dead_server_was_playing_is_counted_voided_not_played(
    redis_url: str, hands: int
) -> None:
    """Cy's table is hosted by one process, the bot plays at it through the other; the
    host dies mid-hand and the other adopts the table and voids the hand, with a seq far
    ahead and no hand_ended after it. The bot's summary has the hands the server's
    history has, the voided one apart: the two hands asked for are played to their end."""
    servers = Servers(redis_url)
    store = await RedisStore.from_url(redis_url)
    try:
        hosting, relaying = free_port(), free_port()
        # No pause between hands: the bot's request to stand up after its last hand
        # beats the next one only if made as that hand begins.
        host = await servers.start(hosting, flags=("--hand-pause", "0"))
        await servers.start(relaying, flags=("--hand-pause", "0"))
        cy = await Connection.open(f"ws://127.0.0.1:{hosting}", name="Cy", reconnect=False)
        options = SMALL.model_copy(update={"dealer_bot": False, "turn_seconds": 1.0})
        table, _ = await cy.open_table(options, 500)
        async with await Connection.open(f"ws://127.0.0.1:{relaying}", name="Bo") as conn:
            await conn.join_table(table.table_id, 500)
            bot = KillsTheHostOnItsFirstTurn(host)
            summary = await asyncio.wait_for(play(bot, conn, table.table_id, hands), PATIENCE)
        await cy.close()
        history = await store.account_hands(conn.account_id)
        voided = {hand.hand_id for hand in history if hand.voided}
        assert len(voided) == 1
        played = {h.hand_id: h.net(conn.account_id) for h in history if not h.voided}
        assert (summary.per_hand, summary.voided_hands) == (played, voided)
        assert (summary.hands, summary.voided) == (hands, 1)
        assert summary.as_dict()["voided"] == 1
    finally:
        await servers.kill_remaining()
        await store.close()


async def test_an_action_refused_table_moving_is_sent_again_when_the_snapshot_repeats_the_turn(
    server: QiuQiuServer,
) -> None:
    """Between two servers whose Redis just came back, a bot's action can reach no table
    (``table_moving``) while the table's turn goes on; the snapshot its server then
    asks for repeats that very turn. A proxy in front of a real server plays that
    server's part: it refuses the bot's first action so and asks for the snapshot.
    The bot answers the turn again, and no turn of its runs out."""
    frames: list[dict[str, object]] = []
    refused: list[int] = []

    async def refuse_the_first_action(
        message: dict[str, Any], to_client: Send, to_server: Send
    ) -> bool:
        if message["type"] not in ACTIONS or refused:
            return False
        refused.append(message["id"])
        moving = "the table is moving to another server"
        error = wire.Error(ref=message["id"], code=ErrorCode.TABLE_MOVING, message=moving)
        await to_client(encode(error))
        await to_server(encode(cmd.RequestSnapshot(table_id=message["table_id"])))
        return True

    async def keep(message: dict[str, Any], to_client: Send, to_server: Send) -> bool:
        frames.append(message)
        return False

    async with (
        proxy(server.url, up=refuse_the_first_action, down=keep) as url,
        await Connection.open(url, name="Ann") as conn,
    ):
        table, _ = await conn.open_table(TableOptions(turn_seconds=2.0), buy_in=500)
        summary = await asyncio.wait_for(
            play(AlwaysCall(), conn, table.table_id, hands=2), PATIENCE
        )
    assert summary.hands == 2
    assert any(f["type"] == "table_snapshot" for f in frames), "the proxy asked for none"
    assert not [f for f in frames if f["type"] == "turn_timed_out"]
