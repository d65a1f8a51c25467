"""The solver's command: a table's own restricted response, its errors and its help."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from qiuqiu.server.house.book import Book, load
from solver.__main__ import LEAN, MODELS, ROOT, main

TILE_RANKER = str(ROOT / "clients/examples/tile_ranker.py")


def test_a_tables_own_strategy_says_what_it_responds_to_and_wins_from_each_model(
    tmp_path: Path,
) -> None:
    argv = ["--out", str(tmp_path), "--behind", "2", "--iterations", "20", "--block", "10"]
    main([*argv, "--model", "calling_station=0.2"])
    (path,) = tmp_path.glob("*.qqs")
    header = load(path).header
    assert header["restricted"] == {"calling_station": 0.2}
    assert set(header["button_wins_from_milli_antes"]) == set(MODELS)
    assert (tmp_path / f"{path.stem}.json").exists()


def test_a_tables_own_strategy_is_the_one_the_arenas_dealer_plays_given_the_folder(
    tmp_path: Path,
) -> None:
    # Stakes no shipped strategy has (a min_bet of two antes), so it is the nearest.
    stakes = ["--ante", "5", "--min-bet", "10", "--max-bet", "200"]
    main(["--out", str(tmp_path), *stakes, "--behind", "3", "--iterations", "10"])

    def rankers_chips(*more: str) -> float:
        # A process each: a folder's strategies join the process's book for good.
        arena = [sys.executable, "-m", "qiuqiu.cli", "arena", TILE_RANKER, "dealer"]
        match = [*stakes, "--buy-in", "100", "--hands", "400", "--house-seed", "3", "--json"]
        shown = subprocess.run(
            [*arena, *match, *more], capture_output=True, text=True, check=True, timeout=120
        ).stdout
        chips: float = json.loads(shown)["chips_a_hand"]
        return chips

    assert rankers_chips("--strategies", str(tmp_path)) != rankers_chips()


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--model", "shark=0.1"], "no model 'shark': choose from calling_station"),
        (["--model", "calling_station=often"], "'often' is not a chance"),
        (["--model", "calling_station=0"], "each model's chance must be above 0"),
        (
            ["--model", "calling_station=0.6", "--model", "example_bot=0.6"],
            "all of them below 1",
        ),
        (["--equilibrium", "--model", "example_bot=0.1"], "not both"),
        (["--lean", "--model", "example_bot=0.1"], "not with --equilibrium or --model"),
        (["--iterations", "0"], "argument --iterations: must be 1 or more (got 0)"),
        (["--iterations", "-5"], "argument --iterations: must be 1 or more (got -5)"),
        (["--block", "0"], "argument --block: must be 1 or more (got 0)"),
        (["--only", "49"], "--only picks among the shipped strategies"),
    ],
)
def test_a_bad_model_or_a_count_that_solves_nothing_is_one_clear_error(
    argv: list[str], error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--out", str(tmp_path), "--behind", "2", "--iterations", "2", *argv])
    assert exited.value.code == 2
    assert error in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--only", "7"], "no shipped strategy is of that depth and game"),
        (["--only", "1", "--tie-rule", "split"], "no shipped strategy is of that depth and game"),
        # Each beside a choice that matches no shipped strategy, so that a command that
        # ignored it would solve nothing rather than rewrite the shipped files.
        (
            ["--ante", "5", "--only", "1", "--tie-rule", "split"],
            "--ante: the stakes of a table of your own, solved with --out",
        ),
        (
            ["--behind", "3", "--max-bet", "20", "--only", "1", "--tie-rule", "split"],
            "--max-bet, --behind: the stakes of a table of your own",
        ),
    ],
)
def test_shipped_strategies_that_are_not_there_or_stakes_without_out_are_refused(
    argv: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--iterations", "2", *argv])
    assert exited.value.code == 2
    assert error in capsys.readouterr().err


def test_a_prefix_of_a_flag_is_refused_not_taken_for_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--out", str(tmp_path), "--iter", "2"])
    assert exited.value.code == 2
    assert "unrecognized arguments: --iter 2" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_the_help_says_the_docstrings_references_in_words_without_markup(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert "uv run --group solver python -m solver --only 49" in shown
    for markup in ("`", ":data:", ":mod:"):
        assert markup not in shown, shown


@pytest.mark.long
def test_a_two_round_tables_own_strategies_include_a_lean_one(tmp_path: Path) -> None:
    argv = ["--out", str(tmp_path), "--rounds", "2", "--behind", "2", "--iterations", "4"]
    main([*argv, "--block", "2"])
    book = Book(tmp_path)
    assert len(book.solved) == 1
    (lean,) = book.leans.values()
    assert lean.stakes == book.solved[0].stakes
    assert lean.header["restricted"] == {m.__name__: chance for chance, m in LEAN[2]}
    assert not book.solved[0].is_lean
