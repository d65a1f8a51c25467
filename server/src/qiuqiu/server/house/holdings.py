"""The tiles a seat can hold, numbered once for solver and server.

A seat holds one of the 3,276 three-tile **holdings** before the 4th tile and
one of the 20,475 four-tile **hands** after it. Each is numbered by its place
among all sets of its size in the order of :func:`itertools.combinations` over
:data:`ALL_TILES`: the rows of the solver's matrices and of a strategy file.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from qiuqiu.engine import ALL_TILES, Tile

HOLDING_SIZE = 3
HAND_SIZE = 4

HOLDINGS: tuple[tuple[Tile, ...], ...] = tuple(combinations(ALL_TILES, HOLDING_SIZE))
HANDS: tuple[tuple[Tile, ...], ...] = tuple(combinations(ALL_TILES, HAND_SIZE))
_NUMBER = {sum(1 << t.index for t in tiles): i for i, tiles in enumerate(HOLDINGS)}
_HAND_NUMBER = {sum(1 << t.index for t in tiles): i for i, tiles in enumerate(HANDS)}


def holding_number(tiles: Sequence[Tile]) -> int:
    """The number of the holding that the first three of ``tiles`` make (in any order): a
    seat's tiles in the order dealt, its 4th, once dealt, last. ``KeyError`` if two are
    the same tile, ``IndexError`` for fewer than three."""
    # Unrolled, and no slice of the seat's tiles: the house numbers them at every turn.
    a, b, c = tiles[0], tiles[1], tiles[2]
    return _NUMBER[1 << a.index | 1 << b.index | 1 << c.index]


def hand_number(tiles: Sequence[Tile]) -> int:
    """The number of a 4-tile hand (in any order); ``KeyError`` for anything else."""
    if len(tiles) != HAND_SIZE:
        raise KeyError(tiles)
    a, b, c, d = tiles  # unrolled: the house numbers its hand at every second-round turn
    return _HAND_NUMBER[1 << a.index | 1 << b.index | 1 << c.index | 1 << d.index]
