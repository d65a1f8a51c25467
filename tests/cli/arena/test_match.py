"""The arena: duplicate matches at engine speed, with the SDK's own Turn objects.

Short matches check that chips are conserved in every half, that the second
half deals each bot exactly the tiles the other had, that the dealer never
answers illegally against the exploiting bots, that an illegal answer is
played as a time-out and counted, and that the command prints its figures.
"""

from __future__ import annotations

import csv
import json
import random
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from qiuqiu.cli.__main__ import main
from qiuqiu.cli.arena import table
from qiuqiu.cli.arena.match import TABLE_ID, duplicate_match, half_width, t95, tiles_swapped
from qiuqiu.cli.arena.seats import Entrant, Player, SdkPlayer, entrant, load_bot
from qiuqiu.cli.bot import Turn
from qiuqiu.cli.deals import DealChecked
from qiuqiu.cli.game import SeatState, TableState
from qiuqiu.cli.turns import turn_of
from qiuqiu.engine import HandState, TableRules, shuffled_deck
from qiuqiu.protocol import TableOptions, decode_server
from qiuqiu.protocol import server as wire
from qiuqiu.server import views
from qiuqiu.server.frames import Frame
from tests.cli.conftest import QIUQIU, SLOW_BOT, bot_module

ROOT = Path(__file__).resolve().parents[3]
CALLER = str(ROOT / "clients/examples/always_call.py")
RANKER = str(ROOT / "clients/examples/tile_ranker.py")
EXPLOITERS = ROOT / "bench/exploiters.py"

RECORDER = """
from qiuqiu.cli.bot import Action, Bot, Call, Check, Turn

SEEN: list[Turn] = []


class Recorder(Bot):
    def decide(self, turn: Turn) -> Action:
        SEEN.append(turn)
        return Check() if turn.legal.check else Call()
"""


def play(a: Entrant, b: Entrant, deals: int, seed: int = 1) -> tuple[list[float], list[int]]:
    sums: list[int] = []
    result = duplicate_match(
        a,
        b,
        deals=deals,
        options=TableOptions(),
        buy_in=500,
        seed=seed,
        house=lambda: random.Random(3),
        check=lambda deal, half, total: sums.append(total),
    )
    return result.scores, sums


def test_chips_are_conserved_in_both_halves_of_every_deal() -> None:
    scores, sums = play(entrant(RANKER), entrant(CALLER), deals=60)
    assert len(sums) == 120
    assert set(sums) == {0}
    assert len(scores) == 60
    # Duplicate play cancels luck, not skill: the ranker's edge over a caller shows.
    assert statistics.mean(scores) > 0


def test_the_same_seed_plays_the_same_match() -> None:
    assert play(entrant(RANKER), entrant("dealer"), deals=40) == play(
        entrant(RANKER), entrant("dealer"), deals=40
    )


def test_each_bot_gets_the_others_tiles_in_the_second_half(tmp_path: Path) -> None:
    bot = tmp_path / "recorder.py"
    bot.write_text(textwrap.dedent(RECORDER))
    first, second = entrant(f"{bot}:Recorder"), Entrant("other", f"{bot}:Recorder")
    play(first, second, deals=1, seed=8)
    SEEN = bot_module(f"{bot}:Recorder").SEEN

    # Two checkers see one turn each per half: half one's seats, then half two's.
    assert len(SEEN) == 4
    half_one = {t.seat: t.tiles for t in SEEN[:2]}
    half_two = {t.seat: t.tiles for t in SEEN[2:]}
    assert half_one[0] == half_two[0]
    assert half_one[1] == half_two[1]
    assert half_one[0] != half_one[1]
    # A Turn is the SDK's, with what the seat may see: three tiles and the legal actions.
    assert all(len(t.tiles) == 3 and t.legal.check for t in SEEN)


def test_a_bots_table_options_say_whether_the_dealer_bot_sits_there(tmp_path: Path) -> None:
    bot = tmp_path / "recorder.py"
    bot.write_text(textwrap.dedent(RECORDER))
    recorder = entrant(f"{bot}:Recorder")
    play(recorder, entrant(CALLER), deals=2)
    SEEN = bot_module(f"{bot}:Recorder").SEEN
    assert SEEN
    assert not any(t.options.dealer_bot for t in SEEN), "as at a table opened with --no-bot"
    SEEN.clear()
    play(recorder, entrant("dealer"), deals=2)
    assert SEEN
    assert all(t.options.dealer_bot for t in SEEN)


def test_a_bot_gets_the_turns_a_client_makes_of_the_same_frames_off_the_wire(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The arena hands its players the frames' models; a network client decodes the
    same texts itself. Replayed through the client's decoder into a fresh state,
    they make every Turn the bot was given, field for field."""
    bot = tmp_path / "for_the_wire.py"
    bot.write_text(textwrap.dedent(RECORDER))
    texts: dict[Player, list[str]] = {}
    publish = table._Publisher.publish

    def recording(self: table._Publisher, published: views.Publication) -> None:
        for seat, player in self.players.items():
            texts.setdefault(player, []).append(published.frame_for(seat).text)
        publish(self, published)

    monkeypatch.setattr(table._Publisher, "publish", recording)
    options = TableOptions(betting_rounds=2)
    duplicate_match(
        entrant(f"{bot}:Recorder"),
        entrant("dealer"),
        deals=30,
        options=options,
        buy_in=500,
        seed=6,
        house=lambda: random.Random(4),
    )
    SEEN = bot_module(f"{bot}:Recorder").SEEN

    players = [p for p in texts if isinstance(p, SdkPlayer)]
    assert len(players) == 2  # one for each half
    made: list[Turn | None] = []
    for player in players:
        seat = player.seat
        state = TableState(TABLE_ID, options, seq=0, you=seat)
        state.seats[seat] = SeatState(seat, player.name, False, 500)
        state.seats[1 - seat] = SeatState(1 - seat, "dealer", True, options.max_buy_in)
        for text in texts[player]:
            message = decode_server(text)
            assert isinstance(message, wire.TableEvent)
            state.apply(message)
            if isinstance(message, wire.TurnStarted) and message.seat == seat:
                made.append(turn_of(state))
    assert len(SEEN) > 60
    # The halves take turns deal by deal; each half's turns in its own order.
    assert sorted(made, key=SEEN.index) == SEEN


def test_every_hand_the_arena_deals_passes_the_clients_check_of_the_deal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    states: list[TableState] = []
    salts: dict[tuple[int, int, int], str] = {}
    """By the player's state (one each half), hand and position."""
    deliver = SdkPlayer.deliver_frame

    def seen(self: SdkPlayer, frame: Frame) -> None:
        if self.state not in states:
            self.state.deals.checking = True  # as a client on the network checks them
            states.append(self.state)
        message = frame.message
        if isinstance(message, wire.TilesDealt) and message.openings:
            for o in message.openings:
                salts[(states.index(self.state), message.hand_id, o.position)] = o.salt
        deliver(self, frame)

    monkeypatch.setattr(SdkPlayer, "deliver_frame", seen)
    play(entrant(RANKER), entrant("dealer"), deals=40)
    assert len(states) == 2
    for state in states:
        checks = state.deals.checks
        assert state.deals.tampered is None
        assert len(checks) == 40
        assert all(isinstance(c, DealChecked) and c.tiles >= 3 for c in checks.values())
    # Every position a seat is dealt, hand after hand, is sealed with a salt of its own.
    for half in (0, 1):
        mine = [salt for (at, _, _), salt in salts.items() if at == half]
        assert len(set(mine)) == len(mine) == 40 * 3


@pytest.mark.parametrize(
    "exploiter",
    ["AlwaysShove", "AlwaysMinBet", "FoldToRaise", "SizedByStrength", "OffTreeSizer", "MinRaiser"],
)
def test_the_dealer_answers_every_exploiter_legally(exploiter: str) -> None:
    result = duplicate_match(
        entrant(f"{EXPLOITERS}:{exploiter}"),
        entrant("dealer"),
        deals=60,
        options=TableOptions(),
        buy_in=500,
        seed=2,
        house=lambda: random.Random(5),
    )
    assert result.answers.illegal == {exploiter: 0, "dealer": 0}


@pytest.mark.parametrize("opponent", [CALLER, "dealer"])
def test_at_a_manual_split_table_every_seat_cuts_legally(opponent: str) -> None:
    sums: list[int] = []
    result = duplicate_match(
        entrant(RANKER),
        entrant(opponent),
        deals=30,
        options=TableOptions(manual_split=True, betting_rounds=2),
        buy_in=500,
        seed=3,
        house=lambda: random.Random(2),
        check=lambda deal, half, total: sums.append(total),
    )
    assert set(sums) == {0}
    assert set(result.answers.illegal.values()) == {0}


def test_an_illegal_answer_is_played_as_a_time_out_and_counted(tmp_path: Path) -> None:
    bot = tmp_path / "too_small.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bet, Bot, Turn


            class TooSmall(Bot):
                def decide(self, turn: Turn) -> Action:
                    return Bet(1)
            """
        )
    )
    result = duplicate_match(
        entrant(str(bot)),
        entrant(CALLER),
        deals=10,
        options=TableOptions(),
        buy_in=500,
        seed=1,
        house=lambda: random.Random(1),
    )
    assert result.answers.illegal["too_small"] >= 10
    assert result.answers.illegal["always_call"] == 0
    assert result.answers.first_illegal == {
        "too_small": "Bet(amount=1) in hand 1 (the smallest bet is 10, not 1)"
    }


def test_the_command_says_which_answer_was_illegal_first_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "raises_first.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bot, Raise, Turn


            class RaisesFirst(Bot):
                def decide(self, turn: Turn) -> Action:
                    return Raise(30)
            """
        )
    )
    argv = ["arena", str(bot), CALLER, "--hands", "4"]
    assert main(argv) == 0
    said = "Raise(to=30) in hand 1 (nobody has bet yet: bet instead)"
    assert (
        f"  raises_first answered 4 turns illegally (played as time-outs), the first: {said}\n"
        in (capsys.readouterr().out)
    )
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["first_illegal"] == {"raises_first": said, "always_call": None}


@pytest.mark.parametrize(
    ("answered", "said"),
    [
        ("None", "its answer was None, not Check()"),
        ('"check"', "its answer was 'check', not Check()"),
        ('Bet("10")', "Bet(amount='10'): chips are a whole number"),
    ],
)
def test_an_answer_that_is_no_action_stops_the_command_naming_the_bot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], answered: str, said: str
) -> None:
    bot = tmp_path / "confused.py"
    bot.write_text(
        textwrap.dedent(
            f"""
            from qiuqiu.cli.bot import Bet, Bot, Turn


            class Confused(Bot):
                def decide(self, turn: Turn):
                    return {answered}
            """
        )
    )
    assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"qiuqiu arena: confused raised TypeError in hand 1: {said}")
    # No line of the bot's raised: the SDK's frames that judged the answer are not its.
    assert len(err.strip().splitlines()) == 1, err


def test_a_bot_that_calls_sys_exit_stops_the_command_naming_it_and_the_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "quitter.py"
    bot.write_text(
        textwrap.dedent(
            """
            import sys

            from qiuqiu.cli.bot import Action, Bot, Turn


            class Quitter(Bot):
                def decide(self, turn: Turn) -> Action:
                    sys.exit("had enough")
            """
        )
    )
    assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("qiuqiu arena: quitter raised SystemExit in hand 1: had enough"), err


def test_a_bot_without_a_decide_of_its_own_is_told_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "misspelt.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bot, Check, Turn


            class Misspelt(Bot):
                def decied(self, turn: Turn) -> Action:
                    return Check()
            """
        )
    )
    assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 2
    err = capsys.readouterr().err
    assert "misspelt.py: Misspelt has no decide(self, turn) of its own" in err, err
    assert "Traceback" not in err, "refused as it is loaded, before the SDK's decide raises"


def test_a_decide_written_async_is_named_as_the_mistake_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "eager.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bot, Check, Turn


            class Eager(Bot):
                async def decide(self, turn: Turn) -> Action:
                    return Check()
            """
        )
    )
    assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 1
    err = capsys.readouterr().err
    assert "(decide is async def): write def decide" in err, err
    assert "never awaited" not in err


def test_a_cut_of_the_tiles_the_turn_gave_is_an_answer(tmp_path: Path) -> None:
    """``turn.tiles`` are ``Tile`` objects; a cut made of them is the cut of their text."""
    bot = tmp_path / "own_cut.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bot, Call, Check, Split, Turn


            class OwnCut(Bot):
                def decide(self, turn: Turn) -> Action:
                    return Check() if turn.legal.check else Call()

                def cut(self, turn: Turn) -> Split:
                    a, b, c, d = turn.tiles
                    return Split((a, b), (c, d))
            """
        )
    )
    result = duplicate_match(
        entrant(str(bot)),
        entrant(CALLER),
        deals=20,
        options=TableOptions(manual_split=True),
        buy_in=500,
        seed=1,
        house=lambda: random.Random(1),
    )
    assert result.answers.illegal["own_cut"] == 0


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


def test_the_dealer_beats_the_caller_and_the_ranker_by_more_than_the_threshold_policy() -> None:
    """Seeded, so one fixed run: the figures of docs/dealer-bot.md in small (against the
    caller the margin is within the noise of a run this size, as it is at 100,000)."""
    margins = {}
    for opponent, deals in ((CALLER, 3000), (RANKER, 1000)):
        solved, _ = play(entrant(opponent), entrant("dealer"), deals=deals, seed=4)
        threshold, _ = play(entrant(opponent), entrant("dealer:threshold"), deals=deals, seed=4)
        margins[opponent] = (sum(solved) / deals, sum(threshold) / deals)
    for opponent, (solved_mean, threshold_mean) in margins.items():
        assert solved_mean < threshold_mean < 0, opponent


@pytest.mark.parametrize("rounds", [1, 2])
def test_against_the_dealer_the_second_half_deals_each_seat_what_the_other_had(
    rounds: int,
) -> None:
    """The seats and the button stay as a server has them: only the tiles change hands."""
    rules = TableRules(betting_rounds=rounds)
    deck = shuffled_deck(random.Random(5))
    # Check down both rounds to the showdown: every seat gets its four tiles.
    for button in (0, 1):
        tiles = []
        for dealt in (deck, tiles_swapped(deck, button)):
            hand = HandState.start(rules, {0: 500, 1: 500}, button, dealt)
            while hand.actor is not None:
                hand.check(hand.actor)
            tiles.append({seat: hand.seats[seat].tiles for seat in (0, 1)})
        assert tiles[1] == {0: tiles[0][1], 1: tiles[0][0]}
        assert all(len(t) == 4 for t in tiles[0].values())


def test_the_player_gets_the_dealers_tiles_in_the_second_half(tmp_path: Path) -> None:
    bot = tmp_path / "against_dealer.py"
    bot.write_text(textwrap.dedent(RECORDER))
    play(entrant(f"{bot}:Recorder"), entrant("dealer"), deals=20, seed=8)
    SEEN = bot_module(f"{bot}:Recorder").SEEN

    # The player acts first in every hand; its tiles at its turns, hand by hand: two
    # different holdings (its own, then the dealer's), never one twice.
    held: dict[int, set[tuple[str, ...]]] = {}
    for turn in SEEN:
        held.setdefault(turn.hand_id, set()).add(tuple(map(str, turn.tiles[:3])))
    assert len(held) == 20
    assert all(len(tiles) == 2 for tiles in held.values())
    # In both halves it sits where a server seats a player against the dealer.
    assert {turn.seat for turn in SEEN} == {0}
    assert {tuple(turn.stacks) for turn in SEEN} == {(0, 1)}


def test_the_interval_of_few_deals_is_students_not_the_normals() -> None:
    assert half_width([0.0, 2.0]) == pytest.approx(12.706)  # two deals: one degree of freedom
    known = {11: 2.201, 30: 2.042, 31: 2.040, 40: 2.021, 60: 2.000, 120: 1.980}
    for df, t in known.items():
        assert t95(df) == pytest.approx(t, abs=0.001)


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
