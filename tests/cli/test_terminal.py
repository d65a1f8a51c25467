"""The real ``qiuqiu play`` in a pseudo-terminal, typed at like a person would.

It starts its own embedded server (the README's first command), so the dealer
bot takes its time as it does for a person, and the hands pause between them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pexpect

from tests.cli.conftest import QIUQIU

PATIENCE = 30
"""Seconds to wait for what the screen should show next (never a timing assertion)."""

STYLE = r"(?:\x1b\[[0-9;]*m)*"
"""An ANSI style change: rich colours the output on a terminal."""
TURN = re.compile(rf"Your turn: {STYLE}([^\r\n\x1b]*)")


def start(config_dir: Path, *args: str) -> pexpect.spawn[str]:
    child = pexpect.spawn(
        str(QIUQIU),
        ["play", "--name", "Ann", "--plain", *args],
        env={"QIUQIU_CONFIG_DIR": str(config_dir), "TERM": "xterm-256color", "PATH": ""},
        encoding="utf-8",
        timeout=PATIENCE,
        dimensions=(50, 120),
    )
    child.expect("Welcome, Ann. Your balance is 1000 chips.")
    return child


def finish(child: pexpect.spawn[str]) -> str:
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return str(child.before)


def test_a_whole_hand_against_the_dealer_bot_typed_at_the_prompt(config_dir: Path) -> None:
    child = start(config_dir, "--turn-seconds", "8")
    transcript: list[str] = []
    child.logfile_read = _Collect(transcript)

    child.expect(TURN)
    assert matched(child) == "check · bet 10-490"
    child.expect("> ")
    # Left alone at the prompt, the timer keeps counting.
    child.expect("5 s left to act")

    child.sendline("dance")
    child.expect("unknown command 'dance': type help for the list")
    child.sendline("bet 999999")
    child.expect("bet must be from 10 to 490, not 999999")
    child.sendline("help")
    child.expect("quit +leave the table")

    legal = "check"
    while True:
        child.sendline("check" if "check" in legal else "call")
        found = child.expect([TURN, "Deal verified: the seed and deck match the commitment."])
        if found == 1:
            break
        legal = matched(child)

    child.sendline("quit")
    child.expect(r"You left the table\. Your balance is (\d+)\.")
    balance = int(matched(child))
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


def test_quitting_mid_hand_plays_the_seat_out_and_returns_its_chips(config_dir: Path) -> None:
    child = start(config_dir)
    child.expect(TURN)
    child.sendline("quit")
    child.expect("Leaving: your seat plays out this hand")
    # Checking through to a showdown, it may still lose the ante, split or win.
    child.expect(r"You left the table\. Your balance is (990|1000|1010)\.")
    finish(child)


def test_the_end_of_input_leaves_the_table_too(config_dir: Path) -> None:
    child = start(config_dir)
    child.expect(TURN)
    child.sendeof()
    child.expect(r"You left the table\. Your balance is (990|1000|1010)\.")
    finish(child)


def test_tiles_are_drawn_in_ascii_when_asked(config_dir: Path) -> None:
    child = start(config_dir, "--ascii")
    child.expect(rf"You were dealt ({STYLE}\[\d\|\d\]{STYLE}(  )?){{3}}\.")
    child.expect(TURN)
    assert not re.search("[\U0001f031-\U0001f061]", str(child.before))
    assert str(child.before).isascii(), str(child.before)
    child.sendline("quit")
    finish(child)


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
