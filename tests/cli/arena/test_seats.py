"""What an SDK bot is told in the arena: the history of each hand at every turn, and
each hand's result, as a spectator of the same hands saw them."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path
from typing import get_args

import pytest

from qiuqiu.cli.__main__ import main
from qiuqiu.cli.arena import table
from qiuqiu.cli.arena.match import duplicate_match
from qiuqiu.cli.arena.seats import entrant
from qiuqiu.cli.bot import HandResult
from qiuqiu.cli.game import MoveKind
from qiuqiu.protocol import TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.server import views
from tests.cli.conftest import bot_module, check_told_as_a_spectator_saw_it

ROOT = Path(__file__).resolve().parents[3]
HISTORIAN = """
from qiuqiu.cli.bot import Action, Bet, Bot, Call, Check, Fold, HandResult, Raise, Turn

TOLD: list[Turn | HandResult] = []


class Historian(Bot):
    \"\"\"Bets, raises, calls, checks, folds and times out by turns; keeps all it is told.\"\"\"

    def decide(self, turn: Turn) -> Action:
        TOLD.append(turn)
        legal = turn.legal
        if len(TOLD) % 11 == 0:
            return Bet(10**9)  # more than any stack: played as a time-out
        if len(TOLD) % 7 == 0 and legal.fold:
            return Fold()
        if len(TOLD) % 3 == 0 and legal.raise_to is not None:
            return Raise(legal.raise_to.min)
        if len(TOLD) % 2 == 0 and legal.bet is not None:
            return Bet(legal.bet.min)
        return Check() if legal.check else Call()

    def hand_ended(self, result: HandResult) -> None:
        TOLD.append(result)
"""


@pytest.mark.parametrize("opponent", ["dealer", "clients/examples/tile_ranker.py"])
def test_a_bot_is_told_each_hands_moves_and_result_as_a_spectator_saw_them(
    opponent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = tmp_path / "historian.py"
    bot.write_text(textwrap.dedent(HISTORIAN))
    spectator: list[wire.TableEvent] = []
    publish = table._Publisher.publish

    def watched(self: table._Publisher, published: views.Publication) -> None:
        spectator.append(published.public)
        publish(self, published)

    monkeypatch.setattr(table._Publisher, "publish", watched)
    duplicate_match(
        entrant(str(bot)),
        entrant(opponent if opponent == "dealer" else str(ROOT / opponent)),
        deals=40,
        options=TableOptions(betting_rounds=2),
        buy_in=500,
        seed=3,
        house=lambda: random.Random(5),
    )
    told = bot_module(str(bot)).TOLD
    check_told_as_a_spectator_saw_it(told, spectator)
    results = [item for item in told if isinstance(item, HandResult)]
    assert {move.action for r in results for move in r.history} == set(get_args(MoveKind))
    assert any(move.timed_out for r in results for move in r.history)
    assert any(r.shown for r in results), "hands shown down"
    assert any(not r.shown for r in results), "hands ended on a fold, their tiles unseen"


def test_a_bot_whose_hand_ended_raises_stops_the_command_naming_it_and_the_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "sore_loser.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bot, Call, Check, HandResult, Turn


            class SoreLoser(Bot):
                def decide(self, turn: Turn) -> Action:
                    return Check() if turn.legal.check else Call()

                def hand_ended(self, result: HandResult) -> None:
                    if result.net[result.seat] < 0:
                        raise ValueError(f"lost {-result.net[result.seat]}")
            """
        )
    )
    assert main(["arena", str(bot), "dealer", "--hands", "40", "--house-seed", "1"]) == 1
    err = capsys.readouterr().err
    assert "qiuqiu arena: sore_loser raised ValueError in hand " in err, err
    trace = err.split("Traceback", 1)[1]
    assert "in hand_ended" in trace
    assert "qiuqiu/cli" not in trace, "the arena's frames are left out"
