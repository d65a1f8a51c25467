"""The real ``qiuqiu play`` in a pseudo-terminal whose connection drops while hands go
on without it: what it says of them when it is back, and the summary it ends with."""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.conftest import cut_the_network
from tests.cli.test_terminal import (
    CHIPS,
    SMALL,
    TURN,
    WELCOME,
    amount,
    finished,
    matched,
    spawn,
    words,
)

LEFT = rf"You left the table\. Your balance is ({CHIPS})\."
SUMMARY = re.compile(rf"This session: (\d+) hands?, won \d+, lost \d+, net ([+-]{CHIPS})")
PATIENCE = 30.0
"""Seconds to wait for the table to deal (never a timing assertion)."""


async def hands_ended(server: QiuQiuServer, table_id: str, count: int) -> None:
    async with asyncio.timeout(PATIENCE):
        while len(await server.store.table_hands(table_id)) < count:
            await asyncio.sleep(0.02)


async def test_hands_played_while_the_connection_was_down_are_told_and_in_the_summary(
    server: QiuQiuServer, config_dir: Path
) -> None:
    """The client is stopped at its turn and its connection cut: the timer plays its
    seat through that hand and the next. Back, it says how each went, and its summary
    counts them: its net is what the balance says, and its hands what the table dealt
    it. Their ends come replayed after the reconnect, after a gap in ``seq``: they
    tell what each seat has, not what it had before the hand."""
    child = spawn(config_dir, "--server", server.url, *SMALL, "--turn-seconds", "0.5")
    await child.expect(WELCOME, async_=True)
    await child.expect(TURN, async_=True)
    (table_id,) = server.lobby.tables
    child.kill(signal.SIGSTOP)
    cut_the_network(server)
    await hands_ended(server, table_id, 2)
    child.kill(signal.SIGCONT)
    await child.expect(words("played out while you were away"), async_=True)
    await child.expect(TURN, async_=True)
    child.sendline("quit now")
    await child.expect(LEFT, async_=True)
    balance = amount(matched(child))
    output = await finished(child)
    summary = SUMMARY.search(output)
    assert summary is not None, output
    played = await server.store.table_hands(table_id)
    assert int(summary.group(1)) == len(played)
    assert balance == 1_000 + amount(summary.group(2))


async def test_back_after_the_seat_was_given_up_the_client_says_so_and_ends_in_step(
    config_dir: Path,
) -> None:
    """The client is stopped at its turn and its connection cut until the server gives
    the seat up, the timer having played its hands meanwhile. Back, it says the seat
    stood up and what the balance is, counts those hands, and ends: it neither waits
    at a table that holds no seat of it nor says its chips are still there."""
    config = ServerConfig(port=0, hand_pause=0.0, bot_delay=0.0, grace=1.0)
    server = QiuQiuServer(config)
    await server.start()
    try:
        child = spawn(config_dir, "--server", server.url, *SMALL, "--turn-seconds", "0.05")
        await child.expect(WELCOME, async_=True)
        await child.expect(TURN, async_=True)
        (table_id,) = server.lobby.tables
        child.kill(signal.SIGSTOP)
        cut_the_network(server)
        async with asyncio.timeout(PATIENCE):
            while table_id in server.lobby.tables:
                await asyncio.sleep(0.02)
        child.kill(signal.SIGCONT)
        await child.expect(words("stood up while the connection was down"), async_=True)
        await child.expect(words(rf"your balance, now ({CHIPS})\."), async_=True)
        balance = amount(matched(child))
        output = await finished(child)
        played = await server.store.table_hands(table_id)
    finally:
        await server.stop()
    summary = SUMMARY.search(output)
    assert summary is not None, output
    assert "still at the table" not in output
    assert int(summary.group(1)) == len(played)
    assert balance == 1_000 + amount(summary.group(2))
