"""clients/README.md's guide, followed to the letter against a real server."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli.__main__ import main
from qiuqiu.cli.bot import play
from qiuqiu.cli.connection import Connection
from qiuqiu.protocol import TableOptions
from qiuqiu.server.gateway import QiuQiuServer
from tests.server.conftest import chip_total

CLIENTS = Path(__file__).parents[2] / "clients"
GUIDE = (CLIENTS / "README.md").read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", GUIDE, flags=re.DOTALL)


async def run(*args: str | Path) -> tuple[str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    return out.decode(), err.decode()


async def test_the_guides_bot_plays_the_default_rules_and_reports_each_hand(
    server: QiuQiuServer, tmp_path: Path
) -> None:
    bot = tmp_path / "my_bot.py"
    bot.write_text(PYTHON_BLOCKS[0])
    # Bets capped (at most 40 chips a hand): the deck depends on the bot's own random
    # seed, so only a cap makes sure no run of luck takes its 500 chips in 12 hands.
    flags = ("--hands", "12", "--name", "Hunter", "--max-bet", "20", "--max-raises", "1")
    out, err = await run(bot, "--server", server.url, *flags)
    summary = json.loads(out)  # standard output is the summary alone
    assert summary["hands"] == 12
    assert summary["verified"] == summary["shuffle_verified"] == 12
    assert summary["balance"] == 1_000 + summary["net"]
    progress = re.findall(r"hand (\d+) of 12: ([+-]\d+) \(net ([+-]\d+), stack \d+\)", err)
    assert [int(n) for n, _, _ in progress] == list(range(1, 13))
    assert int(progress[-1][2]) == summary["net"]
    # At the default rules the betting is over before the fourth tile: the bot must
    # judge three tiles, and it does more than check and fold.
    (hunter,) = [
        account
        for account_id in await server.store.balances()
        if (account := await server.store.account(account_id)) and account.name == "Hunter"
    ]
    moves = []
    for hand in await server.store.account_hands(hunter.account_id):
        (seat,) = [seat for seat, account_id in hand.accounts if account_id == hunter.account_id]
        events = [json.loads(event) for event in hand.events]
        moves += [e["type"] for e in events if e.get("seat") == seat]
    assert {"bet_placed", "called"} & set(moves), moves


async def test_the_example_bots_meet_at_a_table_one_opens_and_the_other_joins(
    server: QiuQiuServer,
) -> None:
    examples = CLIENTS / "examples"
    opener = asyncio.create_task(
        # Bets capped: no run of luck (the bots' seeds are random) ends a seat in 5 hands.
        run(
            examples / "tile_ranker.py",
            "--server",
            server.url,
            "--no-bot",
            "--hands",
            "5",
            "--max-bet",
            "20",
            "--max-raises",
            "2",
        )
    )
    async with asyncio.timeout(30):
        while not server.lobby.tables:
            await asyncio.sleep(0.01)
    (table_id,) = server.lobby.tables
    joined, _ = await run(
        examples / "always_call.py", "--server", server.url, "--table", table_id, "--hands", "5"
    )
    opened, log = await opener
    assert f"opened table {table_id}: others join it with --table {table_id}" in log
    first, second = json.loads(opened), json.loads(joined)
    assert first["hands"] == second["hands"] == 5
    assert first["net"] + second["net"] == 0
    assert await chip_total(server) == 0


def test_the_guides_bot_that_learns_at_the_showdowns_plays_in_the_arena(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "skeptic.py"
    bot.write_text(PYTHON_BLOCKS[1])
    assert main(["arena", str(bot), "dealer", "--hands", "400", "--house-seed", "1"]) == 0
    assert capsys.readouterr().out.startswith("skeptic vs dealer: ")


async def test_the_guides_watcher_says_an_empty_lobby_has_no_table_to_watch(
    server: QiuQiuServer, tmp_path: Path
) -> None:
    # It was an IndexError: the example took the lobby's first table for granted.
    example = tmp_path / "watcher.py"
    example.write_text(PYTHON_BLOCKS[2].replace("ws://127.0.0.1:8765", server.url))
    out, err = await run(example)
    assert out == "no table to watch: the lobby is empty\n"
    assert not err


async def test_the_guides_watcher_ends_when_the_table_it_watches_closes(
    server: QiuQiuServer, tmp_path: Path
) -> None:
    """Nothing more comes of a closed table: a watcher that read on would wait for ever."""
    example = tmp_path / "watcher.py"
    example.write_text(PYTHON_BLOCKS[2].replace("ws://127.0.0.1:8765", server.url))
    async with await Connection.open(server.url, name="Ann") as conn:
        table, _ = await conn.open_table(TableOptions(ante=1, min_bet=1, max_bet=2), 100)
        watcher = await asyncio.create_subprocess_exec(
            sys.executable, "-u", example, stdout=asyncio.subprocess.PIPE
        )
        try:
            assert watcher.stdout is not None
            async with asyncio.timeout(60):
                while await watcher.stdout.readline() != b"table_watched\n":
                    pass
            await asyncio.wait_for(play(AlwaysCall(), conn, table.table_id, 2), 60)
            out, _ = await asyncio.wait_for(watcher.communicate(), 60)
        finally:
            if watcher.returncode is None:
                watcher.kill()
                await watcher.wait()
    assert watcher.returncode == 0
    assert out.decode().splitlines()[-1] == "table_closed"


async def test_the_guides_fair_deal_example_plays_checks_and_rebuilds_the_decks(
    server: QiuQiuServer, tmp_path: Path
) -> None:
    example = tmp_path / "careful.py"
    example.write_text(PYTHON_BLOCKS[3].replace("ws://127.0.0.1:8765", server.url))
    out, _ = await run(example)
    checked, rebuilt = re.fullmatch(
        r"(\d+) hands checked, (\d+) decks rebuilt from the seed\n", out
    ).groups()  # type: ignore[union-attr]
    assert int(checked) >= 10
    assert int(rebuilt) == int(checked)
    assert await chip_total(server) == 0
