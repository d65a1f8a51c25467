"""The example bots in clients/examples, through the SDK, against a real server."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from clients.examples.always_call import AlwaysCall
from clients.examples.tile_ranker import TileRanker, strength
from qiuqiu.cli.bot import play
from qiuqiu.cli.connection import Connection
from qiuqiu.engine import parse_tiles
from qiuqiu.protocol import TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.conftest import CONFIG
from tests.server.conftest import chip_total

EXAMPLES = Path(__file__).parents[2] / "clients" / "examples"
HANDS = 200
HEADS_UP = TableOptions(seats=2, dealer_bot=False, ante=1, min_bet=1, max_bet=2)
"""Stakes small enough that neither bot can go broke in 200 hands (at most 3 chips
a hand), so both play every one of them."""
BUY_IN = 1_000


@pytest.fixture
async def unpaused() -> AsyncIterator[QiuQiuServer]:
    """A server with no pause between hands: 200 of them go by in a second. Both bots
    ask to leave at the same hand's end, so a hand dealt before they are gone counts
    for both."""
    server = QiuQiuServer(CONFIG.model_copy(update={"hand_pause": 0.0}), rng=random.Random(7))
    await server.start()
    yield server
    await server.stop()


async def test_the_two_example_bots_play_200_hands_at_one_table_and_no_chip_is_lost(
    unpaused: QiuQiuServer,
) -> None:
    server = unpaused
    caller = await Connection.open(server.url, name="Caller")
    ranker = await Connection.open(server.url, name="Ranker")
    created = await caller.request(
        cmd.CreateTable(options=HEADS_UP, buy_in=BUY_IN), wire.TableCreated
    )
    table_id = created.table.table_id
    await ranker.request(cmd.JoinTable(table_id=table_id, buy_in=BUY_IN), wire.TableJoined)
    caller_summary, ranker_summary = await asyncio.wait_for(
        asyncio.gather(
            play(AlwaysCall(), caller, table_id, HANDS), play(TileRanker(), ranker, table_id, HANDS)
        ),
        120,
    )
    await caller.close()
    await ranker.close()
    assert caller_summary.hands == ranker_summary.hands >= HANDS
    assert caller_summary.per_hand.keys() == ranker_summary.per_hand.keys()
    for hand_id, net in caller_summary.per_hand.items():
        assert net + ranker_summary.per_hand[hand_id] == 0, hand_id
    assert caller_summary.balance is not None
    assert ranker_summary.balance is not None
    assert caller_summary.balance + ranker_summary.balance == 2_000
    assert caller_summary.balance == 1_000 + caller_summary.net
    assert await chip_total(server) == 0
    caller_id = caller.account_id
    for hand in await server.store.table_hands(table_id):
        assert hand.net(caller_id) == caller_summary.per_hand[hand.hand_id]


def test_the_ranker_counts_a_hand_that_is_already_strong_as_certain() -> None:
    assert strength(parse_tiles("3-1 6-6 5-0 5-2")) == 1.0
    assert strength(parse_tiles("6-6 6-5 5-5 0-0")) == 0.0
    assert strength(parse_tiles("6-6 5-5 0-0")) == 14 / 25


async def test_an_example_bot_runs_from_its_own_command_line(server: QiuQiuServer) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        EXAMPLES / "tile_ranker.py",
        *("--server", server.url, "--hands", "5", "--name", "Ranker"),
        # Small stakes: the deck depends on the bot's own random seed; no run of luck may bust it.
        *("--ante", "1", "--min-bet", "1", "--max-bet", "2", "--max-raises", "2"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    summary = json.loads(out)
    assert summary["hands"] == 5, err.decode()
    assert summary["balance"] == 1_000 + summary["net"]
    assert summary["verified"] == 5
    assert summary["shuffle_verified"] == 5
    assert await chip_total(server) == 0


async def test_ctrl_c_stops_an_example_bot_with_one_line(server: QiuQiuServer) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        EXAMPLES / "always_call.py",
        *("--server", server.url, "--hands", "100000"),
        *("--ante", "1", "--min-bet", "1", "--max-bet", "2"),
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    async with asyncio.timeout(60):
        while b"hand 1 of 100000" not in await process.stderr.readline():
            pass
        process.send_signal(signal.SIGINT)
        rest = (await process.stderr.read()).decode()
        await process.wait()
    assert process.returncode == 130, rest
    assert "Traceback" not in rest
    assert rest.splitlines()[-1] == "always_call.py: interrupted"
