"""Showdown equity between every two 3-tile holdings, exactly.

Before the 4th tile, a holding pair's showdown is an average over the 22 x 21
ways the two 4th tiles can come from the tiles neither holds. ``equity[i, j]``
is holding ``i``'s wins minus its losses against holding ``j`` over those
deals, divided by 462, so a showdown where each seat has ``c`` chips in pays
the first ``c * equity[i, j]``. Holdings that share a tile never meet: their
entry is 0 and ``meets[i, j]`` is False.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from qiuqiu.engine import ALL_TILES, TieRule, all_ranks
from qiuqiu.server.house.holdings import HOLDINGS

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
    """``(equity, meets)`` for every pair of holdings (see the module docstring)."""
    meets = meeting(holding_masks())
    return equity_rows(tie_rule, range(len(HOLDINGS))), meets


def equity_rows(tie_rule: TieRule, rows: Iterable[int]) -> Floats:
    """The rows ``rows`` of the equity matrix (about 10 ms a row)."""
    keys = completed_keys(tie_rule)
    masks = holding_masks()
    meets = meeting(masks)
    holds = np.array([[m >> t & 1 for t in range(TILES)] for m in masks], dtype=bool)
    other_tile = ~np.eye(TILES, dtype=bool)
    wanted = list(rows)
    equity = np.zeros((len(wanted), len(HOLDINGS)), dtype=np.float32)
    for k, i in enumerate(wanted):
        # Tiles free for both 4th tiles: neither holding has them.
        free = ~holds & ~holds[i]  # (holdings, tiles)
        sign = np.sign(keys[i][None, :, None] - keys[:, None, :]).astype(np.int8)
        allowed = free[:, :, None] & free[:, None, :] & other_tile[None]
        total = np.where(allowed, sign, 0).sum(axis=(1, 2), dtype=np.int32)
        equity[k] = np.where(meets[i], total / FOURTH_TILE_DEALS, 0.0)
    return equity
