"""The house's decision: a look-up in a solved strategy, sampled with the RNG it is given.

:func:`decide` is pure (no clock, no I/O, no global random) and is the one
function both the server's dealer bot and the arena call. Heads-up, with the
strategies the book has for the table (see :class:`~qiuqiu.server.house.book.Book`),
it finds the abstract node the betting has reached
(:mod:`~qiuqiu.server.house.translation`), reads the mixed strategy for its
tiles there (its holding, or at a two-round table the buckets of its holding
and, in the second round, of its four tiles), draws one abstract action with
``rng`` and makes it a legal real amount; in C where that was built
(:mod:`~qiuqiu.server.house.native`), to the same decisions. Against two or
more opponents it plays the range-aware policy of :mod:`~qiuqiu.server.house.multiway`. Anywhere
else (an ante of 0, a hand it did not see begin, betting that left the tree)
it plays the threshold policy of :mod:`qiuqiu.server.strategy`.
"""

from __future__ import annotations

from functools import cache, lru_cache, partial

from qiuqiu.server.house import multiway, native
from qiuqiu.server.house.book import Book
from qiuqiu.server.house.holdings import HOLDING_SIZE
from qiuqiu.server.house.record import Random, Situation
from qiuqiu.server.house.translation import Located, chosen, locate
from qiuqiu.server.house.tree import AbstractAction
from qiuqiu.server.strategy import Decision, Legal, clamp, win_chance
from qiuqiu.server.strategy import decide as threshold_decide


@cache
def book() -> Book:
    """The strategies shipped in the package, loaded on first use; the server calls
    it at start (via :func:`qiuqiu.server.strategy.prepare`) so no turn waits."""
    return Book()


def decide(situation: Situation, rng: Random, strategies: Book | None = None) -> Decision:
    """What the house does at ``situation`` (its turn in a betting round)."""
    if len(situation.stacks) > 2:
        return multiway.decide(situation, rng)
    if len(situation.tiles) == HOLDING_SIZE + situation.round - 1:
        decision = _solved(situation, strategies or book(), rng)
        if decision is not None:
            return decision
    return threshold(situation)


def threshold(situation: Situation) -> Decision:
    """Today's policy: equity against a random hand, bets and calls by thresholds."""
    opponents = max(len(situation.opponents), 1)
    chance = win_chance(situation.tiles, opponents, situation.rules.tie_rule)
    legal = situation.legal
    return threshold_decide(chance, pot=situation.pot, to_call=legal.call or 0, legal=legal)


def _in_python(situation: Situation, strategies: Book, rng: Random) -> Decision | None:
    """The solved strategy's decision, or ``None`` where the house has none."""
    located = locate(situation, strategies, rng)
    if located is None:
        return None
    solved, node = located.solved, located.node
    weights = solved.row(node, solved.state(situation.tiles))
    # One uniform draw against the row's cumulative weights, which sum to 255 (the
    # file format's promise): what random.choices does, without its lists.
    point = rng.random() * 255
    index, last = 0, len(weights) - 1
    while index < last:
        point -= weights[index]
        if point < 0:
            break
        index += 1
    return _real(node.actions[index], located, situation.legal, situation.pot)


_CHECK, _CALL, _FOLD = Decision("check"), Decision("call"), Decision("fold")
_UNSIZED = (_CHECK, _CALL, _FOLD)
"""The decisions of no amount, by their number in :data:`native.KINDS`."""
# A frozen Decision costs more to make than the rest of the house's turn to look up;
# the same few amounts come back hand after hand.
_sized = lru_cache(maxsize=4096)(Decision)


def _real(action: AbstractAction, located: Located, legal: Legal, pot: int) -> Decision:
    """The abstract action as a legal real one at the real pot and stacks."""
    kind = action.kind
    if kind == "check" or kind == "fold":
        return _CHECK if legal.check else _FOLD
    if kind == "call":
        return _CALL if legal.call is not None else _CHECK
    me = located.node.player
    # What the opponent can still put in: betting more only comes back unmatched.
    left = located.left[1 - me]
    if kind == "bet":
        if legal.bet is None:
            return _CHECK
        amount = left if action.all_in else round((action.fraction or 0) * pot)
        return _sized("bet", clamp(amount if amount < left else left, legal.bet))
    if legal.raise_to is None:
        return _CALL
    bets = located.bets
    most = bets[1 - me] + left
    if action.all_in:
        to = most
    else:
        current = max(bets)
        to = current + round((action.fraction or 0) * (pot + current - bets[me]))
    return _sized("raise", clamp(to if to < most else most, legal.raise_to))


_solved = _in_python if native.decide is None else partial(native.decide, chosen, _UNSIZED, _sized)
"""The solved strategy's decision: compiled where it was built, else in Python."""
