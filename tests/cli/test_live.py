"""The live table view of the real ``qiuqiu play``, in a real terminal: tmux runs it
in a pseudo-terminal of its own and shows what is on its screen at any moment.

The server runs in the test's event loop (tmux runs the client apart, so nothing
blocks the loop) and its own records are what the client's session summary is
checked against.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from qiuqiu.cli import live, render
from qiuqiu.cli.commands import HELP
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.accounts import token_hash
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.conftest import QIUQIU
from tests.cli.test_render import table
from tests.cli.test_terminal import CHIPS, amount
from tests.cli.test_watch import (
    BETWEEN_HANDS,
    SMALL,
    Link,
    a_fold_just_played,
    seated,
    seated_to_win,
    the_dealer_down,
)
from tests.conftest import free_port
from tests.server.processes import Servers

PATIENCE = 30.0
"""Seconds to wait for what the screen should show next (never a timing assertion)."""

if shutil.which("tmux") is None:
    if os.environ.get("CI"):
        raise RuntimeError("tmux is missing: .ci/run installs Debian's tmux package")
    pytest.skip("tmux is missing (apt-get install tmux)", allow_module_level=True)


class Screen:
    """One program in a tmux window of ``width`` x ``height``, on a tmux server of
    this test's own (``-L``), so no one else's sessions are touched."""

    def __init__(self, name: str, command: str, width: int = 110, height: int = 40) -> None:
        self.tmux = ["tmux", "-L", f"qiuqiu-{name}-{os.getpid()}"]
        # The pane outlives the program, so its last words and its status can be read.
        shell = f"{command}; echo EXIT=$?; sleep 600"
        size = ["-x", str(width), "-y", str(height)]
        subprocess.run([*self.tmux, "new-session", "-d", "-s", name, *size, shell], check=True)

    def text(self) -> str:
        """What the window shows, each line that wrapped joined back into one."""
        return subprocess.run(
            [*self.tmux, "capture-pane", "-p", "-J"], check=True, capture_output=True, text=True
        ).stdout

    def type(self, line: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-l", line], check=True)
        subprocess.run([*self.tmux, "send-keys", "Enter"], check=True)

    async def wait_for(self, pattern: str) -> re.Match[str]:
        try:
            async with asyncio.timeout(PATIENCE):
                while not (found := re.search(pattern, self.text())):
                    await asyncio.sleep(0.1)
        except TimeoutError:
            # What the screen showed instead is what tells why.
            raise AssertionError(f"{pattern!r} not on screen:\n{self.text()}") from None
        return found

    async def settled(self, pattern: str) -> re.Match[str]:
        """:meth:`wait_for` on a screen drawn whole: the same on two looks in a row.
        Caught in the middle of a redraw, the live view's lower lines are the last
        draw's (a showdown line where the prompt goes)."""
        async with asyncio.timeout(PATIENCE):
            while True:
                text = self.text()
                await asyncio.sleep(0.05)
                if text == self.text() and (found := re.search(pattern, text)):
                    return found

    def resize(self, width: int, height: int) -> None:
        subprocess.run(
            [*self.tmux, "resize-window", "-x", str(width), "-y", str(height)], check=True
        )

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], check=False, capture_output=True)


@pytest.fixture
def screens() -> Iterator[list[Screen]]:
    opened: list[Screen] = []
    yield opened
    for screen in opened:
        screen.close()


def play(config_dir: Path, server: QiuQiuServer | str, *flags: str) -> str:
    """The command that plays at ``server`` (or at the server at that URL)."""
    env = f"QIUQIU_CONFIG_DIR={shlex.quote(str(config_dir))} TERM=xterm-256color LANG=C.UTF-8"
    url = server if isinstance(server, str) else server.url
    command = [str(QIUQIU), "play", "--server", url, "--name", "Ann", *flags]
    # Under pytest the children get COLUMNS=80 and LINES=24 (not in os.environ), which
    # would pin rich to 80x24 whatever the window; a person's terminal exports neither.
    return f"env -u COLUMNS -u LINES {env} {shlex.join(command)}"


TURN = r"Your turn: (\S+)(?: . bet ([\d,]+)-([\d,]+))?"


def turn_of(text: str) -> tuple[str, ...]:
    """Which turn the screen shows: the hand in the table's title and what may be typed."""
    hand = re.search(r"Hand #\d+ ", text)
    turn = re.search(TURN, text)
    return (hand.group(0) if hand else "", turn.group(0) if turn else "")


async def test_the_table_stays_on_screen_over_hands_and_the_summary_is_the_servers_record(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    # Bets capped: the deck depends on the client's random seed; no luck busts it in 3 hands.
    # The dealer may bet after a check: that turn is answered too, not left to time out.
    flags = ("--turn-seconds", "20", "--max-bet", "20", "--max-raises", "2")
    screen = Screen("stays", play(config_dir, server, *flags))
    screens.append(screen)
    for hand in (1, 2, 3):
        await screen.wait_for(rf"Table t\w+  Hand #{hand} ")
        turn = await screen.settled(TURN)
        move, rows = turn.group(1), turn.string.splitlines()
        # The table is drawn at the top of the window, every seat in it, with the pot.
        (top,) = [n for n, row in enumerate(rows) if re.match(r"╭─ Table t\w+  Hand #", row)]
        assert top <= 2, rows
        assert re.search(r"seat 1 +You +stack \d+", rows[top + 1])
        assert re.search(r"seat 2 +Dealer", rows[top + 2])
        assert re.search(r"Pot \d+ · You to act · \d+ s left", rows[top + 3])
        assert "Your tiles:" in rows[top + 4]
        assert [row for row in rows if row.strip()][-1].startswith("> ")
        asked = turn_of(screen.text())
        screen.type("check" if move == "check" else "call")
        while True:
            async with asyncio.timeout(PATIENCE):
                while (now := turn_of(screen.text())) == asked or now == (asked[0], ""):
                    await asyncio.sleep(0.05)
            if now[0] != asked[0]:
                break
            asked = now  # the dealer bet after the check: call it
            screen.type("call")
        await screen.wait_for(rf"Hand #{hand + 1} ")
    screen.type("quit now")
    await screen.wait_for("EXIT=0")
    summary = re.search(
        rf"This session: (\d+) hands?, won (\d+), lost (\d+), net ([+-]{CHIPS}), "
        rf"biggest pot won ({CHIPS})\. Balance: ({CHIPS})\.",
        " ".join(screen.text().split()),  # rich wraps long lines at the window's width
    )
    assert summary is not None, screen.text()
    hands, won, lost, net, biggest, balance = map(amount, summary.groups())

    token = json.loads((config_dir / "tokens.json").read_text())[server.url]
    account = await server.store.account_for_token(token_hash(token))
    assert account is not None
    records = await server.store.account_hands(account.account_id)
    nets = [record.net(account.account_id) for record in records]
    pots = [
        sum(e["amount"] for e in map(json.loads, record.events) if e["type"] == "pot_awarded")
        for record in records
    ]
    assert hands == len(records) >= 3
    assert (won, lost, net) == (sum(n > 0 for n in nets), sum(n < 0 for n in nets), sum(nets))
    assert biggest == max((pot for pot, n in zip(pots, nets, strict=True) if n > 0), default=0)
    assert balance == account.balance
    assert "Traceback" not in screen.text()


async def test_ascii_means_every_character_on_screen(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    screen = Screen("ascii", play(config_dir, server, "--ascii"))
    screens.append(screen)
    await screen.wait_for(TURN)
    screen.type("dance")
    await screen.wait_for("unknown command 'dance'")
    text = screen.text()
    assert re.search(r"You were dealt \[\d\|\d\](  \[\d\|\d\]){2}\.", text)
    assert re.search(r"\+-+ Table t\w+  Hand #1 -+\+", text)
    assert text.isascii(), [c for c in text if not c.isascii()]
    screen.type("quit now")
    await screen.wait_for("EXIT=0")
    assert screen.text().isascii()


async def go_bust(screen: Screen) -> None:
    """Everything in, whenever it may: a bet of all it has, or a call, until broke."""
    async with asyncio.timeout(PATIENCE * 4):
        while "You're out of chips" not in (text := screen.text()):
            turn = re.search(TURN, text)
            if turn is None:
                await asyncio.sleep(0.1)
                continue
            asked = turn_of(text)
            screen.type(f"bet {turn.group(3)}" if turn.group(3) else "call")
            async with asyncio.timeout(PATIENCE):
                while turn_of(screen.text()) == asked:
                    await asyncio.sleep(0.05)


async def test_out_of_chips_the_showdown_shows_then_a_rebuy_seats_you_at_the_same_table(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    screen = Screen("bust", play(config_dir, server, "--buy-in", "100"), height=60)
    screens.append(screen)
    table_id = (await screen.wait_for(r"Table (t\w+): 2 seats")).group(1)
    await go_bust(screen)
    events = screen.text()
    showdown, lost, bust = (
        events.rindex("Showdown:"),
        events.rindex("wins the pot of"),
        events.index("You're out of chips"),
    )
    assert showdown < lost < bust
    assert re.search(r"For you: -[\d,]+ net this hand\.", events), events
    # A move typed with no seat says what to do, not to wait for a deal that never comes.
    screen.type("check")
    await screen.wait_for(r"You have no seat: type rebuy to buy in again, or quit\.")
    assert "wait for the deal" not in screen.text()
    screen.type("rebuy 100")
    await screen.wait_for(rf"You sat down again at table {table_id} with 100 chips\.")
    await screen.wait_for(TURN)
    screen.type("quit now")
    await screen.wait_for("EXIT=0")


@pytest.mark.parametrize(("width", "height"), [(80, 24), (80, 20), (60, 40)])
async def test_help_is_whole_each_description_in_its_column_and_no_prompt_outlives_the_client(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen], width: int, height: int
) -> None:
    """At 60 columns the descriptions wrapped back to the left edge, under the commands;
    at 20 rows, under the table, the events left no room for its first commands."""
    screen = Screen(
        f"help{width}x{height}", play(config_dir, server, "--turn-seconds", "60"), width, height
    )
    screens.append(screen)
    await screen.wait_for(TURN)
    screen.type("help")
    await screen.wait_for(re.escape(help_as_drawn(width)[-1]))
    shown = [line.rstrip() for line in screen.text().splitlines()]
    missing = [line for line in help_as_drawn(width) if line not in shown]
    assert not missing, screen.text()
    first = shown.index("Commands:") + 1
    ranking = next(n for n, line in enumerate(shown) if line.startswith("Best hand wins"))
    assert ranking - first >= len(HELP.commands), screen.text()
    assert all(line.startswith("  ") for line in shown[first:ranking]), screen.text()
    screen.type("quit now")
    await screen.wait_for("EXIT=0")
    # Gone, the client leaves no prompt behind that looks as if it still listened.
    assert "> _\nEXIT=0" not in screen.text()


def help_as_drawn(width: int) -> list[str]:
    console = Console(width=width, file=io.StringIO(), record=True)
    console.print(render.help_text(HELP))
    return [line.rstrip() for line in console.export_text().splitlines()]


async def test_a_watch_over_leaves_its_table_on_screen_without_asking_to_quit(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    async with seated(server) as (_, table_id):
        screen = Screen("watch", play(config_dir, server, "--watch", table_id))
        screens.append(screen)
        await screen.wait_for("Type quit to stop")
        screen.type("quit")
        await screen.wait_for("EXIT=0")
        assert f"Table {table_id}" in screen.text()
        assert "Type quit to stop" not in screen.text()


async def test_a_watched_table_that_closes_is_left_on_screen_closed(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    # Its last picture said "Waiting for 1 more player to sit down." above the line
    # saying that it closed.
    async with seated(server) as (bo, table_id):
        screen = Screen("closing", play(config_dir, server, "--watch", table_id))
        screens.append(screen)
        await screen.wait_for("Type quit to stop")
        await bo.request(cmd.LeaveTable(table_id=table_id), wire.TableLeft)
        await screen.wait_for("EXIT=0")
        text = screen.text()
        assert "The table is closed." in text, text
        assert "Waiting for" not in text, text


@pytest.mark.parametrize("config", [pytest.param(BETWEEN_HANDS, id="a long pause")])
async def test_a_watch_begun_between_hands_draws_no_one_folded_and_the_last_hand_over(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    async with a_fold_just_played(server) as table_id:
        screen = Screen("between", play(config_dir, server, "--watch", table_id))
        screens.append(screen)
        await screen.settled(r"Hand #1 is over; the next is not dealt yet\.")
        text = screen.text()
        assert re.search(r"seat 2\s+Cy( \(D\))?\s+stack \d+", text), text
        assert "folded" not in text, text


async def test_the_dealer_bots_top_up_is_said_under_the_table_that_shows_it(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    async with seated_to_win(server) as (bo, table_id):
        screen = Screen("top-up", play(config_dir, server, "--watch", table_id))
        screens.append(screen)
        await screen.wait_for("Type quit to stop")
        chips = await the_dealer_down(bo, table_id)
        topped_up = (
            f"The dealer bot topped up its stack to {SMALL.max_buy_in:,} (it had {chips:,})."
        )
        await screen.wait_for(re.escape(topped_up))
        screen.type("quit")
        await screen.wait_for("EXIT=0")


async def test_a_table_closed_while_the_watcher_was_away_stays_on_screen(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    link = Link(server.port)
    url = await link.start()
    try:
        async with seated(server) as (bo, table_id):
            screen = Screen("away", play(config_dir, url, "--watch", table_id))
            screens.append(screen)
            await screen.wait_for("Type quit to stop")
            link.cut()
            await screen.wait_for("Connection lost")
            await bo.request(cmd.LeaveTable(table_id=table_id), wire.TableLeft)
            link.up = True
            await screen.wait_for("EXIT=0")
            text = screen.text()
            assert "closed while the connection was down" in text
            assert f"Table {table_id}  Hand #1" in text
            assert "Type quit to stop" not in text
    finally:
        await link.close()


async def test_a_small_terminal_keeps_the_prompt_each_seat_on_a_line_and_each_tile_whole(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    flags = ("--rounds", "2", "--turn-seconds", "60", "--max-bet", "20")
    screen = Screen("small", play(config_dir, server, *flags), width=60, height=16)
    screens.append(screen)
    async with asyncio.timeout(PATIENCE):
        # Checked at the first turn (three tiles) and at the first with four, where the
        # best cut is drawn too.
        while True:
            text = (await screen.wait_for(TURN)).string
            rows = [row for row in text.splitlines() if row.strip()]
            assert rows[-1].startswith("> "), text
            assert re.search(r"seat 1 +You +stack \d+", text), text
            assert re.search(r"seat 2 +Dealer \(D\) +stack \d+", text), text
            faces = [n for n, char in enumerate(text) if 0x1F031 <= ord(char) <= 0x1F061]
            assert faces, text
            assert all(re.match(r" \d-\d", text[n + 1 : n + 5]) for n in faces), text
            if "Best cut" in text:
                break
            asked = turn_of(text)
            screen.type("check" if "check" in asked[1] else "call")
            # The dealer checking behind, the next round's turn reads as this one did.
            while turn_of(screen.text()) == asked and "Best cut" not in screen.text():
                await asyncio.sleep(0.05)
    screen.type("quit now")
    await screen.wait_for("EXIT=0")


async def test_a_narrow_or_short_window_cuts_no_stack_nor_name_and_keeps_the_prompt(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    screen = Screen("narrow", play(config_dir, server, "--turn-seconds", "60"), width=40, height=16)
    screens.append(screen)
    text = (await screen.settled(TURN)).string
    # Too narrow for a seat a line: two lines each, the figures whole.
    assert re.search(r"seat 1 +You\b", text), text
    assert re.search(r"seat 2 +Dealer \(D\)", text), text
    assert re.findall(r"stack (\S+)", text) == ["490", "9,990"], text
    # Too short for the table and three lines of events: the prompt stays in sight.
    screen.resize(60, 9)
    text = (await screen.settled(r"(?m)^╰─{58}╯$")).string
    rows = [row for row in text.splitlines() if row.strip()]
    assert rows[-1].startswith("> "), text
    assert re.search(TURN, text), text
    screen.type("quit now")
    await screen.wait_for("EXIT=0")


async def test_a_line_typed_longer_than_the_window_is_seen_to_its_end(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    screen = Screen("long", play(config_dir, server, "--turn-seconds", "60"), width=60, height=16)
    screens.append(screen)
    await screen.settled(TURN)
    typed = "x" * 149 + "y"
    subprocess.run([*screen.tmux, "send-keys", "-l", typed], check=True)
    await screen.settled("xy_")
    subprocess.run([*screen.tmux, "send-keys", "C-u"], check=True)
    screen.type("quit now")
    await screen.wait_for("EXIT=0")


async def test_a_dumb_terminal_gets_the_game_as_lines_each_as_long_as_it_is(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    command = play(config_dir, server, "--turn-seconds", "60").replace(
        "TERM=xterm-256color", "TERM=dumb"
    )
    screen = Screen("dumb", command, width=60, height=30)
    screens.append(screen)
    # A terminal that cannot move its cursor cannot redraw a live view: the table comes
    # as the lines --plain prints, and the turn is there to be answered.
    text = (await screen.wait_for(TURN)).string
    assert "╭─ Table" not in text, text
    # Wrapped by the window (joined again here), not cut at the 80 columns rich assumes.
    assert re.search(r"(?m)^Rules here: .* 60 s a turn\.$", text), text
    screen.type("quit now")
    await screen.wait_for("EXIT=0")


async def test_the_same_account_run_again_elsewhere_is_told_its_seat_plays_on_there(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    first = Screen("first", play(config_dir, server, "--turn-seconds", "60"))
    screens.append(first)
    await first.wait_for(TURN)
    # The same command in a second terminal: the saved token takes the account over.
    second = Screen("second", play(config_dir, server, "--turn-seconds", "60"))
    screens.append(second)
    await second.wait_for("You are still seated at table")
    text = (await first.wait_for(r"EXIT=\d+")).string
    assert "plays on from that other connection" in text, text
    # Not a seat left waiting for the grace period, nor "You is back".
    assert "go back to your balance" not in text, text
    assert "is back" not in text, text
    second.type("quit now")
    await second.wait_for("EXIT=0")


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--rounds", "2", "--ante", "50"), "--ante, --rounds not used: they are"),
        (("--no-bot",), "--no-bot not used: it is"),
    ],
)
async def test_back_at_a_seat_still_held_the_options_of_a_new_table_are_said_unused(
    server: QiuQiuServer,
    config_dir: Path,
    screens: list[Screen],
    flags: tuple[str, ...],
    said: str,
) -> None:
    first = Screen("left", play(config_dir, server, "--turn-seconds", "60"))
    screens.append(first)
    await first.wait_for(TURN)
    first.close()  # the window closed mid-hand: the server holds the seat
    again = Screen("again", play(config_dir, server, *flags))
    screens.append(again)
    await again.wait_for("You are still seated at table")
    await again.wait_for(rf"{said} for a new table, and table t\w+ keeps its own")
    again.type("quit now")
    await again.wait_for("EXIT=0")


async def test_a_server_stopping_mid_hand_is_told_in_words_not_a_websocket_dump(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    screen = Screen("stopped", play(config_dir, server, "--turn-seconds", "60"), height=30)
    screens.append(screen)
    await screen.wait_for(TURN)
    await server.stop()
    # It ended with status 0, as a player's own quit does: a script could not tell
    # that the evening ended by no choice of the player's.
    await screen.wait_for("EXIT=1")
    said = " ".join(screen.text().split())
    assert "The hand was called off (the server is shutting down)" in said
    assert (
        "The server stopped: it stood your seat up, and your 500 chips went back to your "
        "balance (now 1,000)." in said
    ), said
    assert "the server is shutting down; then sent" not in said, said
    assert "Traceback" not in said


async def test_while_reconnecting_the_table_offers_no_commands_and_says_why(
    redis_url: str, config_dir: Path, screens: list[Screen]
) -> None:
    # The server is killed mid-turn: until one is back, nothing typed can be played.
    servers = Servers(redis_url)
    try:
        port = free_port()
        host = await servers.start(port)
        url = f"ws://127.0.0.1:{port}"
        screen = Screen("offline", play(config_dir, url, "--turn-seconds", "60"))
        screens.append(screen)
        await screen.wait_for(TURN)
        host.kill()
        await host.wait()
        await screen.wait_for("Connection lost")
        table = screen.text().split("╰")[0]
        assert "Reconnecting… the table is as it was when the connection dropped" in table
        assert "Your turn:" not in table
        assert "to act" not in table  # nor its clock: the server's may have moved on
        assert "s left" not in table
        await servers.start(port)
        await screen.wait_for("Reconnected.")
        await screen.wait_for(TURN)
        assert "Reconnecting…" not in screen.text().split("╰")[0]
        screen.type("quit now")
        await screen.wait_for("EXIT=0")
    finally:
        await servers.kill_remaining()


async def test_quitting_while_reconnecting_says_the_server_has_not_heard_it(
    redis_url: str, config_dir: Path, screens: list[Screen]
) -> None:
    servers = Servers(redis_url)
    try:
        port = free_port()
        host = await servers.start(port)
        screen = Screen("gone", play(config_dir, f"ws://127.0.0.1:{port}", "--turn-seconds", "60"))
        screens.append(screen)
        await screen.wait_for(TURN)
        host.kill()
        await host.wait()
        await screen.wait_for("Connection lost")
        screen.type("quit now")
        text = (await screen.wait_for("EXIT=0")).string
        assert "the server has not heard you leave" in text, text
        # Not that the seat plays the hand out and stands up: no request reached a server.
        assert "plays out this hand" not in text, text
    finally:
        await servers.kill_remaining()


async def test_who_waits_alone_is_told_why_and_who_joins_is_told_the_rules(
    server: QiuQiuServer, tmp_path: Path, screens: list[Screen]
) -> None:
    rules = ("--no-bot", "--split", "--rounds", "2", "--max-bet", "50", "--tie-rule", "split")
    opener = Screen("opener", play(tmp_path / "ann", server, *rules, "--turn-seconds", "45"))
    screens.append(opener)
    table_id = (await opener.wait_for(r"Table (t\w+): 2 seats")).group(1)
    # Alone at the table, the picture says why nothing happens.
    await opener.wait_for(r"│ Waiting for 1 more player to sit down\. +│")
    joiner = Screen("joiner", play(tmp_path / "bo", server, "--name", "Bo", "--table", table_id))
    screens.append(joiner)
    # Seats counted from 1, as the page counts them.
    await opener.wait_for(r"Bo sat down at seat 2 with 500 chips\.")
    await joiner.wait_for(r"│ seat 2  You ")
    for screen in (opener, joiner):
        await screen.wait_for(r"Hand #1 ")
        assert "Waiting for" not in screen.text()
        said = " ".join(screen.text().split())
        assert (
            "Rules here: ante 10; bets from 10 to 50; 2 betting rounds, before and after "
            "the fourth tile; you cut your own hand at the showdown (split); equal hands "
            "split the pot; 45 s a turn."
        ) in said, said
    # Both at once: each one's seat plays out the hand it leaves, the other's turns too.
    for screen in (opener, joiner):
        screen.type("quit now")
    for screen in (opener, joiner):
        await screen.wait_for("EXIT=0")


async def test_a_rebuy_refused_at_a_new_table_leaves_the_client_playing(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    screen = Screen("rebuy", play(config_dir, server, "--buy-in", "100"), height=60)
    screens.append(screen)
    table_id = (await screen.wait_for(r"Table (t\w+): 2 seats")).group(1)
    await go_bust(screen)
    # The table closes when its grace period runs out with nobody buying in again.
    async with asyncio.timeout(PATIENCE):
        while table_id in server.lobby.tables:
            await asyncio.sleep(0.1)
    # More than the balance left (900): the new table like the last refuses the buy-in.
    screen.type("rebuy 950")
    await screen.wait_for(rf"Table {table_id} has closed: opening one like it\.")
    # It said "Refused (insufficient_balance): your balance is 900 chips, not enough
    # for 950": the server's code, and nothing on what to type instead.
    await screen.wait_for(
        r"You cannot buy in with 950: your balance is 900 chips\. Type rebuy N for less\."
    )
    assert "insufficient_balance" not in screen.text()
    screen.type("rebuy 100")
    await screen.wait_for(r"You sat down again at table t\w+ with 100 chips\.")
    screen.type("quit now")
    await screen.wait_for("EXIT=0")
    assert "qiuqiu: " not in screen.text()


async def test_out_of_chips_with_less_than_a_buy_in_left_is_not_offered_a_rebuy(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    # The whole balance on the table: busting leaves nothing to buy in again with.
    screen = Screen("broke", play(config_dir, server, "--buy-in", "1000"), height=60)
    screens.append(screen)
    await go_bust(screen)
    said = " ".join(screen.text().split())
    assert (
        "You're out of chips. Your balance is 0, less than this table's least buy-in "
        "(100): there is no rebuying here, so quit to leave."
    ) in said, said
    assert "type rebuy" not in said
    # Typed all the same, it is told why, not refused for a sum it never named.
    screen.type("rebuy")
    await screen.wait_for(r"there is no rebuying here\.\n")
    assert "not enough for" not in screen.text()
    screen.type("quit now")
    await screen.wait_for("EXIT=0")


async def test_quit_in_a_hand_is_said_in_the_table_while_the_player_plays_it_out(
    server: QiuQiuServer, config_dir: Path, screens: list[Screen]
) -> None:
    # Events scroll away: the table keeps saying the seat stands up after this hand.
    flags = ("--turn-seconds", "60", "--max-bet", "20", "--max-raises", "1")
    screen = Screen("after", play(config_dir, server, *flags))
    screens.append(screen)
    asked = turn_of((await screen.wait_for(TURN)).string)
    screen.type("quit")
    await screen.wait_for(r"│ Leaving after this hand \(quit now: at once\)\.")
    # Each turn of the hand answered by the player, until the seat stands up as it ends.
    screen.type("check" if "check" in asked[1] else "call")
    async with asyncio.timeout(PATIENCE):
        while "EXIT=0" not in (text := screen.text()):
            now = turn_of(text)
            if now[1] and now != asked:
                asked = now
                screen.type("check" if "check" in now[1] else "call")
            await asyncio.sleep(0.05)
    assert re.search(rf"You left the table\. Your balance is {CHIPS}\.", screen.text())
    assert "ran out of time" not in screen.text()


@pytest.mark.parametrize(
    ("now_ms", "shown", "wait"),
    [
        (17_300, 3, 0.201),  # 2.7 s left show as 3, and as 2 once under 2.5
        (17_500, 3, 0.001),
        (17_501, 2, 1.0),
        (19_600, 0, 1.0),  # no second left to count down: once a second all the same
    ],
)
def test_the_view_is_drawn_again_as_the_turns_clock_shows_a_second_less(
    monkeypatch: pytest.MonkeyPatch, now_ms: int, shown: int, wait: float
) -> None:
    # Drawn four times a second whatever changed, it cost a player waiting 3% of a core.
    state = table(actor=0)  # the turn runs out at 20,000 ms
    assert state.hand is not None
    assert state.hand.deadline_ms == 20_000
    monkeypatch.setattr(live, "now_ms", lambda: now_ms)
    view = live.LiveView(Console(file=io.StringIO()), True, lambda: state)
    assert render.seconds_left(20_000, now_ms) == shown
    assert view.until_the_clock_moves() == pytest.approx(wait)
    assert render.seconds_left(20_000, now_ms + round(wait * 1000)) == max(0, shown - 1)


def test_without_a_turn_the_view_is_drawn_again_once_a_second() -> None:
    state = table(hand=False)
    assert (
        live.LiveView(Console(file=io.StringIO()), True, lambda: state).until_the_clock_moves()
        == 1.0
    )
