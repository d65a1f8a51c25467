"""The SDK's bot stopped, slow or away: a turn thought past its time, Ctrl-C and stop
signals, a connection down or a seat given up meanwhile, and every turn decided in one
thread; each hand still reported, and none counted twice."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from websockets.asyncio.server import serve

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli import connection
from qiuqiu.cli.bot import (
    Action,
    Bot,
    Call,
    Check,
    Turn,
    play,
)
from qiuqiu.cli.connection import Connection
from qiuqiu.server import gateway
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.conftest import CONFIG, cut_the_network, piped
from tests.cli.test_bot import HANDS, PATIENCE, SMALL
from tests.server.processes import until


class SlowOnce(Bot):
    """Thinks far past the turn's time once, then answers at once; keeps every turn
    it was asked about."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.asked: list[tuple[int, int]] = []

    def decide(self, turn: Turn) -> Action:
        self.asked.append((turn.hand_id, turn.round))
        if len(self.asked) == 1:
            time.sleep(self.seconds)
        return Check() if turn.legal.check else Call()


async def test_a_bot_that_thought_too_long_is_asked_only_about_the_turn_now_open(
    server: QiuQiuServer, caplog: pytest.LogCaptureFixture
) -> None:
    """While the bot thinks, the server times its turn out and deals on: the turns
    it was given meanwhile are over, and only the one still open is asked about,
    rather than each in turn, every answer refused as too late. Its late answer is
    not sent either: it would land on its next turn in the hand, if it had one."""
    caplog.set_level(logging.INFO, logger="qiuqiu.cli.bot")
    bot = SlowOnce(seconds=2.0)
    async with await Connection.open(server.url, name="Ann") as conn:
        options = SMALL.model_copy(update={"turn_seconds": 0.2})
        table, _ = await conn.open_table(options, buy_in=500)
        summary = await asyncio.wait_for(play(bot, conn, table.table_id, 12), PATIENCE)
    assert summary.hands <= 13
    refused = [r for r in caplog.records if "the server refused" in r.getMessage()]
    assert not refused, [r.getMessage() for r in refused]
    assert any("after it was over: not sent" in r.getMessage() for r in caplog.records)
    hands_asked = [hand_id for hand_id, _ in bot.asked]
    assert hands_asked == sorted(hands_asked)
    assert hands_asked[1] > hands_asked[0] + 1, "hands dealt while it thought were skipped"


THINKER = """
import sys
import time

from qiuqiu.cli.bot import Action, Bot, Check, Turn, main


class Thinker(Bot):
    def decide(self, turn: Turn) -> Action:
        print("thinking", file=sys.stderr, flush=True)
        time.sleep(600)
        return Check()


if __name__ == "__main__":
    raise SystemExit(main(Thinker()))
"""


async def test_ctrl_c_stops_a_bot_in_the_middle_of_a_long_thought(
    server: QiuQiuServer, tmp_path: Path
) -> None:
    """The thought runs in a thread of its own: Ctrl-C must not wait for it to end."""
    bot = tmp_path / "thinker.py"
    bot.write_text(THINKER)
    argv = ("--server", server.url, "--hands", "2", "--turn-seconds", "600")
    async with piped(sys.executable, bot, *argv) as process, asyncio.timeout(PATIENCE):
        assert process.stderr is not None
        while b"thinking" not in await process.stderr.readline():
            pass
        process.send_signal(signal.SIGINT)
        rest = (await process.stderr.read()).decode()
        await process.wait()
    assert process.returncode == 130, rest
    assert rest.splitlines()[-1] == "thinker.py: interrupted"


SIGNALS_ITS_OWN_THREAD = """
import functools
import signal
import threading
import time

from qiuqiu.cli import connection
from qiuqiu.cli.bot import Action, Bot, Check, Turn, main

# No keepalive ping: nothing but the signal can wake the loop that waits for the answer.
connection.connect = functools.partial(connection.connect, ping_interval=None)


class SignalsItsOwnThread(Bot):
    def decide(self, turn: Turn) -> Action:
        signal.pthread_kill(threading.get_ident(), signal.{name})
        time.sleep(600)
        return Check()


if __name__ == "__main__":
    raise SystemExit(main(SignalsItsOwnThread()))
"""


@pytest.mark.parametrize(
    ("stop", "status", "said"),
    [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")],
    ids=["ctrl-c", "sigterm"],
)
async def test_a_stop_signal_that_lands_on_the_bots_thread_stops_the_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, stop: str, status: int, said: str
) -> None:
    """The kernel hands a signal to any thread of the process: one that lands on the
    bot's, while the loop waits for its answer with nothing else to do, must still
    wake the loop (neither end pings here, so nothing else would)."""
    monkeypatch.setattr(gateway, "serve", functools.partial(serve, ping_interval=None))
    server = QiuQiuServer(CONFIG)
    await server.start()
    bot = tmp_path / "signaller.py"
    bot.write_text(SIGNALS_ITS_OWN_THREAD.replace("{name}", stop))
    argv = ("--server", server.url, "--hands", "2", "--turn-seconds", "600")
    try:
        async with piped(sys.executable, bot, *argv) as process, asyncio.timeout(PATIENCE):
            assert process.stderr is not None
            rest = (await process.stderr.read()).decode()
            await process.wait()
    finally:
        await server.stop()
    assert process.returncode == status, rest
    assert rest.splitlines()[-1] == f"signaller.py: {said}"


@pytest.mark.parametrize(
    ("stop", "status", "said"),
    [(signal.SIGINT, 130, b"interrupted"), (signal.SIGTERM, 143, b"terminated")],
    ids=["ctrl-c", "sigterm"],
)
async def test_ctrl_c_after_some_hands_still_prints_their_summary(
    server: QiuQiuServer, tmp_path: Path, stop: signal.Signals, status: int, said: bytes
) -> None:
    bot = tmp_path / "thinker.py"
    bot.write_text(
        THINKER.replace(
            "    def decide(self, turn: Turn) -> Action:\n",
            "    def decide(self, turn: Turn) -> Action:\n"
            "        if turn.hand_id < 3:\n"
            "            return Check() if turn.legal.check else Call()\n",
        ).replace("import Action, Bot, Check,", "import Action, Bot, Call, Check,")
    )
    flags = ("--hands", "10", "--ante", "1", "--min-bet", "1", "--max-bet", "2")
    async with piped(sys.executable, bot, "--server", server.url, *flags) as process:
        assert process.stderr is not None
        async with asyncio.timeout(PATIENCE):
            while b"thinking" not in await process.stderr.readline():
                pass
            process.send_signal(stop)
            out, err = await process.communicate()
    assert process.returncode == status
    assert err.strip().endswith(b": " + said)
    assert json.loads(out)["hands"] == 2


async def test_a_bot_back_after_the_grace_period_finds_its_seat_given_up_and_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The connection drops between hands and comes back after the server has given
    the seat up: the bot stops with the hands it played and the balance the welcome
    gives, rather than waiting for ever for a table it no longer sits at."""
    monkeypatch.setattr(connection, "RECONNECT_DELAYS", (1.0,))
    config = ServerConfig(port=0, hand_pause=2.0, bot_delay=0.0, grace=0.3)
    server = QiuQiuServer(config, rng=random.Random(5))
    await server.start()
    try:
        async with await Connection.open(server.url, name="Ann") as conn:
            table, _ = await conn.open_table(SMALL, buy_in=500)
            playing = asyncio.create_task(play(AlwaysCall(), conn, table.table_id, HANDS))
            await until(lambda: hand_ended(server, table.table_id))
            cut_the_network(server)
            summary = await asyncio.wait_for(playing, PATIENCE)
        assert 1 <= summary.hands < HANDS
        assert summary.balance == 1_000 + summary.net
        assert not server.lobby.seated_at(conn.account_id)
    finally:
        await server.stop()


async def test_hands_the_seat_played_before_it_was_given_up_are_in_the_summary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The connection drops and comes back after the grace period, the timer having
    played the seat's hands until it was given up: those hands are counted, from the
    table's history, so that the net is what the balance says."""
    monkeypatch.setattr(connection, "RECONNECT_DELAYS", (2.0,))
    config = ServerConfig(port=0, hand_pause=0.0, bot_delay=0.0, grace=1.0)
    server = QiuQiuServer(config, rng=random.Random(5))
    await server.start()
    try:
        async with await Connection.open(server.url, name="Ann") as conn:
            options = SMALL.model_copy(update={"turn_seconds": 0.05})
            table, _ = await conn.open_table(options, buy_in=500)
            playing = asyncio.create_task(play(AlwaysCall(), conn, table.table_id, 1_000))
            await until(lambda: hand_ended(server, table.table_id))
            cut_the_network(server)
            summary = await asyncio.wait_for(playing, PATIENCE)
        played = await server.store.account_hands(conn.account_id, 100)
    finally:
        await server.stop()
    assert not server.lobby.seated_at(conn.account_id)
    assert summary.hands == len(played)
    assert summary.balance == 1_000 + summary.net


async def test_hands_dealt_while_the_connection_was_down_are_counted_from_the_history(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Hands the seat was dealt while the connection was down (its turns checked or
    folded by the timer) are in the summary all the same, as the table's history has
    them: its net is what the balance says, and it counts every hand the seat played.
    Their ends are replayed on the reconnect, their seqs far apart, then the snapshot
    that covers the gaps: the protocol says to ask for none, and the bot asks none."""
    caplog.set_level(logging.INFO, logger="qiuqiu.cli")
    monkeypatch.setattr(connection, "RECONNECT_DELAYS", (1.0,))
    config = ServerConfig(port=0, hand_pause=0.0, bot_delay=0.0, rate=1e6, burst=10**6)
    server = QiuQiuServer(config)
    await server.start()
    try:
        async with await Connection.open(server.url, name="Ann") as conn:
            options = SMALL.model_copy(update={"turn_seconds": 0.05})
            table, _ = await conn.open_table(options, buy_in=500)
            playing = asyncio.create_task(play(AlwaysCall(), conn, table.table_id, 60))
            await until(lambda: hand_ended(server, table.table_id))
            cut_the_network(server)
            summary = await asyncio.wait_for(playing, PATIENCE)
        played = await server.store.table_hands(table.table_id)
    finally:
        await server.stop()
    assert summary.hands == len(played)
    assert sorted(summary.per_hand) == [hand.hand_id for hand in played]
    assert summary.balance == 1_000 + summary.net
    assert "the connection dropped" in caplog.text
    assert "reconnected" in caplog.text
    assert "played while the connection was down" in caplog.text
    assert "asking for a snapshot" not in caplog.text


async def hand_ended(server: QiuQiuServer, table_id: str) -> bool:
    return len(await server.store.table_hands(table_id)) >= 1


class Journal(Bot):
    """Keeps a journal of its turns in storage of its thread's own, made at its first
    turn (as an sqlite3 connection is bound to the thread that opened it)."""

    def __init__(self) -> None:
        self.mine = threading.local()
        self.threads: set[int] = set()
        self.kept = 0

    def decide(self, turn: Turn) -> Action:
        self.threads.add(threading.get_ident())
        journal = getattr(self.mine, "journal", None)
        if journal is None:
            journal = self.mine.journal = []
        journal.append((turn.hand_id, turn.pot))
        self.kept = len(journal)
        return Check() if turn.legal.check else Call()


async def test_every_turn_of_a_play_is_decided_in_one_thread(server: QiuQiuServer) -> None:
    bot = Journal()
    async with await Connection.open(server.url, name="Ann") as conn:
        table, _ = await conn.open_table(SMALL, buy_in=500)
        summary = await asyncio.wait_for(play(bot, conn, table.table_id, HANDS), PATIENCE)
    assert summary.hands >= HANDS
    assert threading.get_ident() not in bot.threads, "not the loop's: the loop must not wait"
    assert bot.kept >= HANDS, "what the first turn made in its thread serves every turn"
