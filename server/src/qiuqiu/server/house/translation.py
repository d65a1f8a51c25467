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
all-in (or a bet the other seat can only call all-in) is the abstract all-in.
The draw for each move is made once and kept for the rest of the hand. The
house's own moves were made from abstract actions, so each is the nearest one.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from qiuqiu.server.house.record import Move, Random, Situation
from qiuqiu.server.house.tree import Node, Tree


# Seats and Located are not frozen: a frozen dataclass costs four times as much to
# make, and the house makes one of each a hand, in the turn it decides.
@dataclass(slots=True)
class Seats:
    """A heads-up hand's two seats as the tree numbers them: abstract seat 0 acts
    first (the seat that is not the button), 1 second. The same all hand."""

    real: tuple[int, int]
    """The real seat of each abstract seat."""
    stacks: tuple[int, int]
    """Each seat's chips when the hand started."""
    antes: tuple[int, int]
    effective: int
    """The smaller stack: all either seat can lose."""


@dataclass(slots=True)
class Located:
    """The abstract node the house is at, and the real hand's chips there."""

    node: Node
    bets: tuple[int, int]
    """Each abstract seat's chips in the round of the turn."""
    left: tuple[int, int]
    """Each abstract seat's chips not yet in the hand."""


def pseudo_harmonic(x: float, low: float, high: float) -> float:
    """The chance that ``x`` (``low <= x <= high``) translates to ``low``."""
    return (high - x) * (1 + low) / ((high - low) * (1 + x))


def seats(situation: Situation) -> Seats | None:
    """The hand's seats, or ``None`` unless it is heads-up and seen from its start."""
    stacks = situation.stacks
    if len(stacks) != 2 or not situation.complete:
        return None
    low, high = stacks
    if low > high:
        low, high = high, low
    first, second = (high, low) if low == situation.button else (low, high)
    antes = situation.antes
    a, b = stacks[first], stacks[second]
    return Seats(
        (first, second), (a, b), (antes.get(first, 0), antes.get(second, 0)), a if a < b else b
    )


def locate(tree: Tree, hand: Seats, situation: Situation, rng: Random) -> Located | None:
    """The node the real hand is at, or ``None`` where the betting left the tree.

    The random numbers that translate the hand's moves are kept in its
    :class:`~qiuqiu.server.house.record.Memo`, drawn from ``rng`` the first time
    a move needs one.
    """
    first = hand.real[0]
    put = list(hand.antes)
    pot = put[0] + put[1]
    bets = [0, 0]
    nodes = tree.nodes
    node = nodes[0]
    for i, move in enumerate(situation.moves):
        if node.kind == "deal" and move.round == node.round + 1:
            node = nodes[node.children[0]]
            bets = [0, 0]
        p = 0 if move.seat == first else 1
        if node.kind != "decision" or move.round != node.round or node.player != p:
            return None
        child = node.plain.get(move.kind)
        if child is None:
            child = _translate(node, move, pot, bets, put[p] + move.added >= hand.effective)
            if child is None:
                if move.seat == situation.seat:
                    child = _nearest(node, move, pot, bets)
                else:
                    draws = situation.memo.draws
                    while len(draws) <= i:
                        draws.append(rng.random())
                    child = _between(node, move, pot, bets, draws[i])
                if child is None:
                    return None
        pot += move.added
        bets[p] += move.added
        put[p] += move.added
        node = nodes[child]
    if node.kind == "deal" and situation.round == node.round + 1:
        node = nodes[node.children[0]]
        bets = [0, 0]
    if node.kind != "decision" or node.round != situation.round:
        return None
    if node.player != (0 if situation.seat == first else 1):
        return None
    stacks = hand.stacks
    return Located(node, (bets[0], bets[1]), (stacks[0] - put[0], stacks[1] - put[1]))


def _size(move: Move, pot: int, bets: list[int]) -> float:
    if move.kind == "bet":
        return move.added / pot
    current = max(bets)
    before = move.to - move.added  # the raiser's bet in the round before it raised
    return (move.to - current) / (pot + current - before)


def _translate(node: Node, move: Move, pot: int, bets: list[int], all_in: bool) -> int | None:
    """The child a sized move leads to where no draw is needed: an all-in, or a size
    beyond the tree's smallest or largest; ``None`` where the size is between two
    (or the move is not in the tree: :func:`_between` tells)."""
    if move.kind != node.sized:
        return None
    sizes = node.sizes
    last = sizes[-1][1]
    if (move.all_in or all_in) and node.actions[last].all_in:
        return node.children[last]
    x = _size(move, pot, bets)
    if x <= sizes[0][0]:
        return node.children[sizes[0][1]]
    if x >= sizes[-1][0]:
        return node.children[last]
    return None


def _nearest(node: Node, move: Move, pot: int, bets: list[int]) -> int | None:
    """The house's own sized move: it was made from an abstract action, so the
    nearest is it."""
    if move.kind != node.sized:
        return None
    x = math.log1p(_size(move, pot, bets))
    nearest = min(node.sizes, key=lambda o: abs(math.log1p(o[0]) - x))
    return node.children[nearest[1]]


def _between(node: Node, move: Move, pot: int, bets: list[int], draw: float) -> int | None:
    """An opponent's size between two of the tree's, translated by the mapping."""
    if move.kind != node.sized:
        return None
    x = _size(move, pot, bets)
    for (low, i), (high, j) in itertools.pairwise(node.sizes):
        if low <= x <= high:
            return node.children[i if draw < pseudo_harmonic(x, low, high) else j]
    return None
