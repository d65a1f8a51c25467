"""The dealer bot, played against over real connections."""

from __future__ import annotations

import pytest

from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from tests.server.conftest import FAST, chip_total
from tests.server.test_play import Connect, call_or_check, play_hand

HANDS = 2000


@pytest.fixture
def config() -> ServerConfig:
    # The test plays as fast as the server answers: far past the human rate limit.
    return FAST.model_copy(update={"starting_balance": 100_000, "rate": 1e6, "burst": 1_000_000})


async def test_the_dealer_bot_beats_a_player_who_always_calls(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    await client.hello("Caller")
    await client.send("create_table", buy_in=10_000)
    table_id = (await client.expect("table_joined"))["table_id"]

    bot_net = 0
    bot_bets = 0
    for _ in range(HANDS):
        frames = await play_hand(client, table_id, call_or_check)
        started = next(f for f in frames if f["type"] == "hand_started")
        before = {s["seat"]: s["amount"] for s in started["stacks"]}
        after = {s["seat"]: s["amount"] for s in frames[-1]["stacks"]}
        bot_net += after[1] - before[1]
        bot_bets += sum(
            1 for f in frames if f["type"] in ("bet_placed", "raised") and f["seat"] == 1
        )

    # The server's seeded shuffle makes this one fixed run: the bot bets its strong
    # hands, the caller pays them off, and the antes alone are worth 10 a hand.
    assert bot_bets > HANDS // 10
    assert bot_net > HANDS * 10 * 0.05, f"the bot won only {bot_net} chips in {HANDS} hands"
    assert await chip_total(server) == 0
