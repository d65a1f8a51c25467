"""The abstract betting game the house's heads-up strategy is solved in.

The real game allows any whole amount between a minimum and a maximum; the
abstraction allows only a few sizes, as fractions of the pot, plus all-in:

- an opening bet of :data:`BET_FRACTIONS` of the pot (half, the pot, twice it),
  or all-in;
- a raise adding :data:`RAISE_FRACTIONS` of the pot the raiser would face after
  calling (a third of it, close to the smallest legal raise, and the pot), or
  all-in; after :data:`SIZED_RAISES` raises in a round only all-in is left.

Each size is clamped into what the engine allows (``min_bet``, ``max_bet``, the
smallest full raise, ``max_raises``), so every abstract action is a legal real
one at the abstract game's stakes. Both seats have the same stack, the smaller
of the two real ones (the chips a heads-up hand can move); ``stack`` is what is
behind after the ante.

The tree is built by plain Python from :class:`Stakes` alone, so the solver and
the server build the same nodes in the same order, and a strategy file holds
only probabilities, indexed by node and action.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

BET_FRACTIONS = (0.5, 1.0, 2.0)
RAISE_FRACTIONS = (1 / 3, 1.0)
SIZED_RAISES = 2

ActionKind = Literal["check", "bet", "call", "raise", "fold"]
NodeKind = Literal["decision", "fold", "showdown", "deal"]


@dataclass(frozen=True, slots=True)
class Stakes:
    """What the abstract game is solved for: the table's betting rules in chips,
    and each seat's chips behind after the ante."""

    ante: int
    min_bet: int
    max_bet: int | None
    max_raises: int | None
    stack: int
    betting_rounds: int = 1


@dataclass(frozen=True, slots=True)
class AbstractAction:
    """``amount`` is the chips of a bet, the round total of a raise, else 0;
    ``fraction`` is its size against the pot (``None`` for all-in and the rest)."""

    kind: ActionKind
    amount: int = 0
    fraction: float | None = None
    all_in: bool = False


@dataclass(slots=True)
class Node:
    """One point of the abstract game. ``contributed`` is each seat's chips in the
    hand (ante included); at a fold, ``player`` is the seat that folded."""

    index: int
    kind: NodeKind
    player: int
    round: int
    contributed: tuple[int, int]
    round_bets: tuple[int, int]
    actions: list[AbstractAction] = field(default_factory=list)
    children: list[int] = field(default_factory=list)
    sizes: list[tuple[float, int]] = field(default_factory=list)
    """Each bet or raise as a fraction of the pot (see :func:`fraction`), with its
    action's index, smallest first: what a real size is translated against."""
    sized: ActionKind | None = None
    """What the sized actions are: bets where nobody has bet, else raises."""
    plain: dict[ActionKind, int] = field(default_factory=dict)
    """The child of each action that has no size (check, call, fold)."""

    @property
    def pot(self) -> int:
        return self.contributed[0] + self.contributed[1]


@dataclass(frozen=True, slots=True)
class _Round:
    """The betting state within a round, as the engine keeps it."""

    to_act: int
    current: int
    full_raise: int
    raises: int
    acted: tuple[bool, bool]


class Tree:
    """Every node of the abstract game, the root first (seat 0 acts first)."""

    def __init__(self, stakes: Stakes) -> None:
        self.stakes = stakes
        self.nodes: list[Node] = []
        total = stakes.ante + stakes.stack
        self._total = total
        self._open_round(1, (stakes.ante, stakes.ante))

    @property
    def decisions(self) -> list[Node]:
        return [n for n in self.nodes if n.kind == "decision"]

    def _add(self, node: Node) -> int:
        node.index = len(self.nodes)
        self.nodes.append(node)
        return node.index

    def _open_round(self, number: int, contributed: tuple[int, int]) -> int:
        if max(contributed) >= self._total:
            # Somebody is all-in: no more betting, the tiles decide.
            return self._end_of_betting(number, contributed)
        state = _Round(to_act=0, current=0, full_raise=0, raises=0, acted=(False, False))
        return self._decision(number, contributed, (0, 0), state)

    def _end_of_betting(self, number: int, contributed: tuple[int, int]) -> int:
        if number < self.stakes.betting_rounds and max(contributed) < self._total:
            deal = self._add(Node(0, "deal", -1, number, contributed, (0, 0)))
            child = self._open_round(number + 1, contributed)
            self.nodes[deal].children.append(child)
            return deal
        return self._add(Node(0, "showdown", -1, number, contributed, (0, 0)))

    def _decision(
        self, number: int, contributed: tuple[int, int], bets: tuple[int, int], state: _Round
    ) -> int:
        p = state.to_act
        index = self._add(Node(0, "decision", p, number, contributed, bets))
        node = self.nodes[index]
        for action in self._actions(contributed, bets, state):
            child = self._after(number, contributed, bets, state, action)
            node.actions.append(action)
            node.children.append(child)
        node.sizes = sorted(
            (fraction(node, a), i) for i, a in enumerate(node.actions) if a.kind in ("bet", "raise")
        )
        if node.sizes:
            node.sized = node.actions[node.sizes[0][1]].kind
        node.plain = {
            a.kind: c
            for a, c in zip(node.actions, node.children, strict=True)
            if a.kind in ("check", "call", "fold")
        }
        return index

    def _actions(
        self, contributed: tuple[int, int], bets: tuple[int, int], state: _Round
    ) -> list[AbstractAction]:
        s = self.stakes
        p = state.to_act
        stack = self._total - contributed[p]
        pot = contributed[0] + contributed[1]
        actions: list[AbstractAction] = []
        if state.current == 0:
            actions.append(AbstractAction("check"))
            high = stack if s.max_bet is None else min(stack, s.max_bet)
            low = min(s.min_bet, stack)
            for fraction in BET_FRACTIONS:
                amount = max(low, min(high, round(fraction * pot)))
                _add_sized(actions, "bet", amount, fraction, amount == stack)
            _add_sized(actions, "bet", high, None, high == stack)
            return actions
        actions.append(AbstractAction("fold"))
        actions.append(AbstractAction("call"))
        to_call = state.current - bets[p]
        all_in_to = bets[p] + stack
        may_raise = (
            (s.max_raises is None or state.raises < s.max_raises)
            and not (state.acted[p] and to_call < max(s.min_bet, state.full_raise))
            and self._total - contributed[1 - p] > 0
            and all_in_to > state.current
        )
        if not may_raise:
            return actions
        cap = all_in_to if s.max_bet is None else min(all_in_to, state.current + s.max_bet)
        low = min(state.current + max(s.min_bet, state.full_raise), all_in_to)
        if state.raises < SIZED_RAISES:
            for fraction in RAISE_FRACTIONS:
                to = max(low, min(cap, state.current + round(fraction * (pot + to_call))))
                _add_sized(actions, "raise", to, fraction, to == all_in_to)
        _add_sized(actions, "raise", cap, None, cap == all_in_to)
        return actions

    def _after(
        self,
        number: int,
        contributed: tuple[int, int],
        bets: tuple[int, int],
        state: _Round,
        action: AbstractAction,
    ) -> int:
        p = state.to_act
        q = 1 - p
        if action.kind == "fold":
            return self._add(Node(0, "fold", p, number, contributed, bets))
        if action.kind == "check":
            acted = _set(state.acted, p)
            if all(acted):
                return self._end_of_betting(number, contributed)
            return self._decision(number, contributed, bets, _replace(state, q, acted))
        if action.kind == "call":
            added = min(state.current - bets[p], self._total - contributed[p])
            contributed = _plus(contributed, p, added)
            return self._end_of_betting(number, contributed)
        if action.kind == "bet":
            added = action.amount
            full = added if added >= self.stakes.min_bet else 0
            new = _Round(q, added, full, state.raises, _set(state.acted, p))
        else:
            added = action.amount - bets[p]
            increment = action.amount - state.current
            full = (
                increment
                if increment >= max(self.stakes.min_bet, state.full_raise)
                else (state.full_raise)
            )
            new = _Round(q, action.amount, full, state.raises + 1, _set(state.acted, p))
        contributed = _plus(contributed, p, added)
        bets = _plus(bets, p, added)
        return self._decision(number, contributed, bets, new)


def fraction(node: Node, action: AbstractAction) -> float:
    """How big a bet or raise is at ``node`` against its pot: a bet of ``b`` into a
    pot ``P`` is ``b / P``; a raise to ``r`` over a current bet ``c`` by a seat
    with ``s`` in the round is ``(r - c) / (P + c - s)``, the part above a call
    against the pot after that call."""
    current = max(node.round_bets)
    if action.kind == "bet":
        return action.amount / node.pot
    to_call = current - node.round_bets[node.player]
    return (action.amount - current) / (node.pot + to_call)


def _add_sized(
    actions: list[AbstractAction],
    kind: ActionKind,
    amount: int,
    fraction: float | None,
    all_in: bool,
) -> None:
    """Add a sized action unless one of the same amount is there (an all-in
    replaces the fraction that reached it, so it is marked all-in)."""
    for i, other in enumerate(actions):
        if other.kind == kind and other.amount == amount:
            if all_in and not other.all_in:
                actions[i] = AbstractAction(kind, amount, other.fraction, True)
            return
    actions.append(AbstractAction(kind, amount, fraction, all_in))


def _set(flags: tuple[bool, bool], p: int) -> tuple[bool, bool]:
    return (True, flags[1]) if p == 0 else (flags[0], True)


def _plus(pair: tuple[int, int], p: int, amount: int) -> tuple[int, int]:
    return (pair[0] + amount, pair[1]) if p == 0 else (pair[0], pair[1] + amount)


def _replace(state: _Round, to_act: int, acted: tuple[bool, bool]) -> _Round:
    return _Round(to_act, state.current, state.full_raise, state.raises, acted)
