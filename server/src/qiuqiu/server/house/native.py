"""The house's heads-up decision compiled: the same decisions, in C where it was built.

``_native.c`` decides what :mod:`~qiuqiu.server.house.policy`'s solved branch decides
(the strategy's choice at the hand's first turn is still
:func:`~qiuqiu.server.house.translation.chosen`'s), move for move and draw for draw, over
each strategy's tree flattened here into byte strings. The Python is the reference,
as ``pickle.py`` is to ``_pickle.c``, and tests/server/house/test_native.py holds the C
to it. The C exists for speed alone: walking a hand's moves through the tree's
objects costs the interpreter more than the old threshold policy's whole turn
(BENCHMARKS.md, issue 15).

The extension is optional. ``uv sync`` builds it where it finds a C compiler
(setuptools, server/pyproject.toml); elsewhere :data:`decide` is ``None`` and the house
decides in Python.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from qiuqiu.server.house.tree import Tree

if TYPE_CHECKING:
    from qiuqiu.server.house.book import Buckets
    from qiuqiu.server.strategy import Decision

MOST_ACTIONS = 6
"""Actions a node may have: ``_native.c``'s ``MOST``."""
KINDS = ("check", "call", "fold", "bet", "raise")
"""Actions by the number the C gives them."""
_NODE_KINDS = {"decision": 0, "fold": 1, "showdown": 2, "deal": 3}
_NUMBERS = {kind: number for number, kind in enumerate(KINDS)}

Flat = tuple[bytes, bytes, bytes, bytes | None, bytes | None, int]
"""A strategy as the C reads it: its tree's ints and doubles, its weights, and where
it is bucketed, each holding's bucket, each hand's and how many there are."""

T = TypeVar("T")

decide: Callable[..., Decision | None] | None
"""``decide(chosen, unsized, sized, situation, strategies, rng)`` (``_native.pyi``):
the policy's solved decision at ``situation``, ``None`` where the house has none,
made by the policy's ``unsized`` decisions (by their number in :data:`KINDS`) or
``sized(kind, amount)``, with ``chosen`` choosing the hand's strategy at its first
turn; ``None`` itself where the C was not built."""
try:
    from qiuqiu.server.house._native import decide
except ImportError:  # built without a C compiler: the house decides in Python
    decide = None


def flatten(
    tree: Tree,
    offsets: dict[int, int],
    weights: bytes,
    buckets: Buckets | None,
) -> Flat:
    """A strategy as ``_native.c`` reads it (its enum gives each node's layout)."""
    ints: list[int] = []
    doubles: list[float] = []
    for node in tree.nodes:
        if len(node.actions) > MOST_ACTIONS:
            raise ValueError(f"node {node.index} has {len(node.actions)} actions, C takes six")
        sizes, actions = node.sizes, node.actions
        ints += [
            _NODE_KINDS[node.kind],
            node.player,
            node.round,
            len(actions),
            offsets.get(node.index, -1),
            node.plain.get("check", -1),
            node.plain.get("call", -1),
            node.plain.get("fold", -1),
            -1 if node.sized is None else _NUMBERS[node.sized],
            len(sizes),
            *_padded(node.children, -1),
            *_padded([i for _, i in sizes], -1),
            *_padded([_NUMBERS[a.kind] for a in actions], -1),
            *_padded([int(a.all_in) for a in actions], 0),
        ]
        doubles += _padded([f for f, _ in sizes], 0.0)
        doubles += _padded([a.fraction or 0.0 for a in actions], 0.0)
    if buckets is None:
        holdings = hands = None
        hand_buckets = 0
    else:
        holdings, hands = _packed("i", buckets.holdings), _packed("i", buckets.hands)
        hand_buckets = buckets.hand_buckets
    return _packed("i", ints), _packed("d", doubles), weights, holdings, hands, hand_buckets


def _padded(values: list[T], pad: T) -> list[T]:
    return values + [pad] * (MOST_ACTIONS - len(values))


def _packed(code: str, values: Sequence[int] | Sequence[float]) -> bytes:
    return struct.pack(f"={len(values)}{code}", *values)
