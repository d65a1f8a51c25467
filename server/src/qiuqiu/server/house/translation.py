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
from collections.abc import Callable
from dataclasses import dataclass

from qiuqiu.server.house.record import Move, Situation
from qiuqiu.server.house.tree import Node, Tree


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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
    low, high = sorted(stacks)
    first, second = (high, low) if low == situation.button else (low, high)
    antes = situation.antes
    return Seats(
        (first, second),
        (stacks[first], stacks[second]),
        (antes.get(first, 0), antes.get(second, 0)),
        min(stacks[low], stacks[high]),
    )


def locate(
    tree: Tree, hand: Seats, situation: Situation, draw: Callable[[int], float]
) -> Located | None:
    """The node the real hand is at, or ``None`` where the betting left the tree.

    ``draw(i)`` is the random number for the ``i``-th translated move.
    """
    first = hand.real[0]
    effective = hand.effective
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
        child = _translate(node, move, pot, bets, put[p], effective, move.seat == situation.seat)
        if child is None:
            child = _between(node, move, pot, bets, draw(i))
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


def _translate(
    node: Node, move: Move, pot: int, bets: list[int], put_in: int, effective: int, house: bool
) -> int | None:
    """The child a move leads to where no draw is needed; ``None`` where one is (or
    the move is not in the tree: :func:`_between` tells)."""
    plain = node.plain.get(move.kind)
    if plain is not None:
        return plain
    if move.kind != node.sized:
        return None
    sizes = node.sizes
    last = sizes[-1][1]
    if (move.all_in or put_in + move.added >= effective) and node.actions[last].all_in:
        return node.children[last]
    x = _size(move, pot, bets)
    if house:
        # The house's own moves were made from abstract actions: the nearest is it.
        nearest = min(sizes, key=lambda o: abs(math.log1p(o[0]) - math.log1p(x)))
        return node.children[nearest[1]]
    if x <= sizes[0][0]:
        return node.children[sizes[0][1]]
    if x >= sizes[-1][0]:
        return node.children[last]
    return None


def _between(node: Node, move: Move, pot: int, bets: list[int], draw: float) -> int | None:
    """An opponent's size between two of the tree's, translated by the mapping."""
    if move.kind != node.sized:
        return None
    x = _size(move, pot, bets)
    for (low, i), (high, j) in itertools.pairwise(node.sizes):
        if low <= x <= high:
            return node.children[i if draw < pseudo_harmonic(x, low, high) else j]
    return None
