"""The equity of holding pairs, against a brute force built on the engine's compare alone."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest

from qiuqiu.engine import ALL_TILES, Hand, TieRule, compare
from qiuqiu.server.house.holdings import HOLDINGS
from solver.cfr import Showdowns, card_incidence
from solver.equity import Floats, equity_matrix, holding_masks, meeting


@functools.cache
def equity(tie_rule: TieRule) -> Floats:
    """The whole matrix, made once for the module: a few seconds."""
    return equity_matrix(tie_rule)[0]


def brute_force(i: int, j: int, tie_rule: TieRule) -> float:
    mine, theirs = HOLDINGS[i], HOLDINGS[j]
    rest = [t for t in ALL_TILES if t not in mine and t not in theirs]
    total = sum(
        compare(Hand((*mine, a)), Hand((*theirs, b)), tie_rule)
        for a in rest
        for b in rest
        if a is not b
    )
    return total / (len(rest) * (len(rest) - 1))


@pytest.mark.parametrize("tie_rule", ["highest_tile", "split"])
def test_rows_match_the_brute_force(tie_rule: TieRule) -> None:
    rng = random.Random(5)
    matrix = equity(tie_rule)
    masks = holding_masks()
    for i in rng.sample(range(len(HOLDINGS)), 4):
        others = [j for j in rng.sample(range(len(HOLDINGS)), 40) if not masks[i] & masks[j]]
        for j in others[:8]:
            assert matrix[i, j] == pytest.approx(brute_force(i, j, tie_rule), abs=1e-6)
        sharing = [j for j in range(len(HOLDINGS)) if masks[i] & masks[j]]
        assert not matrix[i, sharing].any()


def test_equity_is_antisymmetric_and_a_holding_pair_meets_once() -> None:
    matrix = equity("highest_tile")
    assert np.array_equal(matrix, -matrix.T)
    meets = meeting(holding_masks())
    # Of 3,276 holdings, C(25, 3) = 2,300 share no tile with a given one.
    assert (meets.sum(axis=1) == 2300).all()
    cards, pairs = card_incidence([[t.index for t in h] for h in HOLDINGS], 28)
    game = Showdowns(np.zeros((1, 1), np.float32), meets, cards, pairs, full_overlap=True)
    reach = np.ones((len(HOLDINGS), 1), np.float32)
    assert (game.blocked(reach)[:, 0] == 2300).all()
