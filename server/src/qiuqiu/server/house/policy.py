"""The house's decision: a look-up in a solved strategy, sampled with the RNG it is given.

:func:`decide` is pure (no clock, no I/O, no global random) and is the one
function both the server's dealer bot and the arena call. Heads-up, in a
betting round the solved strategies cover (see :class:`~qiuqiu.server.house.book.Book`),
it finds the abstract node the betting has reached
(:mod:`~qiuqiu.server.house.translation`), reads the mixed strategy for its
three tiles there, draws one abstract action with ``rng`` and makes it a legal
real amount. Anywhere else (three or more seats, a second betting round, an
ante of 0, a hand it did not see begin, betting that left the tree) it plays
the threshold policy of :mod:`qiuqiu.server.strategy`.
"""

from __future__ import annotations

from functools import cache
from typing import Protocol

from qiuqiu.engine import ChipRange
from qiuqiu.server.house import multiway
from qiuqiu.server.house.book import Book, Solved
from qiuqiu.server.house.holdings import HOLDING_SIZE, holding_number
from qiuqiu.server.house.record import Situation
from qiuqiu.server.house.translation import Located, locate
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
    solved = _solved_for(situation, strategies or book())
    if solved is not None:

        def draw(i: int) -> float:
            while len(situation.draws) <= i:
                situation.draws.append(rng.random())
            return situation.draws[i]

        located = locate(solved.tree, situation, draw)
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
    rules = situation.rules
    if len(situation.stacks) != 2 or len(situation.tiles) != HOLDING_SIZE or not rules.ante:
        return None
    behind = min(situation.stacks.values()) - rules.ante
    return strategies.for_rules(rules, behind)


def _play(solved: Solved, located: Located, situation: Situation, rng: Random) -> Decision:
    node = located.node
    weights = solved.row(node, holding_number(situation.tiles))
    # One uniform draw against the cumulative weights (which sum to 255): what
    # random.choices does, without building its lists on every turn.
    point = rng.random() * sum(weights)
    index = len(weights) - 1
    for i, weight in enumerate(weights):
        point -= weight
        if point < 0:
            index = i
            break
    return _real(node.actions[index], situation)


def _real(action: AbstractAction, situation: Situation) -> Decision:
    """The abstract action as a legal real one at the real pot and stacks."""
    legal = situation.legal
    (opponent,) = situation.opponents
    # What the opponent can still match: betting more only comes back unmatched.
    covered = situation.stacks[opponent] - situation.antes.get(opponent, 0)
    opponent_in = sum(m.added for m in situation.moves if m.seat == opponent)
    opponent_bet = max((m.to for m in situation.moves if m.seat == opponent), default=0)
    match action.kind:
        case "check" | "fold":
            return Decision("check") if legal.check else Decision("fold")
        case "call":
            return Decision("call") if legal.call is not None else Decision("check")
        case "bet":
            if legal.bet is None:
                return Decision("check")
            most = covered - opponent_in
            amount = most if action.all_in else round((action.fraction or 0) * situation.pot)
            return Decision("bet", _clamp(min(amount, most), legal.bet))
        case "raise":
            if legal.raise_to is None:
                return Decision("call")
            bets = _round_bets(situation)
            current = max(bets.values(), default=0)
            mine = bets.get(situation.seat, 0)
            most = opponent_bet + covered - opponent_in
            if action.all_in:
                to = most
            else:
                to_call = current - mine
                to = current + round((action.fraction or 0) * (situation.pot + to_call))
            return Decision("raise", _clamp(min(to, most), legal.raise_to))
    raise AssertionError(action.kind)


def _round_bets(situation: Situation) -> dict[int, int]:
    bets: dict[int, int] = {}
    for move in situation.moves:
        bets[move.seat] = move.to
    return bets


def _clamp(amount: int, allowed: ChipRange) -> int:
    return max(allowed.low, min(amount, allowed.high))
