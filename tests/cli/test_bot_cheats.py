"""Each way a server can cheat a bot's deals, caught by the SDK: a table seed drawn again,
a commitment missing, a seed or a button the server chose, a pot paid wrong, a hand
number skipped, a resumed seat's new seed never confirmed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli.bot import (
    Action,
    Turn,
    main,
    play,
)
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.payouts import PaidWrong
from qiuqiu.cli.tokens import TokenFile
from qiuqiu.cli.turns import turn_key
from qiuqiu.protocol import (
    DealTampered,
    LegalActions,
)
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.conftest import cut_the_network
from tests.cli.game_helpers import played_to
from tests.cli.proxy import Hook, Send, proxy, refusing
from tests.cli.test_bot import HANDS, PATIENCE, SMALL
from tests.server import cheats
from tests.server.conftest import chip_total


async def test_a_table_seed_drawn_again_once_the_players_seed_is_in_is_caught(
    server: QiuQiuServer,
) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        with cheats.recommitted():
            table, _ = await conn.open_table(SMALL, buy_in=500)
            with pytest.raises(DealTampered, match="seed commitment changed") as caught:
                await asyncio.wait_for(play(AlwaysCall(), conn, table.table_id, HANDS), PATIENCE)
    assert caught.value.table_id == table.table_id


async def test_a_table_listed_without_a_seed_commitment_is_caught_once_the_seed_is_sent(
    server: QiuQiuServer,
) -> None:
    """Bo opens the table, so Ann's client knows it only from the lobby, which lists no
    commitment: the first one it sees comes with the snapshot after its seed."""
    async with (
        await Connection.open(server.url, name="Ann") as conn,
        await Connection.open(server.url, name="Bo") as bo,
    ):
        with cheats.recommitted(unlisted=True):
            created = await bo.request(cmd.CreateTable(options=SMALL), wire.TableCreated)
            table_id = created.table.table_id
            await conn.join_table(table_id, 500)
            with pytest.raises(DealTampered, match="no seed commitment before") as caught:
                await asyncio.wait_for(play(AlwaysCall(), conn, table_id, HANDS), PATIENCE)
        # The seed revealed at the close makes every deck: the shuffle is not verified.
        with pytest.raises(DealTampered, match="no seed commitment before"):
            await conn.verify_table(table_id)
    assert caught.value.table_id == table_id


async def test_a_dealer_bot_seed_the_server_chose_fails_the_hand(server: QiuQiuServer) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        with cheats.chosen_bot_seed():
            table, _ = await conn.open_table(SMALL, buy_in=500)
            with pytest.raises(DealTampered, match="dealer bot") as caught:
                await asyncio.wait_for(play(AlwaysCall(), conn, table.table_id, HANDS), PATIENCE)
    assert caught.value.hand_id == 1


async def test_a_seed_listed_for_a_seat_not_dealt_in_fails_the_hand(server: QiuQiuServer) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        with cheats.phantom_seat():
            table, _ = await conn.open_table(SMALL, buy_in=500)
            with pytest.raises(DealTampered, match="other seats than those dealt in") as caught:
                await asyncio.wait_for(play(AlwaysCall(), conn, table.table_id, HANDS), PATIENCE)
    assert caught.value.hand_id == 1


async def test_a_button_the_server_chose_at_a_dealer_bot_table_fails_the_hand(
    server: QiuQiuServer,
) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        with cheats.chosen_button():
            table, joined = await conn.open_table(SMALL, buy_in=500)
            with pytest.raises(DealTampered, match="not the button") as caught:
                await asyncio.wait_for(play(AlwaysCall(), conn, table.table_id, 40), PATIENCE)
    assert caught.value.table_id == table.table_id
    assert joined.seat == 0


async def test_a_pot_the_server_paid_to_the_bot_that_lost_it_fails_the_hand(
    server: QiuQiuServer,
) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        with cheats.house_takes_the_pot():
            table, _ = await conn.open_table(SMALL, buy_in=500)
            with pytest.raises(PaidWrong, match="not paid as the rules say") as caught:
                await asyncio.wait_for(play(AlwaysCall(), conn, table.table_id, 40), PATIENCE)
        assert not server.lobby.seated_at(conn.account_id)
    assert caught.value.table_id == table.table_id
    assert await chip_total(server) == 0, "every chip is accounted for: only the rules tell"


class DropsAtEachHandsFirstTurn(AlwaysCall):
    """Plays like AlwaysCall, but cuts the network under itself at its first turn of
    each hand: it knows each hand only from the snapshot after its reconnect."""

    def __init__(self, server: QiuQiuServer) -> None:
        self.server = server
        self.dropped: set[int] = set()

    def decide(self, turn: Turn) -> Action:
        if turn.hand_id not in self.dropped:
            self.dropped.add(turn.hand_id)
            cut_the_network(self.server)
        return super().decide(turn)


async def test_a_pot_paid_wrong_is_caught_in_a_hand_the_bot_knows_from_a_snapshot(
    server: QiuQiuServer,
) -> None:
    """The snapshot after a reconnect carries the hand's events so far: the hand's
    payouts are checked as if the bot had seen it all."""
    bot = DropsAtEachHandsFirstTurn(server)
    async with await Connection.open(server.url, name="Ann") as conn:
        with cheats.house_takes_the_pot():
            table, _ = await conn.open_table(SMALL, buy_in=500)
            with pytest.raises(PaidWrong, match="not paid as the rules say") as caught:
                await asyncio.wait_for(play(bot, conn, table.table_id, 40), PATIENCE)
    assert caught.value.hand_id in bot.dropped
    assert conn.welcome is not None
    assert conn.welcome.resumed, "it came back after each drop"


async def test_a_hand_number_the_server_skipped_fails_the_next_hand(server: QiuQiuServer) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        with cheats.skipped_hand():
            table, _ = await conn.open_table(SMALL, buy_in=500)
            with pytest.raises(DealTampered, match="skipped") as caught:
                await asyncio.wait_for(play(AlwaysCall(), conn, table.table_id, 40), PATIENCE)
    assert caught.value.table_id == table.table_id


async def test_a_button_the_server_chose_at_a_table_of_players_fails_the_hand(
    server: QiuQiuServer,
) -> None:
    """The button moves to the next seat dealt in: a server that gives it to whichever
    seat makes the last seat's hand the best is caught from the second hand on."""
    async with (
        await Connection.open(server.url, name="Ann") as ann,
        await Connection.open(server.url, name="Bo") as bo,
    ):
        with cheats.chosen_button():
            table, _ = await ann.open_table(SMALL.model_copy(update={"dealer_bot": False}), 500)
            await bo.join_table(table.table_id, 500)
            hands = [play(AlwaysCall(), conn, table.table_id, 40) for conn in (ann, bo)]
            with pytest.raises(DealTampered, match="button moved") as caught:
                await asyncio.wait_for(asyncio.gather(*hands), PATIENCE)
    assert caught.value.table_id == table.table_id


async def resumed_run(server: QiuQiuServer, tmp_path: Path, hook: Hook) -> int:
    """The status of a bot run with the account's token, through a proxy that shows
    ``hook`` what it sends, at the seat the account took before the run."""
    tokens = TokenFile(tmp_path)
    async with proxy(server.url, up=hook) as url:

        def keep(token: str) -> None:
            tokens.save(url, token)

        async with await Connection.open(url, name="Bot", on_token=keep) as conn:
            table, _ = await conn.open_table(SMALL, buy_in=500)
        argv = ["--server", url, "--hands", str(HANDS), "--tokens", str(tokens.path)]
        argv += ["--table", table.table_id]
        return await asyncio.wait_for(asyncio.to_thread(main, AlwaysCall(), argv), PATIENCE)


async def test_a_seed_set_withheld_from_a_resumed_bot_fails_its_second_hand_dealt_without_it(
    server: QiuQiuServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A run with the account's token finds its seat and sends a seed of its own, which
    a server may leave unconfirmed, listing for the seat a seed it chose (here, the one
    the run before sat with) in every hand: every deck rebuilds at the close from the
    seeds listed. Only the hand it was writing as the seed came may miss the seed."""
    withheld: list[str] = []

    async def withhold(message: dict[str, Any], to_client: Send, to_server: Send) -> bool:
        if message["type"] != "set_seed":
            return False
        withheld.append(message["client_seed"])
        return True

    assert await resumed_run(server, tmp_path, withhold) == 3, "a deal failed its check"
    assert withheld, "the run sent a seed of its own"
    assert (
        "a second hand was dealt without the seed this client sent, which the server never "
        "confirmed"
    ) in capsys.readouterr().err


async def test_a_resumed_bots_seed_refused_fails_no_hand_dealt_with_the_old_seed(
    server: QiuQiuServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Refused (``store_unavailable``: nothing changed), the seed is not the seat's, and
    the hands dealt with the one it had are no server's choice."""
    refused: list[int] = []
    assert await resumed_run(server, tmp_path, refusing("set_seed", 1, refused)) == 0
    assert refused, "the run sent a seed of its own"
    assert json.loads(capsys.readouterr().out)["verified"] == HANDS


def test_a_cutting_phase_that_opens_the_millisecond_of_the_last_check_is_a_turn_of_its_own() -> (
    None
):
    """A bot that checked the last betting turn in the millisecond the cutting phase
    opened saw the same hand, round, pot and deadline, took the cut for the turn it
    had answered, and never cut: the server cut for it when the phase ran out."""
    state = played_to(wire.TurnStarted)
    assert state.hand is not None
    betting = turn_key(state)
    state.hand.phase, state.legal = "cutting", LegalActions(declare_cut=True)
    assert turn_key(state) != betting
