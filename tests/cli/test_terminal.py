"""The real ``qiuqiu play`` in a pseudo-terminal, typed at like a person would.

Most tests let it start its own embedded server (the README's first command), so
the dealer bot takes its time as it does for a person, and the hands pause
between them. Those of a cheating server run it in the test's own process
(``tests/server/cheats.py`` patches the deal there), and wait for the screen
without blocking its event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import signal
import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pexpect
import pytest
from redis.asyncio import Redis
from rich.console import Console

from qiuqiu.cli.bot import Action, Bot, Check, Fold, Turn, run
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.play import Steady
from qiuqiu.cli.terminal import Terminal
from qiuqiu.protocol import ErrorCode, TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.redis_store import RedisStore
from tests.cli.conftest import QIUQIU
from tests.conftest import free_port
from tests.leases import lease_taken
from tests.server import cheats
from tests.server.processes import Servers

PATIENCE = 30
"""Seconds to wait for what the screen should show next (never a timing assertion)."""

STYLE = r"(?:\x1b\[[0-9;]*m)*"
"""An ANSI style change: rich colours the output on a terminal."""
TURN = re.compile(rf"Your turn: {STYLE}([^\r\n\x1b]*)")
VERIFIED = (
    "Deal verified: 8 tiles at their committed positions, your seed in the shuffle,"
    " paid as the rules say."
)
"""Checking and calling, every hand reaches a showdown: four own tiles and four shown."""
FAILED = re.compile(r"!!! DEAL CHECK FAILED at table (t\w+), hand (\d+): ([^\r\n\x1b]*)")
SHUFFLE = re.compile(
    r"Table (t\w+)'s shuffle verified: (\d+) hands? rebuilt from the revealed seed\."
)
WELCOME = "Welcome, Ann. Your balance is 1,000 chips."
SMALL = ("--ante", "1", "--min-bet", "1", "--max-bet", "2", "--max-raises", "2")
"""Stakes at which no run of luck ends a seat in a few hands."""


def start(config_dir: Path, *args: str) -> pexpect.spawn[str]:
    child = spawn(config_dir, *args)
    child.expect(WELCOME)
    return child


def spawn(config_dir: Path, *args: str) -> pexpect.spawn[str]:
    return pexpect.spawn(
        str(QIUQIU),
        ["play", "--name", "Ann", "--plain", *args],
        env={"QIUQIU_CONFIG_DIR": str(config_dir), "TERM": "xterm-256color", "PATH": ""},
        encoding="utf-8",
        timeout=PATIENCE,
        dimensions=(50, 120),
    )


def finish(child: pexpect.spawn[str]) -> str:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return str(child.before)


def test_ctrl_c_while_the_client_is_still_loading_ends_it_without_a_traceback(
    config_dir: Path,
) -> None:
    # Python reports each import as it ends: Ctrl-C lands after rich's, before the rest.
    child = pexpect.spawn(
        str(QIUQIU),
        ["play", "--plain"],
        env={**os.environ, "QIUQIU_CONFIG_DIR": str(config_dir), "PYTHONPROFILEIMPORTTIME": "1"},
        encoding="utf-8",
        timeout=PATIENCE,
    )
    child.expect(r"\|\s+rich\.console\r?\n")
    child.kill(signal.SIGINT)
    child.expect(pexpect.EOF)
    child.close()
    assert "Traceback" not in str(child.before), child.before
    assert child.exitstatus == 130


def test_a_whole_hand_against_the_dealer_bot_typed_at_the_prompt(config_dir: Path) -> None:
    child = spawn(config_dir, "--turn-seconds", "8")
    transcript: list[str] = []
    # Before the welcome is read: what comes in the same read (the first hand's lines,
    # on a loaded machine) would not be logged once it was.
    child.logfile_read = _Collect(transcript)
    child.expect(WELCOME)

    child.expect(TURN)
    assert matched(child) == "check · bet 10-490"
    child.expect("> ")
    # Left alone at the prompt, the timer keeps counting.
    child.expect("5 s left to act")

    child.sendline("dance")
    child.expect("unknown command 'dance': type help for the list")
    child.sendline("bet 999999")
    child.expect("bet must be from 10 to 490, not 999,999")
    child.sendline("help")
    child.expect("quit, leave +stand up, your stack back to your balance")

    legal = "check"
    while True:
        child.sendline("check" if "check" in legal else "call")
        found = child.expect([TURN, VERIFIED])
        if found == 1:
            break
        legal = matched(child)

    child.sendline("quit")
    child.expect(rf"You left the table\. Your balance is ({CHIPS})\.")
    balance = amount(matched(child))
    # The table closes as its only person leaves: its seed rebuilds the hands played.
    child.expect(SHUFFLE)
    finish(child)

    coloured = "".join(transcript)
    assert "\x1b[1m" in coloured
    screen = re.sub(STYLE, "", coloured)
    assert "You were dealt" in screen
    assert "Your fourth tile" in screen
    assert "Showdown:" in screen
    assert re.search(r"(You win|Dealer wins) the pot of \d+", screen)
    assert re.search(r"For you: [+-]?\d+ net this hand\.", screen)
    assert "Traceback" not in screen
    assert balance > 1_000 if "You win the pot" in screen else balance < 1_000
    assert re.search(r"This session: 1 hand, won [01], lost [01], net [+-]\d+", screen)


def test_quit_now_mid_hand_plays_the_seat_out_and_returns_its_chips(config_dir: Path) -> None:
    child = start(config_dir)
    child.expect(TURN)
    child.sendline("quit now")
    child.expect("Leaving: your seat plays out this hand")
    # Checking through to a showdown, it may still lose the ante, split or win.
    child.expect(r"You left the table\. Your balance is (990|1,000|1,010)\.")
    finish(child)


def test_the_end_of_input_leaves_the_table_too(config_dir: Path) -> None:
    child = start(config_dir)
    child.expect(TURN)
    child.sendeof()
    child.expect(r"You left the table\. Your balance is (990|1,000|1,010)\.")
    finish(child)


@pytest.mark.parametrize("leave", ["quit now", "end of input"])
def test_a_seat_leaving_at_once_is_offered_no_prompt_while_its_hand_plays_out(
    config_dir: Path, leave: str
) -> None:
    """After Ctrl-D the prompt came back under "Leaving: …", for input that is no
    longer read (but for Ctrl-C, which the line above it names)."""
    child = start(config_dir)
    child.expect(TURN)
    if leave == "quit now":
        child.sendline("quit now")
    else:
        child.sendeof()
    child.expect(r"Leaving: your seat plays out this hand.*\)…")
    child.expect(r"You left the table\.")
    assert not re.search(r"^>", str(child.before), re.MULTILINE), child.before
    finish(child)


@pytest.mark.parametrize("source", ["file", "nothing"])
def test_commands_from_a_file_or_from_dev_null_are_read_to_their_end(
    config_dir: Path, tmp_path: Path, source: str
) -> None:
    # Neither a file nor /dev/null can be watched by the event loop as a terminal or a
    # pipe is: read as anything else would be, the client waited for input forever.
    commands = tmp_path / "commands.txt"
    commands.write_text("help\nquit\n")
    with (commands if source == "file" else Path(os.devnull)).open("rb") as stdin:
        done = subprocess.run(
            [str(QIUQIU), "play", "--name", "Ann", "--plain"],
            stdin=stdin,
            capture_output=True,
            text=True,
            env={"QIUQIU_CONFIG_DIR": str(config_dir), "PATH": ""},
            timeout=PATIENCE * 2,
        )
    assert done.returncode == 0, done.stderr
    assert "Error" not in done.stderr
    assert ("Commands:" in done.stdout) == (source == "file")  # the help it asked for
    # Its end came before the table's first message: it stood up all the same, rather
    # than leaving the seat with its chips behind.
    assert re.search(r"You left the table\. Your balance is (990|1,000|1,010)\.", done.stdout)
    assert re.search(r"This session: [01] hands?, .* Balance: (990|1,000|1,010)\.", done.stdout)


@pytest.mark.parametrize("end", ["quit\n", ""], ids=["quit", "end-of-input"])
def test_a_piped_script_plays_each_move_on_its_own_turn_in_order(
    config_dir: Path, end: str
) -> None:
    # Read all at once before the first deal, each move waits for its own turn rather
    # than being refused ("it is not your turn"), and the quit after them waits too.
    done = subprocess.run(
        [str(QIUQIU), "play", "--name", "Ann", "--plain", "--turn-seconds", "5"],
        input="check\n" * 3 + end,
        capture_output=True,
        text=True,
        env={"QIUQIU_CONFIG_DIR": str(config_dir), "PATH": ""},
        timeout=PATIENCE * 4,
    )
    assert done.returncode == 0, done.stderr
    said = done.stdout
    assert "not your turn" not in said
    assert "no hand is being played" not in said
    # Each check is played, or refused for facing a bet (the turn then times out); the
    # seat standing up may check once more itself, through the hand in play.
    outcomes = re.findall(r"^(You checked\.|you cannot check: there is a bet)", said, re.M)
    assert len(outcomes) >= 3, said
    assert "This session:" in said


def test_ctrl_c_leaves_at_once_whatever_a_script_still_holds(config_dir: Path) -> None:
    # Behind a thousand checks, a quit would wait for a thousand turns.
    with subprocess.Popen(
        [str(QIUQIU), "play", "--name", "Ann", "--plain"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={"QIUQIU_CONFIG_DIR": str(config_dir), "PATH": ""},
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write("check\n" * 1000)
        process.stdin.flush()
        for line in process.stdout:
            if line.startswith("You checked."):
                break
        process.send_signal(signal.SIGINT)
        said = process.communicate(timeout=PATIENCE * 2)[0]
    assert process.returncode == 0
    assert "You left the table." in said


def test_tiles_are_drawn_in_ascii_when_asked(config_dir: Path) -> None:
    child = start(config_dir, "--ascii")
    child.expect(rf"You were dealt ({STYLE}\[\d\|\d\]{STYLE}(  )?){{3}}\.")
    child.expect(TURN)
    assert not re.search("[\U0001f031-\U0001f061]", str(child.before))
    assert str(child.before).isascii(), str(child.before)
    # A refusal names what may be done, as the turn's line does: in ASCII too.
    child.sendline("raise 40")
    child.expect(r"you cannot raise now; now you may: check \| bet 10-490")
    assert str(child.before).isascii(), str(child.before)
    child.sendline("quit now")
    assert finish(child).isascii()


def test_the_seed_command_sets_the_players_own_seed_from_the_next_hand(config_dir: Path) -> None:
    child = start(config_dir)
    child.expect(TURN)
    child.sendline("seed")
    child.expect(r"Your seed at table t\w+: [0-9a-f]{64}")
    child.sendline("seed not a seed!")
    child.expect("a seed is 1 to 64 letters, digits, _ or -")
    child.sendline("seed Ann_picks-THIS")
    child.expect("Your seed is now Ann_picks-THIS: it goes into every shuffle from the next hand.")
    child.sendline("seed")
    child.expect("Your seed at table t\\w+: Ann_picks-THIS")
    child.sendline("quit now")
    finish(child)


# -- a server that cheats, in this process --------------------------------------------------


async def connect(config_dir: Path, server: QiuQiuServer) -> pexpect.spawn[str]:
    """The client of a server in this process: its screen read without blocking the loop."""
    child = spawn(config_dir, "--server", server.url, *SMALL)
    await child.expect(WELCOME, async_=True)
    return child


async def play_a_hand(child: pexpect.spawn[str]) -> str:
    """Check or call until the hand's deal check is shown; return its line."""
    while True:
        found = await child.expect([TURN, VERIFIED, FAILED], async_=True)
        if found:
            return str(child.after)
        child.sendline("check" if "check" in matched(child) else "call")


async def leave(child: pexpect.spawn[str]) -> None:
    child.sendline("quit now")
    await child.expect(rf"You left the table\. Your balance is {CHIPS}\.", async_=True)


async def finished(child: pexpect.spawn[str], status: int = 0) -> str:
    await child.expect(pexpect.EOF, async_=True)
    child.close()
    assert child.exitstatus == status, child.before
    return str(child.before)


TAMPERED = 3
"""The exit status of a session that saw a deal fail its check (README)."""


async def test_honest_hands_show_the_verified_line_and_the_shuffle_at_the_close(
    server: QiuQiuServer, config_dir: Path
) -> None:
    child = await connect(config_dir, server)
    assert await play_a_hand(child) == VERIFIED
    await leave(child)
    await child.expect(SHUFFLE, async_=True)
    assert isinstance(child.match, re.Match)
    played = await server.store.table_hands(child.match.group(1))
    assert int(child.match.group(2)) == len(played)
    assert "Traceback" not in await finished(child)


async def test_a_swapped_tile_is_shown_loudly_as_the_hand_ends(
    server: QiuQiuServer, config_dir: Path
) -> None:
    with cheats.swapped_tile():
        child = await connect(config_dir, server)
        line = await play_a_hand(child)
        assert isinstance(child.match, re.Match)
        assert child.match.group(2) == "1"
        assert "position 27" in line, line
        await leave(child)
    assert "Traceback" not in await finished(child, TAMPERED)


PAID_WRONG = re.compile(r"!!! PAYOUT CHECK FAILED at table t\w+, hand (\d+): ([^\r\n\x1b]*)")


async def test_a_pot_paid_to_the_bot_that_lost_it_is_shown_loudly_as_the_hand_ends(
    server: QiuQiuServer, config_dir: Path
) -> None:
    with cheats.house_takes_the_pot():
        child = await connect(config_dir, server)
        # Checking and calling to every showdown: the player wins one within a few hands.
        while await child.expect([TURN, VERIFIED, PAID_WRONG], async_=True) != 2:
            if child.after and "Your turn" in str(child.after):
                child.sendline("check" if "check" in matched(child) else "call")
        assert isinstance(child.match, re.Match)
        assert child.match.group(2).startswith("the pot was not paid as the rules say")
        await leave(child)
    assert "Traceback" not in await finished(child, TAMPERED)


async def test_a_bust_in_the_hand_being_left_ends_the_session(
    server: QiuQiuServer, config_dir: Path
) -> None:
    """Ctrl-D as the hand starts, a hand the player's ante puts all in, and loses. The
    client waited for a rebuy with no more input to read, and never ended."""
    # Seat 0 holds positions 0, 1, 2 and 6, the dealer bot 3, 4, 5 and 7: 9-1 to 9-9.
    mine, dealers = ["6-1", "4-2", "3-1", "2-1"], ["6-3", "0-0", "5-4", "5-5"]
    with cheats.chosen_deck([*mine[:3], *dealers[:3], mine[3], dealers[3]]):
        child = spawn(config_dir, "--server", server.url, "--ante", "600", "--buy-in", "500")
        await child.expect("You put in the ante of 500", async_=True)
        child.sendeof()
        # The hand may bust the seat before the client reads the input's end, or after.
        await child.expect(
            r"(You left the table|You're out of chips)\. Your balance is 500", async_=True
        )
        # The chosen deck is no shuffle of the seeds: its check fails loudly at the close.
        await child.expect(pexpect.EOF, async_=True)
    assert "This session: 1 hand, won 0, lost 1, net -500" in str(child.before)


@pytest.mark.parametrize(
    "cheat", [cheats.chosen_deck, cheats.ignored_client_seeds], ids=["chosen-deck", "ignored-seeds"]
)
async def test_a_deck_not_made_from_the_seeds_is_shown_loudly_once_the_table_closes(
    server: QiuQiuServer, config_dir: Path, cheat: Callable[[], AbstractContextManager[None]]
) -> None:
    with cheat():
        child = await connect(config_dir, server)
        assert await play_a_hand(child) == VERIFIED, "every opening is what was committed"
        await leave(child)
    await child.expect(FAILED, async_=True)
    assert isinstance(child.match, re.Match)
    assert child.match.group(2) == "1"
    assert child.match.group(3).startswith("the revealed seed and the client seeds do not make")
    assert "shuffle verified" not in await finished(child, TAMPERED)


# -- a table whose server dies, between real server processes ---------------------------


async def test_a_hand_its_dead_server_was_playing_is_said_to_be_called_off(
    redis_url: str, config_dir: Path
) -> None:
    """Bo's table is hosted by one process, Ann plays at it through the other. The host
    is killed mid-hand: the other adopts the table, voids the hand, and Ann is told
    why her chips are back, though that hand_voided comes after a gap in seq."""
    servers = Servers(redis_url)
    try:
        hosting, relaying = free_port(), free_port()
        host = await servers.start(hosting)
        await servers.start(relaying)
        bo = await Connection.open(f"ws://127.0.0.1:{hosting}", name="Bo", reconnect=False)
        table, _ = await bo.open_table(TableOptions(dealer_bot=False, turn_seconds=5), 500)
        child = spawn(
            config_dir, "--server", f"ws://127.0.0.1:{relaying}", "--table", table.table_id
        )
        await child.expect(WELCOME, async_=True)
        await child.expect(["Bo to act", TURN], async_=True)
        host.kill()
        await host.wait()
        await child.expect(
            r"The hand was called off \(the server hosting the table stopped\); every chip "
            r"went back\.",
            async_=True,
        )
        await bo.close()
        await leave(child)
        assert "Traceback" not in await finished(child)
    finally:
        await servers.kill_remaining()


async def host_killed_at_a_table_of_players(
    servers: Servers, port: int, config_dir: Path
) -> pexpect.spawn[str]:
    """``qiuqiu play`` at a three-seat table on a server holding seats for 1 s, where
    Bo sat down and went away; then that server is killed, and the client says so."""
    host = await servers.start(port, flags=("--grace", "1"))
    child = spawn(config_dir, "--server", f"ws://127.0.0.1:{port}", "--seats", "3")
    await child.expect(WELCOME, async_=True)
    await child.expect(r"Table (t\w+): 3 seats", async_=True)
    bo = await Connection.open(f"ws://127.0.0.1:{port}", name="Bo", reconnect=False)
    await bo.join_table(matched(child), 500)
    await bo.close()
    await child.expect(r"Bo lost the connection \(1 s to come back\)", async_=True)
    host.kill()
    await host.wait()
    await child.expect("Connection lost", async_=True)
    return child


async def test_a_server_gone_for_good_is_tried_for_the_grace_period_and_the_chips_explained(
    redis_url: str, config_dir: Path
) -> None:
    """A server holding seats for 1 s (--grace 1), which Ann hears when Bo's connection
    drops, is killed: Ann is told her seat is held for 1 s, the client tries until then
    (and a margin), and giving up says where her chips at the table go, and how to come
    back for them."""
    servers = Servers(redis_url)
    try:
        port = free_port()
        child = await host_killed_at_a_table_of_players(servers, port, config_dir)
        await child.expect("Your seat is held for 1 s", async_=True)
        await child.expect("The connection is closed", async_=True)
        # Rich wraps a long line at the terminal's width, at any space, styling each line.
        await child.expect(
            words(
                r"Your (\d+) chips at table t\w+ go back to your balance when the server's",
                "grace period for your seat ends; run the same command again before then",
            ),
            async_=True,
        )
        at_table = matched(child)
        await child.expect(
            words(rf"Balance: 500 \(and {at_table} still at the table\)\."), async_=True
        )
        await child.expect(pexpect.EOF, async_=True)
        assert "Traceback" not in str(child.before)
        child.close()
        assert child.exitstatus == 1, "the session did not end by the player's choice"
    finally:
        await servers.kill_remaining()


async def test_a_server_that_lost_the_account_is_said_to_hold_no_seat_for_it(
    redis_url: str, config_dir: Path
) -> None:
    """The host dies and comes back with its store emptied, as an in-memory server
    restarts: the token is unknown, so after the grace period the client says the
    seats are gone, and no longer that its chips will come back or how to claim them."""
    servers = Servers(redis_url)
    try:
        port = free_port()
        child = await host_killed_at_a_table_of_players(servers, port, config_dir)
        async with Redis.from_url(redis_url) as redis:
            await redis.flushdb()
        await servers.start(port, flags=("--grace", "1"))
        await child.expect(words("the server no longer knows this account"), async_=True)
        await child.expect(pexpect.EOF, async_=True)
        said = str(child.before)
        assert "go back to your balance" not in said
        assert "still at the table" not in said
        # Not the lost account's last balance, as if it were still there.
        assert "Balance:" not in said, said
        assert re.search(words("The server no longer has this account, nor its balance."), said)
        child.close()
        assert child.exitstatus == 1
    finally:
        await servers.kill_remaining()


async def test_a_server_that_stops_is_said_to_have_stood_the_seat_up(
    redis_url: str, config_dir: Path
) -> None:
    # It said 'You left the table.', as if the player had typed quit.
    servers = Servers(redis_url)
    try:
        port = free_port()
        host = await servers.start(port)
        child = spawn(config_dir, "--server", f"ws://127.0.0.1:{port}")
        await child.expect(WELCOME, async_=True)
        await child.expect(TURN, async_=True)
        host.terminate()
        await child.expect(
            words(
                r"The server stopped: it stood your seat up, and your 500 chips went back "
                r"to your balance \(now"
            ),
            async_=True,
        )
        await child.expect(pexpect.EOF, async_=True)
        assert "You left the table" not in str(child.before)
        child.close()
        # Not 0, as a player's own quit: the session did not end by choice.
        assert child.exitstatus == 1
    finally:
        await servers.kill_remaining()


async def test_the_shuffle_is_checked_from_the_seed_a_stopping_server_revealed(
    redis_url: str, config_dir: Path
) -> None:
    # The table's history was asked for once the connection had closed, and the seed
    # its table_closed had brought went unused: "Could not check table ...'s shuffle".
    servers = Servers(redis_url)
    try:
        port = free_port()
        host = await servers.start(port)
        child = spawn(config_dir, "--server", f"ws://127.0.0.1:{port}", *SMALL)
        await child.expect(WELCOME, async_=True)
        assert await play_a_hand(child) == VERIFIED
        await child.expect(TURN, async_=True)
        host.terminate()
        await child.expect(words(r"The server stopped: it stood your seat up"), async_=True)
        await child.expect([SHUFFLE, "Could not check"], async_=True)
        assert isinstance(child.match, re.Match)
        # Hand 1, played to its end, and hand 2, called off as the server stopped.
        assert child.match.groups()[1:] == ("2",), child.after
        await child.expect(pexpect.EOF, async_=True)
        assert "Traceback" not in str(child.before)
        child.close()
        assert child.exitstatus == 1
    finally:
        await servers.kill_remaining()


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


def words(*parts: str) -> str:
    """A pattern of ``parts``' words, whatever spaces, line breaks or styles come between
    them."""
    return rf"(?:\s|{STYLE})+".join(" ".join(parts).split(" "))


CHIPS = r"\d{1,3}(?:,\d{3})*"
"""A chip amount as the client writes one: thousands apart."""


def amount(chips: str) -> int:
    """A chip amount the client wrote, as a number."""
    return int(chips.replace(",", ""))


def matched(child: pexpect.spawn[str]) -> str:
    """The first group of what the last ``expect`` matched."""
    assert isinstance(child.match, re.Match)
    return str(child.match.group(1))


class _Collect:
    """A file-like sink for pexpect's log: everything the program printed."""

    def __init__(self, into: list[str]) -> None:
        self.into = into

    def write(self, text: str) -> None:
        self.into.append(text)

    def flush(self) -> None:
        pass


async def test_a_table_that_moved_to_another_server_is_found_again_and_played_on(
    redis_url: str, config_dir: Path
) -> None:
    """Ann's server stalled past the table's lease (here its lease is taken at Redis,
    as an adopter does, and lapses for her server to adopt the table again): it says
    the table moved and closes her connection with 1012. A client that took the table
    for closed would wait for nothing while her seat, away, paid its antes."""
    store = await RedisStore.from_url(redis_url)
    server = QiuQiuServer(ServerConfig(port=0, lease=0.3, hand_pause=0.0), store=store)
    await server.start()
    try:
        child = spawn(config_dir, "--server", server.url, "--turn-seconds", "30", *SMALL)
        await child.expect(WELCOME, async_=True)
        await child.expect(TURN, async_=True)
        (table_id,) = server.lobby.tables
        await lease_taken(redis_url, table_id)
        await child.expect("The table moved to another server: reconnecting", async_=True)
        await child.expect(TURN, async_=True)
        child.sendline("check" if "check" in matched(child) else "call")
        await leave(child)
        assert "Traceback" not in await finished(child)
    finally:
        await server.stop()
        await store.close()


async def test_a_refused_leave_is_said_in_the_servers_words_without_its_code(
    server: QiuQiuServer,
) -> None:
    # It said "Leaving was refused (not_seated): ...": a code for programs.
    async with await Connection.open(server.url, name="Ann") as conn:
        table, _ = await conn.open_table(TableOptions(), buy_in=500)
        console = Console(file=io.StringIO(), width=200)
        terminal = Terminal(conn, table.table_id, console, unicode=True)
        refused = wire.Error(code=ErrorCode.NOT_SEATED, message="you are not seated there")
        terminal.leave_refused(refused)
        said = console.file.getvalue()  # type: ignore[attr-defined]
        assert said.startswith("Leaving was refused: you are not seated there\n"), said
