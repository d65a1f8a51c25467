"""The opponent models a restricted Nash response is solved against, node by node."""

from __future__ import annotations

import numpy as np

from qiuqiu.server.house.tree import Node, Stakes, Tree
from solver.models import CHEAP, calling_station, example_bot, straightforward

TREE = Tree(Stakes(ante=10, min_bet=10, max_bet=None, max_raises=None, stack=490))
TWO_ROUNDS = Tree(
    Stakes(ante=10, min_bet=10, max_bet=None, max_raises=None, stack=490, betting_rounds=2)
)
STRENGTH = np.linspace(0, 1, 101, dtype=np.float32)
"""From the weakest state to the strongest."""


def kind(node: Node, row: np.ndarray) -> str:
    (chosen,) = np.flatnonzero(row)
    return node.actions[int(chosen)].kind


def facing(node: Node) -> float:
    """The call at ``node`` as a part of its pot (0 where nobody has bet)."""
    return (max(node.round_bets) - node.round_bets[node.player]) / node.pot


def test_every_model_plays_one_action_a_state_at_every_node() -> None:
    for model in (calling_station, straightforward, example_bot):
        for node in TREE.decisions:
            rows = model(node, STRENGTH)
            assert rows.shape == (len(STRENGTH), len(node.actions))
            assert np.array_equal(rows.sum(axis=1), np.ones(len(STRENGTH)))
            assert set(np.unique(rows)) == {0.0, 1.0}


def test_the_calling_station_checks_and_calls_whatever_it_holds() -> None:
    for node in TREE.decisions:
        expected = "call" if facing(node) else "check"
        rows = calling_station(node, STRENGTH)
        assert {kind(node, row) for row in rows} == {expected}


def test_the_straightforward_bot_bets_its_strength_and_never_bluffs() -> None:
    root = TREE.nodes[0]
    rows = straightforward(root, STRENGTH)
    assert kind(root, rows[-1]) == "bet"
    assert rows[-1, root.sizes[0][1]] == 1.0  # the smallest size
    assert kind(root, rows[0]) == kind(root, rows[50]) == "check"
    dear = [n for n in TREE.decisions if facing(n) > CHEAP]
    cheap = [n for n in TREE.decisions if 0 < facing(n) <= CHEAP]
    assert dear
    assert cheap
    for node in dear:
        rows = straightforward(node, STRENGTH)
        assert kind(node, rows[0]) == "fold"
        assert kind(node, rows[50]) == "call"
        assert kind(node, rows[-1]) == ("raise" if node.sizes else "call")
    for node in cheap:
        assert kind(node, straightforward(node, STRENGTH)[0]) == "call"


def test_the_example_bot_bets_three_hands_in_four_and_calls_almost_anything_early() -> None:
    for node in TWO_ROUNDS.decisions:
        rows = example_bot(node, STRENGTH)
        kinds = [kind(node, row) for row in rows]
        aggressive = kinds.count("bet") + kinds.count("raise")
        folds = kinds.count("fold")
        # Of the 101 strengths from 0 to 1: 0.35 and up, 0.25 and up, below 0.014.
        if node.sizes:
            assert aggressive == (66 if node.round == 1 else 76)
        if facing(node) > CHEAP:
            assert folds == (2 if node.round == 1 else 25)
