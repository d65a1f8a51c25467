"""The real ``qiuqiu play`` against a server that cheats, run in the test's own process
(``tests/server/cheats.py`` patches the deal there): honest hands show the verified line
and the shuffle at the close; a swapped tile, a pot paid to the bot that lost it or a
deck not made from the seeds is shown loudly; a bust in the hand being left ends the
session."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pexpect
import pytest

from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.test_terminal import (
    FAILED,
    SHUFFLE,
    TAMPERED,
    TURN,
    VERIFIED,
    connect,
    finished,
    leave,
    matched,
    play_a_hand,
    spawn,
)
from tests.server import cheats


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
