"""The dealer bot's threshold policy: how likely its tiles are to win, and what to do about it.

Heads-up the bot plays its solved strategies instead
(:mod:`qiuqiu.server.house.policy`), and against several opponents its
range-aware policy (:mod:`qiuqiu.server.house.multiway`); this policy plays
what is left: no ante, a hand it did not see begin, betting that left the
solved tree.

The bot sees only what one seat may see: its own tiles and public numbers (the
pot, the chips it must call, its legal actions, how many opponents are still in).
Everything here is pure and deterministic, so a table can run it inline and a
test can replay it.

The policy of :func:`decide`, from the bot's chance to win at showdown:

- **Nobody has bet** (it may check): above 0.6 it bets, half the pot, or the
  whole pot above 0.8; otherwise it checks. It never bluffs. The bar is 0.6,
  not an even 0.5, because a player who folds worse hands and calls better ones
  turns a thin bet into a loss; a bigger bet with a bigger edge takes more from
  whoever calls.
- **Facing a bet**: above 0.8 it raises to the smallest full raise plus the pot,
  so a near-certain winner builds the pot. Otherwise it calls when its chance beats the pot odds
  ``to_call / (pot + to_call)``, the one point where a call wins on average
  (``pot`` counts every chip in the middle, current bets included), and folds
  when it does not.

Every amount is clamped into the range the legal actions give, so the bot only
ever does what the engine allows. The policies read legal actions as the engine
gives them or as a ``turn_started`` carries them (:class:`Legal`), so the dealer
bot answers a turn without translating one into the other.
"""

from __future__ import annotations

import logging
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from math import comb
from pathlib import Path
from typing import Literal, Protocol

from qiuqiu.engine import (
    ALL_TILES,
    TIE_RULES,
    InvalidRules,
    InvalidTiles,
    Rank,
    TieRule,
    Tile,
    all_ranks,
)
from qiuqiu.engine.tiles import HAND_SIZE
from qiuqiu.server import collector

log = logging.getLogger(__name__)

STRONG = 0.6
VERY_STRONG = 0.8

_OPPONENT_HANDS = comb(len(ALL_TILES) - HAND_SIZE, HAND_SIZE)  # 10,626 hands beside ours


def win_chance(tiles: Sequence[Tile], opponents: int, tie_rule: TieRule = "highest_tile") -> float:
    """The chance that ``tiles`` (3 before the 4th tile is dealt, or 4) win at showdown.

    Heads-up the chance is exact: every hand the one opponent may hold out of the
    tiles the bot has not seen (and, with 3 tiles, every 4th tile the bot may get)
    counts once, a split as half a win. Against several opponents it treats their
    hands as independent: the heads-up chance to the power ``opponents``. They are
    not quite (they cannot share a tile), but exact enumeration is out of reach
    (two opponents of a 4-tile hand already make 26 million pairs of hands) and a
    simulation of a few hands put the error at about 0.005. With 3 tiles the power
    is taken for each 4th tile and then averaged: one 4th tile plays against every
    opponent, so raising the average instead would undercount the good 4th tiles
    (0.22 instead of 0.27 for ``6-6 5-5 4-1`` against two).
    """
    if len(tiles) not in (HAND_SIZE - 1, HAND_SIZE) or len(set(tiles)) != len(tiles):
        raise InvalidTiles(f"a win chance needs 3 or 4 distinct tiles, not {len(tiles)}")
    if opponents < 1:
        raise ValueError(f"a win chance needs at least one opponent, not {opponents}")
    if tie_rule not in TIE_RULES:
        raise InvalidRules(f"tie_rule must be one of {TIE_RULES}, not {tie_rule!r}")
    return _chance(sum(1 << t.index for t in tiles), opponents, tie_rule)


def prepare(strategies: str | None = None) -> None:
    """Build the look-up tables of both tie rules now, load the house's solved
    strategies (with those in the folder ``strategies`` if given) and build its
    multiway tables (about 0.1, 0.2 and 0.1 s), so the bot's first turn does not
    stall the server's event loop."""
    # Imported here: the house's policies build on this module's, so they import it.
    from qiuqiu.server.house import multiway
    from qiuqiu.server.house.book import SUFFIX
    from qiuqiu.server.house.policy import book

    with collector.paused():
        for tie_rule in TIE_RULES:
            showdown_index(tie_rule)
        shipped = book()
        if strategies is not None:
            added = shipped.add(Path(strategies))
            if any(Path(strategies).glob(f"*{SUFFIX}")):
                log.info(
                    "%d more %s for the dealer bot from %s",
                    len(added),
                    "strategy" if len(added) == 1 else "strategies",
                    strategies,
                )
            else:
                # Most likely the wrong folder: the server starts, but says so.
                log.warning(
                    "no strategy files (*%s) in %s: the dealer bot plays the package's own",
                    SUFFIX,
                    strategies,
                )
        multiway.prepare()


# Unbounded caches are safe: 3,276 three-tile and 20,475 four-tile masks, times 2 tie
# rules and, for _chance, the opponent counts a table can have (1 to 5).
@cache
def _chance(mask: int, opponents: int, tie_rule: TieRule) -> float:
    if mask.bit_count() == HAND_SIZE:
        hands = [mask]
    else:
        hands = [mask | 1 << i for i in range(len(ALL_TILES)) if not mask >> i & 1]
    # Whole numbers until the one division, so the heads-up chance is exact (the
    # annotations say int because mypy types ``int ** int`` as Any).
    doubled: int = sum(_doubled_wins(hand, tie_rule) ** opponents for hand in hands)
    games: int = len(hands) * (2 * _OPPONENT_HANDS) ** opponents
    return doubled / games


@cache
def _doubled_wins(mask: int, tie_rule: TieRule) -> int:
    """Twice the wins plus the splits of the hand ``mask`` against every hand disjoint from it.

    Counted by inclusion-exclusion over the tiles the other hand could share with
    ours: the hands below (or above) our key, minus those holding one of our
    tiles, plus those holding two, minus those holding three. Our own hand, the
    only one holding all four, is neither above nor below itself. Each term is a
    bisect into a presorted list, so a hand costs 15 look-ups, not 10,626 compares.
    """
    keys, holding = showdown_index(tie_rule)
    key = keys[mask]
    below = above = 0
    for shared in _proper_submasks(mask):
        sorted_keys = holding[shared]
        sign = -1 if shared.bit_count() % 2 else 1
        below += sign * bisect_left(sorted_keys, key)
        above += sign * (len(sorted_keys) - bisect_right(sorted_keys, key))
    return _OPPONENT_HANDS + below - above


@cache
def showdown_index(tie_rule: TieRule) -> tuple[dict[int, int], dict[int, list[int]]]:
    """Each hand's key, and for every set of 0 to 3 tiles the sorted keys of the hands holding it.

    A key is the dense rank of what decides a showdown under ``tie_rule``, so one
    integer comparison says win, lose or split, and bisect can count them. It is
    built on first use, once per tie rule (about 0.1 s), which every later call shares.
    """

    def order(r: Rank) -> tuple[int, ...]:
        return (r.strength, r.tiebreak) if tie_rule == "highest_tile" else (r.strength,)

    ranks = all_ranks()
    dense = {o: i for i, o in enumerate(sorted({order(r) for r in ranks}))}
    keys = {r.hand.mask: dense[order(r)] for r in ranks}
    holding: dict[int, list[int]] = {}
    # Appending in key order leaves every list sorted.
    for mask, key in sorted(keys.items(), key=lambda item: item[1]):
        for shared in _proper_submasks(mask):
            holding.setdefault(shared, []).append(key)
    return keys, holding


def _proper_submasks(mask: int) -> Iterator[int]:
    """Every subset of ``mask`` but ``mask`` itself, down to the empty set."""
    shared = mask
    while shared:
        shared = (shared - 1) & mask
        yield shared


class Bounds(Protocol):
    """A range of chips: the engine's ``ChipRange`` or the protocol's."""

    @property
    def min(self) -> int: ...
    @property
    def max(self) -> int: ...


class Legal(Protocol):
    """What the policies read of a seat's legal actions: the engine's ``LegalActions``
    or the protocol's, alike field for field."""

    @property
    def check(self) -> bool: ...
    @property
    def call(self) -> int | None: ...
    @property
    def bet(self) -> Bounds | None: ...
    @property
    def raise_to(self) -> Bounds | None: ...


@dataclass(frozen=True, slots=True)
class Decision:
    """What the bot does. ``amount`` is the chips of a bet, the round total a raise
    reaches (as :meth:`HandState.raise_to` takes it), and ``None`` otherwise."""

    action: Literal["check", "bet", "call", "raise", "fold"]
    amount: int | None = None


def decide(chance: float, *, pot: int, to_call: int, legal: Legal) -> Decision:
    """The bot's move given its ``chance`` to win (see the module docstring for the policy).

    ``pot`` is every chip in the middle, current bets included; ``to_call`` and
    ``legal`` are what :meth:`HandState.to_call` and :meth:`HandState.legal_actions`
    say for the bot's seat, which must be the seat to act in a betting round.
    """
    if legal.check:
        if chance > STRONG and legal.bet is not None:
            size = pot if chance > VERY_STRONG else pot // 2
            return Decision("bet", clamp(size, legal.bet))
        return Decision("check")
    if legal.call is None:
        raise ValueError("the bot may neither check nor call: it is not its turn to bet")
    if chance > VERY_STRONG and legal.raise_to is not None:
        return Decision("raise", clamp(legal.raise_to.min + pot, legal.raise_to))
    # chance > to_call / (pot + to_call), multiplied out so that no division can fail.
    if chance * (pot + to_call) > to_call:
        return Decision("call")
    return Decision("fold")


def clamp(amount: int, allowed: Bounds) -> int:
    """``amount`` brought into ``allowed``: the size the house meant, as the rules let it."""
    # Comparisons, not min and max: those builtins' calls cost a third of a sized move.
    least, most = allowed.min, allowed.max
    return least if amount < least else most if amount > most else amount
