"""The house's decision: a look-up in a solved strategy, sampled with the RNG it is given.

:func:`decide` is pure (no clock, no I/O, no global random) and is the one
function both the server's dealer bot and the arena call. Heads-up, with the
strategies the book has for the table (see :class:`~qiuqiu.server.house.book.Book`),
it finds the abstract node the betting has reached
(:mod:`~qiuqiu.server.house.translation`), reads the mixed strategy for its
tiles there (its holding, or at a two-round table the buckets of its holding
and, in the second round, of its four tiles), draws one abstract action with
``rng`` and makes it a legal real amount. Against two or more opponents it
plays the range-aware policy of :mod:`~qiuqiu.server.house.multiway`. Anywhere
else (an ante of 0, a hand it did not see begin, betting that left the tree)
it plays the threshold policy of :mod:`qiuqiu.server.strategy`.
"""

from __future__ import annotations

from functools import cache
from typing import Protocol

from qiuqiu.engine import ChipRange
from qiuqiu.server.house import multiway
from qiuqiu.server.house.book import Book, Solved
from qiuqiu.server.house.holdings import HOLDING_SIZE
from qiuqiu.server.house.record import Situation
from qiuqiu.server.house.translation import Located, locate, seats
from qiuqiu.server.house.tree import AbstractAction
from qiuqiu.server.strategy import Decision, win_chance
from qiuqiu.server.strategy import decide as threshold_decide


@cache
def book() -> Book:
    """The strategies shipped in the package, loaded on first use; the server calls
    it at start (via :func:`qiuqiu.server.strategy.prepare`) so no turn waits."""
    return Book()


class Random(Protocol):
    """Where the house's mixed strategy draws from: the server's CSPRNG when serving."""

    def random(self) -> float: ...


def decide(situation: Situation, rng: Random, strategies: Book | None = None) -> Decision:
    """What the house does at ``situation`` (its turn in a betting round)."""
    if len(situation.stacks) > 2:
        return multiway.decide(situation, rng)
    memo = situation.memo
    if not memo.looked_up:
        memo.seats = seats(situation)
        memo.solved = _solved_for(situation, strategies or book()) if memo.seats else None
        memo.looked_up = True
    solved, hand = memo.solved, memo.seats
    if (
        solved is not None
        and hand is not None
        and len(situation.tiles) == HOLDING_SIZE + situation.round - 1
    ):

        def draw(i: int) -> float:
            while len(memo.draws) <= i:
                memo.draws.append(rng.random())
            return memo.draws[i]

        located = locate(solved.tree, hand, situation, draw)
        if located is not None:
            return _play(solved, located, situation, rng)
    return threshold(situation)


def threshold(situation: Situation) -> Decision:
    """Today's policy: equity against a random hand, bets and calls by thresholds."""
    opponents = max(len(situation.opponents), 1)
    chance = win_chance(situation.tiles, opponents, situation.rules.tie_rule)
    legal = situation.legal
    return threshold_decide(chance, pot=situation.pot, to_call=legal.call or 0, legal=legal)


def _solved_for(situation: Situation, strategies: Book) -> Solved | None:
    """The strategy for the hand's stakes (the same at every turn of the hand)."""
    rules = situation.rules
    if len(situation.stacks) != 2 or not rules.ante:
        return None
    behind = min(situation.stacks.values()) - rules.ante
    return strategies.for_rules(rules, behind)


def _play(solved: Solved, located: Located, situation: Situation, rng: Random) -> Decision:
    node = located.node
    states = situation.memo.states
    state = states.get(node.round)
    if state is None:
        state = states[node.round] = solved.state(situation.tiles)
    weights = solved.row(node, state)
    # One uniform draw against the cumulative weights (which sum to 255): what
    # random.choices does, without building its lists on every turn.
    point = rng.random() * sum(weights)
    index = len(weights) - 1
    for i, weight in enumerate(weights):
        point -= weight
        if point < 0:
            index = i
            break
    return _real(node.actions[index], located, situation)


def _real(action: AbstractAction, located: Located, situation: Situation) -> Decision:
    """The abstract action as a legal real one at the real pot and stacks."""
    legal = situation.legal
    me = located.node.player
    them = 1 - me
    # What the opponent can still put in: betting more only comes back unmatched.
    left = located.left[them]
    bets = located.bets
    match action.kind:
        case "check" | "fold":
            return Decision("check") if legal.check else Decision("fold")
        case "call":
            return Decision("call") if legal.call is not None else Decision("check")
        case "bet":
            if legal.bet is None:
                return Decision("check")
            amount = left if action.all_in else round((action.fraction or 0) * situation.pot)
            return Decision("bet", _clamp(min(amount, left), legal.bet))
        case "raise":
            if legal.raise_to is None:
                return Decision("call")
            most = bets[them] + left
            if action.all_in:
                to = most
            else:
                current = max(bets)
                to_call = current - bets[me]
                to = current + round((action.fraction or 0) * (situation.pot + to_call))
            return Decision("raise", _clamp(min(to, most), legal.raise_to))
    raise AssertionError(action.kind)


def _clamp(amount: int, allowed: ChipRange) -> int:
    return max(allowed.low, min(amount, allowed.high))
