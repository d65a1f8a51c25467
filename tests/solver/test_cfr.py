"""CFR+ and its best response, checked on games whose answers are known independently.

Kuhn poker is the abstract game at an ante of 1 with 1 chip behind: one bet
size, no raise, three cards. Its value to the first seat is -1/18. A second,
random game (six cards, two-card holdings, an arbitrary equity table, three
raises deep) checks the vectorised best response against a plain scalar one
that walks the tree holding by holding.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from qiuqiu.server.house.tree import Node, Stakes, Tree
from solver.cfr import Matrix, Showdowns, Solver, card_incidence
from solver.models import calling_station


def kuhn() -> Solver:
    tree = Tree(Stakes(ante=1, min_bet=1, max_bet=None, max_raises=None, stack=1))
    equity = np.sign(np.arange(3)[:, None] - np.arange(3)[None, :]).astype(np.float32)
    cards, pairs = card_incidence([[0], [1], [2]], 3)
    return Solver(tree, Showdowns(equity, ~np.eye(3, dtype=bool), cards, pairs, False))


def random_game(seed: int) -> Solver:
    rng = np.random.default_rng(seed)
    holdings = list(combinations(range(6), 2))
    n = len(holdings)
    meets = np.array([[not set(a) & set(b) for b in holdings] for a in holdings])
    upper = np.triu(rng.uniform(-1, 1, (n, n)), 1)
    equity = np.where(meets, upper - upper.T, 0).astype(np.float32)
    cards, pairs = card_incidence([list(h) for h in holdings], 6)
    tree = Tree(Stakes(ante=2, min_bet=2, max_bet=None, max_raises=None, stack=30))
    return Solver(tree, Showdowns(equity, meets, cards, pairs, False))


def scalar_best_response(solver: Solver, player: int, strategy: dict[int, Matrix]) -> float:
    """The best response's value computed one holding pair at a time, without matrices."""
    game = solver.game
    assert isinstance(game, Showdowns)
    nodes = solver.tree.nodes
    n = game.holdings

    def value(node: Node, mine: int, reach: list[float]) -> float:
        # reach[j]: the opponent's chance of playing to here holding j.
        if node.kind == "showdown":
            sign = 1.0 if player == 0 else -1.0
            return sum(
                reach[j]
                * node.contributed[0]
                * sign
                * float(game.equity[mine, j] if player == 0 else game.equity[j, mine])
                for j in range(n)
                if game.meets[mine, j]
            )
        if node.kind == "fold":
            lost = node.contributed[node.player]
            sign = -1.0 if node.player == player else 1.0
            return sum(reach[j] * lost * sign for j in range(n) if game.meets[mine, j])
        children = [nodes[c] for c in node.children]
        if node.player == player:
            return max(value(child, mine, reach) for child in children)
        sigma = strategy[node.index]
        return sum(
            value(child, mine, [reach[j] * float(sigma[j, a]) for j in range(n)])
            for a, child in enumerate(children)
        )

    total = sum(value(nodes[0], h, [1.0] * n) for h in range(n))
    return total / game.pairs


def test_kuhn_poker_converges_to_its_known_value() -> None:
    solver = kuhn()
    solver.iterate(2000)
    assert solver.value() == pytest.approx(-1 / 18, abs=5e-4)
    assert 0 <= solver.exploitability() < 1e-3


def test_the_best_response_is_the_scalar_one_in_a_random_game() -> None:
    solver = random_game(seed=7)
    solver.iterate(30)
    strategy = {n.index: solver.average_strategy(n) for n in solver.decisions}
    for player in (0, 1):
        fast = solver.best_response_value(player, strategy)
        assert fast == pytest.approx(scalar_best_response(solver, player, strategy), abs=1e-4)


def test_exploitability_falls_and_the_best_response_beats_the_strategy_itself() -> None:
    solver = random_game(seed=11)
    solver.iterate(5)
    early = solver.exploitability()
    solver.iterate(400)
    late = solver.exploitability()
    assert late < early / 10
    # A best response is at least as good as playing the strategy against itself.
    value = solver.value()
    assert solver.best_response_value(0) >= value - 1e-5
    assert solver.best_response_value(1) >= -value - 1e-5


def test_blocked_sums_the_opponents_that_share_no_card() -> None:
    solver = random_game(seed=3)
    game = solver.game
    assert isinstance(game, Showdowns)
    reach = np.random.default_rng(1).uniform(0, 1, (game.holdings, 4)).astype(np.float32)
    expected = game.meets.astype(np.float32) @ reach
    assert np.allclose(game.blocked(reach), expected, atol=1e-5)


def test_a_restricted_nash_response_buys_exploitation_with_exploitability() -> None:
    """The more likely the model, the more the strategy takes from it and the more a
    best response takes from the strategy; nearly sure of it, it is a best response."""
    taken, exploitable = [], []
    for chance in (0.0, 0.3, 0.95):
        solver = random_game(seed=11)
        restricted = [(chance, calling_station)] if chance else []
        solver = Solver(solver.tree, solver.game, restricted)
        solver.iterate(150)
        station = solver.fixed(calling_station)
        taken.append(solver.value_against(0, station) + solver.value_against(1, station))
        exploitable.append(solver.exploitability())
        best = solver.best_response_value(0, station) + solver.best_response_value(1, station)
    assert taken[0] < taken[1] < taken[2]
    assert exploitable[0] < 0.05 < exploitable[1] < exploitable[2]
    assert taken[2] == pytest.approx(best, rel=0.05)


def test_a_model_must_be_possible_and_leave_the_seat_free_sometimes() -> None:
    solver = kuhn()
    for restricted in ([(0.0, calling_station)], [(0.5, calling_station), (0.5, calling_station)]):
        with pytest.raises(ValueError, match="chance"):
            Solver(solver.tree, solver.game, restricted)
