"""A bot's command line (``main``) and the account it keeps: a tokens file that brings back
its account, its chips and its seat, or says the server forgot it; a new account refused,
told how a bot keeps one; and what is no bot, a bot's class, a folder for tokens or
Windows, refused in one line before it sits down."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path

import pytest

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli.bot import Action, Bot, Check, Turn, main, run
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.tokens import TokenFile
from qiuqiu.protocol import server as wire
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.conftest import CONFIG
from tests.cli.test_bot import PATIENCE, SMALL


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


async def test_a_bots_class_given_for_the_bot_is_refused_before_it_sits_down(
    server: QiuQiuServer,
) -> None:
    with pytest.raises(TypeError, match=r"AlwaysCall is a bot's class: give a bot, AlwaysCall\(\)"):
        await run(AlwaysCall, server.url, name="Ann", hands=1)  # type: ignore[arg-type]
    assert not server.lobby.tables


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
