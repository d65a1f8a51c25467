"""The two-round game: its exact counts, and CFR+ with a best response across a deal.

The inclusion-exclusion sums are checked against a brute force over every
opposing hand; the whole game's matrices (long: about ten seconds) against
what must hold of any deal; and the solver on a random two-round game against
a scalar best response that walks the tree state by state.
"""

from __future__ import annotations

import numpy as np
import pytest

from qiuqiu.server.house.holdings import HANDS, HOLDINGS, holding_number
from qiuqiu.server.house.tree import Node, Stakes, Tree
from solver.buckets import HAND_BUCKETS, HOLDING_BUCKETS, TwoRounds, _Hands, two_rounds
from solver.cfr import Matrix, Solver


@pytest.mark.parametrize("tie_rule", ["highest_tile", "split"])
def test_the_sums_over_disjoint_hands_are_the_brute_force(tie_rule: str) -> None:
    hands = _Hands(tie_rule)  # type: ignore[arg-type]
    masks = np.array([sum(1 << t.index for t in hand) for hand in HANDS])
    rng = np.random.default_rng(7)
    weights = rng.integers(0, 9, (len(HANDS), 3)).astype(np.float64)
    sampled = rng.choice(len(HANDS), 40, replace=False)
    left = np.zeros((len(HANDS), 2))
    left[sampled] = rng.integers(0, 9, (40, 2))
    won = hands.against_all(weights)
    met = np.zeros((2, 3))
    for m in sampled:
        disjoint = (masks & masks[m]) == 0
        sign = np.sign(hands.keys[m] - hands.keys)[disjoint, None]
        met += np.outer(left[m], weights[disjoint].sum(axis=0))
        assert won[m] == pytest.approx((sign * weights[disjoint]).sum(axis=0))
    assert np.array_equal(hands.meeting(left, weights), met)


@pytest.mark.long
def test_the_bucketed_game_counts_every_deal_once() -> None:
    game, buckets = two_rounds("highest_tile")
    deals, wins = game.deals[1].astype(np.float64), game.wins[1].astype(np.float64)
    # Every pair of holdings that can meet, once (the unit is a dealt pair of holdings).
    assert game.pairs == pytest.approx(len(HOLDINGS) * 2300)
    assert np.array_equal(deals, deals.T)
    assert np.allclose(wins, -wins.T, atol=1e-3)
    assert np.all(np.abs(wins) <= deals + 1e-3)
    # A state's deals: the ways a seat is dealt into it (a hand, and which of its tiles
    # came 4th), each against the 4 x 10,626 ways the other seat is dealt from the rest.
    dealt = np.zeros(HOLDING_BUCKETS * HAND_BUCKETS)
    for m, hand in enumerate(HANDS):
        for k in range(4):
            first = buckets.holdings[holding_number(hand[:k] + hand[k + 1 :])]
            dealt[first * HAND_BUCKETS + buckets.hands[m]] += 1
    assert np.allclose(deals.sum(axis=1) * 462, dealt * 4 * 10_626, rtol=1e-5)
    # The first round is the margin of the second, and buckets are equal in size.
    shaped = deals.reshape(HOLDING_BUCKETS, HAND_BUCKETS, HOLDING_BUCKETS, HAND_BUCKETS)
    assert np.allclose(game.deals[0], shaped.sum(axis=(1, 3)), rtol=1e-5)
    for table in (buckets.holdings, buckets.hands):
        sizes = np.bincount(table)
        assert sizes.max() - sizes.min() <= 1
    # The strongest bucket of hands wins, on average over its deals.
    strongest = dealt.reshape(HOLDING_BUCKETS, HAND_BUCKETS)[:, -1].sum()
    assert strongest > 0
    assert (wins.reshape(HOLDING_BUCKETS, HAND_BUCKETS, -1)[:, -1].sum()) > 0


def random_two_rounds(seed: int, first: int = 3, second: int = 2) -> TwoRounds:
    """An arbitrary two-round game: deal counts and antisymmetric wins within them."""
    rng = np.random.default_rng(seed)
    n = first * second
    upper = np.triu(rng.integers(1, 4, (n, n)), 0)
    deals = (upper + np.triu(upper, 1).T).astype(np.float32)
    share = np.triu(rng.uniform(-1, 1, (n, n)), 1)
    wins = ((share - share.T) * deals).astype(np.float32)

    def margin(m: Matrix) -> Matrix:
        out: Matrix = m.reshape(first, second, first, second).sum(axis=(1, 3))
        return out

    return TwoRounds((margin(deals), deals), (margin(wins), wins), second)


def scalar_best_response(solver: Solver, player: int, strategy: dict[int, Matrix]) -> float:
    """The best response's value one state at a time: a deal splits each state into its
    second-round states, which the best response tells apart."""
    game = solver.game
    assert isinstance(game, TwoRounds)
    nodes = solver.tree.nodes

    def value(node: Node, mine: int, reach: list[float]) -> float:
        round_ = node.round - 1
        if node.kind == "showdown":
            wins = game.wins[round_]
            sign = 1.0 if player == 0 else -1.0
            won = [
                float(wins[mine, j] if player == 0 else wins[j, mine]) for j in range(len(reach))
            ]
            return sum(r * node.contributed[0] * sign * w for r, w in zip(reach, won, strict=True))
        if node.kind == "fold":
            lost = node.contributed[node.player]
            sign = -1.0 if node.player == player else 1.0
            met = game.deals[round_][mine]
            return sum(r * lost * sign * float(d) for r, d in zip(reach, met, strict=True))
        if node.kind == "deal":
            k = game.hand_buckets
            theirs = [r for r in reach for _ in range(k)]
            child = nodes[node.children[0]]
            return sum(value(child, mine * k + b, theirs) for b in range(k))
        children = [nodes[c] for c in node.children]
        if node.player == player:
            return max(value(child, mine, reach) for child in children)
        sigma = strategy[node.index]
        return sum(
            value(child, mine, [r * float(sigma[j, a]) for j, r in enumerate(reach)])
            for a, child in enumerate(children)
        )

    n = game.states(1)
    return sum(value(nodes[0], s, [1.0] * n) for s in range(n)) / game.pairs


def test_the_best_response_across_a_deal_is_the_scalar_one() -> None:
    tree = Tree(Stakes(ante=2, min_bet=2, max_bet=None, max_raises=1, stack=10, betting_rounds=2))
    solver = Solver(tree, random_two_rounds(3))
    solver.iterate(30)
    strategy = {n.index: solver.average_strategy(n) for n in solver.decisions}
    for player in (0, 1):
        vectorised = solver.best_response_value(player, strategy)
        assert vectorised == pytest.approx(scalar_best_response(solver, player, strategy), rel=1e-4)


def test_cfr_plus_converges_in_a_two_round_game() -> None:
    tree = Tree(Stakes(ante=2, min_bet=2, max_bet=None, max_raises=1, stack=10, betting_rounds=2))
    solver = Solver(tree, random_two_rounds(5))
    solver.iterate(20)
    early = solver.exploitability()
    solver.iterate(400)
    late = solver.exploitability()
    assert 0 <= late < early / 10
    # A best response gains at least what the strategy itself gets.
    assert solver.best_response_value(0) >= solver.value() - 1e-6
