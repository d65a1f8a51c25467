"""Solve the house's heads-up strategies and write them into the server package.

    uv run --group solver python -m solver                        # every shipped strategy
    uv run --group solver python -m solver --only 49              # one stack depth (antes behind)
    uv run --group solver python -m solver --rounds 2 --only 49   # and one game

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
from solver.buckets import two_rounds
from solver.cfr import Game, Showdowns, Solver, card_incidence
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
SHIPPED: tuple[tuple[int, TieRule, tuple[int, ...]], ...] = (
    (1, "highest_tile", DEPTHS),
    (1, "split", (49,)),
    (2, "highest_tile", (19, 49, 99)),
    (2, "split", (49,)),
)
"""(betting rounds, tie rule, depths): each one solve and one file."""


def showdowns(tie_rule: TieRule) -> Showdowns:
    equity, meets = equity_matrix(tie_rule)
    cards, pairs = card_incidence([[t.index for t in h] for h in HOLDINGS], 28)
    return Showdowns(equity, meets, cards, pairs, full_overlap=True)


def game(rounds: int, tie_rule: TieRule) -> tuple[Game, dict[str, object]]:
    """The game to solve, and what a strategy file's header must say of its buckets."""
    if rounds == 1:
        return showdowns(tie_rule), {}
    bucketed, buckets = two_rounds(tie_rule)
    header = {
        "holdings": buckets.holdings.tolist(),
        "hands": buckets.hands.tolist(),
        "hand_buckets": bucketed.hand_buckets,
    }
    return bucketed, {"buckets": header}


def name(rounds: int, tie_rule: TieRule, depth: int) -> str:
    return f"r{rounds}-{tie_rule.replace('_', '')}-a{ANTE}-m{ANTE}-d{depth}"


def solve(
    rounds: int,
    tie_rule: TieRule,
    depth: int,
    played: tuple[Game, dict[str, object]],
    iterations: int,
    block: int,
) -> None:
    stakes = Stakes(
        ante=ANTE,
        min_bet=ANTE,
        max_bet=None,
        max_raises=None,
        stack=depth * ANTE,
        betting_rounds=rounds,
    )
    name_ = name(rounds, tie_rule, depth)
    solver = Solver(Tree(stakes), played[0])
    curve: list[dict[str, float]] = []
    started = time.process_time()
    while solver.iterations < iterations:
        solver.iterate(min(block, iterations - solver.iterations))
        e = solver.exploitability()
        curve.append({"iterations": solver.iterations, "milli_antes": 1000 * e / ANTE})
        print(f"{name_}: {solver.iterations} iterations, {1000 * e / ANTE:.1f} mA/hand", flush=True)
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
    weights = strategy_bytes(solver, shipped)
    write(STRATEGIES / f"{name_}{SUFFIX}", {**header, **played[1]}, weights)
    CONVERGENCE.mkdir(parents=True, exist_ok=True)
    record = {**header, "cpu_seconds": round(time.process_time() - started), "curve": curve}
    (CONVERGENCE / f"{name_}.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"{name_}: shipped {header['exploitability_milli_antes']} mA/hand", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solver", description=__doc__)
    parser.add_argument(
        "--iterations", type=int, help=f"per solve ({ITERATIONS}; {DEEP_ITERATIONS} deeper)"
    )
    parser.add_argument("--block", type=int, default=50, help="iterations between measurements")
    parser.add_argument("--only", type=int, help="solve only this depth (antes behind)")
    parser.add_argument("--rounds", type=int, choices=(1, 2), help="solve only these games")
    parser.add_argument("--tie-rule", choices=("highest_tile", "split"), help="and this tie rule")
    args = parser.parse_args(argv)
    np.seterr(all="raise", under="ignore")
    STRATEGIES.mkdir(parents=True, exist_ok=True)
    for rounds, tie_rule, depths in SHIPPED:
        wanted = [d for d in depths if args.only in (None, d)]
        if not wanted or args.rounds not in (None, rounds) or args.tie_rule not in (None, tie_rule):
            continue
        played = game(rounds, tie_rule)
        for depth in wanted:
            iterations = args.iterations or DEEP_ITERATIONS.get(depth, ITERATIONS)
            solve(rounds, tie_rule, depth, played, iterations, args.block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
