"""CFR+ over an abstract betting tree, vectorised over holdings, with an exact best response.

The game (a :class:`Game`): in each betting round a seat is in one of a few
private **states** (its holding; or, bucketed, its holding's bucket), the same
for both seats. An information set is a decision node and the acting seat's
state, so every quantity is a vector over states, and one pass over the tree
updates every information set at once. What is dealt enters only through the
game's matrices: the chance that two states meet, and who wins between them.
The one-round game on the 3,276 holdings is :class:`Showdowns`; the bucketed
two-round game is :class:`solver.buckets.TwoRounds`.

CFR+ (Tammelin 2014): regrets are floored at zero after each update, the seats
update alternately, and the average strategy weights iteration ``t`` by ``t``.
Its average strategy converges to an equilibrium of the abstract game; the
best response here measures how far it is, exactly, within the abstraction.

Counterfactual values are kept in chips times dealt pairs; :class:`Solver`
divides by the number of pairs that can meet when it reports chips a hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from qiuqiu.server.house.tree import Node, Tree
from solver.models import Model

Floats = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]


class Game(Protocol):
    """What :class:`Solver` needs of a game, for betting round ``number`` (1 or 2)."""

    @property
    def rounds(self) -> int: ...

    @property
    def pairs(self) -> float:
        """Dealt pairs of holdings that can meet: what per-hand values divide by."""
        ...

    def states(self, number: int) -> int: ...

    def showdown(self, number: int, reach: Matrix) -> Matrix:
        """For each state, what it wins per chip each seat has in, against the other
        seat's ``reach`` (one column a showdown); the same for either seat."""
        ...

    def fold(self, number: int, reach: Matrix) -> Matrix:
        """For each state, the other seat's ``reach`` over the states it can meet."""
        ...

    def expand(self, reach: Floats) -> Floats:
        """A seat's first-round vector as its second round's, when the 4th tile comes."""
        ...

    def collapse(self, values: Floats) -> Floats:
        """Second-round values summed back onto the first round's states."""
        ...

    def strength(self, number: int) -> Floats:
        """Each state's quantile by showdown equity, 0 the weakest to 1 the strongest:
        what an opponent model (:mod:`solver.models`) plays by."""
        ...


@dataclass(frozen=True)
class Showdowns:
    """What decides a showdown between two holdings, and which holdings can meet.

    ``equity[i, j]`` is what seat 0 with holding ``i`` wins per chip each has in
    against seat 1 with holding ``j`` (it is antisymmetric: the game is the same
    from either seat); ``tiles[i]`` lists the cards of holding ``i`` as columns
    into :meth:`blocked`'s inclusion-exclusion, so a fold's value costs no
    holdings-by-holdings product.
    """

    equity: Matrix
    meets: npt.NDArray[np.bool_]
    cards: npt.NDArray[np.float32]
    """``cards[i, c]`` is 1 if holding ``i`` holds card ``c``."""
    card_pairs: npt.NDArray[np.float32]
    """``card_pairs[i, k]`` is 1 if holding ``i`` holds both cards of pair ``k``."""
    full_overlap: bool
    """Whether holdings hold three cards each (the inclusion-exclusion's last term)."""

    rounds = 1

    @property
    def holdings(self) -> int:
        return int(self.equity.shape[0])

    @property
    def pairs(self) -> float:
        return float(self.meets.sum())

    def states(self, number: int) -> int:
        return self.holdings

    def showdown(self, number: int, reach: Matrix) -> Matrix:
        won: Matrix = self.equity @ reach
        return won

    def fold(self, number: int, reach: Matrix) -> Matrix:
        return self.blocked(reach)

    def expand(self, reach: Floats) -> Floats:
        raise ValueError("the one-round game deals no 4th tile before a betting round")

    def collapse(self, values: Floats) -> Floats:
        raise ValueError("the one-round game deals no 4th tile before a betting round")

    def strength(self, number: int) -> Floats:
        return quantiles(self.equity.sum(axis=1, dtype=np.float64))

    def blocked(self, reach: Matrix) -> Matrix:
        """``meets @ reach`` by inclusion-exclusion over shared cards: the opponent's
        reach summed over the holdings that share no card with each holding."""
        total = reach.sum(axis=0, keepdims=True)
        out = total - self.cards @ (self.cards.T @ reach)
        out += self.card_pairs @ (self.card_pairs.T @ reach)
        if self.full_overlap:
            out -= reach
        result: Matrix = out.astype(np.float32, copy=False)
        return result


def check_chances(restricted: Sequence[tuple[float, Model]]) -> None:
    """Raise ValueError unless each model is possible and the seat is sometimes free."""
    if any(p <= 0 for p, _ in restricted) or sum(p for p, _ in restricted) >= 1:
        raise ValueError("each model's chance must be above 0, and all of them below 1")


class Solver:
    """CFR+ on ``tree`` over ``game``; both seats' strategies for every decision node."""

    def __init__(
        self, tree: Tree, game: Game, restricted: Sequence[tuple[float, Model]] = ()
    ) -> None:
        if tree.stakes.betting_rounds != game.rounds:
            raise ValueError(
                f"a tree of {tree.stakes.betting_rounds} betting rounds on a game of {game.rounds}"
            )
        check_chances(restricted)
        self.tree = tree
        self.game = game
        self.decisions = tree.decisions
        self.regrets = {n.index: self._zeros(n) for n in self.decisions}
        self.average = {n.index: self._zeros(n) for n in self.decisions}
        self.iterations = 0
        self._terminals = [n for n in tree.nodes if n.kind in ("fold", "showdown")]
        self.models = [(p, self.fixed(model)) for p, model in restricted]
        self._free = 1.0 - sum(p for p, _ in restricted)
        self._model_reach = [(p, self._reaches(fixed)) for p, fixed in self.models]

    def _zeros(self, node: Node) -> Matrix:
        return np.zeros((self.game.states(node.round), len(node.actions)), np.float32)

    # -- strategies --------------------------------------------------------------

    def current(self, node: Node) -> Matrix:
        return _normalised(self.regrets[node.index])

    def average_strategy(self, node: Node) -> Matrix:
        return _normalised(self.average[node.index])

    def fixed(self, model: Model) -> dict[int, Matrix]:
        """``model``'s strategy at every decision node, for either seat."""
        return {n.index: model(n, self.game.strength(n.round)) for n in self.decisions}

    # -- iterating ---------------------------------------------------------------

    def iterate(self, count: int) -> None:
        for _ in range(count):
            self.iterations += 1
            for player in (0, 1):
                self._update(player)

    def _update(self, player: int) -> None:
        strategies = {n.index: self.current(n) for n in self.decisions}
        reach = self._reaches(strategies)
        t = float(self.iterations)

        def combine(node: Node, children: Matrix) -> Floats:
            if node.player != player:
                theirs: Floats = children.sum(axis=1)
                return theirs
            sigma = strategies[node.index]
            value: Floats = (children * sigma).sum(axis=1)
            regrets = self.regrets[node.index]
            regrets += children - value[:, None]
            np.maximum(regrets, 0.0, out=regrets)
            self.average[node.index] += t * reach[player][node.index][:, None] * sigma
            return value

        self._backward(self._terminal_values(player, self._met(reach), 1 - player), combine)

    def _met(
        self, reach: tuple[dict[int, Floats], dict[int, Floats]]
    ) -> tuple[dict[int, Floats], dict[int, Floats]]:
        """What each seat is met by at the terminals: its free strategy's reach, or with
        each model's chance the model's (a restricted Nash response's game)."""
        if not self.models:
            return reach
        met: tuple[dict[int, Floats], dict[int, Floats]] = ({}, {})
        for seat in (0, 1):
            for n in self._terminals:
                mixed = np.float32(self._free) * reach[seat][n.index]
                for p, model_reach in self._model_reach:
                    mixed += np.float32(p) * model_reach[seat][n.index]
                met[seat][n.index] = mixed
        return met

    def _backward(
        self, values: dict[int, Floats], combine: Callable[[Node, Matrix], Floats]
    ) -> dict[int, Floats]:
        """Values from the terminals up to the root: ``combine`` makes a decision
        node's from its children's (one column each); a deal sums its child's back."""
        for node in reversed(self.tree.nodes):
            if node.kind == "deal":
                values[node.index] = self.game.collapse(values[node.children[0]])
            elif node.kind == "decision":
                children = np.stack([values[c] for c in node.children], axis=1)
                values[node.index] = combine(node, children)
        return values

    def _reaches(
        self, strategies: dict[int, Matrix]
    ) -> tuple[dict[int, Floats], dict[int, Floats]]:
        """Each seat's probability of playing to each node, by state."""
        ones = np.ones(self.game.states(1), np.float32)
        reach: tuple[dict[int, Floats], dict[int, Floats]] = ({0: ones}, {0: ones})
        for node in self.tree.nodes:
            for i, child in enumerate(node.children):
                for seat in (0, 1):
                    mine = reach[seat][node.index]
                    if node.kind == "deal":
                        mine = self.game.expand(mine)
                    elif node.player == seat:
                        mine = mine * strategies[node.index][:, i]
                    reach[seat][child] = mine
        return reach

    def _terminal_values(
        self, player: int, reach: tuple[dict[int, Floats], dict[int, Floats]], opponent: int
    ) -> dict[int, Floats]:
        """``player``'s counterfactual value at every terminal: two matrix products a round."""
        values: dict[int, Floats] = {}
        for number in range(1, self.game.rounds + 1):
            here = [n for n in self._terminals if n.round == number]
            showdowns = [n for n in here if n.kind == "showdown"]
            folds = [n for n in here if n.kind == "fold"]
            if showdowns:
                r = np.stack([reach[opponent][n.index] for n in showdowns], axis=1)
                won = self.game.showdown(number, r)
                # Seat 1's winnings are seat 0's negated, and the matrix is antisymmetric,
                # so the same product serves both seats.
                for k, n in enumerate(showdowns):
                    values[n.index] = won[:, k] * np.float32(n.contributed[0])
            if folds:
                r = np.stack([reach[opponent][n.index] for n in folds], axis=1)
                met = self.game.fold(number, r)
                for k, n in enumerate(folds):
                    lost = n.contributed[n.player]
                    values[n.index] = met[:, k] * np.float32(-lost if n.player == player else lost)
        return values

    # -- measuring ---------------------------------------------------------------

    def best_response_value(self, player: int, strategy: dict[int, Matrix] | None = None) -> float:
        """Chips a hand that ``player``'s best response wins against the other seat's
        ``strategy`` (by default the average strategy)."""
        strategies = strategy or {n.index: self.average_strategy(n) for n in self.decisions}
        reach = self._reaches(strategies)

        def combine(node: Node, children: Matrix) -> Floats:
            best: Floats = children.max(axis=1) if node.player == player else children.sum(axis=1)
            return best

        values = self._backward(self._terminal_values(player, reach, 1 - player), combine)
        return float(values[0].sum(dtype=np.float64)) / self.game.pairs

    def value(self, strategy: dict[int, Matrix] | None = None) -> float:
        """Chips a hand seat 0 wins when both seats play ``strategy`` (the average)."""
        strategies = strategy or {n.index: self.average_strategy(n) for n in self.decisions}
        reach = self._reaches(strategies)

        def combine(node: Node, children: Matrix) -> Floats:
            if node.player == 0:
                mine: Floats = (children * strategies[node.index]).sum(axis=1)
                return mine
            theirs: Floats = children.sum(axis=1)
            return theirs

        values = self._backward(self._terminal_values(0, reach, 1), combine)
        return float(values[0].sum(dtype=np.float64)) / self.game.pairs

    def value_against(
        self, seat: int, model: dict[int, Matrix], strategy: dict[int, Matrix] | None = None
    ) -> float:
        """Chips a hand ``seat`` wins playing ``strategy`` (the average) against the
        other seat's ``model``."""
        strategies = strategy or {n.index: self.average_strategy(n) for n in self.decisions}
        mine = {n.index: strategies[n.index] for n in self.decisions if n.player == seat}
        won = self.value({**model, **mine})
        return won if seat == 0 else -won

    def exploitability(self) -> float:
        """Chips a hand a best response gains on average over both seats, against the
        average strategy: 0 exactly at an equilibrium of the abstract game."""
        return (self.best_response_value(0) + self.best_response_value(1)) / 2


def _normalised(weights: Matrix) -> Matrix:
    total = weights.sum(axis=1, keepdims=True)
    uniform = np.float32(1.0 / weights.shape[1])
    return np.where(total > 0, weights / np.where(total > 0, total, 1), uniform).astype(np.float32)


def quantiles(values: npt.NDArray[np.float64]) -> Floats:
    """Each value's place among ``values``, from 0 (the least) to 1 (the greatest)."""
    order = np.argsort(values, kind="stable")
    result = np.empty(len(values), np.float32)
    result[order] = np.arange(len(values)) / max(len(values) - 1, 1)
    return result


def card_incidence(holdings: Sequence[Sequence[int]], cards: int) -> tuple[Matrix, Matrix]:
    """``(cards, card_pairs)`` incidence matrices of holdings given as card numbers."""
    single = np.zeros((len(holdings), cards), np.float32)
    pair_index = {
        (a, b): k
        for k, (a, b) in enumerate((a, b) for a in range(cards) for b in range(a + 1, cards))
    }
    double = np.zeros((len(holdings), len(pair_index)), np.float32)
    for i, held in enumerate(holdings):
        ordered = sorted(held)
        for c in ordered:
            single[i, c] = 1
        for x in range(len(ordered)):
            for y in range(x + 1, len(ordered)):
                double[i, pair_index[(ordered[x], ordered[y])]] = 1
    return single, double
