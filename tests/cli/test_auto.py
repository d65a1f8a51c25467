"""``qiuqiu play --auto N``: the real command against a server on a free port."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from qiuqiu.cli.bot import run
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.play import Steady
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.accounts import token_hash
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from tests.cli.conftest import CONFIG, QIUQIU, piped
from tests.server.conftest import chip_total

RUN_LIMIT = 120.0
"""Seconds before a stuck run fails the test (never a timing assertion)."""
SMALL = ("--ante", "1", "--min-bet", "1", "--max-bet", "2", "--max-raises", "2")
"""At most 5 chips a hand: the deck depends on the client's own random seed, so only
small stakes make sure no run of luck ends the seat before its hands are played."""


async def qiuqiu(*args: str, status: int = 0) -> str:
    """Run ``qiuqiu`` with ``args``, its output piped; check it ends with ``status``
    and without a traceback, and return what it printed on standard output."""
    return (await qiuqiu_both(*args, status=status))[0]


async def qiuqiu_both(*args: str, status: int = 0) -> tuple[str, str]:
    """As :func:`qiuqiu`, both standard output and standard error."""
    process = await asyncio.create_subprocess_exec(
        QIUQIU, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), RUN_LIMIT)
    assert process.returncode == status, err.decode()
    assert b"Traceback" not in out + err, err.decode()
    return out.decode(), err.decode()


async def test_the_summary_of_auto_play_is_the_servers_own_record_of_those_hands(
    server: QiuQiuServer, config_dir: Path
) -> None:
    out = await qiuqiu(
        "play", "--server", server.url, "--name", "Auto", "--auto", "20", "--json", *SMALL
    )
    summary = json.loads(out)
    token = json.loads((config_dir / "tokens.json").read_text())[server.url]
    account = await server.store.account_for_token(token_hash(token))
    assert account is not None
    hands = await server.store.account_hands(account.account_id)
    nets = [hand.net(account.account_id) for hand in hands]
    assert summary == {
        "hands": 20,
        "voided": 0,
        "won": sum(net > 0 for net in nets),
        "lost": sum(net < 0 for net in nets),
        "net": sum(nets),
        "balance": account.balance,
        "verified": 20,
        "shuffle_verified": 20,
    }
    assert len(hands) == 20
    assert account.balance == 1_000 + sum(nets)
    assert not server.lobby.seated_at(account.account_id)
    assert await chip_total(server) == 0


async def test_the_next_run_continues_the_same_account_from_the_saved_token(
    server: QiuQiuServer, config_dir: Path
) -> None:
    first = json.loads(
        await qiuqiu("play", "--server", server.url, "--auto", "3", "--json", *SMALL)
    )
    out, err = await qiuqiu_both("play", "--server", server.url, "--auto", "2", "--json", *SMALL)
    second = json.loads(out)
    assert "Welcome back" in err
    assert second["balance"] == first["balance"] + second["net"]
    token = json.loads((config_dir / "tokens.json").read_text())[server.url]
    account = await server.store.account_for_token(token_hash(token))
    assert account is not None
    assert len(await server.store.account_hands(account.account_id)) == 5


async def test_a_name_asked_for_beside_a_saved_account_of_another_name_is_said_unused(
    server: QiuQiuServer, config_dir: Path
) -> None:
    await qiuqiu("play", "--server", server.url, "--name", "Ann", "--auto", "1", *SMALL)
    out = await qiuqiu("play", "--server", server.url, "--name", "Bo", "--auto", "1", *SMALL)
    assert "Welcome back, Ann." in out
    # One line, however long: piped output is read line by line.
    assert (
        f"--name Bo is not used: this is the account saved for {server.url}, named Ann "
        "(--new-account opens one named Bo)."
    ) in out.splitlines()
    # Without --name, the login name says nothing against the saved one.
    out = await qiuqiu("play", "--server", server.url, "--auto", "1", *SMALL)
    assert "is not used" not in out


async def test_a_saved_account_the_server_does_not_know_is_said_replaced_by_a_new_one(
    server: QiuQiuServer, config_dir: Path
) -> None:
    # As after an in-memory server restarted: the saved token resumes nothing.
    config_dir.mkdir()
    (config_dir / "tokens.json").write_text(json.dumps({server.url: "forgotten"}))
    out = await qiuqiu("play", "--server", server.url, "--name", "Ann", "--auto", "1", *SMALL)
    assert (
        f"The server does not know the account saved for {server.url} (one that keeps "
        "its accounts in memory forgets them when it restarts): this is a new account, "
        f"and its token replaces the saved one in {config_dir / 'tokens.json'}."
    ) in out.splitlines()
    assert "Welcome, Ann." in out
    # Resumed, the account says nothing of the kind.
    out = await qiuqiu("play", "--server", server.url, "--auto", "1", *SMALL)
    assert "does not know" not in out
    # The watcher's own account is named as such, not by its key in the file.
    tokens = json.loads((config_dir / "tokens.json").read_text())
    tokens[f"{server.url} watching"] = "forgotten"
    (config_dir / "tokens.json").write_text(json.dumps(tokens))
    out = await qiuqiu("play", "--server", server.url, "--watch", "tnosuch", status=1)
    assert f"The server does not know the account saved for {server.url} to watch with (" in out


async def test_a_new_account_says_it_replaces_the_saved_one(
    server: QiuQiuServer, config_dir: Path
) -> None:
    await qiuqiu("play", "--server", server.url, "--auto", "1", *SMALL)
    saved = json.loads((config_dir / "tokens.json").read_text())[server.url]
    out = await qiuqiu("play", "--server", server.url, "--new-account", "--auto", "1", *SMALL)
    assert (
        f"--new-account: the account saved for {server.url} will no longer be resumed from "
        f"here; its token in {config_dir / 'tokens.json'} is replaced by the new one's."
    ) in out.splitlines()
    assert json.loads((config_dir / "tokens.json").read_text())[server.url] != saved


async def test_a_damaged_token_file_is_set_aside_not_lost_and_said_in_one_line(
    server: QiuQiuServer, config_dir: Path
) -> None:
    damaged = '{"ws://other:1": "tok", bad'
    config_dir.mkdir()
    tokens = config_dir / "tokens.json"
    tokens.write_text(damaged)
    out = await qiuqiu("play", "--server", server.url, "--auto", "1", *SMALL)
    [aside] = config_dir.glob("tokens.json.damaged-*")
    assert aside.read_text() == damaged
    assert (
        f"{tokens} could not be read: it is kept as {aside}, and a new tokens.json holds "
        "this account's token."
    ) in out.splitlines()
    assert list(json.loads(tokens.read_text())) == [server.url]


async def test_a_name_with_accents_on_an_ascii_only_output_is_written_without_them(
    server: QiuQiuServer, config_dir: Path
) -> None:
    # It was a UnicodeEncodeError at the welcome, the first line: --ascii, the default
    # where the output cannot encode more, covered only the game's own lines.
    process = await asyncio.create_subprocess_exec(
        QIUQIU,
        *("play", "--server", server.url, "--name", "Àñn Bé", "--auto", "1", *SMALL),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
    )
    out, err = await asyncio.wait_for(process.communicate(), RUN_LIMIT)
    assert process.returncode == 0, err.decode()
    assert "Welcome, Ann Be. Your balance is 1,000 chips." in out.decode("ascii")


async def test_piped_output_is_plain_text_with_a_readable_summary(
    server: QiuQiuServer, config_dir: Path
) -> None:
    out = await qiuqiu("play", "--server", server.url, "--auto", "2")
    assert "\x1b[" not in out
    assert "Played 2 hands" in out
    assert "Balance:" in out


async def test_the_summary_of_one_hand_speaks_of_one_hand(
    server: QiuQiuServer, config_dir: Path
) -> None:
    out = await qiuqiu("play", "--server", server.url, "--auto", "1")
    assert "Played 1 hand: " in out
    assert "Deals verified: 1 of 1." in out
    assert "The table's shuffle verified: 1 hand rebuilt from the revealed seed." in out


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
async def test_a_hand_the_server_voided_is_said_apart_from_the_hands_played(
    config_dir: Path, as_json: bool
) -> None:
    # It was counted among the hands played, as if it had been played to its end.
    # The dealer bot thinks 5 s a turn, so the server stops mid-hand: it voids the
    # hand, every chip back, and stands every seat up.
    server = QiuQiuServer(CONFIG.model_copy(update={"bot_delay": 5.0}), store=MemoryStore())
    await server.start()
    try:
        argv = ("play", "--server", server.url, "--auto", "3", *SMALL)
        async with piped(QIUQIU, *argv, *("--json",) * as_json) as process:
            async with asyncio.timeout(RUN_LIMIT):
                while not any(table.playing for table in server.lobby.tables.values()):
                    await asyncio.sleep(0.05)
                await server.stop()
                out, err = await process.communicate()
    finally:
        await server.stop()
    assert process.returncode == 0, err.decode()
    if as_json:
        summary = json.loads(out)
        assert (summary["hands"], summary["voided"], summary["net"]) == (0, 1, 0)
    else:
        assert "Played 0 hands: won 0, lost 0, net +0 chips." in out.decode()
        assert "1 more hand was called off by the server, every chip back." in out.decode()


async def test_alone_at_its_table_it_says_it_waits_for_another_player(
    server: QiuQiuServer, config_dir: Path
) -> None:
    # It said nothing until someone sat down, however long that took.
    process = await asyncio.create_subprocess_exec(
        QIUQIU,
        *("play", "--server", server.url, "--no-bot", "--auto", "1", *SMALL),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    waiting = re.compile(r"Waiting at table (t\w+) for another player to sit down")
    async with asyncio.timeout(RUN_LIMIT):
        while not (found := waiting.match((await process.stdout.readline()).decode())):
            pass
        second = await run(Steady(), server.url, name="Bo", hands=1, table_id=found.group(1))
        out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    assert second.hands >= 1
    assert "Played 1 hand" in out.decode()


async def test_the_embedded_server_plays_without_any_server_running(config_dir: Path) -> None:
    # Small bets: the embedded dealer bot draws from the OS, and a run of luck must not
    # end the seat before its five hands.
    out = await qiuqiu("play", "--auto", "5", "--json", "--max-bet", "10", "--max-raises", "2")
    summary = json.loads(out)
    assert summary["hands"] == 5
    assert summary["balance"] == 1_000 + summary["net"]
    assert not config_dir.exists(), "an embedded server's token is worth nothing later"


async def test_an_unreachable_server_is_one_clear_line_and_exit_status_1(
    config_dir: Path,
) -> None:
    out, err = await qiuqiu_both("play", "--server", "ws://127.0.0.1:9", "--auto", "1", status=1)
    assert (
        "cannot connect to ws://127.0.0.1:9: nothing listens there (is the server running?)" in err
    )
    assert len(err.splitlines()) == 1, "one line, however long"
    assert not out, "standard output may be a file of results"


async def test_a_config_folder_that_cannot_be_made_is_one_line_and_exit_status_1(
    server: QiuQiuServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It was a traceback: the new account's token had nowhere to go.
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    monkeypatch.setenv("QIUQIU_CONFIG_DIR", str(a_file / "qiuqiu"))
    out, err = await qiuqiu_both("play", "--server", server.url, "--auto", "1", status=1)
    assert f"cannot keep this account's token in {a_file / 'qiuqiu' / 'tokens.json'}" in err
    assert len(err.splitlines()) == 1, err
    assert not out


async def test_a_buy_in_past_the_balance_is_refused_before_a_table_is_opened(
    server: QiuQiuServer, config_dir: Path
) -> None:
    # The table was opened, then the seat refused: it waited, empty, in everyone's lobby.
    out, err = await qiuqiu_both(
        "play", "--server", server.url, "--buy-in", "5000", "--auto", "1", "--json", status=1
    )
    assert err.splitlines()[-1] == (
        "qiuqiu: your balance is 1,000 chips, not enough for a buy-in of 5,000"
    )
    assert not out
    async with await Connection.open(server.url, name="Lister") as conn:
        listed = await conn.request(cmd.ListTables(), wire.TableList)
    assert listed.tables == ()


async def test_impossible_table_options_are_refused_before_connecting(config_dir: Path) -> None:
    out, err = await qiuqiu_both(
        "play", "--min-bet", "50", "--max-bet", "20", "--auto", "1", status=2
    )
    assert "--max-bet (20) is below --min-bet (50)" in err
    assert not out


async def test_auto_json_is_one_json_document_that_json_tool_reads(
    server: QiuQiuServer, config_dir: Path
) -> None:
    command = (
        f"{QIUQIU} play --server {server.url} --auto 20 --json {' '.join(SMALL)} "
        f"| {sys.executable} -m json.tool"
    )
    process = await asyncio.create_subprocess_shell(
        command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), RUN_LIMIT)
    assert process.returncode == 0, err.decode()
    assert json.loads(out)["hands"] >= 20
    assert "Welcome" in err.decode()


async def test_ctrl_c_stops_auto_play_with_the_summary_of_the_hands_played(
    server: QiuQiuServer, config_dir: Path
) -> None:
    argv = ("play", "--server", server.url, "--auto", "100000", "--json", *SMALL)
    async with piped(QIUQIU, *argv) as process, asyncio.timeout(RUN_LIMIT):
        tokens = config_dir / "tokens.json"
        while not tokens.exists():
            await asyncio.sleep(0.05)
        token = json.loads(tokens.read_text())[server.url]
        account = await server.store.account_for_token(token_hash(token))
        assert account is not None
        # A hand is in the store before its end reaches the client; the third needed the
        # client's action, which came after it had counted the second.
        while len(await server.store.account_hands(account.account_id)) < 3:
            await asyncio.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = await process.communicate()
    assert process.returncode == 130, err.decode()
    assert "qiuqiu: interrupted" in err.decode()
    # It stopped mid-table: the hands played are reported, the balance is not yet known.
    summary = json.loads(out)
    assert summary["hands"] >= 2
    assert summary["verified"] == summary["hands"]
    assert summary["balance"] is None
