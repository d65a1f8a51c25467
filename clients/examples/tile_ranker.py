"""A bot that judges its own tiles with the engine's ranking, and bets on them.

With four tiles it knows its hand: :func:`qiuqiu.engine.rank` gives the best
cut and its value. With three, it tries each tile it has not seen as the
fourth and counts how often the hand would come out strong. It never looks at
anything but its own tiles and the legal actions the server sends.

    uv run python clients/examples/tile_ranker.py --server ws://127.0.0.1:8765 --hands 50
"""

from __future__ import annotations

from functools import cache

from qiuqiu.cli.bot import Action, Bet, Bot, Call, Check, Fold, Raise, Turn, main
from qiuqiu.engine import ALL_TILES, Category, Hand, Tile, rank

STRONG = 8
"""A better pair worth this much or more (or any special hand) counts as strong."""


def strength(tiles: tuple[Tile, ...]) -> float:
    """How likely the hand is strong once it has four tiles, from 0 to 1."""
    # The same tiles in any order give the same answer: worked out once for each set
    # (in an arena match against the dealer, working it out at every turn costs about a
    # seventh of the time).
    return _strength(frozenset(tiles))


@cache
def _strength(tiles: frozenset[Tile]) -> float:
    if len(tiles) == 4:
        return 1.0 if is_strong(Hand(tiles)) else 0.0
    unseen = [t for t in ALL_TILES if t not in tiles]
    return sum(is_strong(Hand((*tiles, t))) for t in unseen) / len(unseen)


def is_strong(hand: Hand) -> bool:
    ranked = rank(hand)
    return ranked.category is not Category.NORMAL or ranked.pairs[0] >= STRONG


class TileRanker(Bot):
    """Bets and raises with a strong hand, calls with a fair one, folds a weak one."""

    def decide(self, turn: Turn) -> Action:
        legal = turn.legal
        chance = strength(turn.tiles)
        if chance >= 0.6:
            if legal.raise_to is not None:
                return Raise(legal.raise_to.min)
            if legal.bet is not None:
                return Bet(legal.bet.min)
        if legal.check:
            return Check()
        if chance >= 0.3 or turn.to_call * 4 <= turn.pot:
            return Call()
        return Fold()


if __name__ == "__main__":
    raise SystemExit(main(TileRanker()))
