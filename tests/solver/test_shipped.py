"""The shipped strategies, measured again from the files the server loads.

Long (a two-round game's matrices take ten seconds): the exploitability of each shipped
strategy, read back from its file, by the exact best response within its
abstraction, must be under 50 milli-antes a hand and agree with its header, as must
what it wins from each opponent model (:mod:`solver.models`); a bucketed file's
buckets must be the ones the solver makes today; and the solver's command must
write a shipped file again byte for byte.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from qiuqiu.server.house.book import Book, Solved
from solver import SKYLAKE_X, cpu_flags, models
from solver.__main__ import CONVERGENCE, STRATEGIES
from solver.__main__ import game as solver_game
from solver.cfr import Matrix, Solver

pytestmark = pytest.mark.long

game = functools.cache(solver_game)
"""The game's matrices, made once a process: a two-round game's take ten seconds, and
the solver only reads them."""


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
    played, header = game(rounds, tie_rule)
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


@pytest.mark.skipif(
    not SKYLAKE_X.issubset(cpu_flags()),
    reason="the solver pins OpenBLAS's kernel only where the CPU has AVX-512",
)
def test_the_solver_writes_the_shipped_files_again_byte_for_byte(tmp_path: Path) -> None:
    # A process of its own: the kernel is pinned before numpy loads OpenBLAS, which
    # this process has done already. The smallest two-round game solves in seconds.
    argv = ["--out", str(tmp_path), "--rounds", "2", "--behind", "1"]
    subprocess.run([sys.executable, "-m", "solver", *argv], check=True, capture_output=True)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == [
        "r2-highesttile-a10-m10-d1-lean.json",
        "r2-highesttile-a10-m10-d1-lean.qqs",
        "r2-highesttile-a10-m10-d1.json",
        "r2-highesttile-a10-m10-d1.qqs",
    ]
    for name in written:
        shipped = STRATEGIES if name.endswith(".qqs") else CONVERGENCE
        assert (tmp_path / name).read_bytes() == (shipped / name).read_bytes(), name
