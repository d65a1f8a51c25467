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
class Located:
    """The abstract node the house is at, and the real seat of abstract seat 0."""

    node: Node
    first: int


def pseudo_harmonic(x: float, low: float, high: float) -> float:
    """The chance that ``x`` (``low <= x <= high``) translates to ``low``."""
    return (high - x) * (1 + low) / ((high - low) * (1 + x))


def locate(tree: Tree, situation: Situation, draw: Callable[[int], float]) -> Located | None:
    """The node the real hand is at, or ``None`` where the betting left the tree.

    ``draw(i)`` is the random number for the ``i``-th translated move.
    Heads-up only: the seat that is not the button acts first.
    """
    players = sorted(situation.stacks)
    if len(players) != 2 or not situation.complete:
        return None
    first = next(s for s in players if s != situation.button)
    antes = situation.antes
    effective = min(situation.stacks.values())
    pot = sum(antes.values())
    put_in = dict(antes)
    bets = dict.fromkeys(players, 0)
    node = tree.nodes[0]
    for i, move in enumerate(situation.moves):
        if node.kind != "decision" or move.round != 1:
            return None
        if (node.player == 0) != (move.seat == first):
            return None
        child = _translate(node, move, pot, bets, put_in, effective, situation.seat, i, draw)
        if child is None:
            return None
        pot += move.added
        bets[move.seat] += move.added
        put_in[move.seat] += move.added
        node = tree.nodes[child]
    if node.kind != "decision" or (node.player == 0) != (situation.seat == first):
        return None
    return Located(node, first)


def _translate(
    node: Node,
    move: Move,
    pot: int,
    bets: dict[int, int],
    put_in: dict[int, int],
    effective: int,
    house: int,
    number: int,
    draw: Callable[[int], float],
) -> int | None:
    kinds = [a.kind for a in node.actions]
    if move.kind in ("check", "call", "fold"):
        return node.children[kinds.index(move.kind)] if move.kind in kinds else None
    options = [(f, i) for f, i in node.sizes if node.actions[i].kind == move.kind]
    if not options:
        return None
    current = max(bets.values())
    if move.kind == "bet":
        x = move.added / pot
    else:
        x = (move.to - current) / (pot + current - bets[move.seat])
    reaches_all_in = move.all_in or put_in[move.seat] + move.added >= effective
    if reaches_all_in and node.actions[options[-1][1]].all_in:
        return node.children[options[-1][1]]
    if move.seat == house:
        nearest = min(options, key=lambda o: abs(math.log1p(o[0]) - math.log1p(x)))
        return node.children[nearest[1]]
    if x <= options[0][0]:
        return node.children[options[0][1]]
    if x >= options[-1][0]:
        return node.children[options[-1][1]]
    for (low, i), (high, j) in itertools.pairwise(options):
        if low <= x <= high:
            chosen = i if draw(number) < pseudo_harmonic(x, low, high) else j
            return node.children[chosen]
    return None
