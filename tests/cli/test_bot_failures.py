"""A bot whose own code fails: it stands up and is named, with its own traceback and the
hand, and reports the hands it played and the balance it stood up to; an answer the
server refuses, or one no message can carry, is logged, and the timer plays the turn."""

from __future__ import annotations

import asyncio
import json
import logging
import sys

import pytest

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli.bot import Action, Bet, Bot, Fold, HandResult, Raise, Split, Turn, main, play, run
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.errors import BotFailed
from qiuqiu.protocol import TableOptions
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.conftest import CONFIG
from tests.cli.test_bot import HANDS, PATIENCE, SMALL
from tests.server.conftest import chip_total


class Broken(Bot):
    def decide(self, turn: Turn) -> Action:
        raise ZeroDivisionError("my bug")


class Quits(Bot):
    def decide(self, turn: Turn) -> Action:
        sys.exit("had enough")


class RaisesFirst(Bot):
    def decide(self, turn: Turn) -> Action:
        return Raise(2) if turn.legal.bet is not None else Fold()


async def test_an_answer_the_server_refuses_is_logged_with_the_answer_and_its_hand(
    server: QiuQiuServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="qiuqiu.cli.bot")
    options = SMALL.model_copy(update={"turn_seconds": 0.2})
    await asyncio.wait_for(
        run(RaisesFirst(), server.url, name="Raiser", hands=1, options=options), PATIENCE
    )
    said = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert said[0] == (
        "the server refused the bot's Raise(to=2) in hand 1: cannot_raise nobody has bet yet:"
        " bet instead"
    ), said


class SoreLoser(AlwaysCall):
    def hand_ended(self, result: HandResult) -> None:
        raise ValueError(f"hand {result.hand_id} is over")


@pytest.mark.parametrize(
    ("bot", "error"),
    [(Broken(), ZeroDivisionError), (Quits(), SystemExit), (SoreLoser(), ValueError)],
    ids=["decide", "sys.exit", "hand_ended"],
)
async def test_a_bot_that_raises_stands_up_and_the_error_names_it_and_the_hand(
    server: QiuQiuServer, bot: Bot, error: type[Exception | SystemExit]
) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        table, _ = await conn.open_table(SMALL, buy_in=500)
        with pytest.raises(BotFailed) as caught:
            await asyncio.wait_for(play(bot, conn, table.table_id, HANDS), PATIENCE)
        assert (caught.value.name, caught.value.hand_id) == (type(bot).__name__, 1)
        assert isinstance(caught.value.error, error)
        assert not server.lobby.seated_at(conn.account_id)
    assert await chip_total(server) == 0


async def test_a_bots_command_line_prints_the_bots_failure_and_exits_1(
    server: QiuQiuServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--server", server.url, "--hands", "2"]
    assert await asyncio.wait_for(asyncio.to_thread(main, Broken(), argv), PATIENCE) == 1
    err = capsys.readouterr().err
    assert "Broken raised ZeroDivisionError in hand 1: my bug" in err
    trace = err.split("Traceback", 1)[1]
    assert "in decide" in trace
    assert "qiuqiu/cli/bot.py" not in trace  # the SDK's own frames are left out


class BreaksInItsSecondHand(AlwaysCall):
    def decide(self, turn: Turn) -> Action:
        if turn.hand_id > 1:
            raise ZeroDivisionError("my bug")
        return super().decide(turn)


async def test_a_bot_that_fails_after_some_hands_reports_them_and_the_balance_it_stood_up_to(
    server: QiuQiuServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--server", server.url, "--hands", "5", "--ante", "1", "--min-bet", "1"]
    argv += ["--max-bet", "2"]
    assert await asyncio.to_thread(main, BreaksInItsSecondHand(), argv) == 1
    summary = json.loads(capsys.readouterr().out)
    (balance,) = [b for account, b in (await server.store.balances()).items() if account != "house"]
    assert summary["balance"] == balance
    # The hand in play as it failed, played out by the server's timer, is in the balance:
    # so it is in the hands and the net too, which would not add up to it otherwise.
    assert summary["hands"] == 2
    assert summary["net"] == balance - server.config.starting_balance
    assert summary["won"] + summary["lost"] <= 2


AT_ONCE = CONFIG.model_copy(update={"hand_pause": 0.0})


@pytest.mark.parametrize("config", [AT_ONCE], ids=["dealt at once"])
async def test_a_bot_failing_as_a_hand_ends_counts_the_next_one_dealt_it_meanwhile(
    server: QiuQiuServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table dealt the next hand as the last ended: the seat, standing up, is in it,
    and the chips it puts in are gone from the balance, so from the net too."""
    argv = ["--server", server.url, "--hands", "5", "--ante", "1", "--min-bet", "1"]
    assert await asyncio.to_thread(main, SoreLoser(), argv) == 1
    summary = json.loads(capsys.readouterr().out)
    (balance,) = [b for account, b in (await server.store.balances()).items() if account != "house"]
    assert summary["balance"] == balance
    assert summary["net"] == balance - server.config.starting_balance


class OutOfRange(Bot):
    """Answers with an amount no table can take, and no message can carry."""

    def decide(self, turn: Turn) -> Action:
        return Bet(-5)


async def test_an_amount_no_message_can_carry_is_logged_and_the_timer_plays_the_turn(
    server: QiuQiuServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "qiuqiu.cli.bot")
    async with await Connection.open(server.url, name="Ann") as conn:
        table, _ = await conn.open_table(TableOptions(turn_seconds=0.2), buy_in=500)
        summary = await asyncio.wait_for(play(OutOfRange(), conn, table.table_id, hands=2), 30)
    assert summary.hands == 2
    said = [r.getMessage() for r in caplog.records if "cannot be sent" in r.getMessage()]
    assert said[0] == (
        "the bot's answer Bet(amount=-5) cannot be sent (amount: Input should be greater"
        " than or equal to 1): the turn's timer will check or fold for it"
    )


class CutsATileTwice(AlwaysCall):
    """Cuts its first tile into both halves: no message can carry it."""

    def cut(self, turn: Turn) -> Split:
        first, second, third, _ = turn.tiles
        return Split((str(first), str(first)), (str(second), str(third)))


async def test_a_cut_no_message_can_carry_is_logged_with_the_reason_alone(
    server: QiuQiuServer, caplog: pytest.LogCaptureFixture
) -> None:
    # The reason is the whole cut's, in no one field of it: no field is named before it.
    caplog.set_level(logging.INFO, "qiuqiu.cli.bot")
    options = SMALL.model_copy(update={"manual_split": True, "turn_seconds": 0.2})
    async with await Connection.open(server.url, name="Ann") as conn:
        table, _ = await conn.open_table(options, buy_in=500)
        await asyncio.wait_for(play(CutsATileTwice(), conn, table.table_id, hands=1), PATIENCE)
    said = next(r.getMessage() for r in caplog.records if "cannot be sent" in r.getMessage())
    assert said.endswith(
        " cannot be sent (a cut is four different tiles in two pairs): the turn's timer"
        " will check or fold for it"
    )
