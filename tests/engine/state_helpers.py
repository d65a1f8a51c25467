"""Fixed deals and moves for the hand state machine's tests (tests/engine/test_state*.py).

Decks are fixed so every tile is known: :func:`deal` puts the chosen hands first
(each hand's first three tiles in acting order, then each hand's 4th tile) and
the rest of ``ALL_TILES`` after them. :func:`table` seats ``stacks`` at seats
0, 1, ... with the button on the last seat, so seat 0 acts first.
"""

from collections.abc import Sequence
from typing import Any, TypeVar

import pytest

from qiuqiu.engine import (
    ALL_TILES,
    HandState,
    IllegalAction,
    LegalActions,
    Phase,
    TableRules,
    Tile,
    parse_tiles,
)

E = TypeVar("E")

NOTHING = LegalActions()

# Four hands that never share a tile, strongest first.
SIX_GODS = "3-3 4-2 5-1 6-0"
FOUR_DOUBLES = "6-6 5-5 4-4 1-1"
PURE_SMALL = "0-0 1-0 2-0 3-0"
EIGHT_ONE = "6-5 6-4 2-1 3-2"

# README's rules: both make 9-5; the second holds the higher top tile (6-2 over 5-3).
NINE_FIVE_LOW = "4-1 4-0 6-1 5-3"
NINE_FIVE_HIGH = "1-0 2-0 6-2 3-0"
EIGHT_FIVE = "6-6 5-4 6-3 2-1"  # shares no tile with either 9-5

# README's rules: both make 9-8; 5-5 beats 2-2.
NINE_EIGHT_LOW = "4-0 6-5 2-2 6-2"
NINE_EIGHT_HIGH = "2-1 4-4 5-5 5-1"

# 9-9 by its best cut (6-6 5-2 | 5-0 3-1), 7-1 by another; and a 9-4.
NINE_NINE = "3-1 6-6 5-0 5-2"
NINE_FOUR = "5-4 3-2 6-1 1-1"


def deal(*hands: str) -> tuple[Tile, ...]:
    """A deck giving the i-th hand to the i-th seat in acting order."""
    parsed = [parse_tiles(hand) for hand in hands]
    assert len({len(tiles) for tiles in parsed}) == 1, "give every hand 3 tiles, or every hand 4"
    first = [t for tiles in parsed for t in tiles[:3]] + [t for tiles in parsed for t in tiles[3:]]
    assert len(set(first)) == len(first), "the hands share a tile"
    return (*first, *(t for t in ALL_TILES if t not in first))


def table(
    *stacks: int,
    button: int | None = None,
    deck: Sequence[Tile] = ALL_TILES,
    **options: Any,
) -> HandState:
    """A hand with ``stacks`` at seats 0, 1, ...; the button defaults to the last seat."""
    return HandState.start(
        TableRules(**options),
        dict(enumerate(stacks)),
        len(stacks) - 1 if button is None else button,
        deck,
    )


def events(state: HandState, kind: type[E]) -> list[E]:
    return [e for e in state.log if isinstance(e, kind)]


def stacks(state: HandState) -> dict[int, int]:
    return {seat: s.stack for seat, s in state.seats.items()}


def assert_rejected(state: HandState, code: str, action: str, *args: object) -> None:
    """``verify_x`` and ``x`` raise IllegalAction(code), ``can_x`` is False, nothing changes."""
    before = HandState.replay(state.log)
    with pytest.raises(IllegalAction) as verified:
        getattr(state, f"verify_{action}")(*args)
    assert verified.value.code == code
    assert getattr(state, f"can_{action}")(*args) is False
    with pytest.raises(IllegalAction) as applied:
        getattr(state, action)(*args)
    assert applied.value.code == code
    assert state == before


def play(state: HandState, *moves: tuple[Any, ...]) -> None:
    """Apply ``(action, seat, *args)`` moves in turn, each of which must be the actor's."""
    for action, seat, *args in moves:
        assert state.actor == seat, f"expected seat {seat} to act, not {state.actor}"
        getattr(state, action)(seat, *args)


def check_around(state: HandState) -> None:
    """Every seat to act checks until the current betting round closes."""
    current = state.round
    while state.phase is Phase.BETTING and state.round == current:
        assert state.actor is not None
        state.check(state.actor)
