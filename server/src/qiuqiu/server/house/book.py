"""Solved strategies on disk and in memory: the house's book of play.

A strategy file (``strategies/*.qqs``, gzip) is one JSON header line and then
bytes: for each decision node of the tree its :class:`Stakes` build, in the
tree's order, for each state of the acting seat, one byte per action, the
action's probability in 255ths (rounded so that they sum to 255). A state is
the seat's holding, in :data:`HOLDINGS` order, or where the header has
``buckets`` (the two-round game, :mod:`solver.buckets`), the bucket of its
holding in the first round and ``b1 * hand_buckets + b2`` in the second, with
the header's tables giving each holding's ``b1`` and each 4-tile hand's
``b2``. The tree itself is not stored: both sides build it from the header's
stakes. Loading is the standard library only (gzip, json, bytes), a few
milliseconds a file.

A strategy whose header says ``"lean": true`` is a lean one
(:mod:`~qiuqiu.server.house.credit`): never the nearest strategy for a table,
only ever played in place of the strategy solved for the same stakes.

"Nearest" strategy for a table: :func:`Book.nearest` keeps the solved stakes
whose betting rules match the table's (rounds, tie rule, then ``min_bet``,
``max_bet`` and ``max_raises`` in antes, in that order of importance), and among
them the stack depth closest to the hand's on a log scale (a 49-ante stack is
as far from 24 as from 99).
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from qiuqiu.engine import TableRules, TieRule, Tile
from qiuqiu.server.errors import StrategiesUnreadable
from qiuqiu.server.house.holdings import HOLDING_SIZE, HOLDINGS, hand_number, holding_number
from qiuqiu.server.house.native import Flat, flatten
from qiuqiu.server.house.tree import Node, Stakes, Tree

SUFFIX = ".qqs"
FORMAT = 1
HOLDING_COUNT = len(HOLDINGS)
_REMEMBERED_RULES = 4096
"""Tables' rules remembered before starting again: a server's tables come and go."""


@dataclass(frozen=True, slots=True)
class Buckets:
    """What a bucketed strategy's seat sees of its tiles (see the module docstring)."""

    holdings: Sequence[int]
    hands: Sequence[int]
    hand_buckets: int

    @property
    def states(self) -> tuple[int, int]:
        first = max(self.holdings) + 1
        return first, first * self.hand_buckets


@dataclass(frozen=True, slots=True)
class Solved:
    """One solved abstract game: its tree, how it was solved and the probabilities."""

    stakes: Stakes
    tie_rule: TieRule
    tree: Tree
    offsets: dict[int, int]
    """Where each decision node's rows start in ``weights``."""
    weights: bytes
    header: dict[str, Any]
    buckets: Buckets | None
    flat: Flat
    """This strategy as the compiled decision reads it (:mod:`~qiuqiu.server.house.native`)."""

    def states(self, number: int) -> int:
        """How many rows a decision node of betting round ``number`` has."""
        return HOLDING_COUNT if self.buckets is None else self.buckets.states[number - 1]

    def state(self, tiles: Sequence[Tile]) -> int:
        """The row of a seat holding ``tiles`` (in the order dealt: its 4th last)."""
        holding = holding_number(tiles)
        buckets = self.buckets
        if buckets is None:
            return holding
        first = buckets.holdings[holding]
        if len(tiles) == HOLDING_SIZE:
            return first
        return first * buckets.hand_buckets + buckets.hands[hand_number(tiles)]

    @property
    def is_lean(self) -> bool:
        """Whether this is a lean strategy (see the module docstring)."""
        return bool(self.header.get("lean"))

    def guaranteed(self, ante: int) -> float | None:
        """Chips a hand this strategy is sure of on the button against any player (the
        exact best response's figure, in the abstract game), at a table of ``ante``;
        ``None`` if its header does not say."""
        best_response = self.header.get("best_response_vs_second_seat_milli_antes")
        return None if best_response is None else -best_response * ante / 1000

    @property
    def depth(self) -> float:
        """Chips behind after the ante, in antes."""
        return self.stakes.stack / self.stakes.ante

    def row(self, node: Node, state: int) -> bytes:
        """The weights (out of 255) of ``node``'s actions for the acting seat's ``state``."""
        width = len(node.actions)
        start = self.offsets[node.index] + state * width
        return self.weights[start : start + width]


class Strategies(NamedTuple):
    """What a table plays at a stack depth: the nearest solved strategy, and the lean
    one solved for the same stakes if there is one whose risk is known."""

    base: Solved
    lean: Solved | None = None
    risk: float = 0.0
    """Chips a hand the lean strategy may lose beyond the base one, at the table's
    ante (:mod:`~qiuqiu.server.house.credit`)."""


def layout(tree: Tree, buckets: Buckets | None = None) -> tuple[dict[int, int], int]:
    """Each decision node's offset into a strategy file's bytes, and their total."""
    states = (HOLDING_COUNT,) if buckets is None else buckets.states
    offsets: dict[int, int] = {}
    size = 0
    for node in tree.decisions:
        offsets[node.index] = size
        size += len(node.actions) * states[node.round - 1]
    return offsets, size


def header_buckets(header: dict[str, Any]) -> Buckets | None:
    b = header.get("buckets")
    if b is None:
        return None
    return Buckets(tuple(b["holdings"]), tuple(b["hands"]), b["hand_buckets"])


def stakes_header(stakes: Stakes) -> dict[str, Any]:
    """What a strategy file's header says of its stakes (read by :func:`header_stakes`)."""
    return {
        "ante": stakes.ante,
        "min_bet": stakes.min_bet,
        "max_bet": stakes.max_bet,
        "max_raises": stakes.max_raises,
        "stack": stakes.stack,
        "betting_rounds": stakes.betting_rounds,
    }


def header_stakes(header: dict[str, Any]) -> Stakes:
    s = header["stakes"]
    return Stakes(
        ante=s["ante"],
        min_bet=s["min_bet"],
        max_bet=s["max_bet"],
        max_raises=s["max_raises"],
        stack=s["stack"],
        betting_rounds=s["betting_rounds"],
    )


def load(path: Path) -> Solved:
    # One call, not a GzipFile's reads: those cost a fifth of the book's load at start.
    line, _, weights = gzip.decompress(path.read_bytes()).partition(b"\n")
    header = json.loads(line)
    if header.get("format") != FORMAT:
        raise ValueError(f"{path.name}: strategy format {header.get('format')}, not {FORMAT}")
    stakes = header_stakes(header)
    tree = tree_of(stakes)
    buckets = header_buckets(header)
    offsets, size = layout(tree, buckets)
    if len(weights) != size:
        raise ValueError(f"{path.name}: {len(weights)} bytes of weights, the tree needs {size}")
    flat = flatten(tree, offsets, weights, buckets)
    return Solved(stakes, header["tie_rule"], tree, offsets, weights, header, buckets, flat)


@cache
def tree_of(stakes: Stakes) -> Tree:
    """The tree of ``stakes``, built once: most of a strategy's load, and nothing in it
    changes once built."""
    return Tree(stakes)


def write(path: Path, header: dict[str, Any], weights: bytes) -> None:
    """Write a strategy file (the solver's side of :func:`load`); fixed mtime, so
    the same solve writes the same bytes."""
    line = json.dumps({**header, "format": FORMAT}, sort_keys=True).encode() + b"\n"
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(line + weights)


class Book:
    """Every strategy shipped in the package (or in ``folder``), loaded once."""

    def __init__(self, folder: Path | None = None) -> None:
        if folder is None:
            files = [
                Path(str(f))
                for f in resources.files("qiuqiu.server.house").joinpath("strategies").iterdir()
                if f.name.endswith(SUFFIX)
            ]
        else:
            files = list(folder.glob(f"*{SUFFIX}"))
        self.solved: list[Solved] = []
        self.leans: dict[tuple[Stakes, TieRule], Solved] = {}
        """The lean strategies, by the stakes and tie rule they were solved for."""
        self._take([load(path) for path in sorted(files)])
        self._for_rules: dict[int, tuple[TableRules, dict[int, Strategies | None]]] = {}
        self._added: set[Path] = set()

    def add(self, folder: Path) -> list[Solved]:
        """Load the strategies in ``folder`` too (an operator's, solved ahead of time for
        its tables), once however often asked; a file that does not load raises
        :class:`~qiuqiu.server.errors.StrategiesUnreadable` naming it."""
        added: list[Solved] = []
        if folder.resolve() in self._added:
            return added
        self._added.add(folder.resolve())
        for path in sorted(folder.glob(f"*{SUFFIX}")):
            try:
                added.append(load(path))
            except (OSError, EOFError, KeyError, ValueError) as bad:
                raise StrategiesUnreadable(f"{path}: not a strategy file ({bad})") from bad
        self._take(added)
        self._for_rules.clear()
        return added

    def _take(self, strategies: list[Solved]) -> None:
        for solved in strategies:
            if solved.is_lean:
                self.leans[solved.stakes, solved.tie_rule] = solved
            else:
                self.solved.append(solved)

    def for_rules(self, rules: TableRules, behind: int) -> Strategies | None:
        """The nearest solved game to a table's ``rules`` with ``behind`` chips behind
        the ante (the smaller stack's), and the lean strategy of its stakes if there is
        one; remembered: a table asks each hand."""
        # Keyed by the rules object, which a table keeps (and this holds, so its id is
        # not reused): hashing its seven fields at every hand cost more than the rest.
        known = self._for_rules.get(id(rules))
        if known is None:
            if len(self._for_rules) >= _REMEMBERED_RULES:
                self._for_rules.clear()
            known = self._for_rules[id(rules)] = (rules, {})
        depths = known[1]
        if behind not in depths:
            nearest = self.nearest(
                betting_rounds=rules.betting_rounds,
                tie_rule=rules.tie_rule,
                ante=rules.ante,
                min_bet=rules.min_bet,
                max_bet=rules.max_bet,
                max_raises=rules.max_raises,
                depth=behind / rules.ante,
            )
            depths[behind] = None if nearest is None else self._with_lean(nearest, rules.ante)
        return depths[behind]

    def _with_lean(self, base: Solved, ante: int) -> Strategies:
        lean = self.leans.get((base.stakes, base.tie_rule))
        if lean is None:
            return Strategies(base)
        guaranteed, risky = base.guaranteed(ante), lean.guaranteed(ante)
        if guaranteed is None or risky is None:
            return Strategies(base)
        return Strategies(base, lean, guaranteed - risky)

    def nearest(
        self,
        *,
        betting_rounds: int,
        tie_rule: TieRule,
        ante: int,
        min_bet: int,
        max_bet: int | None,
        max_raises: int | None,
        depth: float,
    ) -> Solved | None:
        """The solved game closest to a table's rules and a hand's stack depth (see the
        module docstring), or ``None`` if no strategy has this many betting rounds."""
        candidates = [s for s in self.solved if s.stakes.betting_rounds == betting_rounds]
        if not candidates or ante <= 0 or depth <= 0:
            return None

        def distance(s: Solved) -> tuple[float, ...]:
            st = s.stakes
            return (
                float(s.tie_rule != tie_rule),
                abs(math.log(min_bet / ante) - math.log(st.min_bet / st.ante)),
                _limit_distance(max_bet, ante, st.max_bet, st.ante),
                _limit_distance(max_raises, 1, st.max_raises, 1),
                abs(math.log(depth) - math.log(s.depth)),
            )

        return min(candidates, key=distance)


def _limit_distance(limit: int | None, unit: int, solved: int | None, solved_unit: int) -> float:
    if limit is None and solved is None:
        return 0.0
    if limit is None or solved is None:
        return math.inf
    return abs(math.log1p(limit / unit) - math.log1p(solved / solved_unit))
