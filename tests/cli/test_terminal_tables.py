"""The real ``qiuqiu play`` at a table with others, and back at one: players who share a
name told apart, the command others join with, a bet nobody called said as written; a
new process of an account already seated (the seed it sent, the hand begun before it
came back, only its new hands checked), and a table joined while seated at another."""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
from pathlib import Path

import pexpect
import pytest

from qiuqiu.cli.bot import Action, Bot, Check, Fold, Turn, run
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.play import Steady
from qiuqiu.protocol import TableOptions
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.conftest import QIUQIU
from tests.cli.test_terminal import (
    PATIENCE,
    SMALL,
    STYLE,
    TURN,
    VERIFIED,
    _Collect,
    connect,
    finished,
    leave,
    matched,
    play_a_hand,
    spawn,
    words,
)


async def test_players_who_share_a_name_are_told_apart_by_their_seats(
    server: QiuQiuServer, config_dir: Path
) -> None:
    # Two players named Bo were both "Bo": whose bet was whose, nobody could tell.
    child = spawn(config_dir, "--server", server.url, "--no-bot", "--seats", "3", *SMALL)
    said: list[str] = []
    child.logfile_read = _Collect(said)
    await child.expect(r"Table (t\w+): 3 seats", async_=True)
    table_id = matched(child)
    bos = [run(Steady(), server.url, name="Bo", hands=1, table_id=table_id) for _ in range(2)]
    playing = asyncio.gather(*bos)
    while await child.expect([TURN, r"Deal verified"], async_=True) == 0:
        child.sendline("check" if "check" in matched(child) else "call")
    await leave(child)
    await finished(child)
    await playing
    text = "".join(said)
    for seat in (2, 3):
        assert re.search(words(rf"Bo \(seat {seat}\) put in the ante of 1\."), text), text
        assert re.search(words(rf"Bo sat down at seat {seat} with 500 chips\."), text), text
    assert not re.search(words(r"Bo put in the ante"), text), text


async def test_back_at_a_table_whose_last_hand_it_played_the_account_checks_only_its_new_hands(
    server: QiuQiuServer, config_dir: Path
) -> None:
    # The new process checked the last hand its account had played there, in another
    # session, against its own new seed: "DEAL CHECK FAILED ... hand 1".
    child = spawn(config_dir, "--server", server.url, "--no-bot", *SMALL)
    await child.expect(r"Table (t\w+): 2 seats", async_=True)
    table_id = matched(child)
    # Bo plays on until the test ends, so the table stays open between Ann's sessions.
    bo = asyncio.create_task(run(Steady(), server.url, name="Bo", table_id=table_id))
    assert await play_a_hand(child) == VERIFIED
    await leave(child)
    await finished(child)
    child = spawn(config_dir, "--server", server.url, "--table", table_id)
    await child.expect("Welcome back, Ann", async_=True)
    assert await play_a_hand(child) == VERIFIED
    await leave(child)
    assert "DEAL CHECK FAILED" not in await finished(child)
    bo.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await bo


async def a_table_for_others(
    server: QiuQiuServer, config_dir: Path, started: dict[str, str], columns: int
) -> tuple[pexpect.spawn[str], str]:
    """A client that opened a table without the dealer bot, in a terminal ``columns``
    wide, started as ``started`` says (by uv or not), and the table's id."""
    child = pexpect.spawn(
        str(QIUQIU),
        ["play", "--name", "Ann", "--plain", "--server", server.url, "--no-bot"],
        env={"QIUQIU_CONFIG_DIR": str(config_dir), "TERM": "xterm-256color", **started},
        encoding="utf-8",
        timeout=PATIENCE,
        dimensions=(50, columns),
    )
    await child.expect(r"Table (t\w+): 2 seats", async_=True)
    return child, matched(child)


@pytest.mark.parametrize(
    ("started", "command"), [({}, "qiuqiu"), ({"UV": "/usr/bin/uv"}, "uv run qiuqiu")]
)
async def test_who_opens_a_table_for_others_is_told_the_command_they_join_with(
    server: QiuQiuServer, config_dir: Path, started: dict[str, str], command: str
) -> None:
    # Started with the README's "uv run qiuqiu play", it said "qiuqiu play", which a
    # friend's checkout has no such command for. uv names itself in UV to what it runs.
    child, table_id = await a_table_for_others(server, config_dir, started, columns=200)
    joining = f"Others join with: {command} play --server {server.url} --table {table_id}"
    await child.expect_exact(joining, async_=True)
    child.sendline("quit now")
    assert "Traceback" not in await finished(child)


@pytest.mark.parametrize("started", [{}, {"UV": "/usr/bin/uv"}], ids=["qiuqiu", "uv-run"])
async def test_the_command_others_join_with_is_laid_out_whole_at_60_columns(
    server: QiuQiuServer, config_dir: Path, started: dict[str, str]
) -> None:
    # At 60 columns it wrapped at a space ("...play --server" / "ws://... --table t..."),
    # which copies as two commands.
    child, table_id = await a_table_for_others(server, config_dir, started, columns=60)
    command = "uv run qiuqiu" if started else "qiuqiu"
    lines = (
        "Others join with:",
        f"  {command} play --server {server.url} \\",
        f"    --table {table_id}",
    )
    await child.expect(f"{STYLE}\r\n{STYLE}".join(map(re.escape, lines)), async_=True)
    child.sendline("quit now")
    assert "Traceback" not in await finished(child)


async def killed_and_back(
    config_dir: Path, server: QiuQiuServer, child: pexpect.spawn[str]
) -> pexpect.spawn[str]:
    """``child`` killed, and the same account's client started again, seated still."""
    child.kill(signal.SIGKILL)
    await child.expect(pexpect.EOF, async_=True)
    child.close()
    child = spawn(config_dir, "--server", server.url)
    await child.expect("You are still seated at table", async_=True)
    return child


async def test_a_session_resumed_by_a_new_process_says_the_seed_it_sent_was_its_own(
    server: QiuQiuServer, config_dir: Path
) -> None:
    # It said "Your seed is now 41f1...", of a seed the player never chose; then "This
    # client sent a new seed of its own ... (it had sent none from this session)", which
    # said neither what happened in a player's words nor why it matters.
    child = await connect(config_dir, server)
    await child.expect(TURN, async_=True)
    child = await killed_and_back(config_dir, server, child)
    found = await child.expect(
        [
            words(
                "Back at the table, this client sent a new random seed for you: it goes into "
                "every shuffle from the next hand, so the server cannot pick your tiles alone"
            ),
            "Your seed is now",
        ],
        async_=True,
    )
    assert found == 0
    await leave(child)
    await finished(child)


async def test_a_hand_begun_before_the_client_came_back_is_headed_with_its_tiles(
    server: QiuQiuServer, config_dir: Path
) -> None:
    # Its snapshot brought the hand unsaid: its moves and showdown followed no header.
    # Dealt before the client was killed, it was not "begun while you were away".
    child = await connect(config_dir, server)
    await child.expect(r"You were dealt ([^\r\n]*)\.", async_=True)
    dealt = " ".join(matched(child).split())
    await child.expect(TURN, async_=True)
    child = await killed_and_back(config_dir, server, child)
    found = await child.expect([r"Hand #1 ", TURN], async_=True)
    assert found == 0, "the turn came before the hand was said"
    await child.expect(words(r"\(begun", "before", "you", "came", r"back\)"), async_=True)
    await child.expect(r"Your tiles: ([^\r\n]*)\.", async_=True)
    assert " ".join(matched(child).split()) == dealt
    await leave(child)
    await finished(child)


async def test_joining_a_table_while_seated_at_another_says_that_seat_plays_on(
    server: QiuQiuServer, config_dir: Path
) -> None:
    # Ann's seat at the table of a session she killed went on paying antes, unsaid.
    child = await connect(config_dir, server)
    await child.expect(r"Table (t\w+): 2 seats", async_=True)
    first = matched(child)
    child.kill(signal.SIGKILL)
    await child.expect(pexpect.EOF, async_=True)
    child.close()
    async with await Connection.open(server.url, name="Bo") as bo:
        options = TableOptions(dealer_bot=False, turn_seconds=5)
        table, _ = await bo.open_table(options, 500)
        child = spawn(config_dir, "--server", server.url, "--table", table.table_id)
        said = (
            f"You are still seated at table {first} from an earlier session: its turns "
            "are checked or folded for you until you go back to it (qiuqiu play "
            f"--server {server.url} --table {first}) and quit."
        )
        await child.expect(words(*map(re.escape, said.split())), async_=True)
        await child.expect("You sat down at table", async_=True)
        await leave(child)
        await finished(child)


class FoldsToABet(Bot):
    def decide(self, turn: Turn) -> Action:
        return Check() if turn.legal.check else Fold()


async def test_a_bet_nobody_called_goes_back_to_you_in_a_sentence_as_written(
    server: QiuQiuServer, config_dir: Path
) -> None:
    # It said "10 unmatched chips went back to You."
    child = spawn(config_dir, "--server", server.url, "--no-bot", *SMALL)
    await child.expect(r"Table (t\w+): 2 seats", async_=True)
    table_id = matched(child)
    folder = asyncio.create_task(
        run(FoldsToABet(), server.url, name="Bo", hands=1, table_id=table_id)
    )
    await child.expect(TURN, async_=True)
    child.sendline("bet 2")
    await child.expect(words(r"You bet 2\."), async_=True)
    await child.expect(words(r"2 unmatched chips went back to you\."), async_=True)
    await folder
    await leave(child)
    assert "Traceback" not in await finished(child)
