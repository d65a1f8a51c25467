"""The dealer bot, played against over real connections."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any, cast

import pytest

from qiuqiu.protocol import LegalActions, encode
from qiuqiu.protocol import server as wire
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.dealer import DealerBot
from qiuqiu.server.frames import Frame
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.table import Table
from tests.server.conftest import FAST, chip_total
from tests.server.test_play import Connect, call_or_check, play_hand

HANDS = 2000


@pytest.fixture
def config() -> ServerConfig:
    # The test plays as fast as the server answers: far past the human rate limit.
    return FAST.model_copy(update={"starting_balance": 100_000, "rate": 1e6, "burst": 1_000_000})


async def test_the_dealer_bot_plays_a_player_who_always_calls(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    await client.hello("Caller")
    # Bets capped: the decks are new every run, and no run of luck may bust the caller.
    await client.send("create_table", options={"max_bet": 50}, buy_in=10_000)
    table_id = (await client.expect("table_joined"))["table_id"]

    bot_bets = 0
    for _ in range(HANDS):
        frames = await play_hand(client, table_id, call_or_check)
        started = next(f for f in frames if f["type"] == "hand_started")
        before = {s["seat"]: s["amount"] for s in started["stacks"]}
        ended = next(f for f in reversed(frames) if f["type"] == "hand_ended")
        after = {s["seat"]: s["amount"] for s in ended["stacks"]}
        assert after[0] - before[0] == before[1] - after[1], "what one won the other lost"
        bot_bets += sum(
            1 for f in frames if f["type"] in ("bet_placed", "raised") and f["seat"] == 1
        )

    # The bot draws its actions from the CSPRNG, so what it wins here is luck as
    # much as skill: tests/cli/arena/test_match.py measures that in seeded duplicate
    # matches. Here: it bets, and every chip it won the caller lost.
    assert bot_bets > HANDS // 10
    assert await chip_total(server) == 0


async def test_the_dealer_bot_answers_random_sizes_legally_at_a_real_table(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """Bets and raises of every size, most of them not in the bot's abstraction: the
    bot's answers must all be accepted (a refused one would leave its turn to the
    timer), and it must still bet and raise itself."""
    rng = random.Random(15)

    def any_size(legal: dict[str, Any]) -> dict[str, Any]:
        options: list[dict[str, Any]] = [call_or_check(legal)]
        if "bet" in legal:
            options.append(
                {
                    "type": "bet",
                    "amount": rng.randint(legal["bet"]["min"], legal["bet"]["max"] // 4),
                }
            )
        if "raise_to" in legal:
            low, high = legal["raise_to"]["min"], legal["raise_to"]["max"]
            options.append({"type": "raise", "to": rng.randint(low, max(low, high // 4))})
        if legal.get("fold"):
            options.append({"type": "fold"})
        return rng.choice(options)

    client = await connect_client()
    await client.hello("Sizer")
    await client.send("create_table", buy_in=500)
    table_id = (await client.expect("table_joined"))["table_id"]
    bot_moves: dict[str, int] = {}
    for _ in range(300):
        frames = await play_hand(client, table_id, any_size)
        for f in frames:
            if f.get("seat") == 1 and f["type"] in (
                "bet_placed",
                "raised",
                "called",
                "folded",
                "checked",
                "turn_timed_out",
            ):
                bot_moves[f["type"]] = bot_moves.get(f["type"], 0) + 1
        ended = next(f for f in reversed(frames) if f["type"] == "hand_ended")
        if next(s["amount"] for s in ended["stacks"] if s["seat"] == 0) < 100:
            await client.send("leave_table", table_id=table_id)
            await client.expect("table_left")
            made = await client.reply("create_table", buy_in=500)
            assert made["type"] == "table_created", made
            table_id = (await client.expect("table_joined"))["table_id"]
    assert "turn_timed_out" not in bot_moves
    assert bot_moves.get("raised", 0) > 3
    assert bot_moves.get("bet_placed", 0) > 10
    assert await chip_total(server) == 0


def test_the_bot_skips_reading_what_it_learns_nothing_from() -> None:
    table = cast(
        Table,
        SimpleNamespace(
            rng=random.Random(1),
            timings=SimpleNamespace(bot_delay=0),
            options=SimpleNamespace(turn_seconds=30.0),
            later=lambda delay, work: None,
        ),
    )
    bot = DealerBot(table, 1)
    legal = LegalActions(check=True)
    turn = wire.TurnStarted(
        table_id="t",
        seq=5,
        hand_id=3,
        seat=1,
        to_call=0,
        deadline_ms=0,
        pot=20,
        seats=(),
        legal=legal,
    )
    bot.deliver_frame(Frame(encode(turn), wire.TurnStarted, "t", 5, own_seat=1))
    assert bot._turn == turn
    # Not JSON at all: had the bot read it, it would have raised.
    bot.deliver_frame(Frame("{not json", wire.PotAwarded, "t", 6))
    assert bot._turn is None, "a hand's event, read or not, ends the bot's turn"
    bot.deliver_frame(Frame(encode(turn), wire.TurnStarted, "t", 5, own_seat=1))
    # Another seat's turn, and another seat's tiles: copies that are not the bot's own.
    for kind in (wire.TurnStarted, wire.TilesDealt, wire.FourthTileDealt):
        bot.deliver_frame(Frame("{not json", kind, "t", 6))
        bot.deliver_frame(Frame("{not json", kind, "t", 6, own_seat=0))
    assert bot._turn is None
    started = wire.HandStarted(
        table_id="t",
        seq=7,
        hand_id=4,
        button=1,
        stacks=(),
        commitment="00" * 32,
        leaves=(),
        client_seeds=(),
    )
    bot.deliver_frame(Frame.of(started))
    assert bot._record.hand_id == 4, "what it learns from, it reads"


async def test_the_bot_keeps_a_credit_with_each_player_at_a_real_table(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """Heads-up with two rounds, the bot counts every hand it played from its solved
    strategy into its credit with the player (what it may risk leaning on that
    player's mistakes); a player who sits down starts a new credit."""
    caller = await connect_client()
    await caller.hello("Caller")
    await caller.send("create_table", options={"betting_rounds": 2, "seats": 3}, buy_in=10_000)
    table_id = (await caller.expect("table_joined"))["table_id"]
    for _ in range(30):
        await play_hand(caller, table_id, call_or_check)
    bot = cast(DealerBot, server.lobby.tables[table_id]._bot)
    assert bot._record.credit.hands == 30, "the caller never folds: the bot played every hand"
    other = await connect_client()
    await other.hello("Other")
    await other.send("join_table", table_id=table_id, buy_in=500)
    await other.expect("table_joined")
    await caller.expect("player_seated")
    assert bot._record.credit.hands == 0
    assert await chip_total(server) == 0


class TestATurnShorterThanTheBotsDelay:
    @pytest.fixture
    def config(self) -> ServerConfig:
        # Turns long enough for a busy test machine to answer its own, far shorter
        # than the bot's delay.
        return FAST.model_copy(update={"bot_delay": 8.0})

    async def test_the_bot_still_acts_on_its_turn_and_does_not_fold_every_bet(
        self, server: QiuQiuServer, connect_client: Connect
    ) -> None:
        """Its turn ran out before its delay did, so the timer folded it to any bet: a
        player who bet the minimum every hand won every ante."""
        client = await connect_client()
        await client.hello("Better")
        await client.send("create_table", options={"turn_seconds": 2.0}, buy_in=500)
        table_id = (await client.expect("table_joined"))["table_id"]

        def min_bet(legal: dict[str, Any]) -> dict[str, Any]:
            if "bet" in legal:
                return {"type": "bet", "amount": legal["bet"]["min"]}
            # Never into a raise: a call of one could bust it before its third hand.
            return {"type": "check"} if legal.get("check") else {"type": "fold"}

        for _ in range(3):
            frames = await play_hand(client, table_id, min_bet)
            assert not [f for f in frames if f["type"] == "turn_timed_out" and f["seat"] == 1]
        assert await chip_total(server) == 0
