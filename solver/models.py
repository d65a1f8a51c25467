"""Opponents the house expects to meet, as fixed strategies of the abstract game.

An equilibrium loses nothing to anyone, but it also takes little more from a
weak player than the game's value: it does not punish mistakes it was not
solved against. A **restricted Nash response** (Johanson, Zinkevich and
Bowling, "Computing Robust Counter-Strategies", 2007) is solved in a game
where, with probability ``p``, the other seat is forced to play a fixed model,
and otherwise plays its best. The result exploits the model and, against
anyone else, can lose no more than its exploitability, which the best
response measures exactly: ``p`` buys exploitation with exploitability.

The models are the two kinds of bot every house meets first; each is a
function of a node and each state's **strength**, its quantile from 0 (the
weakest state) to 1 (the strongest) by showdown equity:

- :func:`calling_station` checks and calls every bet, whatever it holds;
- :func:`straightforward` bets its strength and never bluffs: the smallest bet
  or raise with strong tiles, a check or a call with fair ones, a fold of the
  rest unless the call costs no more than a quarter of the pot;
- :func:`example_bot` is the same rule with the looser lines of the SDK's
  example bot, ``clients/examples/tile_ranker.py``, which bot writers start
  from: its "strong" (a special hand or a better pair of 8 or more) is three
  hands in four, and with three tiles it calls almost anything.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from qiuqiu.server.house.tree import Node

Floats = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]

Model = Callable[[Node, Floats], Matrix]
"""A fixed strategy: at ``node``, one row of action probabilities a state."""

STRONG = 0.7
"""The straightforward bot's strongest 30% of states bet and raise."""
FAIR = 0.35
"""Its states from here up call a bet; below, they fold to one."""
EXAMPLE_STRONG = {1: 0.35, 2: 0.25}
"""By round, where the example bot's "strong" starts: 65% of three-tile holdings
have a chance of 0.6 or more to be strong with four tiles, 75% of hands are."""
EXAMPLE_FAIR = {1: 0.014, 2: 0.25}
"""And where its "fair" starts: 98.6% of holdings have a chance of 0.3 or more;
with four tiles a hand is strong or it is not."""
CHEAP = 0.25
"""It calls whatever it holds when the call is at most this part of the pot."""


def calling_station(node: Node, strength: Floats) -> Matrix:
    """Checks when it may, calls when it must: never bets, raises or folds."""
    rows = np.zeros((len(strength), len(node.actions)), np.float32)
    rows[:, _plain(node, "check" if "check" in _kinds(node) else "call")] = 1.0
    return rows


def straightforward(node: Node, strength: Floats) -> Matrix:
    """Bets and raises the smallest size when strong, calls when fair, folds weak."""
    return _by_strength(node, strength, STRONG, FAIR)


def example_bot(node: Node, strength: Floats) -> Matrix:
    """:func:`straightforward` with the example bot's lines for strong and fair."""
    return _by_strength(node, strength, EXAMPLE_STRONG[node.round], EXAMPLE_FAIR[node.round])


def _by_strength(node: Node, strength: Floats, strong_from: float, fair_from: float) -> Matrix:
    rows = np.zeros((len(strength), len(node.actions)), np.float32)
    strong = strength >= strong_from
    passive = _plain(node, "check") if "check" in _kinds(node) else None
    if passive is None:
        to_call = max(node.round_bets) - node.round_bets[node.player]
        cheap = to_call <= CHEAP * node.pot
        calls = strong | (strength >= fair_from) | cheap
        rows[calls, _plain(node, "call")] = 1.0
        rows[~calls, _plain(node, "fold")] = 1.0
    else:
        rows[:, passive] = 1.0
    if node.sizes:
        smallest = node.sizes[0][1]
        rows[strong] = 0.0
        rows[strong, smallest] = 1.0
    return rows


def _kinds(node: Node) -> set[str]:
    return {a.kind for a in node.actions}


def _plain(node: Node, kind: str) -> int:
    return next(i for i, a in enumerate(node.actions) if a.kind == kind)
