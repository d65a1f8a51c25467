"""Showdown equity between every two 3-tile holdings, exactly.

Before the 4th tile, a holding pair's showdown is an average over the 22 x 21
ways the two 4th tiles can come from the tiles neither holds. ``equity[i, j]``
is holding ``i``'s wins minus its losses against holding ``j`` over those
deals, divided by 462, so a showdown where each seat has ``c`` chips in pays
the first ``c * equity[i, j]``. Holdings that share a tile never meet: their
entry is 0 and ``meets[i, j]`` is False.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from qiuqiu.engine import ALL_TILES, TieRule, all_ranks
from qiuqiu.server.house.holdings import HOLDING_SIZE, HOLDINGS

TILES = len(ALL_TILES)
FOURTH_TILE_DEALS = (TILES - 6) * (TILES - 7)

Floats = npt.NDArray[np.float32]
Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int32]


def showdown_keys(tie_rule: TieRule) -> dict[int, int]:
    """Each 4-tile hand's dense rank under ``tie_rule``: a higher key wins, equal keys split."""

    def order(strength: int, tiebreak: int) -> tuple[int, ...]:
        return (strength, tiebreak) if tie_rule == "highest_tile" else (strength,)

    ranks = all_ranks()
    dense = {o: i for i, o in enumerate(sorted({order(r.strength, r.tiebreak) for r in ranks}))}
    return {r.hand.mask: dense[order(r.strength, r.tiebreak)] for r in ranks}


def holding_masks() -> npt.NDArray[np.int64]:
    return np.array([sum(1 << t.index for t in h) for h in HOLDINGS], dtype=np.int64)


def completed_keys(tie_rule: TieRule) -> Ints:
    """``keys[h, t]``: the showdown key of holding ``h`` with ``t`` as its 4th tile
    (-1 where ``t`` is one of its own)."""
    keys = showdown_keys(tie_rule)
    out = np.full((len(HOLDINGS), TILES), -1, dtype=np.int32)
    for h, tiles in enumerate(HOLDINGS):
        mask = sum(1 << t.index for t in tiles)
        for t in range(TILES):
            if not mask >> t & 1:
                out[h, t] = keys[mask | 1 << t]
    return out


def meeting(masks: npt.NDArray[np.int64]) -> Bools:
    """Which holdings can be dealt together: those that share no tile."""
    result: Bools = (masks[:, None] & masks[None, :]) == 0
    return result


def equity_matrix(tie_rule: TieRule) -> tuple[Floats, Bools]:
    """``(equity, meets)`` for every pair of holdings (see the module docstring), in a
    few seconds: counted by ranks rather than deal by deal.

    For holdings ``i`` and ``j`` that meet, with ``K[h, t]`` the key of holding ``h``
    completed by tile ``t`` and ``F`` the 22 tiles neither holds, the count is the sum
    of ``sign(K[i, a] - K[j, b])`` over ``a`` and ``b`` in ``F``, ``a != b``. Summed
    over every 4th tile each holding could get instead (``a`` not in ``i``, ``b`` not
    in ``j``), it is one product of rank histograms; what that sum has too many is
    then taken off: ``a`` among ``j``'s tiles, ``b`` among ``i``'s, and ``a == b``.
    """
    keys = completed_keys(tie_rule)
    n, ranks = len(HOLDINGS), int(keys.max()) + 1
    free = keys >= 0
    # counts[h, k]: how many of h's 4th tiles give it key k; against[h, k]: the sum of
    # sign(k - K[h, t]) over them.
    counts = np.zeros((n, ranks), dtype=np.int32)
    np.add.at(counts, (np.nonzero(free)[0], keys[free]), 1)
    below = np.cumsum(counts, axis=1) - counts
    against = 2 * below + counts - free.sum(axis=1, keepdims=True, dtype=np.int32)
    # Every 4th tile for each: exact in float32, each entry a small integer.
    total = np.rint(counts.astype(np.float32) @ against.T.astype(np.float32)).astype(np.int32)
    # seen[u][i, j]: K[i, the u-th tile of j], the key i would have with it.
    tiles = np.array([[t.index for t in h] for h in HOLDINGS])
    seen = [keys[:, tiles[:, u]] for u in range(HOLDING_SIZE)]
    # a among j's tiles (and, by symmetry, b among i's)...
    j_tiles = sum(against[np.arange(n)[None, :], s] for s in seen)
    total -= j_tiles
    total += j_tiles.T
    # ... where a among j's tiles against b among i's was taken off twice;
    for s in seen:
        for r in seen:
            total += np.sign(s - r.T, dtype=np.int32)
    # and a == b, a tile neither holds.
    for t in range(TILES):
        both = free[:, t, None] & free[None, :, t]
        column = keys[:, t]
        total -= np.where(both, np.sign(column[:, None] - column[None, :]), 0)
    meets = meeting(holding_masks())
    equity: Floats = np.where(meets, total / FOURTH_TILE_DEALS, 0.0).astype(np.float32)
    return equity, meets
