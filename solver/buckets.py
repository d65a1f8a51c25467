"""The two-round game: tiles bucketed by strength, every deal counted exactly.

With ``betting_rounds`` 2 a seat bets on its three tiles, is dealt its 4th,
and bets again. Played on the tiles themselves, the second round alone would
have 3,276 x 25 information sets a node: too many. So each seat sees a bucket:

- in the first round, ``b1``, the bucket of its **holding** (its three tiles)
  by its showdown equity against a random opponent, :data:`HOLDING_BUCKETS`
  buckets of equal numbers of holdings;
- in the second, ``(b1, b2)``: it remembers ``b1`` (perfect recall, so CFR+'s
  guarantee holds in the abstract game) and adds ``b2``, the bucket of its
  four-tile **hand** by its equity against a random opposing hand,
  :data:`HAND_BUCKETS` buckets of equal numbers of hands.

A second-round state is ``u = b1 * HAND_BUCKETS + b2``. Only what a seat sees
is abstracted: the chance of each pair of states, and who wins, are counted
over every real deal (both seats' three tiles and 4th tiles, eight different
tiles), exactly: ``deals[u, v]`` is the number of deals that give seat 0 state
``u`` and seat 1 state ``v``, and ``wins[u, v]`` their wins minus losses for
seat 0. Both are sums over the 20,475 x 10,626 pairs of disjoint hands, done by
inclusion-exclusion over the tiles two hands could share (the sums over the
hands holding a given tile, pair or triple; for the wins, those hands sorted by
showdown key and summed cumulatively), with no hands-by-hands matrix. The first
round's matrices are their margins.

Counts are divided by the 462 ways two 4th tiles come to a pair of holdings, so
the unit is a dealt pair of holdings, as in the one-round game.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import numpy.typing as npt

from qiuqiu.engine import TieRule
from qiuqiu.server.house.holdings import HAND_SIZE, HANDS, HOLDINGS
from solver.equity import FOURTH_TILE_DEALS, TILES, showdown_keys

HOLDING_BUCKETS = 24
HAND_BUCKETS = 32

Floats = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]
Exact = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Buckets:
    """Which bucket each holding and each hand is in."""

    holdings: Ints
    """``holdings[h]``: the first-round bucket of holding ``h`` (in HOLDINGS order)."""
    hands: Ints
    """``hands[m]``: the second-round bucket of hand ``m`` (in HANDS order)."""


@dataclass(frozen=True)
class TwoRounds:
    """A two-round game on states (what :class:`solver.cfr.Solver` plays on): a
    second-round state ``u`` is first-round state ``u // hand_buckets``."""

    deals: tuple[Matrix, Matrix]
    """Each round's ``deals`` matrix over its states (see the module docstring)."""
    wins: tuple[Matrix, Matrix]
    hand_buckets: int

    rounds = 2

    def states(self, number: int) -> int:
        return int(self.deals[number - 1].shape[0])

    @property
    def pairs(self) -> float:
        return float(self.deals[0].sum(dtype=np.float64))

    def showdown(self, number: int, reach: Matrix) -> Matrix:
        result: Matrix = self.wins[number - 1] @ reach
        return result

    def fold(self, number: int, reach: Matrix) -> Matrix:
        result: Matrix = self.deals[number - 1] @ reach
        return result

    def expand(self, reach: Floats) -> Floats:
        """A first-round vector over ``b1`` as the second round's over ``(b1, b2)``."""
        result: Floats = np.repeat(reach, self.hand_buckets)
        return result

    def collapse(self, values: Floats) -> Floats:
        """Second-round values summed back to the first round's states."""
        result: Floats = values.reshape(-1, self.hand_buckets).sum(axis=1)
        return result

    def strength(self, number: int) -> Floats:
        """A bucket's middle quantile: in the second round, its hand's bucket's."""
        buckets = self.states(1) if number == 1 else self.hand_buckets
        middle: Floats = ((np.arange(buckets) + 0.5) / buckets).astype(np.float32)
        if number == 1:
            return middle
        result: Floats = np.tile(middle, self.states(1)).astype(np.float32)
        return result


def two_rounds(tie_rule: TieRule) -> tuple[TwoRounds, Buckets]:
    """The bucketed game under ``tie_rule``, and its buckets (about ten seconds)."""
    hands = _Hands(tie_rule)
    strength = hands.against_all(np.ones((len(HANDS), 1)))[:, 0]
    holding_equity = np.zeros(len(HOLDINGS))
    np.add.at(holding_equity, hands.holding_of.ravel(), np.repeat(strength, HAND_SIZE))
    buckets = Buckets(
        _quantiles(holding_equity, HOLDING_BUCKETS), _quantiles(strength, HAND_BUCKETS)
    )
    # weights[m, u]: how many of hand m's four ways to be dealt (which tile came 4th)
    # give its seat the second-round state u.
    states = HOLDING_BUCKETS * HAND_BUCKETS
    weights = np.zeros((len(HANDS), states))
    rows = np.repeat(np.arange(len(HANDS)), HAND_SIZE)
    columns = buckets.holdings[hands.holding_of] * HAND_BUCKETS + buckets.hands[:, None]
    np.add.at(weights, (rows, columns.ravel()), 1.0)
    deals = hands.meeting(weights, weights) / FOURTH_TILE_DEALS
    wins = weights.T @ hands.against_all(weights) / FOURTH_TILE_DEALS
    game = TwoRounds(
        (_margin(deals).astype(np.float32), deals.astype(np.float32)),
        (_margin(wins).astype(np.float32), wins.astype(np.float32)),
        HAND_BUCKETS,
    )
    return game, buckets


def _margin(matrix: Exact) -> Exact:
    """A second-round matrix summed over both seats' ``b2``: the first round's."""
    shaped = matrix.reshape(HOLDING_BUCKETS, HAND_BUCKETS, HOLDING_BUCKETS, HAND_BUCKETS)
    result: Exact = shaped.sum(axis=(1, 3))
    return result


def _quantiles(values: Exact, count: int) -> Ints:
    """Buckets of equal size by ascending ``values`` (the strongest in the last)."""
    order = np.argsort(values, kind="stable")
    result = np.empty(len(values), dtype=np.int64)
    result[order] = np.arange(len(values)) * count // len(values)
    return result


class _Hands:
    """Sums over the hands disjoint from each hand, by inclusion-exclusion.

    For every set ``S`` of 0 to 3 tiles, the hands holding ``S`` are kept sorted
    by showdown key. Then, for hand ``m``, the sum over hands ``o`` sharing no
    tile with ``m`` is the alternating sum over ``S`` within ``m`` of the sums
    over the hands holding ``S`` (the hand ``m`` itself is the one term ``S = m``).
    """

    def __init__(self, tie_rule: TieRule) -> None:
        keys_by_mask = showdown_keys(tie_rule)
        masks = [sum(1 << t.index for t in hand) for hand in HANDS]
        self.keys = np.array([keys_by_mask[m] for m in masks], dtype=np.int64)
        tiles = [[t.index for t in hand] for hand in HANDS]
        holding_index = {sum(1 << t.index for t in h): i for i, h in enumerate(HOLDINGS)}
        self.holding_of = np.array(
            [
                [holding_index[m & ~(1 << t)] for t in hand]
                for m, hand in zip(masks, tiles, strict=True)
            ],
            dtype=np.int64,
        )
        """``holding_of[m, k]``: the holding left when hand ``m``'s ``k``-th tile came 4th."""
        self.levels = [self._level(tiles, size) for size in range(HAND_SIZE)]

    def _level(self, tiles: list[list[int]], size: int) -> _Level:
        number = {s: i for i, s in enumerate(combinations(range(TILES), size))}
        groups = np.array(
            [[number[s] for s in combinations(hand, size)] for hand in tiles], dtype=np.int64
        )
        return _Level(groups, self.keys, len(number))

    def meeting(self, left: Exact, right: Exact) -> Exact:
        """``left.T @ met``, where ``met[m]`` sums ``right[o]`` over every hand ``o``
        disjoint from ``m``. With ``L[S]`` and ``R[S]`` the sums of ``left`` and
        ``right`` over the hands holding ``S``, it is the alternating sum over ``S`` of
        ``L[S].T @ R[S]``: a few products of small matrices, no cumulative sum."""
        out = left.T @ right  # S = m: the hand itself
        for size, level in enumerate(self.levels):
            held = level.sums(left)
            out += (-1) ** size * (held.T @ (held if right is left else level.sums(right)))
        return out

    def against_all(self, weights: Exact) -> Exact:
        """``sum(sign(key[m] - key[o]) * weights[o])`` over the hands ``o`` disjoint from
        ``m``. Summed in float32, half the memory to walk: exact while ``weights`` are
        integers that sum to under 2**24, as the deal counts (at most 4 a hand) do."""
        counts = weights.astype(np.float32)
        out = np.zeros_like(counts)
        for size, level in enumerate(self.levels):
            out += (-1) ** size * level.below_minus_above(counts)
        return out.astype(np.float64)


class _Level:
    """The hands holding each set of ``size`` tiles, sorted by (set, key)."""

    def __init__(self, groups: Ints, keys: Ints, count: int) -> None:
        self.groups, self.count = groups, count
        hands, sets = groups.shape
        span = int(keys.max()) + 2
        member_hand = np.repeat(np.arange(hands), sets)
        member_code = (groups * span + keys[:, None]).ravel()
        order = np.argsort(member_code, kind="stable")
        self.members = member_hand[order]
        code = member_code[order]
        # For each hand and each of its sets: where that set's hands start and end, and
        # where the hands of a lower and of a higher key than its own begin.
        own = groups * span + keys[:, None]
        self.start = np.searchsorted(code, groups * span, "left")
        self.end = np.searchsorted(code, (groups + 1) * span, "left")
        self.low = np.searchsorted(code, own, "left")
        self.high = np.searchsorted(code, own, "right")

    def _cumulative(self, weights: Floats) -> Floats:
        out = np.zeros((len(self.members) + 1, weights.shape[1]), dtype=np.float32)
        np.cumsum(weights[self.members], axis=0, out=out[1:])
        return out

    def sums(self, weights: Exact) -> Exact:
        """``sums[s]``: ``weights`` summed over the hands holding set ``s``."""
        out = np.zeros((self.count, weights.shape[1]))
        for k in range(self.groups.shape[1]):
            np.add.at(out, self.groups[:, k], weights)
        return out

    def below_minus_above(self, weights: Floats) -> Floats:
        c = self._cumulative(weights)
        out = np.zeros_like(weights)
        for k in range(self.start.shape[1]):
            out += c[self.low[:, k]] + c[self.high[:, k]] - c[self.start[:, k]] - c[self.end[:, k]]
        return out
