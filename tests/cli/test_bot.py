"""The SDK holds a real server to its deals: every hand checked as it ends, the whole
shuffle once the table has closed (each way a server can cheat: test_bot_cheats.py).
A bot whose own code raises stands up and is named, with its own traceback; one whose
server dies or moves its table counts what was played and what was voided."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli import connection
from qiuqiu.cli.bot import (
    Action,
    Bet,
    Bot,
    Call,
    Check,
    Fold,
    HandResult,
    Raise,
    Split,
    Summary,
    Turn,
    check_shuffle,
    main,
    play,
    run,
)
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.deals import DealChecked
from qiuqiu.cli.errors import BalanceTooLow, BotFailed, ShuffleNotRevealed
from qiuqiu.cli.tokens import TokenFile
from qiuqiu.protocol import (
    DealTampered,
    ErrorCode,
    TableOptions,
    decode_server,
    encode,
)
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.redis_store import RedisStore
from tests.cli.conftest import CONFIG, check_told_as_a_spectator_saw_it, cut_the_network
from tests.cli.proxy import Send, proxy
from tests.conftest import free_port
from tests.server import cheats
from tests.server.conftest import chip_total
from tests.server.processes import Servers, until

SMALL = TableOptions(ante=1, min_bet=1, max_bet=2)
"""Stakes at which no run of luck busts a caller in a few hands: the deals are random
(the client's seed is), so the hands must not depend on them."""
HANDS = 6
ACTIONS = {"check", "call", "bet", "raise", "fold", "declare_cut"}
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


async def test_a_bot_refused_a_new_account_is_told_how_a_bot_keeps_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The server's advice ("say hello with your token") is the protocol's: a bot's
    command line has --tokens for it."""
    config = CONFIG.model_copy(update={"new_accounts_per_address": 1})
    server = QiuQiuServer(config)
    await server.start()
    try:
        async with await Connection.open(server.url, name="First"):
            pass
        argv = ["--server", server.url, "--hands", "1"]
        status = await asyncio.wait_for(asyncio.to_thread(main, AlwaysCall(), argv), PATIENCE)
    finally:
        await server.stop()
    assert status == 1
    said = capsys.readouterr().err
    assert "too many new accounts" in said
    assert "--tokens FILE" in said


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


class Broken(Bot):
    def decide(self, turn: Turn) -> Action:
        raise ZeroDivisionError("my bug")


class Quits(Bot):
    def decide(self, turn: Turn) -> Action:
        sys.exit("had enough")


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


async def some_hands_played(server: QiuQiuServer) -> bool:
    tables = await server.store.tables()
    return any([len(await server.store.table_hands(t.table_id)) >= 2 for t in tables])


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


async def test_a_bot_given_a_tokens_file_plays_on_with_its_account_and_its_chips(
    server: QiuQiuServer,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.INFO, logger="qiuqiu.cli.bot")
    tokens = tmp_path / "bot-tokens.json"
    argv = ["--server", server.url, "--hands", "2", "--tokens", str(tokens)]
    argv += ["--ante", "1", "--min-bet", "1", "--max-bet", "2"]
    summaries = []
    for _ in range(2):
        assert await asyncio.wait_for(asyncio.to_thread(main, AlwaysCall(), argv), PATIENCE) == 0
        summaries.append(json.loads(capsys.readouterr().out))
    first, second = summaries
    # One account: its balance is the first run's, moved by the second's hands alone.
    assert len([a for a in (await server.store.balances()) if a != "house"]) == 1
    assert second["balance"] == first["balance"] + second["net"]
    assert list(json.loads(tokens.read_text())) == [server.url]
    assert tokens.stat().st_mode & 0o777 == 0o600
    assert f"resumed the account in {tokens}: AlwaysCall, balance {first['balance']:,}" in (
        caplog.text
    )


async def seated_and_kept(
    server: QiuQiuServer, tmp_path: Path
) -> tuple[TokenFile, wire.TableSummary]:
    """A bot's account whose token is kept in a token file under ``tmp_path``, seated at
    a table of its own, as a run stopped with Ctrl-C leaves it."""
    tokens = TokenFile(tmp_path)

    def keep(token: str) -> None:
        tokens.save(server.url, token)

    async with await Connection.open(server.url, name="Bot", on_token=keep) as conn:
        table, _ = await conn.open_table(SMALL, buy_in=500)
    return tokens, table


async def test_a_bot_resumed_at_the_table_where_its_account_still_sits_plays_on_at_its_seat(
    server: QiuQiuServer,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    """A run stopped (Ctrl-C) leaves its seat for the grace period: the next, given the
    same tokens and that table, plays on at the seat rather than being refused it."""
    caplog.set_level(logging.INFO, logger="qiuqiu.cli.bot")
    tokens, table = await seated_and_kept(server, tmp_path)
    argv = ["--server", server.url, "--hands", "2", "--tokens", str(tokens.path)]
    argv += ["--table", table.table_id]
    assert await asyncio.wait_for(asyncio.to_thread(main, AlwaysCall(), argv), PATIENCE) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["hands"] == 2
    assert summary["verified"] == 2
    assert f"the account sits at table {table.table_id} already" in caplog.text


async def test_a_bot_resumed_elsewhere_names_the_seat_its_account_left_at_another_table(
    server: QiuQiuServer, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """The next run given the same tokens but not that table opens a table of its own:
    the seat left at the first plays on without it, its stack in no figure of the run,
    and the log says where it is and how to go back to it."""
    caplog.set_level(logging.INFO, logger="qiuqiu.cli.bot")
    tokens, left = await seated_and_kept(server, tmp_path)
    argv = ["--server", server.url, "--hands", "1", "--tokens", str(tokens.path)]
    assert await asyncio.wait_for(asyncio.to_thread(main, AlwaysCall(), argv), PATIENCE) == 0
    assert f"still sits at table {left.table_id}" in caplog.text
    assert f"--table {left.table_id}" in caplog.text


async def test_a_bot_whose_saved_account_the_server_forgot_says_so_and_keeps_the_new_one(
    server: QiuQiuServer, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.INFO, logger="qiuqiu.cli.bot")
    tokens = TokenFile(tmp_path)
    tokens.save(server.url, "a-token-of-a-server-restarted-in-memory")
    summary = await asyncio.wait_for(
        run(AlwaysCall(), server.url, name="Bot", hands=1, options=SMALL, tokens=tokens),
        PATIENCE,
    )
    assert summary.hands == 1
    assert f"the server does not know the account kept in {tokens.path}" in caplog.text
    kept = tokens.load(server.url)
    assert kept not in (None, "a-token-of-a-server-restarted-in-memory")
    async with await Connection.open(server.url, token=kept) as conn:
        assert conn.welcome is not None
        assert conn.welcome.resumed


class Misspelt(Bot):
    def decied(self, turn: Turn) -> Action:
        return Check()


@pytest.mark.parametrize(
    ("bot", "said"),
    [
        (AlwaysCall, "AlwaysCall is a bot's class: give a bot, AlwaysCall()"),
        (Misspelt(), "Misspelt has no decide(self, turn) of its own: a bot writes one"),
    ],
    ids=["class", "misspelt"],
)
async def test_a_bots_command_line_refuses_what_is_no_bot_in_one_line_before_it_sits_down(
    server: QiuQiuServer, capsys: pytest.CaptureFixture[str], bot: Bot, said: str
) -> None:
    argv = ["--server", server.url, "--hands", "2"]
    assert await asyncio.to_thread(main, bot, argv) == 2
    out, err = capsys.readouterr()
    assert err.strip().endswith(said)
    assert "Traceback" not in err
    assert not out
    assert not server.lobby.tables


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


async def test_a_bots_command_line_refuses_a_folder_for_its_tokens_file(
    server: QiuQiuServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["--server", server.url, "--hands", "1", "--tokens", str(tmp_path)]
    with pytest.raises(SystemExit) as stopped:
        await asyncio.to_thread(main, AlwaysCall(), argv)
    assert stopped.value.code == 2
    said = f"--tokens {tmp_path} is a folder: give a file, such as {tmp_path / 'tokens.json'}"
    assert said in capsys.readouterr().err
    assert not server.lobby.tables
    assert list(tmp_path.iterdir()) == []


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


async def test_a_bots_class_given_for_the_bot_is_refused_before_it_sits_down(
    server: QiuQiuServer,
) -> None:
    with pytest.raises(TypeError, match=r"AlwaysCall is a bot's class: give a bot, AlwaysCall\(\)"):
        await run(AlwaysCall, server.url, name="Ann", hands=1)  # type: ignore[arg-type]
    assert not server.lobby.tables


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


def test_on_windows_a_bot_says_where_to_run_instead(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its Ctrl-C is the event loop's signal handler, which Windows' loops lack."""
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(sys, "argv", ["my_bot.py"])
    # A flag that does not parse: were the platform not checked first, status 2.
    assert main(AlwaysCall(), ["--no-such-flag"]) == 1
    said = capsys.readouterr().err
    assert said.startswith("my_bot.py: ")
    assert "not on Windows" in said
    assert "WSL" in said
