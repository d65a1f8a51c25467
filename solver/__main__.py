"""Solve the house's heads-up strategies and write them into the server package.

    uv run --group solver python -m solver            # every shipped strategy
    uv run --group solver python -m solver --only 49  # one stack depth (antes behind)

Deterministic: CFR+ samples nothing, so the same iterations give the same files
(no seed is needed). Each solve
writes its strategy file and its convergence (exploitability after each block of
iterations, measured by the exact best response) to ``docs/dealer-bot/``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from qiuqiu.engine import TieRule
from qiuqiu.server.house.book import SUFFIX, write
from qiuqiu.server.house.holdings import HOLDINGS
from qiuqiu.server.house.tree import Stakes, Tree
from solver.cfr import Showdowns, Solver, card_incidence
from solver.equity import equity_matrix
from solver.export import quantised, strategy_bytes

ROOT = Path(__file__).resolve().parent.parent
STRATEGIES = ROOT / "server/src/qiuqiu/server/house/strategies"
CONVERGENCE = ROOT / "docs/dealer-bot"

ANTE = 10
DEPTHS = (9, 19, 49, 99, 249, 999)
"""Chips behind after the ante, in antes: 49 is the default table (a 500 buy-in)."""
ITERATIONS = 1000
DEEP_ITERATIONS = {999: 3000}
"""The deepest stacks converge slowest (more chips to bluff with): they get more."""
SHIPPED: tuple[tuple[TieRule, tuple[int, ...]], ...] = (
    ("highest_tile", DEPTHS),
    ("split", (49,)),
)


def showdowns(tie_rule: TieRule) -> Showdowns:
    equity, meets = equity_matrix(tie_rule)
    cards, pairs = card_incidence([[t.index for t in h] for h in HOLDINGS], 28)
    return Showdowns(equity, meets, cards, pairs, full_overlap=True)


def name(tie_rule: TieRule, depth: int) -> str:
    return f"r1-{tie_rule.replace('_', '')}-a{ANTE}-m{ANTE}-d{depth}"


def solve(tie_rule: TieRule, depth: int, game: Showdowns, iterations: int, block: int) -> None:
    stakes = Stakes(ante=ANTE, min_bet=ANTE, max_bet=None, max_raises=None, stack=depth * ANTE)
    solver = Solver(Tree(stakes), game)
    curve: list[dict[str, float]] = []
    started = time.process_time()
    while solver.iterations < iterations:
        solver.iterate(min(block, iterations - solver.iterations))
        e = solver.exploitability()
        curve.append({"iterations": solver.iterations, "milli_antes": 1000 * e / ANTE})
        print(
            f"{name(tie_rule, depth)}: {solver.iterations} iterations, "
            f"{1000 * e / ANTE:.1f} mA/hand",
            flush=True,
        )
    shipped = quantised(solver)
    e = (solver.best_response_value(0, shipped) + solver.best_response_value(1, shipped)) / 2
    header = {
        "stakes": {
            "ante": stakes.ante,
            "min_bet": stakes.min_bet,
            "max_bet": stakes.max_bet,
            "max_raises": stakes.max_raises,
            "stack": stakes.stack,
            "betting_rounds": stakes.betting_rounds,
        },
        "tie_rule": tie_rule,
        "iterations": solver.iterations,
        "exploitability_milli_antes": round(1000 * e / ANTE, 2),
        "best_response_vs_second_seat_milli_antes": round(
            1000 * solver.best_response_value(0, shipped) / ANTE, 2
        ),
        "value_first_seat_milli_antes": round(1000 * solver.value(shipped) / ANTE, 2),
    }
    write(STRATEGIES / f"{name(tie_rule, depth)}{SUFFIX}", header, strategy_bytes(solver, shipped))
    CONVERGENCE.mkdir(parents=True, exist_ok=True)
    record = {**header, "cpu_seconds": round(time.process_time() - started), "curve": curve}
    path = CONVERGENCE / f"{name(tie_rule, depth)}.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(
        f"{name(tie_rule, depth)}: shipped {header['exploitability_milli_antes']} mA/hand",
        flush=True,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solver", description=__doc__)
    parser.add_argument(
        "--iterations", type=int, help=f"per solve ({ITERATIONS}; {DEEP_ITERATIONS} deeper)"
    )
    parser.add_argument("--block", type=int, default=50, help="iterations between measurements")
    parser.add_argument("--only", type=int, help="solve only this depth (antes behind)")
    args = parser.parse_args(argv)
    np.seterr(all="raise", under="ignore")
    STRATEGIES.mkdir(parents=True, exist_ok=True)
    for tie_rule, depths in SHIPPED:
        wanted = [d for d in depths if args.only in (None, d)]
        if not wanted:
            continue
        game = showdowns(tie_rule)
        for depth in wanted:
            iterations = args.iterations or DEEP_ITERATIONS.get(depth, ITERATIONS)
            solve(tie_rule, depth, game, iterations, args.block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
