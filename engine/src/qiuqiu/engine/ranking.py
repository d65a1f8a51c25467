"""Hand ranking: categories, cuts, and the table of the 20,475 hands' ranks.

Highest first: Six Gods (exactly ``3-3 4-2 5-1 6-0``), Four Doubles, Pure Big
(39 spots or more), Pure Small (9 spots or fewer), then normal hands. A normal
hand is cut into two pairs, each worth its spots mod 10; the higher pair is
compared first, the lower only on a tie, so 9-9 is the best. Equal hands are
settled by the table's tie rule: ``highest_tile`` (the hand holding the highest
single tile wins, see :attr:`Tile.strength`) or ``split``.

Every hand is ranked once, the first time it is asked for, so :func:`rank` and
:func:`compare` are dictionary look-ups from then on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from functools import cache
from itertools import combinations
from typing import Literal

from qiuqiu.engine.errors import InvalidRules, InvalidTiles
from qiuqiu.engine.tiles import ALL_TILES, HAND_SIZE, Hand, Tile, parse_hand

TieRule = Literal["highest_tile", "split"]
TIE_RULES: tuple[TieRule, ...] = ("highest_tile", "split")

PURE_BIG_SPOTS = 39
PURE_SMALL_SPOTS = 9
SIX_GODS = parse_hand("3-3 4-2 5-1 6-0")


class Category(StrEnum):
    SIX_GODS = "six_gods"
    FOUR_DOUBLES = "four_doubles"
    PURE_BIG = "pure_big"
    PURE_SMALL = "pure_small"
    NORMAL = "normal"


class _Order(IntEnum):
    NORMAL = 0
    PURE_SMALL = 1
    PURE_BIG = 2
    FOUR_DOUBLES = 3
    SIX_GODS = 4


_CATEGORY_ORDER = {category: _Order[category.name] for category in Category}


def pair_value(a: Tile, b: Tile) -> int:
    """A pair is worth its spots mod 10: ``6-1`` with ``5-3`` is 5."""
    return (a.spots + b.spots) % 10


@dataclass(frozen=True, slots=True)
class Cut:
    """A hand cut into two pairs, the higher-valued pair first.

    The pairs may be given in either order; they are stored higher first, so a
    cut is always judged as README's rules say, whoever wrote it down.
    """

    high_pair: tuple[Tile, Tile]
    low_pair: tuple[Tile, Tile]

    def __post_init__(self) -> None:
        if pair_value(*self.high_pair) < pair_value(*self.low_pair):
            high, low = self.low_pair, self.high_pair
            object.__setattr__(self, "high_pair", high)
            object.__setattr__(self, "low_pair", low)

    @property
    def pairs(self) -> tuple[int, int]:
        return (pair_value(*self.high_pair), pair_value(*self.low_pair))

    @property
    def tiles(self) -> tuple[Tile, Tile, Tile, Tile]:
        return (*self.high_pair, *self.low_pair)

    def is_cut_of(self, hand: Hand) -> bool:
        """True if the two pairs are exactly the four tiles of ``hand``."""
        tiles = set(self.tiles)
        return len(tiles) == len(hand.tiles) and tiles == set(hand.tiles)

    def __str__(self) -> str:
        high, low = self.pairs
        return "{} {} | {} {} ({}-{})".format(*self.high_pair, *self.low_pair, high, low)


def cut_with(hand: Hand, a: Tile, b: Tile) -> Cut:
    """The cut of ``hand`` that pairs ``a`` with ``b`` (and the other two together)."""
    if a is b or a not in hand.tiles or b not in hand.tiles:
        raise InvalidTiles(f"{a} and {b} are not two different tiles of the hand {hand}")
    c, d = (t for t in hand.tiles if t is not a and t is not b)
    return Cut((a, b), (c, d))


def cuts(hand: Hand) -> tuple[Cut, Cut, Cut]:
    """The three ways to cut a hand into two pairs."""
    a, b, c, d = hand.tiles
    return (Cut((a, b), (c, d)), Cut((a, c), (b, d)), Cut((a, d), (b, c)))


@dataclass(frozen=True, slots=True)
class Rank:
    """What a hand is worth: its category, the cut it is scored by, and its pairs.

    For a special hand the cut is the best cut too, but it does not count.
    ``strength`` orders hands before any tie rule (category, then pairs);
    ``tiebreak`` encodes the hand's highest tile, which settles ties under
    ``highest_tile``. Both are plain integers so that comparing is cheap.
    """

    hand: Hand
    category: Category
    cut: Cut
    pairs: tuple[int, int] = field(init=False)
    strength: int = field(init=False, repr=False)
    tiebreak: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        pairs = self.cut.pairs
        order = _CATEGORY_ORDER[self.category]
        strength = order * 100 + (pairs[0] * 10 + pairs[1] if order is _Order.NORMAL else 0)
        is_double, spots, high = self.highest.strength
        object.__setattr__(self, "pairs", pairs)
        object.__setattr__(self, "strength", strength)
        object.__setattr__(self, "tiebreak", is_double * 1000 + spots * 10 + high)

    @property
    def highest(self) -> Tile:
        return self.hand.tiles[0]

    def __str__(self) -> str:
        if self.category is Category.NORMAL:
            return f"{self.pairs[0]}-{self.pairs[1]}"
        return self.category.value.replace("_", " ")


def category_of(hand: Hand) -> Category:
    if hand == SIX_GODS:
        return Category.SIX_GODS
    if all(t.is_double for t in hand.tiles):
        return Category.FOUR_DOUBLES
    if hand.spots >= PURE_BIG_SPOTS:
        return Category.PURE_BIG
    if hand.spots <= PURE_SMALL_SPOTS:
        return Category.PURE_SMALL
    return Category.NORMAL


def _best_cut(hand: Hand) -> Cut:
    return max(cuts(hand), key=lambda cut: cut.pairs)


def rank_with_cut(hand: Hand, cut: Cut) -> Rank:
    """The rank of ``hand`` scored by a cut its holder declared (``manual_split``)."""
    if not cut.is_cut_of(hand):
        raise InvalidTiles(f"the cut {cut} is not a cut of the hand {hand}")
    return Rank(hand, category_of(hand), cut)


_RANKS: dict[int, Rank] = {}
"""Each hand's rank by its tiles' mask, kept once asked for: ranking all 20,475 at
import took a third of a second of every program's start, a client's too."""


def rank(hand: Hand) -> Rank:
    """The rank of ``hand`` scored by its best cut (a look-up once ranked)."""
    found = _RANKS.get(hand.mask)
    if found is None:
        found = _RANKS[hand.mask] = Rank(hand, category_of(hand), _best_cut(hand))
    return found


def rank_dealt(tiles: Sequence[Tile]) -> Rank:
    """The rank of four tiles dealt from one deck, by their best cut: ``rank(Hand(tiles))``.

    The showdown ranks every hand still in; tiles from one deck need none of the
    sorting and checks of making a :class:`Hand`, which would cost it four times the
    look-up.
    """
    a, b, c, d = tiles
    found = _RANKS.get(1 << a.index | 1 << b.index | 1 << c.index | 1 << d.index)
    return rank(Hand(tiles)) if found is None else found


@cache
def all_ranks() -> tuple[Rank, ...]:
    """Every one of the 20,475 four-tile hands, ranked."""
    return tuple(rank(Hand(tiles)) for tiles in combinations(ALL_TILES, HAND_SIZE))


def compare_ranks(a: Rank, b: Rank, tie_rule: TieRule = "highest_tile") -> int:
    """1 if ``a`` beats ``b``, -1 if it loses, 0 if they split."""
    if a.strength != b.strength:
        return 1 if a.strength > b.strength else -1
    # The tie rule is checked only here, where it matters, to keep the hot path short.
    if tie_rule == "highest_tile":
        return (a.tiebreak > b.tiebreak) - (a.tiebreak < b.tiebreak)
    if tie_rule == "split":
        return 0
    raise InvalidRules(f"tie_rule must be one of {TIE_RULES}, not {tie_rule!r}")


def compare(a: Hand, b: Hand, tie_rule: TieRule = "highest_tile") -> int:
    """Compare two hands by their best cuts: 1 if ``a`` wins, -1 if ``b`` wins, 0 if split.

    Under ``highest_tile`` two hands dealt from one deck never tie; hands that
    share their highest tile (possible only outside a deal) compare equal.
    """
    return compare_ranks(rank(a), rank(b), tie_rule)
