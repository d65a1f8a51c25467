"""The table flags: options the protocol takes, and errors in the flags' own words."""

from __future__ import annotations

import argparse

import pytest

from qiuqiu.cli.arguments import add_table_options, table_options
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
        (("--ante", "10", "--max-bet", "5"), "max_bet (5) is below min_bet (10)"),
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
