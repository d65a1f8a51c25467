"""The shipped strategies, measured again from the files the server loads.

Long (a two-round game's matrices take ten seconds): the exploitability of each shipped
strategy, read back from its file, by the exact best response within its
abstraction, must be under 50 milli-antes a hand and agree with its header, as must
what it wins from each opponent model (:mod:`solver.models`); a bucketed file's
buckets must be the ones the solver makes today.
"""

from __future__ import annotations

import numpy as np
import pytest

from qiuqiu.server.house.book import Book, Solved
from solver import models
from solver.__main__ import game
from solver.cfr import Matrix, Solver

pytestmark = pytest.mark.long


def strategy_of(solved: Solved) -> dict[int, Matrix]:
    """A strategy file's probabilities, as the solver holds them."""
    strategy: dict[int, Matrix] = {}
    for node in solved.tree.decisions:
        start = solved.offsets[node.index]
        width, states = len(node.actions), solved.states(node.round)
        rows = np.frombuffer(solved.weights, np.uint8, states * width, start)
        strategy[node.index] = (rows.reshape(states, width) / 255).astype(np.float32)
    return strategy


@pytest.mark.parametrize("rounds", [1, 2])
@pytest.mark.parametrize("tie_rule", ["highest_tile", "split"])
def test_each_shipped_strategy_is_within_50_milli_antes_of_an_equilibrium(
    tie_rule: str, rounds: int
) -> None:
    played, header = game(rounds, tie_rule)  # type: ignore[arg-type]
    shipped = [
        s for s in Book().solved if s.tie_rule == tie_rule and s.stakes.betting_rounds == rounds
    ]
    assert shipped
    for solved in shipped:
        assert solved.header.get("buckets") == header.get("buckets")
        solver = Solver(solved.tree, played)
        strategy = strategy_of(solved)
        exploitability = (
            solver.best_response_value(0, strategy) + solver.best_response_value(1, strategy)
        ) / 2
        milli_antes = 1000 * exploitability / solved.stakes.ante
        assert milli_antes < 50
        assert milli_antes == pytest.approx(solved.header["exploitability_milli_antes"], abs=0.05)
        for model, milli_antes in solved.header["button_wins_from_milli_antes"].items():
            won = solver.value_against(1, solver.fixed(getattr(models, model)), strategy)
            assert 1000 * won / solved.stakes.ante == pytest.approx(milli_antes, abs=0.05)


def test_each_lean_strategy_risks_what_its_header_says() -> None:
    """The house leans by its header's figures (:mod:`qiuqiu.server.house.credit`): they
    must be the exact best response's against the file as shipped, and a lean
    strategy must have a base strategy of its stakes."""
    book = Book()
    assert book.leans
    for (stakes, tie_rule), lean in book.leans.items():
        base = [s for s in book.solved if s.stakes == stakes and s.tie_rule == tie_rule]
        assert len(base) == 1
        played, _ = game(stakes.betting_rounds, tie_rule)
        solver = Solver(lean.tree, played)
        best = solver.best_response_value(0, strategy_of(lean))
        figure = lean.header["best_response_vs_second_seat_milli_antes"]
        assert 1000 * best / stakes.ante == pytest.approx(figure, abs=0.05)
        guaranteed, risky = base[0].guaranteed(stakes.ante), lean.guaranteed(stakes.ante)
        assert guaranteed is not None
        assert risky is not None
        assert risky < guaranteed
