"""The equity of holding pairs, against a brute force built on the engine's compare alone."""

from __future__ import annotations

import random

import numpy as np
import pytest

from qiuqiu.engine import ALL_TILES, Hand, TieRule, compare
from qiuqiu.server.house.holdings import HOLDINGS
from solver.cfr import Showdowns, card_incidence
from solver.equity import equity_rows, holding_masks, meeting


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
    rows = rng.sample(range(len(HOLDINGS)), 3)
    equity = equity_rows(tie_rule, rows)
    masks = holding_masks()
    for k, i in enumerate(rows):
        others = [j for j in rng.sample(range(len(HOLDINGS)), 40) if not masks[i] & masks[j]]
        for j in others[:8]:
            assert equity[k, j] == pytest.approx(brute_force(i, j, tie_rule), abs=1e-6)
        sharing = [j for j in range(len(HOLDINGS)) if masks[i] & masks[j]]
        assert not equity[k, sharing].any()


def test_equity_is_antisymmetric_and_a_holding_pair_meets_once() -> None:
    rows = [0, 1000, 3275]
    block = equity_rows("highest_tile", rows)
    for a, i in enumerate(rows):
        for b, j in enumerate(rows):
            assert block[a, j] == pytest.approx(-block[b, i], abs=1e-6)
    meets = meeting(holding_masks())
    # Of 3,276 holdings, C(25, 3) = 2,300 share no tile with a given one.
    assert (meets.sum(axis=1) == 2300).all()
    cards, pairs = card_incidence([[t.index for t in h] for h in HOLDINGS], 28)
    game = Showdowns(np.zeros((1, 1), np.float32), meets, cards, pairs, full_overlap=True)
    reach = np.ones((len(HOLDINGS), 1), np.float32)
    assert (game.blocked(reach)[:, 0] == 2300).all()
