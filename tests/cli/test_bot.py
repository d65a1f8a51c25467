"""The SDK holds a real server to its deals: every hand checked as it ends, the whole
shuffle once the table has closed (each way a server can cheat: test_bot_cheats.py);
and a bot plays exactly its hands, told each hand's moves and result. A bot whose own
code fails is test_bot_failures.py; one whose server dies or moves its table,
test_bot_servers.py; a bot's command line and the account it keeps,
test_bot_command_line.py."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli.bot import (
    Action,
    Bet,
    Bot,
    Call,
    Check,
    Fold,
    HandResult,
    Raise,
    Summary,
    Turn,
    check_shuffle,
    play,
    run,
)
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.deals import DealChecked
from qiuqiu.cli.errors import BalanceTooLow, ShuffleNotRevealed
from qiuqiu.protocol import DealTampered, TableOptions, decode_server
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.conftest import check_told_as_a_spectator_saw_it
from tests.server import cheats
from tests.server.conftest import chip_total
from tests.server.processes import until

SMALL = TableOptions(ante=1, min_bet=1, max_bet=2)
"""Stakes at which no run of luck busts a caller in a few hands: the deals are random
(the client's seed is), so the hands must not depend on them."""
HANDS = 6
PATIENCE = 30.0
"""Seconds before a stuck game fails the test (never a timing assertion)."""


async def test_every_hand_against_the_dealer_bot_verifies_and_then_the_whole_shuffle(
    server: QiuQiuServer,
) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        table, joined = await conn.open_table(SMALL, buy_in=500)
        summary = await asyncio.wait_for(play(AlwaysCall(), conn, table.table_id, HANDS), PATIENCE)
        deals = conn.deals[table.table_id]
        assert deals.seed is not None
        assert len(deals.kept) == summary.hands
        for hand_id, seen in deals.kept.items():
            # Dealt with this client's own seed, every tile it saw at its committed position.
            assert seen.client_seeds[joined.seat] == deals.seed
            assert deals.checks[hand_id] == DealChecked(tiles=8, own_seed=True, paid=True)
        rebuilt = await conn.verify_table(table.table_id)
    played = await server.store.table_hands(table.table_id)
    assert summary.hands >= HANDS
    assert summary.verified == summary.hands
    assert rebuilt == len(played) == summary.hands
    assert set(deals.rebuilt) == {hand.hand_id for hand in played}
    assert not deals.kept, "kept only until the seed rebuilt them"
    assert deals.tampered is None
    assert await chip_total(server) == 0


@pytest.mark.parametrize(("hands", "rebuilt"), [(3, "3 hands rebuilt"), (1, "1 hand rebuilt")])
async def test_a_bot_run_reports_every_hand_and_the_shuffle_verified(
    server: QiuQiuServer, caplog: pytest.LogCaptureFixture, hands: int, rebuilt: str
) -> None:
    caplog.set_level(logging.INFO, logger="qiuqiu.cli.bot")
    summary = await asyncio.wait_for(
        run(AlwaysCall(), server.url, name="Runner", hands=hands, options=SMALL), PATIENCE
    )
    assert summary.verified == summary.hands == hands
    assert summary.shuffle_verified == summary.hands
    assert f"shuffle verified: {rebuilt} from the revealed seed" in caplog.text
    # It stood up as it asked to, after its last hand: not "by the server".
    assert "stood up" not in caplog.text


async def test_a_bot_run_with_a_buy_in_past_its_balance_opens_no_table(
    server: QiuQiuServer,
) -> None:
    with pytest.raises(BalanceTooLow, match="balance is 1,000 chips, not enough for a buy-in"):
        await run(AlwaysCall(), server.url, name="Runner", buy_in=5_000)
    async with await Connection.open(server.url, name="Lister") as conn:
        listed = await conn.request(cmd.ListTables(), wire.TableList)
    assert listed.tables == ()


async def test_a_tile_other_than_the_committed_one_raises_at_the_hands_end(
    server: QiuQiuServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="qiuqiu.cli")
    summary = Summary()
    async with await Connection.open(server.url, name="Ann") as conn:
        with cheats.swapped_tile():
            table, _ = await conn.open_table(SMALL, buy_in=500)
            with pytest.raises(DealTampered) as caught:
                await asyncio.wait_for(
                    play(AlwaysCall(), conn, table.table_id, HANDS, summary=summary), PATIENCE
                )
        assert caught.value.table_id == table.table_id
        assert caught.value.hand_id == 1, "the first hand, as it ends"
        assert "position 27" in caught.value.reason
        # The SDK stood the seat up before raising.
        assert not server.lobby.seated_at(conn.account_id)
    assert await chip_total(server) == 0
    # The bot played the hand to its end itself: no timer played it out.
    assert (summary.hands, summary.verified) == (1, 0)
    assert "played out by the server" not in caplog.text
    assert summary.balance == 1000 + summary.net


@pytest.mark.parametrize(
    "cheat", [cheats.ignored_client_seeds, cheats.chosen_deck], ids=["ignored-seeds", "chosen-deck"]
)
async def test_a_deck_not_made_from_the_seeds_passes_every_hand_and_fails_the_shuffle_check(
    server: QiuQiuServer, cheat: Callable[[], AbstractContextManager[None]]
) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        with cheat():
            table, _ = await conn.open_table(SMALL, buy_in=500)
            summary = await asyncio.wait_for(
                play(AlwaysCall(), conn, table.table_id, HANDS), PATIENCE
            )
        # Every opening was what the server committed to: only the seed can tell.
        assert summary.verified == summary.hands
        with pytest.raises(DealTampered, match="do not make this deck") as caught:
            await conn.verify_table(table.table_id)
    assert caught.value.table_id == table.table_id
    assert caught.value.hand_id == 1


async def test_the_shuffle_of_a_table_still_open_cannot_be_checked_yet(
    server: QiuQiuServer,
) -> None:
    async with await Connection.open(server.url, name="Ann") as conn:
        table, _ = await conn.open_table(SMALL, buy_in=500)
        with pytest.raises(ShuffleNotRevealed, match="still open"):
            await conn.verify_table(table.table_id, patience=0.0)


class Historian(Bot):
    """Bets, raises, calls, checks, folds and times out by turns; keeps all it is told."""

    def __init__(self) -> None:
        self.told: list[Turn | HandResult] = []
        self.turns = 0

    def decide(self, turn: Turn) -> Action:
        self.told.append(turn)
        self.turns += 1
        legal = turn.legal
        # Counted in turns, not in all it was told: the 11th thing told may be a result.
        if self.turns % 11 == 0:
            return Bet(10**9)  # more than any stack: played as a time-out
        if len(self.told) % 7 == 0 and legal.fold:
            return Fold()
        if len(self.told) % 3 == 0 and legal.raise_to is not None:
            return Raise(legal.raise_to.min)
        if len(self.told) % 2 == 0 and legal.bet is not None:
            return Bet(legal.bet.min)
        return Check() if legal.check else Call()

    def hand_ended(self, result: HandResult) -> None:
        self.told.append(result)


async def test_a_bot_is_told_each_hands_moves_and_result_as_the_tables_history_keeps_them(
    server: QiuQiuServer,
) -> None:
    """As in the arena (tests/cli/arena/test_seats.py), against the events the server's
    history of the table kept for a spectator."""
    bot = Historian()
    async with await Connection.open(server.url, name="Ann") as conn:
        # Its illegal answers run out of time at once: the server's timer plays them.
        options = SMALL.model_copy(update={"betting_rounds": 2, "turn_seconds": 0.2})
        table, _ = await conn.open_table(options, buy_in=500)
        summary = await asyncio.wait_for(play(bot, conn, table.table_id, 12), PATIENCE)
        listed = await conn.request(cmd.ListHands(table_id=table.table_id), wire.HandList)
    results = [item for item in bot.told if isinstance(item, HandResult)]
    assert {r.hand_id: r.net[r.seat] for r in results} == summary.per_hand
    # Not a hand that began as the seat stood up: it may have left before that hand ended.
    told = [hand for hand in listed.hands if hand.hand_id in summary.per_hand]
    events = [decode_server(json.dumps(event)) for hand in told for event in hand.events]
    check_told_as_a_spectator_saw_it(bot.told, events)
    assert any(move.timed_out for result in results for move in result.history)


async def test_a_bot_plays_exactly_its_hands_at_a_table_that_deals_the_next_at_once() -> None:
    """It asked to stand up as its last hand ended, by which time the next had been
    dealt with it in: --hands 5 played 6, the sixth checked or folded for it."""
    config = ServerConfig(port=0, hand_pause=0.0, bot_delay=0.0, rate=1e6, burst=10**6)
    server = QiuQiuServer(config)
    await server.start()
    try:
        summary = await asyncio.wait_for(
            run(AlwaysCall(), server.url, name="Exact", hands=5, options=SMALL), PATIENCE
        )
    finally:
        await server.stop()
    assert summary.hands == 5
    assert summary.verified == 5


class WaitsOnItsFirstTurn(AlwaysCall):
    """Thinks over its first turn until told to go on: a hand is in play meanwhile."""

    def __init__(self) -> None:
        self.asked, self.go_on = threading.Event(), threading.Event()

    def decide(self, turn: Turn) -> Action:
        self.asked.set()
        self.go_on.wait(PATIENCE)
        return super().decide(turn)


async def test_a_hand_in_play_as_the_bot_sat_down_is_neither_counted_nor_verified(
    server: QiuQiuServer,
) -> None:
    """Joined in the middle of a hand, the bot sees it end (and checks what it saw
    of it) but was not dealt in: its summary counts neither."""
    waiter = WaitsOnItsFirstTurn()
    async with await Connection.open(server.url, name="Ann") as ann:
        table, _ = await ann.open_table(SMALL.model_copy(update={"seats": 3}), buy_in=500)
        playing = asyncio.create_task(play(waiter, ann, table.table_id, 3))
        await asyncio.to_thread(waiter.asked.wait, PATIENCE)
        async with await Connection.open(server.url, name="Bea") as bea:
            await bea.join_table(table.table_id, 500)
            waiter.go_on.set()
            summary = await asyncio.wait_for(play(AlwaysCall(), bea, table.table_id, 2), PATIENCE)
        await asyncio.wait_for(playing, PATIENCE)
    assert summary.hands >= 2
    assert summary.verified == summary.hands


async def test_a_shuffle_that_cannot_be_asked_for_any_more_is_left_unchecked(
    server: QiuQiuServer,
) -> None:
    """The server stops just after the bot has left (as it stands every seat up when
    it stops): the hands played stand, the shuffle unchecked, rather than the lost
    connection losing the bot's whole summary."""
    async with await Connection.open(server.url, name="Ann") as conn:
        table, _ = await conn.open_table(SMALL, buy_in=500)
        summary = await asyncio.wait_for(play(AlwaysCall(), conn, table.table_id, 2), PATIENCE)
        await server.stop()
        await check_shuffle(conn, table.table_id, summary)
    assert summary.hands >= 2
    assert summary.shuffle_verified is None


async def test_a_bot_left_alone_at_its_table_says_it_is_waiting_for_a_player(
    server: QiuQiuServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A table without the dealer bot deals no hand while one player sits at it: at
    first, and again once the others have left. The bot says so, rather than
    waiting in silence."""
    caplog.set_level(logging.INFO, logger="qiuqiu.cli.bot")
    waiting = "waiting at table {} for another player"
    async with await Connection.open(server.url, name="Ann") as opener:
        options = SMALL.model_copy(update={"dealer_bot": False})
        table, _ = await opener.open_table(options, buy_in=500)
        said = waiting.format(table.table_id)
        playing = asyncio.create_task(play(AlwaysCall(), opener, table.table_id, HANDS))
        await until(lambda: said_times(caplog, said, 1))
        async with await Connection.open(server.url, name="Bob") as joiner:
            await joiner.join_table(table.table_id, buy_in=500)
            await asyncio.wait_for(play(AlwaysCall(), joiner, table.table_id, 2), PATIENCE)
        await until(lambda: said_times(caplog, said, 2))
        assert not playing.done()
        playing.cancel()
        await asyncio.gather(playing, return_exceptions=True)


async def said_times(caplog: pytest.LogCaptureFixture, text: str, times: int) -> bool:
    return sum(text in record.getMessage() for record in caplog.records) >= times


async def test_a_second_play_on_a_connection_already_playing_is_refused_not_left_hanging(
    server: QiuQiuServer,
) -> None:
    # The two would share the connection's messages, each taking some of the other's,
    # and both would wait for ever for what the other took.
    async with await Connection.open(server.url, name="Ann") as conn:
        first, _ = await conn.open_table(SMALL, buy_in=100)
        second, _ = await conn.open_table(SMALL, buy_in=100)
        playing = asyncio.create_task(play(AlwaysCall(), conn, first.table_id, hands=1))
        await asyncio.sleep(0)
        with pytest.raises(RuntimeError, match=f"already playing table {first.table_id}"):
            await play(AlwaysCall(), conn, second.table_id, hands=1)
        summary = await asyncio.wait_for(playing, PATIENCE)
    assert summary.hands == 1


async def test_a_play_begun_at_a_seat_whose_turn_is_open_answers_it_and_counts_the_hand(
    server: QiuQiuServer,
) -> None:
    """The turn_started came out of the connection's messages before the play began
    (another play read it, at another table on the connection, or the caller's own
    loop): the play answers the turn open, rather than leaving the seat to its timer,
    and counts the hand, so that the net is still what the balance says."""
    slow_clock = SMALL.model_copy(update={"turn_seconds": 10 * PATIENCE})
    async with await Connection.open(server.url, name="Ann") as conn:
        assert conn.welcome is not None
        balance = conn.welcome.balance
        table, _ = await conn.open_table(slow_clock, buy_in=100)
        async with asyncio.timeout(PATIENCE):
            async for _ in conn.messages():
                state = conn.tables.get(table.table_id)
                if state is not None and state.legal is not None:
                    break
        summary = await asyncio.wait_for(play(AlwaysCall(), conn, table.table_id, 1), PATIENCE)
    assert summary.hands == 1
    assert summary.verified == 1
    assert summary.balance == balance + summary.net
