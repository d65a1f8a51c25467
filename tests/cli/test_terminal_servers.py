"""The real ``qiuqiu play`` when its server goes: a hand its dead server was playing is
called off, a server gone for good is tried for the grace period, one that lost the
account or stopped says so, the shuffle is checked from the seed a stopping server
revealed, and a table moved to another server is found again."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
from redis.asyncio import Redis

from qiuqiu.cli.connection import Connection
from qiuqiu.protocol import TableOptions
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.redis_store import RedisStore
from tests.cli.test_terminal import (
    SHUFFLE,
    SMALL,
    TURN,
    VERIFIED,
    WELCOME,
    finished,
    leave,
    matched,
    play_a_hand,
    spawn,
    words,
)
from tests.conftest import free_port
from tests.leases import lease_taken
from tests.server.processes import Servers

# -- a table whose server dies, between real server processes ---------------------------


async def test_a_hand_its_dead_server_was_playing_is_said_to_be_called_off(
    redis_url: str, config_dir: Path
) -> None:
    """Bo's table is hosted by one process, Ann plays at it through the other. The host
    is killed mid-hand: the other adopts the table, voids the hand, and Ann is told
    why her chips are back, though that hand_voided comes after a gap in seq."""
    servers = Servers(redis_url)
    try:
        hosting, relaying = free_port(), free_port()
        host = await servers.start(hosting)
        await servers.start(relaying)
        bo = await Connection.open(f"ws://127.0.0.1:{hosting}", name="Bo", reconnect=False)
        table, _ = await bo.open_table(TableOptions(dealer_bot=False, turn_seconds=5), 500)
        child = spawn(
            config_dir, "--server", f"ws://127.0.0.1:{relaying}", "--table", table.table_id
        )
        await child.expect(WELCOME, async_=True)
        await child.expect(["Bo to act", TURN], async_=True)
        host.kill()
        await host.wait()
        await child.expect(
            r"The hand was called off \(the server hosting the table stopped\); every chip "
            r"went back\.",
            async_=True,
        )
        await bo.close()
        await leave(child)
        assert "Traceback" not in await finished(child)
    finally:
        await servers.kill_remaining()


async def host_killed_at_a_table_of_players(
    servers: Servers, port: int, config_dir: Path
) -> pexpect.spawn[str]:
    """``qiuqiu play`` at a three-seat table on a server holding seats for 1 s, where
    Bo sat down and went away; then that server is killed, and the client says so."""
    host = await servers.start(port, flags=("--grace", "1"))
    child = spawn(config_dir, "--server", f"ws://127.0.0.1:{port}", "--seats", "3")
    await child.expect(WELCOME, async_=True)
    await child.expect(r"Table (t\w+): 3 seats", async_=True)
    bo = await Connection.open(f"ws://127.0.0.1:{port}", name="Bo", reconnect=False)
    await bo.join_table(matched(child), 500)
    await bo.close()
    await child.expect(r"Bo lost the connection \(1 s to come back\)", async_=True)
    host.kill()
    await host.wait()
    await child.expect("Connection lost", async_=True)
    return child


async def test_a_server_gone_for_good_is_tried_for_the_grace_period_and_the_chips_explained(
    redis_url: str, config_dir: Path
) -> None:
    """A server holding seats for 1 s (--grace 1), which Ann hears when Bo's connection
    drops, is killed: Ann is told her seat is held for 1 s, the client tries until then
    (and a margin), and giving up says where her chips at the table go, and how to come
    back for them."""
    servers = Servers(redis_url)
    try:
        port = free_port()
        child = await host_killed_at_a_table_of_players(servers, port, config_dir)
        await child.expect("Your seat is held for 1 s", async_=True)
        await child.expect("The connection is closed", async_=True)
        # Rich wraps a long line at the terminal's width, at any space, styling each line.
        await child.expect(
            words(
                r"Your (\d+) chips at table t\w+ go back to your balance when the server's",
                "grace period for your seat ends; run the same command again before then",
            ),
            async_=True,
        )
        at_table = matched(child)
        await child.expect(
            words(rf"Balance: 500 \(and {at_table} still at the table\)\."), async_=True
        )
        await child.expect(pexpect.EOF, async_=True)
        assert "Traceback" not in str(child.before)
        child.close()
        assert child.exitstatus == 1, "the session did not end by the player's choice"
    finally:
        await servers.kill_remaining()


async def test_a_server_that_lost_the_account_is_said_to_hold_no_seat_for_it(
    redis_url: str, config_dir: Path
) -> None:
    """The host dies and comes back with its store emptied, as an in-memory server
    restarts: the token is unknown, so after the grace period the client says the
    seats are gone, and no longer that its chips will come back or how to claim them."""
    servers = Servers(redis_url)
    try:
        port = free_port()
        child = await host_killed_at_a_table_of_players(servers, port, config_dir)
        async with Redis.from_url(redis_url) as redis:
            await redis.flushdb()
        await servers.start(port, flags=("--grace", "1"))
        await child.expect(words("the server no longer knows this account"), async_=True)
        await child.expect(pexpect.EOF, async_=True)
        said = str(child.before)
        assert "go back to your balance" not in said
        assert "still at the table" not in said
        # Not the lost account's last balance, as if it were still there.
        assert "Balance:" not in said, said
        assert re.search(words("The server no longer has this account, nor its balance."), said)
        child.close()
        assert child.exitstatus == 1
    finally:
        await servers.kill_remaining()


async def test_a_server_that_stops_is_said_to_have_stood_the_seat_up(
    redis_url: str, config_dir: Path
) -> None:
    # It said 'You left the table.', as if the player had typed quit.
    servers = Servers(redis_url)
    try:
        port = free_port()
        host = await servers.start(port)
        child = spawn(config_dir, "--server", f"ws://127.0.0.1:{port}")
        await child.expect(WELCOME, async_=True)
        await child.expect(TURN, async_=True)
        host.terminate()
        await child.expect(
            words(
                r"The server stopped: it stood your seat up, and your 500 chips went back "
                r"to your balance \(now"
            ),
            async_=True,
        )
        await child.expect(pexpect.EOF, async_=True)
        assert "You left the table" not in str(child.before)
        child.close()
        # Not 0, as a player's own quit: the session did not end by choice.
        assert child.exitstatus == 1
    finally:
        await servers.kill_remaining()


async def test_the_shuffle_is_checked_from_the_seed_a_stopping_server_revealed(
    redis_url: str, config_dir: Path
) -> None:
    # The table's history was asked for once the connection had closed, and the seed
    # its table_closed had brought went unused: "Could not check table ...'s shuffle".
    servers = Servers(redis_url)
    try:
        port = free_port()
        host = await servers.start(port)
        child = spawn(config_dir, "--server", f"ws://127.0.0.1:{port}", *SMALL)
        await child.expect(WELCOME, async_=True)
        assert await play_a_hand(child) == VERIFIED
        await child.expect(TURN, async_=True)
        host.terminate()
        await child.expect(words(r"The server stopped: it stood your seat up"), async_=True)
        await child.expect([SHUFFLE, "Could not check"], async_=True)
        assert isinstance(child.match, re.Match)
        # Hand 1, played to its end, and hand 2, called off as the server stopped.
        assert child.match.groups()[1:] == ("2",), child.after
        await child.expect(pexpect.EOF, async_=True)
        assert "Traceback" not in str(child.before)
        child.close()
        assert child.exitstatus == 1
    finally:
        await servers.kill_remaining()


async def test_a_table_that_moved_to_another_server_is_found_again_and_played_on(
    redis_url: str, config_dir: Path
) -> None:
    """Ann's server stalled past the table's lease (here its lease is taken at Redis,
    as an adopter does, and lapses for her server to adopt the table again): it says
    the table moved and closes her connection with 1012. A client that took the table
    for closed would wait for nothing while her seat, away, paid its antes."""
    store = await RedisStore.from_url(redis_url)
    server = QiuQiuServer(ServerConfig(port=0, lease=0.3, hand_pause=0.0), store=store)
    await server.start()
    try:
        child = spawn(config_dir, "--server", server.url, "--turn-seconds", "30", *SMALL)
        await child.expect(WELCOME, async_=True)
        await child.expect(TURN, async_=True)
        (table_id,) = server.lobby.tables
        await lease_taken(redis_url, table_id)
        await child.expect("The table moved to another server: reconnecting", async_=True)
        await child.expect(TURN, async_=True)
        child.sendline("check" if "check" in matched(child) else "call")
        await leave(child)
        assert "Traceback" not in await finished(child)
    finally:
        await server.stop()
        await store.close()
