"""``qiuqiu arena`` on the command line: what it prints, the bots it refuses and why
(a missing file, no bot, a bot that runs main as it loads, one that raises), Ctrl-C and
SIGTERM, the turn clock, and the files it writes."""

from __future__ import annotations

import csv
import json
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from qiuqiu.cli.__main__ import main
from qiuqiu.cli.arena.seats import entrant, load_bot
from tests.cli.conftest import QIUQIU, SLOW_BOT

ROOT = Path(__file__).resolve().parents[3]
CALLER = str(ROOT / "clients/examples/always_call.py")
RANKER = str(ROOT / "clients/examples/tile_ranker.py")
EXPLOITERS = ROOT / "bench/exploiters.py"


def test_the_command_prints_each_match_and_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", CALLER, RANKER, "dealer", "--hands", "40", "--house-seed", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("hands/s") == 3
    assert "always_call vs tile_ranker:" in out
    assert "chips a hand" in out.splitlines()[-4]


def test_a_match_that_cancels_to_the_chip_reads_plus_zero_from_both_sides(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A caller against a caller: every hand a showdown of the same pot, both halves alike.
    assert main(["arena", CALLER, CALLER, "dealer", "--hands", "40", "--house-seed", "1"]) == 0
    table = capsys.readouterr().out.split("\n\n")[-1]
    assert "-0.00" not in table
    assert table.count("+0.00") == 2


def test_a_strategies_folder_with_a_bad_file_or_without_the_dealer_is_refused_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mine.qqs").write_text("not gzip")
    folder = ["--strategies", str(tmp_path), "--hands", "4"]
    assert main(["arena", CALLER, "dealer", *folder]) == 2
    assert f"--strategies: {tmp_path / 'mine.qqs'}: not a strategy file" in capsys.readouterr().err
    assert main(["arena", CALLER, RANKER, *folder]) == 2
    assert "name 'dealer' among the contestants" in capsys.readouterr().err


def test_the_command_refuses_a_missing_bot(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "nowhere.py", "dealer"]) == 2
    assert "no bot file" in capsys.readouterr().err


def test_a_dealer_misnamed_is_told_what_a_contestant_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["arena", "dealer:solved", CALLER]) == 2
    err = capsys.readouterr().err
    assert "no dealer 'dealer:solved' (a contestant is a bot file, 'dealer' or" in err, err


def test_a_file_without_a_bot_says_so_rather_than_to_name_one_of_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty.py").write_text("x = 1\n")
    assert main(["arena", str(tmp_path / "empty.py"), "dealer"]) == 2
    err = capsys.readouterr().err
    assert "empty.py defines no bot: a class of its own that subclasses Bot" in err, err


def test_a_bot_file_that_runs_main_as_it_is_loaded_is_told_to_guard_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "unguarded.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bot, Check, Fold, Turn, main


            class Unguarded(Bot):
                def decide(self, turn: Turn) -> Action:
                    return Check() if turn.legal.check else Fold()


            raise SystemExit(main(Unguarded()))
            """
        )
    )
    assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 2
    said = capsys.readouterr().err.splitlines()[-1]
    assert said == (
        f"qiuqiu arena: {bot} runs main() as it is loaded: call it under "
        '`if __name__ == "__main__":`, as clients/examples/ do, so that the arena can load '
        "the bot without playing it on a server"
    )


def test_a_file_that_is_not_python_is_refused_saying_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# my bot\n")
    assert main(["arena", str(notes), "dealer"]) == 2
    assert "a bot file is Python source" in capsys.readouterr().err


def test_a_bot_that_raises_stops_the_command_with_its_own_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "broken.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bot, Turn


            class Broken(Bot):
                def decide(self, turn: Turn) -> Action:
                    raise RuntimeError("no idea what to do")
            """
        )
    )
    assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("qiuqiu arena: broken raised RuntimeError in hand 1: no idea what to do")
    trace = err.split("Traceback", 1)[1]
    assert f'File "{bot}", line 7, in decide' in trace
    assert "seats.py" not in trace  # the arena's own frames are left out


def test_ctrl_c_stops_the_command_with_one_line_after_the_matches_it_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ctrl-C raises KeyboardInterrupt wherever the arena is; here, in a bot, on cue.
    bot = tmp_path / "impatient.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bot, Call, Check, Turn


            class Impatient(Bot):
                turns = 0

                def decide(self, turn: Turn) -> Action:
                    self.turns += 1
                    if self.turns == 5:
                        raise KeyboardInterrupt
                    return Check() if turn.legal.check else Call()
            """
        )
    )
    assert main(["arena", CALLER, RANKER, str(bot), "--hands", "40"]) == 130
    out, err = capsys.readouterr()
    assert out.startswith("always_call vs tile_ranker: ")
    assert len(out.splitlines()) == 1
    assert err == "qiuqiu arena: interrupted; the match in play is not reported\n"


def test_sigterm_stops_the_command_as_ctrl_c_does(tmp_path: Path) -> None:
    bot = tmp_path / "stopped.py"
    bot.write_text(
        textwrap.dedent(
            """
            import os
            import signal

            from qiuqiu.cli.bot import Action, Bot, Call, Check, Turn


            class Stopped(Bot):
                turns = 0

                def decide(self, turn: Turn) -> Action:
                    self.turns += 1
                    if self.turns == 5:
                        os.kill(os.getpid(), signal.SIGTERM)  # as `kill` or `timeout` would
                    return Check() if turn.legal.check else Call()
            """
        )
    )
    argv = [str(QIUQIU), "arena", CALLER, RANKER, str(bot), "--hands", "40"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 143, done.stderr
    assert done.stdout.startswith("always_call vs tile_ranker: ")
    assert done.stderr == "qiuqiu arena: terminated; the match in play is not reported\n"


@pytest.mark.parametrize(
    ("source", "said", "shown"),
    [
        ("import no_such_module\n", "ModuleNotFoundError as it was loaded", "line 1, in <module>"),
        ("class Unfinished(\n", "SyntaxError as it was loaded", "class Unfinished("),
        (
            "from qiuqiu.cli.bot import Bot\n\n\nclass Fussy(Bot):\n"
            "    def __init__(self, level: int) -> None:\n        self.level = level\n",
            "TypeError as it was loaded: Fussy.__init__() missing 1 required positional",
            "TypeError",
        ),
    ],
    ids=["import", "syntax", "constructor"],
)
def test_a_bot_that_cannot_be_loaded_is_named_with_its_error_and_can_be_loaded_once_mended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, said: str, shown: str
) -> None:
    bot = tmp_path / "unready.py"
    bot.write_text(source)
    assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"qiuqiu arena: unready raised {said}")
    assert shown in err
    assert "importlib" not in err
    assert "seats.py" not in err
    bot.write_text(Path(CALLER).read_text())
    assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 0


@pytest.mark.parametrize("buy_in", ["0", "99", "10001"])
def test_the_command_refuses_a_buy_in_a_server_would_refuse(
    buy_in: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["arena", CALLER, "dealer", "--buy-in", buy_in]) == 2
    assert "--buy-in must be 100 to 10,000" in capsys.readouterr().err


@pytest.mark.parametrize("seats", ["2", "3"])
def test_a_table_without_an_ante_is_measured_in_chips_alone(
    seats: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["arena", CALLER, RANKER, "dealer"][: int(seats) + 1]
    argv += ["--seats", seats, "--hands", "60", "--ante", "0", "--house-seed", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "chips a hand" in out
    assert "milli-antes" not in out
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out.splitlines()[0])
    rows = report.get("contestants", [report])
    assert all(row["milli_antes_a_hand"] is None for row in rows)


def test_the_command_has_no_flag_for_a_seat_the_arena_has_not(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Contestants fill every seat: taking --no-bot and doing nothing with it would tell
    # a bot writer the match was what it was not.
    with pytest.raises(SystemExit) as refused:
        main(["arena", CALLER, "dealer", "--no-bot"])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --no-bot" in err
    assert err.startswith("usage: qiuqiu arena "), "the arena's flags, not the top command's"


def test_an_answer_slower_than_the_turn_clock_is_played_and_counted_as_late(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "slow.py"
    bot.write_text(SLOW_BOT)
    argv = ["arena", str(bot), CALLER, "--hands", "4", "--turn-seconds", "0.05"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    asked = (tmp_path / "slow.answers").read_text().split()
    assert set(asked) == {"0.05"}, "the bot's turns carry the clock it is timed by"
    assert f"  slow took longer than the 0.05 s turn clock {len(asked)} times" in out
    assert "a server checks or folds for it then, where the arena waited for its answer" in out
    # Its answers were played: it checked or called, and no turn was timed out for it.
    assert "illegally" not in out
    (tmp_path / "slow.answers").unlink()
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    answers = len((tmp_path / "slow.answers").read_text().split())
    assert report["late"]["slow"] == answers
    assert report["slowest_answer_seconds"]["slow"] >= 0.1
    assert report["illegal"] == {"slow": 0, "always_call": 0}


def test_at_the_default_turn_clock_a_quick_bot_is_never_late(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["arena", RANKER, "dealer", "--hands", "20", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["late"] == {"tile_ranker": 0, "dealer": 0}
    assert 0 < report["slowest_answer_seconds"]["tile_ranker"] < 30


def test_two_bot_files_of_one_name_are_two_bots(tmp_path: Path) -> None:
    for folder, name in (("mine", "Caller"), ("yours", "Folder")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "bot.py").write_text(
            f"from qiuqiu.cli.bot import Action, Bot, Call, Fold, Turn\n\n\nclass {name}(Bot):\n"
            f"    def decide(self, turn: Turn) -> Action:\n        return {name[:-2]}()\n"
        )
    mine, yours = (str(tmp_path / folder / "bot.py") for folder in ("mine", "yours"))
    assert type(load_bot(mine)).__name__ == "Caller"
    assert type(load_bot(yours)).__name__ == "Folder"


def test_a_bot_imports_a_module_beside_it_as_when_it_runs_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "arena_probe_thresholds.py").write_text("CALL_UP_TO = 20\n")
    bot = tmp_path / "careful.py"
    bot.write_text(
        textwrap.dedent(
            """
            from arena_probe_thresholds import CALL_UP_TO
            from qiuqiu.cli.bot import Action, Bot, Call, Check, Fold, Turn


            class Careful(Bot):
                def decide(self, turn: Turn) -> Action:
                    if turn.legal.check:
                        return Check()
                    return Call() if turn.to_call <= CALL_UP_TO else Fold()
            """
        )
    )
    try:
        assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 0
    finally:
        sys.modules.pop("arena_probe_thresholds", None)


def test_a_colon_in_a_bots_folder_is_the_paths_not_a_class_names(tmp_path: Path) -> None:
    folder = tmp_path / "v1:2"
    folder.mkdir()
    bot = folder / "caller.py"
    bot.write_text(Path(CALLER).read_text())
    assert entrant(str(bot)).name == "caller"
    assert entrant(f"{bot}:AlwaysCall").name == "AlwaysCall"


@pytest.mark.parametrize("hands", ["5", "4001"])
def test_a_count_of_hands_no_whole_deals_make_is_refused_naming_those_that_are(
    hands: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each deal is played twice: asked for an odd count, the arena would otherwise play
    # one hand fewer than the bot writer asked for.
    assert main(["arena", CALLER, "dealer", "--hands", hands]) == 2
    n = int(hands)
    err = capsys.readouterr().err
    assert f"--hands {hands} is not a whole number of duplicate deals" in err
    assert f"ask for {n - 1:,} or {n + 1:,}" in err


@pytest.mark.parametrize(
    ("argv", "deals", "t"),
    [
        ([CALLER, RANKER, "--hands", "40"], 20, 2.093),  # Student's t, 19 degrees of freedom
        (["dealer", CALLER, RANKER, "--seats", "3", "--hands", "30"], 10, 2.262),  # and 9
    ],
)
def test_each_deals_scores_written_out_make_the_figures_printed(
    argv: list[str], deals: int, t: float, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "deals.csv"
    assert main(["arena", *argv, "--house-seed", "1", "--json", "--per-deal", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    printed = {
        row["name"]: (row["chips_a_hand"], row["interval95"])
        for row in report.get("contestants", [])
    } or {report["a"]: (report["chips_a_hand"], report["interval95"])}
    with out.open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert {row["deal"] for row in rows} == {str(d) for d in range(1, deals + 1)}
    for name, (mean, interval) in printed.items():
        chips = [float(row["chips"]) for row in rows if row["name"] == name]
        assert mean == pytest.approx(statistics.mean(chips), abs=1e-4)
        assert interval == pytest.approx(t * statistics.stdev(chips) / len(chips) ** 0.5, abs=1e-3)
    totals: dict[str, float] = {}
    for row in rows:
        totals[row["deal"]] = totals.get(row["deal"], 0.0) + float(row["chips"])
    assert all(total == pytest.approx(0.0) for total in totals.values()), "each deal's chips add up"


def test_a_per_deal_file_that_cannot_be_written_is_refused_before_any_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nowhere = tmp_path / "no folder" / "deals.csv"
    assert main(["arena", CALLER, "dealer", "--hands", "4", "--per-deal", str(nowhere)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert f"cannot write --per-deal {nowhere}: No such file or directory" in err
