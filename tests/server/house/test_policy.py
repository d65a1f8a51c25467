"""The house's solved strategy: the abstract tree, the translation, the book and the decision.

Every abstract action is played through the engine at the stakes it was built
for, so the engine refuses any the tree should not have. The decision is then
played through the engine against random opponents with random sizes, and must
always be legal, be a pure function of the seat's view and its RNG, and come
from the solved strategy wherever the hand is heads-up in a solved round.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from qiuqiu.cli.arena.match import duplicate_match
from qiuqiu.cli.arena.seats import entrant
from qiuqiu.engine import HandStarted, HandState, TableRules, shuffled_deck
from qiuqiu.protocol import TableOptions
from qiuqiu.server import strategy
from qiuqiu.server.errors import StrategiesUnreadable
from qiuqiu.server.house import policy, translation
from qiuqiu.server.house.book import SUFFIX, Book, Strategies, layout, stakes_header, write
from qiuqiu.server.house.holdings import HOLDINGS, holding_number
from qiuqiu.server.house.record import Memo, Move, Situation
from qiuqiu.server.house.tree import Node, Stakes, Tree
from qiuqiu.server.strategy import Decision

STAKES = [
    Stakes(ante=10, min_bet=10, max_bet=None, max_raises=None, stack=490),
    Stakes(ante=10, min_bet=20, max_bet=50, max_raises=2, stack=300),
    Stakes(ante=5, min_bet=5, max_bet=None, max_raises=0, stack=45),
    Stakes(ante=10, min_bet=10, max_bet=None, max_raises=None, stack=7),
    Stakes(ante=10, min_bet=10, max_bet=None, max_raises=None, stack=190, betting_rounds=2),
    Stakes(ante=10, min_bet=20, max_bet=50, max_raises=1, stack=300, betting_rounds=2),
]


def paths(tree: Tree) -> Iterator[list[int]]:
    """Every path of action indexes from the root to a terminal (a deal is no action)."""
    stack: list[tuple[Node, list[int]]] = [(tree.nodes[0], [])]
    while stack:
        node, path = stack.pop()
        if node.kind == "deal":
            stack.append((tree.nodes[node.children[0]], path))
            continue
        if node.kind != "decision":
            yield path
            continue
        for i, child in enumerate(node.children):
            stack.append((tree.nodes[child], [*path, i]))


@pytest.mark.parametrize("stakes", STAKES)
def test_every_abstract_action_is_legal_in_the_engine(stakes: Stakes) -> None:
    tree = Tree(stakes)
    rules = TableRules(
        ante=stakes.ante,
        min_bet=stakes.min_bet,
        max_bet=stakes.max_bet,
        max_raises=stakes.max_raises,
        betting_rounds=stakes.betting_rounds,
    )
    deck = shuffled_deck(random.Random(1))
    count = 0
    for path in paths(tree):
        # Seat 1 is the button, so seat 0 acts first, as abstract seat 0 does.
        chips = stakes.ante + stakes.stack
        hand = HandState.start(rules, {0: chips, 1: chips}, 1, deck)
        node = tree.nodes[0]
        for i in path:
            if node.kind == "deal":
                node = tree.nodes[node.children[0]]
            action = node.actions[i]
            assert hand.round == node.round
            seat = hand.actor
            assert seat == node.player
            match action.kind:
                case "check":
                    hand.check(seat)
                case "bet":
                    hand.bet(seat, action.amount)
                case "call":
                    hand.call(seat)
                case "fold":
                    hand.fold(seat)
                case "raise":
                    hand.raise_to(seat, action.amount)
            node = tree.nodes[node.children[i]]
        # The abstract terminal is where the engine's betting ends, with the same chips in
        # (at a fold, the unmatched bet goes back: only the folder's chips must agree).
        assert hand.is_over
        put_in = (hand.seats[0].contributed, hand.seats[1].contributed)
        if node.kind == "showdown":
            assert put_in == node.contributed
        else:
            assert node.kind == "fold"
            assert put_in[node.player] == node.contributed[node.player]
        count += 1
    assert count > 3


def test_pseudo_harmonic_mapping() -> None:
    assert translation.pseudo_harmonic(0.5, 0.5, 1.0) == 1
    assert translation.pseudo_harmonic(1.0, 0.5, 1.0) == 0
    # Between half the pot and the pot, 0.75 goes to the half pot a little less than half the time.
    assert translation.pseudo_harmonic(0.75, 0.5, 1.0) == pytest.approx(3 / 7)


def shipped() -> Book:
    return policy.book()


def test_the_shipped_strategies_load_and_every_row_sums_to_255() -> None:
    book = shipped()
    assert book.solved
    assert {s.stakes.betting_rounds for s in book.solved} == {1, 2}
    assert book.leans
    for solved in [*book.solved, *book.leans.values()]:
        _offsets, size = layout(solved.tree, solved.buckets)
        assert len(solved.weights) == size
        decisions = solved.tree.decisions
        for node in decisions[:5] + decisions[-5:]:
            for state in range(0, solved.states(node.round), 7):
                assert sum(solved.row(node, state)) == 255


def test_the_nearest_strategy_is_the_closest_stack_on_a_log_scale() -> None:
    book = shipped()
    default = book.nearest(
        betting_rounds=1,
        tie_rule="highest_tile",
        ante=10,
        min_bet=10,
        max_bet=None,
        max_raises=None,
        depth=49,
    )
    assert default is not None
    assert default.depth == 49
    depths = sorted({s.depth for s in book.solved if s.tie_rule == "highest_tile"})
    for depth in (1.0, 30.0, 70.0, 5000.0):
        found = book.nearest(
            betting_rounds=1,
            tie_rule="highest_tile",
            ante=10,
            min_bet=10,
            max_bet=None,
            max_raises=None,
            depth=depth,
        )
        assert found is not None
        best = min(depths, key=lambda d: abs((d / depth) if d > depth else (depth / d)))
        assert found.depth == best


def situation(hand: HandState, seat: int, moves: list[Move], memo: Memo) -> Situation:
    options = TableOptions()
    first = hand.log[0]
    assert isinstance(first, HandStarted)
    stacks = dict(first.stacks)
    return Situation(
        seat=seat,
        tiles=hand.seats[seat].tiles,
        rules=hand.rules,
        button=hand.button,
        stacks=stacks,
        antes={s: min(options.ante, stacks[s]) for s in stacks},
        moves=tuple(moves),
        complete=True,
        folded=frozenset(s for s, st in hand.seats.items() if st.folded),
        round=hand.round,
        pot=hand.pot,
        legal=hand.legal_actions(seat),
        memo=memo,
    )


class Halves:
    """An RNG that always draws one half."""

    def random(self) -> float:
        return 0.5


def random_action(hand: HandState, seat: int, rng: random.Random) -> Move:
    legal = hand.legal_actions(seat)
    before, number = hand.seats[seat], hand.round
    choices = ["check"] if legal.check else ["call", "fold"]
    if legal.bet is not None:
        choices += ["bet"] * 2
    if legal.raise_to is not None:
        choices += ["raise"] * 2
    kind = rng.choice(choices)
    if kind == "check":
        hand.check(seat)
    elif kind == "call":
        hand.call(seat)
    elif kind == "fold":
        hand.fold(seat)
    elif kind == "bet":
        assert legal.bet is not None
        hand.bet(seat, rng.randint(legal.bet.min, legal.bet.max))
    else:
        assert legal.raise_to is not None
        hand.raise_to(seat, rng.randint(legal.raise_to.min, legal.raise_to.max))
    after = hand.seats[seat]
    added = before.stack - after.stack
    return Move(seat, kind, number, added, after.round_bet, after.stack == 0)  # type: ignore[arg-type]


def apply(hand: HandState, seat: int, decision: Decision) -> Move:
    before, number = hand.seats[seat], hand.round
    match decision.action:
        case "check":
            hand.check(seat)
        case "call":
            hand.call(seat)
        case "fold":
            hand.fold(seat)
        case "bet":
            assert decision.amount is not None
            hand.bet(seat, decision.amount)
        case "raise":
            assert decision.amount is not None
            hand.raise_to(seat, decision.amount)
    after = hand.seats[seat]
    return Move(
        seat, decision.action, number, before.stack - after.stack, after.round_bet, after.stack == 0
    )


@pytest.mark.parametrize("rounds", [1, 2])
def test_the_house_always_plays_legal_actions_and_mostly_from_the_book(rounds: int) -> None:
    rng = random.Random(2024)
    rules = TableRules(betting_rounds=rounds)
    located = total = 0
    in_round = {1: 0, 2: 0}
    for n in range(400):
        house = n % 2
        stacks = {house: 10_000, 1 - house: rng.choice([100, 300, 500, 1500])}
        hand = HandState.start(rules, stacks, button=rng.choice([0, 1]), deck=shuffled_deck(rng))
        moves: list[Move] = []
        memo = Memo()
        while not hand.is_over and hand.actor is not None:
            seat = hand.actor
            if seat == house:
                view = situation(hand, seat, moves, memo)
                # Apart, with notes of its own: the draws it makes must not be the house's.
                apart = dataclasses.replace(view, memo=Memo())
                found = translation.locate(apart, shipped(), Halves())
                located += found is not None
                total += 1
                in_round[hand.round] += found is not None
                moves.append(apply(hand, seat, policy.decide(view, rng)))
            else:
                moves.append(random_action(hand, seat, rng))
    assert total > 400
    # Random sizes and raise wars leave the tree rarely; it must still be the rule.
    assert located / total > 0.9
    # And the second round is played from the book too, where there is one.
    assert (in_round[2] > 100) == (rounds == 2)


def test_the_decision_is_a_function_of_the_view_and_the_rng() -> None:
    deck = shuffled_deck(random.Random(9))
    hand = HandState.start(TableRules(), {0: 500, 1: 10_000}, 1, deck)
    first = random_action(hand, 0, random.Random(4))

    def decided(seed: int) -> Decision:
        return policy.decide(situation(hand, 1, [first], Memo()), random.Random(seed))

    assert [decided(s) for s in range(40)] == [decided(s) for s in range(40)]
    assert holding_number(hand.seats[1].tiles) in range(len(HOLDINGS))


def uniform_strategy(folder: Path, stakes: Stakes) -> Path:
    """A strategy file for ``stakes`` that mixes every action equally: what the loader
    and the book see of a real one, without the solver."""
    tree = Tree(stakes)
    weights = bytearray()
    for node in tree.decisions:
        width = len(node.actions)
        row = [255 // width + (i < 255 % width) for i in range(width)]
        weights += bytes(row) * len(HOLDINGS)
    header = {"stakes": stakes_header(stakes), "tie_rule": "highest_tile"}
    path = folder / f"uniform{SUFFIX}"
    write(path, header, bytes(weights))
    return path


def test_a_folder_of_strategies_solved_ahead_of_time_serves_its_tables(tmp_path: Path) -> None:
    limited = Stakes(ante=5, min_bet=10, max_bet=60, max_raises=2, stack=100)
    uniform_strategy(tmp_path, limited)
    book = Book()
    rules = TableRules(ante=5, min_bet=10, max_bet=60, max_raises=2)
    nearest = book.for_rules(rules, 100)
    assert nearest is not None
    assert nearest.base.stakes.max_bet is None
    (added,) = book.add(tmp_path)
    assert book.add(tmp_path) == []  # once, however often asked
    # The table's own strategy now, rather than the nearest shipped one.
    assert book.for_rules(rules, 100) == Strategies(added)
    default = book.for_rules(TableRules(), 490)
    assert default is not None
    assert default.base is not added


@pytest.mark.parametrize("files", [[], ["notes.txt"]])
def test_a_folder_without_strategy_files_is_a_warning(
    files: list[str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    for name in files:
        (tmp_path / name).write_text("not a strategy")
    with caplog.at_level(logging.INFO, logger="qiuqiu.server.strategy"):
        strategy.prepare(str(tmp_path))
    (said,) = [r for r in caplog.records if str(tmp_path) in r.getMessage()]
    assert said.levelno == logging.WARNING
    assert f"no strategy files (*{SUFFIX}) in {tmp_path}" in said.getMessage()


def test_a_file_that_is_no_strategy_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / f"broken{SUFFIX}").write_bytes(b"not gzip")
    with pytest.raises(StrategiesUnreadable, match=f"broken{SUFFIX}"):
        Book().add(tmp_path)


def test_a_strategy_file_cut_short_is_refused_by_name(tmp_path: Path) -> None:
    whole = uniform_strategy(
        tmp_path, Stakes(ante=5, min_bet=10, max_bet=60, max_raises=2, stack=100)
    )
    whole.write_bytes(whole.read_bytes()[:-20])
    with pytest.raises(StrategiesUnreadable, match=whole.name):
        Book().add(tmp_path)


def test_strategies_of_the_same_stakes_share_one_tree() -> None:
    book = Book()
    for (stakes, tie_rule), lean in book.leans.items():
        (base,) = (s for s in book.solved if (s.stakes, s.tie_rule) == (stakes, tie_rule))
        assert lean.tree is base.tree
    by_stakes = {s.stakes: s.tree for s in book.solved}
    assert all(s.tree is by_stakes[s.stakes] for s in book.solved)
    assert len(book.leans) == 8


EXPLOITERS = Path(__file__).resolve().parents[3] / "bench/exploiters.py"


def test_an_all_in_for_less_than_the_trees_smallest_bet_is_called_by_pot_odds() -> None:
    """A stack of 11 at ante 10 shoves its last chip into a pot of 21. Even the
    shallowest tree's all-in stands for an ante or more, and answered as one the house
    folded hands the price asks to call; by pot odds it calls every one, so both halves
    of each deal go to the same showdown and the duplicate match cancels to the chip."""
    strategy.prepare()
    result = duplicate_match(
        entrant(f"{EXPLOITERS}:AlwaysShove"),
        entrant("dealer"),
        deals=300,
        options=TableOptions(min_buy_in=11),
        buy_in=11,
        seed=1,
        house=lambda: random.Random(1),
    )
    assert result.scores
    assert set(result.scores) == {0.0}
