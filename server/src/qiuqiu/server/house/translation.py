"""From a real hand's betting to a node of the abstract tree, and back to chips.

Sizes are compared as fractions of the pot: a bet of ``b`` into a pot ``P`` is
``b / P``; a raise to ``r`` over a current bet ``c``, by a seat with ``s`` in the
round, is ``(r - c) / (P + c - s)``, the part above a call against the pot after
that call. The abstract tree's actions are measured the same way at its own
nodes, so the real stakes need not be the solved ones.

An opponent's size between two abstract sizes ``A < x < B`` is translated
at random by the **pseudo-harmonic mapping** (Ganzfried and Sandholm, 2013): to
``A`` with probability ``(B - x)(1 + A) / ((B - A)(1 + x))``, else to ``B``.
Below the smallest size it is the smallest, above the largest the largest; an
all-in (or a bet the other seat can only call all-in) is the abstract all-in,
but for an opponent's all-in below the smallest size, which leaves the tree: the
house then calls or folds by pot odds (the threshold policy).
The draw for each move is made once and kept for the rest of the hand. The
house's own moves were made from abstract actions, so each is the nearest one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from qiuqiu.server.house.book import Book, Solved
from qiuqiu.server.house.record import Move, Random, Situation
from qiuqiu.server.house.tree import Node


# Not frozen: a frozen dataclass costs four times as much to make, and the house
# makes one at every turn it decides.
@dataclass(slots=True)
class Located:
    """The strategy for the hand's stakes, the abstract node the house is at in it,
    and the real hand's chips there."""

    solved: Solved
    node: Node
    bets: tuple[int, int]
    """Each abstract seat's chips in the round of the turn."""
    left: tuple[int, int]
    """Each abstract seat's chips not yet in the hand."""


def pseudo_harmonic(x: float, low: float, high: float) -> float:
    """The chance that ``x`` (``low <= x <= high``) translates to ``low``."""
    return (high - x) * (1 + low) / ((high - low) * (1 + x))


def locate(situation: Situation, strategies: Book, rng: Random) -> Located | None:
    """Where the house is in the nearest solved game, or ``None`` where there is none
    (not heads-up, not seen from its start, no ante or no strategy) or the betting
    left the tree.

    The tree numbers the seats by who acts first: abstract seat 0 is the seat that
    is not the button. Both seats play the smaller stack, all either can lose. The
    random numbers that translate the hand's moves are kept in its
    :class:`~qiuqiu.server.house.record.Memo`, drawn from ``rng`` the first time a
    move needs one.
    """
    stacks = situation.stacks
    rules = situation.rules
    if len(stacks) != 2 or not situation.complete or not rules.ante:
        return None
    (first, stack0), (second, stack1) = stacks.items()
    if first > second:
        first, stack0, second, stack1 = second, stack1, first, stack0
    if first == situation.button:
        first, stack0, second, stack1 = second, stack1, first, stack0
    effective = stack0 if stack0 < stack1 else stack1
    solved = situation.memo.solved or chosen(strategies, situation, effective - rules.ante)
    if solved is None:
        return None
    antes = situation.antes
    put0, put1 = antes.get(first, 0), antes.get(second, 0)
    pot = put0 + put1
    bet0 = bet1 = 0
    nodes = solved.tree.nodes
    node = nodes[0]
    # Ints, not lists or objects: this is most of what the house's turn costs.
    for i, move in enumerate(situation.moves):
        if node.kind == "deal" and move.round == node.round + 1:
            node = nodes[node.children[0]]
            bet0 = bet1 = 0
        p = 0 if move.seat == first else 1
        if node.kind != "decision" or move.round != node.round or node.player != p:
            return None
        child = node.plain.get(move.kind)
        added = move.added
        if child is None:
            if move.kind != node.sized:
                return None
            x = _size(move, pot, bet0 if bet0 > bet1 else bet1)
            if move.all_in and x < node.sizes[0][0] and move.seat != situation.seat:
                # An all-in for less than the tree's smallest size, as a short stack
                # makes: the tree's all-in stands for a far bigger bet, and answering
                # it so would fold hands the price asks to call. Pot odds answer it.
                return None
            child = _beyond(node, x, move.all_in or (put1 if p else put0) + added >= effective)
            if child is None:
                if move.seat == situation.seat:
                    child = _nearest(node, x)
                else:
                    draws = situation.memo.draws
                    while len(draws) <= i:
                        draws.append(rng.random())
                    child = _between(node, x, draws[i])
        pot += added
        if p:
            bet1 += added
            put1 += added
        else:
            bet0 += added
            put0 += added
        node = nodes[child]
    if node.kind == "deal" and situation.round == node.round + 1:
        node = nodes[node.children[0]]
        bet0 = bet1 = 0
    if node.kind != "decision" or node.round != situation.round:
        return None
    if node.player != (0 if situation.seat == first else 1):
        return None
    return Located(solved, node, (bet0, bet1), (stack0 - put0, stack1 - put1))


def chosen(strategies: Book, situation: Situation, behind: int) -> Solved | None:
    """The strategy of the hand, chosen at the house's first turn in it and kept in its
    memo: the nearest solved one, or on the button, where a lean strategy's risk is
    measured, the lean one of the same stakes when the house's credit with the player
    covers that risk (:mod:`qiuqiu.server.house.credit`)."""
    found = strategies.for_rules(situation.rules, behind)
    if found is None:
        return None
    memo = situation.memo
    memo.base = solved = found.base
    lean = found.lean
    if (
        lean is not None
        and situation.seat == situation.button
        and situation.credit.covers(found.risk)
    ):
        solved = lean
    memo.solved = solved
    return solved


def _size(move: Move, pot: int, current: int) -> float:
    """A sized move against the pot, ``current`` being the round's bet before it."""
    if move.kind == "bet":
        return move.added / pot
    before = move.to - move.added  # the raiser's bet in the round before it raised
    return (move.to - current) / (pot + current - before)


def _beyond(node: Node, x: float, all_in: bool) -> int | None:
    """The child a size ``x`` leads to where no draw is needed: an all-in, or a size
    beyond the tree's smallest or largest; ``None`` where it is between two."""
    sizes = node.sizes
    last = sizes[-1][1]
    if all_in and node.actions[last].all_in:
        return node.children[last]
    if x <= sizes[0][0]:
        return node.children[sizes[0][1]]
    if x >= sizes[-1][0]:
        return node.children[last]
    return None


def _nearest(node: Node, x: float) -> int:
    """The house's own sized move: it was made from an abstract action, so the
    nearest is it."""
    log_x = math.log1p(x)
    nearest = min(node.sizes, key=lambda o: abs(math.log1p(o[0]) - log_x))
    return node.children[nearest[1]]


def _between(node: Node, x: float, draw: float) -> int:
    """An opponent's size ``x`` between two of the tree's (so above its smallest and
    below its largest), translated by the mapping."""
    sizes = node.sizes
    k = 1
    while x > sizes[k][0]:
        k += 1
    (low, i), (high, j) = sizes[k - 1], sizes[k]
    return node.children[i if draw < pseudo_harmonic(x, low, high) else j]
