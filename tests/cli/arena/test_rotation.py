"""The arena at three to six seats: each deal once per rotation of the seats.

Short matches check that chips are conserved in every hand, that every
contestant gets every seat with that seat's tiles, that the bots get the SDK's
own Turn objects, and that the command prints each contestant's figures.
"""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path

import pytest

from qiuqiu.cli.__main__ import main
from qiuqiu.cli.arena.rotation import rotation_match
from qiuqiu.cli.arena.seats import Entrant, entrant
from qiuqiu.cli.bot import Turn
from qiuqiu.protocol import TableOptions
from tests.cli.conftest import SLOW_BOT, bot_module

ROOT = Path(__file__).resolve().parents[3]
CALLER = str(ROOT / "clients/examples/always_call.py")
RANKER = str(ROOT / "clients/examples/tile_ranker.py")
EXPLOITERS = ROOT / "bench/exploiters.py"

RECORDERS = """
from qiuqiu.cli.bot import Action, Bot, Check, Call, Turn

SEEN: list[tuple[str, Turn]] = []


class Checker(Bot):
    def decide(self, turn: Turn) -> Action:
        SEEN.append((type(self).__name__, turn))
        return Check() if turn.legal.check else Call()


class A(Checker):
    pass


class B(Checker):
    pass


class C(Checker):
    pass


class D(Checker):
    pass
"""


@pytest.mark.parametrize("seats", [3, 4, 6])
def test_chips_are_conserved_in_every_hand(seats: int) -> None:
    sums: list[int] = []
    contestants = [
        entrant("dealer"),
        entrant(RANKER),
        entrant(f"{EXPLOITERS}:AlwaysShove"),
        entrant(f"{EXPLOITERS}:MinRaiser"),
        entrant(CALLER),
        entrant("dealer:threshold"),
    ][:seats]
    result = rotation_match(
        contestants,
        deals=30,
        options=TableOptions(seats=seats),
        buy_in=500,
        seed=2,
        house=lambda: random.Random(3),
        check=lambda deal, rotation, total: sums.append(total),
    )
    assert len(sums) == 30 * seats
    assert set(sums) == {0}
    assert result.hands == 30 * seats
    # Each deal's scores are means over the rotations of zero-sum hands.
    for deal in range(30):
        assert abs(sum(result.scores[n][deal] for n in result.names)) < 1e-9
    assert result.answers.illegal["dealer"] == 0


def test_every_contestant_gets_every_seat_with_its_tiles(tmp_path: Path) -> None:
    bots = tmp_path / "recorders.py"
    bots.write_text(textwrap.dedent(RECORDERS))
    names = ["A", "B", "C", "D"]
    rotation_match(
        [entrant(f"{bots}:{n}") for n in names],
        deals=2,
        options=TableOptions(seats=4),
        buy_in=500,
        seed=8,
        house=lambda: random.Random(1),
    )
    seen: list[tuple[str, Turn]] = bot_module(f"{bots}:A").SEEN
    # Four checkers: one turn each a hand, 4 rotations of 2 deals.
    assert len(seen) == 4 * 4 * 2
    for deal in (1, 2):
        turns = [(who, t) for who, t in seen if t.hand_id == deal]
        tiles_of_seat: dict[int, set[tuple[str, ...]]] = {}
        seats_of: dict[str, set[int]] = {}
        for who, turn in turns:
            tiles_of_seat.setdefault(turn.seat, set()).add(tuple(map(str, turn.tiles)))
            seats_of.setdefault(who, set()).add(turn.seat)
            # The SDK's Turn, with what the seat may see.
            assert len(turn.tiles) == 3
            assert turn.legal.check
            assert turn.opponents == 3
        # The same tiles in a seat in every rotation, and every contestant in every seat.
        assert all(len(tiles) == 1 for tiles in tiles_of_seat.values())
        assert len({next(iter(t)) for t in tiles_of_seat.values()}) == 4
        assert seats_of == {n: {0, 1, 2, 3} for n in names}


def test_the_same_seed_plays_the_same_match() -> None:
    def play() -> dict[str, list[float]]:
        return rotation_match(
            [entrant("dealer"), entrant(CALLER), Entrant("caller2", CALLER)],
            deals=20,
            options=TableOptions(seats=3),
            buy_in=500,
            seed=4,
            house=lambda: random.Random(9),
        ).scores

    assert play() == play()


def test_the_command_plays_a_rotated_table(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["arena", "dealer", CALLER, CALLER, "--seats", "3", "--hands", "30"]
    assert main([*args, "--house-seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "3 seats: 30 hands (10 deals, 3 rotations each)" in out
    assert "always_call#2" in out
    assert out.count("chips a hand") == 3
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in report["contestants"]] == ["dealer", "always_call", "always_call#2"]
    assert abs(sum(c["chips_a_hand"] for c in report["contestants"])) < 1e-3


def test_a_rotated_table_counts_each_contestants_late_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "slow.py"
    bot.write_text(SLOW_BOT)
    args = ["arena", str(bot), CALLER, CALLER, "--seats", "3", "--hands", "6"]
    assert main([*args, "--turn-seconds", "0.05", "--json"]) == 0
    report = {c["name"]: c for c in json.loads(capsys.readouterr().out)["contestants"]}
    answers = len((tmp_path / "slow.answers").read_text().split())
    assert report["slow"]["late"] == answers > 0
    assert report["slow"]["slowest_answer_seconds"] >= 0.1


def test_the_command_wants_one_contestant_a_seat(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "dealer", CALLER, "--seats", "3"]) == 2
    assert "needs 3 contestants" in capsys.readouterr().err


def test_a_count_of_hands_no_whole_rotated_deals_make_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["arena", "dealer", CALLER, CALLER, "--seats", "3", "--hands", "31"]
    assert main(args) == 2
    assert "--hands 31 is not a whole number of deals, each played 3 times: ask for 30 or 33" in (
        capsys.readouterr().err
    )
