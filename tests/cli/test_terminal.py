"""The real ``qiuqiu play`` in a pseudo-terminal, typed at like a person would: a hand
played at the prompt, left at once or at the end of its input, commands read from a file
or a pipe, Ctrl-C, and what it draws and says. A server that cheats is
test_terminal_cheats.py; a server that dies, stops or moves, test_terminal_servers.py;
a table with others, and coming back to one, test_terminal_tables.py.

Most tests let it start its own embedded server (the README's first command), so
the dealer bot takes its time as it does for a person, and the hands pause
between them. Those of a cheating server run it in the test's own process
(``tests/server/cheats.py`` patches the deal there), and wait for the screen
without blocking its event loop.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
from pathlib import Path

import pexpect
import pytest
from rich.console import Console

from qiuqiu.cli.connection import Connection
from qiuqiu.cli.terminal import Terminal
from qiuqiu.protocol import ErrorCode, TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.conftest import QIUQIU

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
