"""The 3,276 three-tile holdings a seat can be dealt, numbered once for solver and server.

A holding's number is its place among all 3-tile sets in the order of
:func:`itertools.combinations` over :data:`ALL_TILES`: the rows of the solver's
matrices and of a strategy file.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

from qiuqiu.engine import ALL_TILES, Tile

HOLDING_SIZE = 3

HOLDINGS: tuple[tuple[Tile, ...], ...] = tuple(combinations(ALL_TILES, HOLDING_SIZE))
_NUMBER = {sum(1 << t.index for t in tiles): i for i, tiles in enumerate(HOLDINGS)}


def holding_number(tiles: Iterable[Tile]) -> int:
    """The number of a 3-tile holding (in any order); ``KeyError`` for anything else."""
    return _NUMBER[sum(1 << t.index for t in tiles)]
