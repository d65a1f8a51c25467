"""The compiled look-up against the one in Python: the same action, the same place in
the tree and the same draws, at every turn of thousands of random hands."""

from __future__ import annotations

import dataclasses
import random
import shutil
import sysconfig
from pathlib import Path

import pytest

from qiuqiu.engine import HandState, TableRules, shuffled_deck
from qiuqiu.server.house import native, policy
from qiuqiu.server.house.book import Book
from qiuqiu.server.house.record import Memo, Move
from qiuqiu.server.house.tree import Stakes
from tests.server.house.test_policy import (
    apply,
    random_action,
    shipped,
    situation,
    uniform_strategy,
)

compiled = pytest.mark.skipif(native.decide is None, reason="built without a C compiler")


def test_the_look_up_is_compiled_where_a_c_compiler_is() -> None:
    # uv sync builds the extension wherever Python's C compiler is installed; a build
    # that failed there would only show as a slower house.
    compiler = (sysconfig.get_config_var("CC") or "").split()
    if not compiler or shutil.which(compiler[0]) is None:
        pytest.skip("no C compiler here: the house decides in Python")
    assert native.decide is not None


def random_hands(rules: TableRules, book: Book, seed: int, hands: int) -> int:
    """Play ``hands`` random hands against the house, comparing both look-ups at each of
    its turns; the number of turns compared."""
    rng = random.Random(seed)
    turns = 0
    for n in range(hands):
        house = n % 2
        stacks = {house: 10_000, 1 - house: rng.choice([15, 60, 100, 300, 500, 1500])}
        hand = HandState.start(rules, stacks, button=rng.choice([0, 1]), deck=shuffled_deck(rng))
        moves: list[Move] = []
        memo = Memo()
        while not hand.is_over and hand.actor is not None:
            seat = hand.actor
            if seat != house:
                moves.append(random_action(hand, seat, rng))
                continue
            view = situation(hand, seat, moves, memo)
            both = []
            for solved in (policy._in_python, policy._solved):
                notes = dataclasses.replace(memo, draws=[*memo.draws])
                apart = dataclasses.replace(view, memo=notes)
                stream = random.Random(n * 1000 + len(moves))
                decision = solved(apart, book, stream)
                both.append((decision, notes.draws, notes.solved, notes.base, stream.random()))
            assert both[0] == both[1], (n, moves)
            turns += both[0][0] is not None
            moves.append(apply(hand, seat, policy.decide(view, rng, book)))
    return turns


@compiled
@pytest.mark.parametrize("rounds", [1, 2])
@pytest.mark.parametrize("ante", [10, 7])
def test_the_compiled_look_up_plays_as_the_walk_in_python(rounds: int, ante: int) -> None:
    # An odd ante makes pots whose halves and thirds round.
    rules = TableRules(betting_rounds=rounds, ante=ante, min_bet=ante)
    assert random_hands(rules, shipped(), seed=rounds, hands=600) > 600


@compiled
def test_the_compiled_look_up_plays_as_the_walk_in_python_at_capped_stakes(
    tmp_path: Path,
) -> None:
    uniform_strategy(tmp_path, Stakes(ante=5, min_bet=10, max_bet=60, max_raises=2, stack=100))
    rules = TableRules(ante=5, min_bet=10, max_bet=60, max_raises=2)
    assert random_hands(rules, Book(tmp_path), seed=7, hands=400) > 400


@compiled
def test_a_move_of_a_kind_the_tree_has_not_leaves_it_in_both() -> None:
    rules = TableRules()
    hand = HandState.start(rules, {0: 500, 1: 10_000}, 1, shuffled_deck(random.Random(3)))
    view = situation(hand, 1, [Move(0, "shove", 1, 10, 10)], Memo())  # type: ignore[arg-type]
    assert policy._in_python(view, shipped(), random.Random(1)) is None
    assert policy._solved(view, shipped(), random.Random(1)) is None
