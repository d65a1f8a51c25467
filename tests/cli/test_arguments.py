"""The flags: options the protocol takes, and errors in the flags' own words, one line
and status 2 from every command, never a traceback."""

from __future__ import annotations

import argparse
import os
import pwd
from collections.abc import Callable

import pytest

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli.__main__ import _default_name
from qiuqiu.cli.__main__ import main as play_main
from qiuqiu.cli.arguments import add_table_options, table_options
from qiuqiu.cli.bot import Action, Bot, Call, Check, Turn
from qiuqiu.cli.bot import main as bot_main
from qiuqiu.protocol import TableOptions


def _options(*argv: str) -> TableOptions:
    parser = argparse.ArgumentParser()
    add_table_options(parser)
    return table_options(parser.parse_args(argv))


def test_the_flags_set_the_options_they_name() -> None:
    options = _options("--rounds", "2", "--max-raises", "3", "--no-bot", "--split")
    assert options.betting_rounds == 2
    assert options.max_raises == 3
    assert options.dealer_bot is False
    assert options.manual_split is True


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("--max-raises", "-1"), "--max-raises must be greater than or equal to 0 (got -1)"),
        (("--seats", "9"), "--seats must be less than or equal to 6 (got 9)"),
        (("--turn-seconds", "0"), "--turn-seconds must be greater than or equal to 0.05 (got 0.0)"),
        (("--ante", "10", "--max-bet", "5"), "--max-bet (5) is below --min-bet (10)"),
    ],
)
def test_an_option_that_cannot_work_says_which_flag_and_why(
    argv: tuple[str, ...], said: str
) -> None:
    with pytest.raises(ValueError, match=r"^bad table options: ") as refused:
        _options(*argv)
    assert str(refused.value) == f"bad table options: {said}"


def test_every_reason_is_given_at_once() -> None:
    with pytest.raises(ValueError, match=r"^bad table options: ") as refused:
        _options("--seats", "9", "--max-raises", "-1")
    assert str(refused.value) == (
        "bad table options: --seats must be less than or equal to 6 (got 9); "
        "--max-raises must be greater than or equal to 0 (got -1)"
    )


PLAY_FLAGS = [
    ("--buy-in", "0"),
    ("--buy-in", "-5"),
    ("--buy-in", "x"),
    ("--buy-in", "1" + "0" * 20),
    ("--name", ""),
    ("--name", " \t"),
    ("--name", "x" * 65),
    ("--table", ""),
    ("--table", "no spaces"),
    ("--ante", "-1"),
    ("--turn-seconds", "0"),
    ("--turn-seconds", "nan"),
    ("--buy-in", "20000"),
    ("--ante", "50", "--table", "t1234abcd"),
    ("--rounds", "2", "--table", "t1234abcd"),
    ("--no-bot", "--table", "t1234abcd"),
]
"""Flags that cannot work, each of them with a command that would otherwise run: a
new table's options beside ``--table``, which joins one as it is, among them."""


@pytest.mark.parametrize("flags", PLAY_FLAGS, ids=" ".join)
def test_a_flag_that_cannot_work_is_one_line_and_status_2_from_qiuqiu_play(
    flags: tuple[str, ...], capfd: pytest.CaptureFixture[str]
) -> None:
    assert _status(lambda: play_main(["play", "--server", "ws://127.0.0.1:9", *flags])) == 2
    said = capfd.readouterr()
    assert "Traceback" not in said.err + said.out
    assert "ValidationError" not in said.err + said.out
    assert flags[0] in said.err + said.out


@pytest.mark.parametrize("flags", [*PLAY_FLAGS, ("--hands", "0"), ("--hands", "-1")], ids=" ".join)
def test_a_flag_that_cannot_work_is_one_line_and_status_2_from_a_bots_main(
    flags: tuple[str, ...], capfd: pytest.CaptureFixture[str]
) -> None:
    assert _status(lambda: bot_main(AlwaysCall(), ["--server", "ws://127.0.0.1:9", *flags])) == 2
    said = capfd.readouterr().err
    assert "Traceback" not in said
    assert flags[0] in said


@pytest.mark.parametrize(
    ("given", "example"),
    [
        ("no spaces", "t3c41b5e0"),
        ("t1234abcd/", "t3c41b5e0"),
        ("http://127.0.0.1:8765/#/table/t1234abcd", "t1234abcd"),
    ],
)
@pytest.mark.parametrize("flag", ["--table", "--watch"])
def test_a_table_id_that_cannot_be_one_is_said_in_words(
    flag: str, given: str, example: str, capfd: pytest.CaptureFixture[str]
) -> None:
    # It said "string should match pattern '^[A-Za-z0-9_-]+$'"; the page's address of
    # a table, pasted, is answered with the id in it.
    assert _status(lambda: play_main(["play", "--server", "ws://127.0.0.1:9", flag, given])) == 2
    said = capfd.readouterr().err
    assert (
        f"argument {flag}: a table id is 1 to 32 letters, digits, _ or -, such as {example}"
        f" (got {given!r})"
    ) in said, said


@pytest.mark.parametrize("flags", [("--auto", "0"), ("--auto", "-3")], ids=" ".join)
def test_auto_needs_a_hand_or_more(
    flags: tuple[str, ...], capfd: pytest.CaptureFixture[str]
) -> None:
    assert _status(lambda: play_main(["play", *flags])) == 2
    assert "argument --auto: must be 1 or more" in capfd.readouterr().err


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--auto", "x"), "argument --auto: 'x' is not a whole number"),
        (("--buy-in", "5k"), "argument --buy-in: '5k' is not a whole number"),
    ],
)
def test_a_count_that_is_not_a_number_is_said_in_words(
    flags: tuple[str, ...], said: str, capfd: pytest.CaptureFixture[str]
) -> None:
    assert _status(lambda: play_main(["play", *flags])) == 2
    assert said in capfd.readouterr().err


@pytest.mark.parametrize(
    "run",
    [
        lambda: play_main(["play", "--server", "ws://127.0.0.1:9", "--buy", "50"]),
        lambda: play_main(["arena", "dealer", "dealer", "--buy", "50"]),
        lambda: bot_main(AlwaysCall(), ["--server", "ws://127.0.0.1:9", "--buy", "50"]),
    ],
    ids=["qiuqiu play", "qiuqiu arena", "a bot's main"],
)
def test_a_prefix_of_a_flag_is_refused_not_taken_for_the_flag(
    run: Callable[[], int], capfd: pytest.CaptureFixture[str]
) -> None:
    # A typo can be a prefix of another flag than the one meant.
    assert _status(run) == 2
    assert "unrecognized arguments: --buy 50" in capfd.readouterr().err


def test_a_table_to_join_at_the_embedded_server_is_refused(
    capfd: pytest.CaptureFixture[str],
) -> None:
    # It was 'unknown_table' from a server started for nothing, status 1.
    assert _status(lambda: play_main(["play", "--table", "t1234abcd"])) == 2
    assert "--table needs --server" in capfd.readouterr().err


BESIDE_WATCH = [
    (("--table", "t1234abcd"), "--table is for sitting down at a table; --watch only watches"),
    (("--buy-in", "500"), "--buy-in is for sitting down at a table; --watch only watches"),
    (("--auto", "3"), "--auto is for sitting down at a table; --watch only watches"),
    (("--rounds", "2"), "--rounds sets the options of a table this opens; --watch watches"),
    (("--no-bot",), "--no-bot sets the options of a table this opens; --watch watches"),
]


@pytest.mark.parametrize(
    ("flags", "said"), BESIDE_WATCH, ids=[" ".join(flags) for flags, _ in BESIDE_WATCH]
)
def test_watch_beside_a_flag_for_a_seat_or_a_new_table_is_refused(
    flags: tuple[str, ...], said: str, capfd: pytest.CaptureFixture[str]
) -> None:
    argv = ["play", "--server", "ws://127.0.0.1:9", "--watch", "t1234abcd", *flags]
    assert _status(lambda: play_main(argv)) == 2
    err = capfd.readouterr().err
    assert said in err
    assert len(err.strip().splitlines()) == 1


def test_watch_at_the_embedded_server_is_refused(capfd: pytest.CaptureFixture[str]) -> None:
    assert _status(lambda: play_main(["play", "--watch", "t1234abcd"])) == 2
    assert "--watch needs --server" in capfd.readouterr().err


def test_json_without_auto_is_refused(capfd: pytest.CaptureFixture[str]) -> None:
    # Else the game is played with all of its output on standard error and nothing,
    # not even a summary, on standard output.
    assert _status(lambda: play_main(["play", "--server", "ws://127.0.0.1:9", "--json"])) == 2
    assert "--json needs --auto" in capfd.readouterr().err


@pytest.mark.parametrize(
    ("server", "instead"),
    [
        ("http://127.0.0.1:8765/", "ws://127.0.0.1:8765/"),
        ("https://qiuqiu.example", "wss://qiuqiu.example"),
        ("127.0.0.1:8765", "ws://127.0.0.1:8765"),
        ("localhost:9000", "ws://localhost:9000"),
        ("ws://[::1", "ws://127.0.0.1:8765"),
        ("ws://hello world", "ws://127.0.0.1:8765"),
        ("qiuqiu.example :8765", "ws://127.0.0.1:8765"),
    ],
)
def test_a_server_address_that_is_not_a_websocket_one_names_the_one_to_use(
    server: str, instead: str, capfd: pytest.CaptureFixture[str]
) -> None:
    # The page's address is the one a player has at hand: it is refused before connecting.
    for run in (
        lambda: play_main(["play", "--server", server]),
        lambda: bot_main(AlwaysCall(), ["--server", server]),
    ):
        assert _status(run) == 2
        said = capfd.readouterr().err
        assert f"argument --server: must be a ws:// or wss:// address, such as {instead}" in said
        assert "Traceback" not in said


class PairHunter(Bot):
    """Bets when two of its tiles make a pair worth 8 or 9, calls small bets, folds
    the rest.

    What follows the first paragraph is for the code's readers."""

    def decide(self, turn: Turn) -> Action:
        return Check() if turn.legal.check else Call()


def test_a_bots_help_is_its_docstrings_first_paragraph_and_says_what_each_flag_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The docstring's first line alone was cut mid-sentence, and --server, --name and
    # --buy-in said only their defaults.
    assert _status(lambda: bot_main(PairHunter(), ["--help"])) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "a pair worth 8 or 9, calls small bets, folds the rest. options:" in said
    assert "for the code's readers" not in said
    assert "--server SERVER the server to play on (ws://127.0.0.1:8765)" in said
    assert "--name NAME the bot's name at the table (PairHunter)" in said
    assert "--buy-in BUY_IN chips to sit down with (500)" in said
    assert "--no-bot no dealer bot: a table for others to join with --table" in said


def _status(run: Callable[[], int]) -> int | str | None:
    """The exit status ``run`` returns, or the one argparse exits with."""
    try:
        return run()
    except SystemExit as exited:
        return exited.code


def test_the_default_name_is_the_login_name_where_the_environment_has_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.setenv(variable, "")
    login = pwd.getpwuid(os.getuid()).pw_name
    assert _default_name() == login.capitalize()[:24]
