"""The shipped strategies, measured again from the files the server loads.

Long (the equity matrix takes half a minute): the exploitability of each
shipped one-round strategy, read back from its file, by the exact best response
within the abstraction, must be under 50 milli-antes a hand and agree with its
header.
"""

from __future__ import annotations

import numpy as np
import pytest

from qiuqiu.server.house.book import HOLDING_COUNT, Book
from solver.__main__ import showdowns
from solver.cfr import Matrix, Solver

pytestmark = pytest.mark.long


@pytest.mark.parametrize("tie_rule", ["highest_tile", "split"])
def test_each_shipped_strategy_is_within_50_milli_antes_of_an_equilibrium(tie_rule: str) -> None:
    game = showdowns(tie_rule)  # type: ignore[arg-type]
    for solved in Book().solved:
        if solved.tie_rule != tie_rule:
            continue
        solver = Solver(solved.tree, game)
        strategy: dict[int, Matrix] = {}
        for node in solved.tree.decisions:
            start = solved.offsets[node.index]
            width = len(node.actions)
            rows = np.frombuffer(solved.weights, np.uint8, HOLDING_COUNT * width, start).reshape(
                HOLDING_COUNT, width
            )
            strategy[node.index] = (rows / 255).astype(np.float32)
        exploitability = (
            solver.best_response_value(0, strategy) + solver.best_response_value(1, strategy)
        ) / 2
        milli_antes = 1000 * exploitability / solved.stakes.ante
        assert milli_antes < 50
        assert milli_antes == pytest.approx(solved.header["exploitability_milli_antes"], abs=0.05)
