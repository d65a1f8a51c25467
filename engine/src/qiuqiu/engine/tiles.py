"""Dominoes: the 28 tiles, their text form, four-tile hands and the deck.

A tile is written high end first (``6-1``) and read in either order. There is
exactly one :class:`Tile` object per domino, so tiles compare and hash by
identity as well as by value, and a hand is a 28-bit mask underneath.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from qiuqiu.engine.errors import InvalidTiles

HIGHEST_SPOT = 6
HAND_SIZE = 4


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Tile:
    """One domino, ``high`` >= ``low``, both from 0 to 6.

    There is one object per domino (get it from :meth:`parse` or
    :data:`ALL_TILES`), so tiles compare by identity, which keeps the ranking
    table and the state machine fast; copies and pickles come back as the same
    object.
    """

    high: int
    low: int
    index: int = field(repr=False)
    spots: int = field(init=False, repr=False)
    text: str = field(init=False, repr=False)
    """``6-1``: written once, since every message about a hand writes tiles."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "spots", self.high + self.low)
        object.__setattr__(self, "text", f"{self.high}-{self.low}")

    def __reduce__(self) -> tuple[Callable[[str], Tile], tuple[str]]:
        return (Tile.parse, (str(self),))

    @property
    def is_double(self) -> bool:
        return self.high == self.low

    @property
    def strength(self) -> tuple[bool, int, int]:
        """Order used by the ``highest_tile`` tie rule: any double beats any
        non-double; doubles by spots; non-doubles by spots, then by the higher end.
        No two tiles share a strength."""
        return (self.is_double, self.spots, self.high)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Tile.parse({str(self)!r})"

    @staticmethod
    def parse(text: str) -> Tile:
        """Read ``"6-1"`` or ``"1-6"``; anything else raises :class:`InvalidTiles`."""
        try:
            return _BY_TEXT[text.strip()]
        except KeyError:
            raise InvalidTiles(
                f"unknown tile {text!r}: write a tile as two spots from 0 to 6, like '6-1'"
            ) from None


ALL_TILES: tuple[Tile, ...] = tuple(
    Tile(high, low, index)
    for index, (high, low) in enumerate(
        (high, low) for high in range(HIGHEST_SPOT + 1) for low in range(high + 1)
    )
)
_BY_TEXT: dict[str, Tile] = {
    **{f"{t.high}-{t.low}": t for t in ALL_TILES},
    **{f"{t.low}-{t.high}": t for t in ALL_TILES},
}


_BY_STRENGTH: dict[Tile, int] = {
    tile: place for place, tile in enumerate(sorted(ALL_TILES, key=lambda t: t.strength))
}
"""Each tile's place in the order of :attr:`Tile.strength`."""


def parse_tiles(text: str) -> tuple[Tile, ...]:
    """Read tiles separated by spaces or commas, refusing duplicates."""
    tiles = tuple(Tile.parse(word) for word in text.replace(",", " ").split())
    _refuse_duplicates(tiles)
    return tiles


def _refuse_duplicates(tiles: Sequence[Tile]) -> None:
    seen: set[Tile] = set()
    for tile in tiles:
        if tile in seen:
            raise InvalidTiles(f"tile {tile} appears twice")
        seen.add(tile)


@dataclass(frozen=True, slots=True)
class Hand:
    """Four distinct tiles, kept strongest first by :attr:`Tile.strength`.

    ``mask`` is the hand as a 28-bit set of tile indexes: the key of the ranking table.
    """

    tiles: tuple[Tile, Tile, Tile, Tile] = field(compare=False)
    mask: int = field(repr=False)

    def __init__(self, tiles: Iterable[Tile]) -> None:
        # Bots, the dealer and the showdown make hands by the thousand: a look-up for
        # the order, a set for the duplicates, and the four bits by name.
        ordered = tuple(sorted(tiles, key=_BY_STRENGTH.__getitem__, reverse=True))
        if len(ordered) != HAND_SIZE:
            raise InvalidTiles(f"a hand holds exactly 4 tiles, not {len(ordered)}")
        if len(set(ordered)) != HAND_SIZE:
            _refuse_duplicates(ordered)
        a, b, c, d = ordered
        object.__setattr__(self, "tiles", ordered)
        object.__setattr__(self, "mask", 1 << a.index | 1 << b.index | 1 << c.index | 1 << d.index)

    @property
    def spots(self) -> int:
        return sum(t.spots for t in self.tiles)

    def __str__(self) -> str:
        return " ".join(str(t) for t in self.tiles)


def parse_hand(text: str) -> Hand:
    """Read a hand such as ``"3-1 6-6 5-0 5-2"``: four distinct tiles."""
    return Hand(parse_tiles(text))


class Shuffler(Protocol):
    """What the engine needs of a random source; ``secrets.SystemRandom`` is one."""

    def shuffle(self, x: MutableSequence[Tile], /) -> None: ...


def shuffled_deck(rng: Shuffler) -> tuple[Tile, ...]:
    """All 28 tiles in an order drawn from ``rng``."""
    deck = list(ALL_TILES)
    rng.shuffle(deck)
    return tuple(deck)
