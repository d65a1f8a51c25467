"""The hand state machine, rule by rule (see the docstring of qiuqiu.engine.state).

Decks are fixed so every tile is known: :func:`deal` puts the chosen hands first
(each hand's first three tiles in acting order, then each hand's 4th tile) and
the rest of ``ALL_TILES`` after them. :func:`table` seats ``stacks`` at seats
0, 1, ... with the button on the last seat, so seat 0 acts first.
"""

import random
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import pytest

from qiuqiu.engine import (
    ALL_TILES,
    AnteTaken,
    BetPlaced,
    BetReturned,
    BettingRoundEnded,
    BettingRoundStarted,
    Called,
    Checked,
    ChipRange,
    Cut,
    CutDeclared,
    CuttingStarted,
    Event,
    Folded,
    FourthTileDealt,
    Hand,
    HandEnded,
    HandStarted,
    HandState,
    HandVoided,
    IllegalAction,
    InvalidRules,
    LegalActions,
    Phase,
    PotAwarded,
    Raised,
    Showdown,
    TableRules,
    Tile,
    TilesDealt,
    TurnTimedOut,
    cut_with,
    parse_hand,
    parse_tiles,
    rank,
    shuffled_deck,
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


# -- acting order ----------------------------------------------------------------


def test_the_first_seat_left_of_the_button_acts_first_and_the_order_wraps_around() -> None:
    state = HandState.start(TableRules(), {0: 100, 1: 100, 2: 100, 3: 100}, 2, ALL_TILES)
    assert state.order == (3, 0, 1, 2)
    acted = []
    while state.phase is Phase.BETTING:
        assert state.actor is not None
        acted.append(state.actor)
        state.check(state.actor)
    assert acted == [3, 0, 1, 2]


def test_heads_up_the_seat_after_the_button_acts_first_and_the_button_acts_last() -> None:
    state = HandState.start(TableRules(), {0: 100, 1: 100}, 0, ALL_TILES)
    assert state.order == (1, 0)
    assert state.actor == 1
    state.check(1)
    assert state.actor == 0
    state.bet(0, 20)
    assert state.actor == 1


def test_seat_numbers_need_not_be_contiguous() -> None:
    state = HandState.start(TableRules(), {7: 100, 2: 100, 5: 100}, 5, ALL_TILES)
    assert state.order == (7, 2, 5)
    assert state.actor == 7


def test_each_seat_is_dealt_three_tiles_from_its_place_in_acting_order_then_its_fourth() -> None:
    deck = shuffled_deck(random.Random(7))
    state = HandState.start(TableRules(), {0: 100, 1: 100, 2: 100}, 0, deck)
    assert state.order == (1, 2, 0)
    assert [(e.seat, e.tiles) for e in events(state, TilesDealt)] == [
        (1, deck[0:3]),
        (2, deck[3:6]),
        (0, deck[6:9]),
    ]
    check_around(state)
    assert [(e.seat, e.tile) for e in events(state, FourthTileDealt)] == [
        (1, deck[9]),
        (2, deck[10]),
        (0, deck[11]),
    ]
    assert state.seats[0].tiles == (*deck[6:9], deck[11])


def test_a_seat_that_is_all_in_is_skipped_in_the_acting_order() -> None:
    state = table(100, 5, 100, ante=10)
    assert state.seats[1].all_in
    play(state, ("check", 0))
    assert state.actor == 2
    assert state.legal_actions(1) == NOTHING


def test_only_the_actor_has_legal_actions() -> None:
    state = table(100, 100, 100)
    assert state.legal_actions(0).any
    assert state.legal_actions(1) == NOTHING
    assert state.legal_actions(2) == NOTHING


# -- antes ----------------------------------------------------------------------


def test_every_seat_antes_before_the_tiles_are_dealt_and_then_betting_opens() -> None:
    state = table(100, 100, 100, ante=10)
    kinds = [type(e) for e in state.log]
    assert kinds == [HandStarted, *[AnteTaken] * 3, *[TilesDealt] * 3, BettingRoundStarted]
    assert events(state, AnteTaken) == [AnteTaken(s, 10, False) for s in (0, 1, 2)]
    assert state.pot == 30
    assert stacks(state) == {0: 90, 1: 90, 2: 90}
    assert state.phase is Phase.BETTING
    assert state.round == 1


def test_a_stack_smaller_than_the_ante_antes_everything_and_is_all_in() -> None:
    state = table(5, 100, 100, ante=10)
    assert events(state, AnteTaken)[0] == AnteTaken(0, 5, True)
    assert state.seats[0].stack == 0
    assert state.seats[0].all_in
    assert state.actor == 1
    check_around(state)
    # Seat 0 can win only the 5 it put in from each seat; the rest is a side pot.
    assert [(p.amount, p.eligible) for p in events(state, PotAwarded)] == [
        (15, (0, 1, 2)),
        (10, (1, 2)),
    ]


def test_a_stack_equal_to_the_ante_is_all_in_from_the_ante() -> None:
    state = table(10, 100, 100, ante=10)
    assert events(state, AnteTaken)[0] == AnteTaken(0, 10, True)
    assert state.actor == 1


def test_with_no_ante_nothing_is_taken_and_a_checked_hand_moves_no_chips() -> None:
    state = table(100, 100, ante=0)
    assert events(state, AnteTaken) == []
    assert state.pot == 0
    assert state.actor == 0
    check_around(state)
    assert state.is_over
    assert len(events(state, Showdown)) == 1
    assert events(state, PotAwarded) == []
    assert events(state, HandEnded) == [HandEnded(((0, 100), (1, 100)))]


def test_the_betting_round_is_skipped_when_fewer_than_two_seats_have_chips_behind() -> None:
    state = table(5, 100, ante=10)
    assert events(state, BettingRoundStarted) == []
    assert state.is_over
    assert [e.seat for e in events(state, FourthTileDealt)] == [0, 1]
    assert len(events(state, Showdown)) == 1
    assert [(p.amount, p.eligible) for p in events(state, PotAwarded)] == [
        (10, (0, 1)),
        (5, (1,)),
    ]


def test_a_hand_where_every_seat_is_all_in_from_the_antes_is_over_as_it_starts() -> None:
    state = table(5, 8, 10, ante=10, betting_rounds=2)
    assert state.is_over
    assert events(state, BettingRoundStarted) == []
    assert sum(p.amount for p in events(state, PotAwarded)) == 23
    assert sum(stacks(state).values()) == 23


# -- check, bet, call, fold, raise ------------------------------------------------


def test_before_any_bet_a_seat_may_check_or_bet_from_min_bet_to_its_stack() -> None:
    state = table(1000, 1000, ante=10, min_bet=10)
    assert state.legal_actions(0) == LegalActions(check=True, bet=ChipRange(10, 990))


def test_after_a_bet_a_seat_may_fold_call_or_raise() -> None:
    state = table(1000, 1000, ante=0, min_bet=10)
    assert state.bet(0, 30) == (BetPlaced(0, 30, False),)
    assert state.current_bet == 30
    assert state.legal_actions(1) == LegalActions(fold=True, call=30, raise_to=ChipRange(60, 1000))


def test_a_call_matches_the_bet_and_closes_the_round() -> None:
    state = table(1000, 1000, ante=0)
    play(state, ("bet", 0, 30))
    emitted = state.call(1)
    assert emitted[:3] == (
        Called(1, 30, False),
        BettingRoundEnded(1),
        FourthTileDealt(0, ALL_TILES[6]),
    )
    assert state.is_over
    assert sum(p.amount for p in events(state, PotAwarded)) == 60


def test_a_raise_names_the_round_total_and_reopens_the_betting() -> None:
    state = table(1000, 1000, 1000, ante=0)
    play(state, ("bet", 0, 30), ("call", 1))
    assert state.raise_to(2, 100) == (Raised(2, 100, 100, False),)
    assert state.current_bet == 100
    assert state.actor == 0
    assert state.legal_actions(0) == LegalActions(fold=True, call=70, raise_to=ChipRange(170, 1000))
    play(state, ("call", 0))
    assert state.actor == 1
    assert state.to_call(1) == 70


def test_checking_around_closes_the_round_and_deals_the_fourth_tile() -> None:
    state = table(100, 100, 100)
    check_around(state)
    ended = state.log.index(BettingRoundEnded(1))
    assert [type(e) for e in state.log[ended + 1 : ended + 4]] == [FourthTileDealt] * 3
    assert all(len(s.tiles) == 4 for s in state.seats.values())


def test_an_unknown_seat_is_refused() -> None:
    state = table(100, 100)
    assert_rejected(state, "unknown_seat", "check", 9)
    assert_rejected(state, "unknown_seat", "bet", 9, 10)
    assert_rejected(state, "unknown_seat", "fold", 9)
    assert_rejected(state, "unknown_seat", "call", 9)
    assert_rejected(state, "unknown_seat", "raise_to", 9, 50)
    assert_rejected(state, "unknown_seat", "time_out", 9)


def test_no_seat_may_act_out_of_turn_and_an_attempt_changes_nothing() -> None:
    state = table(1000, 1000, 1000, ante=0)
    for seat in (1, 2):
        assert_rejected(state, "not_your_turn", "check", seat)
        assert_rejected(state, "not_your_turn", "bet", seat, 10)
        assert_rejected(state, "not_your_turn", "time_out", seat)
    play(state, ("bet", 0, 20))
    for seat in (0, 2):
        assert_rejected(state, "not_your_turn", "call", seat)
        assert_rejected(state, "not_your_turn", "fold", seat)
        assert_rejected(state, "not_your_turn", "raise_to", seat, 40)


def test_a_seat_facing_a_bet_cannot_check() -> None:
    state = table(1000, 1000, ante=0)
    play(state, ("bet", 0, 20))
    assert_rejected(state, "cannot_check", "check", 1)


def test_a_seat_cannot_fold_when_there_is_nothing_to_call() -> None:
    state = table(1000, 1000, ante=0)
    assert_rejected(state, "cannot_fold", "fold", 0)
    play(state, ("check", 0))
    assert_rejected(state, "cannot_fold", "fold", 1)


def test_a_seat_cannot_call_when_nobody_has_bet() -> None:
    state = table(1000, 1000)
    assert_rejected(state, "nothing_to_call", "call", 0)


def test_a_seat_cannot_bet_over_an_existing_bet() -> None:
    state = table(1000, 1000, ante=0)
    play(state, ("bet", 0, 20))
    assert_rejected(state, "cannot_bet", "bet", 1, 40)
    assert state.legal_actions(1).bet is None


def test_a_seat_cannot_raise_before_anyone_has_bet() -> None:
    state = table(1000, 1000, ante=0)
    assert_rejected(state, "cannot_raise", "raise_to", 0, 40)
    assert state.legal_actions(0).raise_to is None


@pytest.mark.parametrize("amount", [True, False, -10, 0, 20.0, 12.5, "20", None])
def test_an_amount_must_be_a_positive_whole_number(amount: object) -> None:
    state = table(1000, 1000, ante=0)
    assert_rejected(state, "invalid_amount", "bet", 0, amount)
    play(state, ("bet", 0, 20))
    assert_rejected(state, "invalid_amount", "raise_to", 1, amount)


def test_a_bet_below_min_bet_is_too_small() -> None:
    state = table(1000, 1000, ante=0, min_bet=20)
    assert_rejected(state, "bet_too_small", "bet", 0, 19)
    assert state.can_bet(0, 20)


def test_a_bet_above_max_bet_is_too_large() -> None:
    state = table(1000, 1000, ante=0, min_bet=10, max_bet=100)
    assert state.legal_actions(0).bet == ChipRange(10, 100)
    assert_rejected(state, "bet_too_large", "bet", 0, 101)
    assert state.can_bet(0, 100)


def test_a_bet_above_both_max_bet_and_the_stack_is_too_large_not_short_of_chips() -> None:
    """The stack is not the most the seat may bet: naming it would invite a refusal."""
    state = table(500, 1000, ante=10, max_bet=100)
    assert state.legal_actions(0).bet == ChipRange(10, 100)
    with pytest.raises(IllegalAction) as refused:
        state.bet(0, 491)
    assert refused.value.code == "bet_too_large"
    assert "the largest bet is 100" in str(refused.value)


def test_a_bet_or_raise_above_max_bet_and_a_smaller_stack_is_short_of_chips() -> None:
    """The lower bound is the one named: here the stack is the most the seat may put in."""
    state = table(60, 1000, ante=10, max_bet=100)
    assert state.legal_actions(0).bet == ChipRange(10, 50)
    assert_rejected(state, "not_enough_chips", "bet", 0, 101)
    state = table(1000, 60, ante=10, max_bet=100)
    play(state, ("bet", 0, 10))
    assert state.legal_actions(1).raise_to == ChipRange(20, 50)
    assert_rejected(state, "not_enough_chips", "raise_to", 1, 111)


def test_a_bet_above_the_stack_is_refused_as_not_enough_chips() -> None:
    state = table(100, 1000, ante=10)
    assert state.legal_actions(0).bet == ChipRange(10, 90)
    assert_rejected(state, "not_enough_chips", "bet", 0, 91)
    assert state.bet(0, 90) == (BetPlaced(0, 90, True),)


def test_a_raise_below_the_minimum_raise_is_too_small() -> None:
    state = table(1000, 1000, ante=0, min_bet=10)
    play(state, ("bet", 0, 30))
    assert_rejected(state, "raise_too_small", "raise_to", 1, 59)
    assert state.can_raise_to(1, 60)


def test_a_raise_adding_more_than_max_bet_over_the_current_bet_is_too_large() -> None:
    state = table(1000, 1000, 1000, ante=0, min_bet=10, max_bet=50)
    play(state, ("bet", 0, 30))
    assert state.legal_actions(1).raise_to == ChipRange(60, 80)
    assert_rejected(state, "raise_too_large", "raise_to", 1, 81)
    play(state, ("raise_to", 1, 80))
    assert state.legal_actions(2).raise_to == ChipRange(130, 130)
    assert_rejected(state, "raise_too_large", "raise_to", 2, 131)
    assert_rejected(state, "raise_too_small", "raise_to", 2, 129)


def test_max_bet_never_limits_a_call() -> None:
    state = table(1000, 1000, ante=0, min_bet=10, max_bet=50)
    play(state, ("bet", 0, 50), ("raise_to", 1, 100))
    assert state.legal_actions(0).call == 50
    assert state.call(0)[0] == Called(0, 50, False)


def test_a_raise_beyond_the_stack_is_refused_as_not_enough_chips() -> None:
    state = table(1000, 300, 1000, ante=0)
    play(state, ("bet", 0, 100))
    assert state.legal_actions(1).raise_to == ChipRange(200, 300)
    assert_rejected(state, "not_enough_chips", "raise_to", 1, 301)


def test_a_seat_that_can_only_cover_the_call_cannot_raise_and_calls_all_in_for_less() -> None:
    state = table(1000, 300, ante=0)
    play(state, ("bet", 0, 500))
    assert state.legal_actions(1) == LegalActions(fold=True, call=300)
    assert_rejected(state, "not_enough_chips", "raise_to", 1, 600)
    assert state.to_call(1) == 300
    assert state.call(1)[0] == Called(1, 300, True)


def test_nobody_raises_when_no_opponent_could_answer() -> None:
    state = table(100, 1000, ante=10)
    play(state, ("bet", 0, 90))
    assert state.seats[0].all_in
    assert state.legal_actions(1) == LegalActions(fold=True, call=90)
    assert_rejected(state, "no_one_to_raise", "raise_to", 1, 200)


def test_a_seat_with_a_stack_below_min_bet_may_bet_it_all() -> None:
    state = table(15, 1000, ante=10, min_bet=10)
    assert state.legal_actions(0).bet == ChipRange(5, 5)
    assert state.bet(0, 5) == (BetPlaced(0, 5, True),)


def test_a_short_all_in_bet_leaves_the_minimum_raise_at_min_bet() -> None:
    state = table(15, 1000, 1000, ante=10, min_bet=10)
    play(state, ("bet", 0, 5))
    assert state.legal_actions(1) == LegalActions(fold=True, call=5, raise_to=ChipRange(15, 990))
    assert_rejected(state, "raise_too_small", "raise_to", 1, 14)


def test_a_short_stack_may_raise_all_in_for_less_than_the_minimum_raise() -> None:
    state = table(1000, 150, 1000, ante=0, min_bet=10)
    play(state, ("bet", 0, 100))
    assert state.legal_actions(1).raise_to == ChipRange(150, 150)
    assert_rejected(state, "raise_too_small", "raise_to", 1, 149)
    assert state.raise_to(1, 150) == (Raised(1, 150, 150, True),)


# -- the minimum raise and reopening ------------------------------------------------


def test_the_minimum_raise_follows_the_last_full_raise() -> None:
    state = table(1000, 1000, 1000, ante=0, min_bet=10)
    play(state, ("bet", 0, 10), ("raise_to", 1, 50))
    assert state.legal_actions(2).raise_to == ChipRange(90, 1000)
    assert_rejected(state, "raise_too_small", "raise_to", 2, 89)
    play(state, ("raise_to", 2, 200))
    assert state.legal_actions(0).raise_to == ChipRange(350, 1000)


def test_the_minimum_raise_is_the_opening_bet_or_min_bet_whichever_is_larger() -> None:
    state = table(1000, 1000, ante=0, min_bet=25)
    play(state, ("bet", 0, 30))
    assert state.legal_actions(1).raise_to == ChipRange(60, 1000)
    state = table(1000, 1000, ante=0, min_bet=25)
    play(state, ("bet", 0, 25))
    assert state.legal_actions(1).raise_to == ChipRange(50, 1000)


def test_a_short_all_in_raise_does_not_raise_the_minimum_raise() -> None:
    state = table(1000, 150, 1000, ante=0, min_bet=10)
    play(state, ("bet", 0, 100), ("raise_to", 1, 150))
    assert state.legal_actions(2).raise_to == ChipRange(250, 1000)


def test_a_short_all_in_raise_does_not_reopen_betting_to_a_seat_that_already_acted() -> None:
    state = table(1000, 150, 1000, ante=0, min_bet=10)
    play(state, ("bet", 0, 100), ("raise_to", 1, 150), ("call", 2))
    assert state.actor == 0
    assert state.legal_actions(0) == LegalActions(fold=True, call=50)
    assert_rejected(state, "betting_not_reopened", "raise_to", 0, 250)
    play(state, ("call", 0))
    assert state.phase is not Phase.BETTING


def test_a_seat_that_has_not_acted_may_still_raise_after_a_short_all_in_raise() -> None:
    state = table(1000, 150, 1000, ante=0, min_bet=10)
    play(state, ("bet", 0, 100), ("raise_to", 1, 150), ("raise_to", 2, 250))
    # A full raise over the short one reopens the betting to seat 0.
    assert state.legal_actions(0).raise_to == ChipRange(350, 1000)


def test_several_short_all_in_raises_that_add_up_to_a_full_raise_reopen_the_betting() -> None:
    state = table(1000, 150, 210, 1000, ante=0, min_bet=10)
    play(state, ("bet", 0, 100), ("raise_to", 1, 150), ("raise_to", 2, 210), ("call", 3))
    assert state.actor == 0
    assert state.legal_actions(0) == LegalActions(
        fold=True, call=110, raise_to=ChipRange(310, 1000)
    )
    assert state.raise_to(0, 310)[0] == Raised(0, 310, 210, False)


def test_only_the_raises_since_a_seat_last_acted_count_towards_reopening_it() -> None:
    state = table(1000, 150, 1000, 200, ante=0, min_bet=10)
    play(state, ("bet", 0, 100), ("raise_to", 1, 150), ("call", 2), ("raise_to", 3, 200))
    # Seat 0 last acted at 100 and now faces 100 more: a full raise.
    assert state.legal_actions(0).raise_to == ChipRange(300, 1000)
    play(state, ("call", 0))
    # Seat 2 already answered the first short raise; it faces only the second.
    assert state.legal_actions(2) == LegalActions(fold=True, call=50)
    assert_rejected(state, "betting_not_reopened", "raise_to", 2, 300)


def test_a_short_all_in_bet_does_not_reopen_the_betting_to_a_seat_that_checked() -> None:
    state = table(1000, 5, 1000, ante=0, min_bet=10)
    play(state, ("check", 0), ("bet", 1, 5))
    # Seat 2 has not acted yet: it may raise, by at least min_bet.
    assert state.legal_actions(2) == LegalActions(fold=True, call=5, raise_to=ChipRange(15, 1000))
    play(state, ("call", 2))
    assert state.legal_actions(0) == LegalActions(fold=True, call=5)
    assert_rejected(state, "betting_not_reopened", "raise_to", 0, 15)


# -- limits -----------------------------------------------------------------------


def test_max_raises_limits_the_raises_of_a_round() -> None:
    state = table(1000, 1000, 1000, ante=0, max_raises=1)
    play(state, ("bet", 0, 10), ("raise_to", 1, 20))
    assert state.legal_actions(2) == LegalActions(fold=True, call=20)
    assert_rejected(state, "raise_limit", "raise_to", 2, 40)
    with pytest.raises(IllegalAction, match=r"^this round allows only 1 raise: call or fold$"):
        state.verify_raise_to(2, 40)
    play(state, ("call", 2))
    assert_rejected(state, "raise_limit", "raise_to", 0, 40)


def test_a_short_all_in_raise_counts_towards_max_raises() -> None:
    state = table(1000, 150, 1000, ante=0, max_raises=1)
    play(state, ("bet", 0, 100), ("raise_to", 1, 150))
    assert state.legal_actions(2) == LegalActions(fold=True, call=150)
    assert_rejected(state, "raise_limit", "raise_to", 2, 300)


def test_max_raises_zero_allows_the_opening_bet_but_no_raise() -> None:
    state = table(1000, 1000, ante=0, max_raises=0)
    assert state.legal_actions(0).bet == ChipRange(10, 1000)
    play(state, ("bet", 0, 10))
    assert_rejected(state, "raise_limit", "raise_to", 1, 20)
    with pytest.raises(IllegalAction, match=r"^this round allows no raise: call or fold$"):
        state.verify_raise_to(1, 20)


def test_the_raise_count_starts_again_in_the_second_round() -> None:
    state = table(1000, 1000, ante=0, max_raises=1, betting_rounds=2)
    play(state, ("bet", 0, 10), ("raise_to", 1, 20), ("call", 0))
    assert state.round == 2
    assert state.current_bet == 0
    play(state, ("bet", 0, 10))
    assert state.legal_actions(1).raise_to == ChipRange(20, 980)


# -- closing a round, the walk-over, the 4th tile --------------------------------------


def test_the_part_of_a_bet_nobody_matched_goes_back_when_the_round_closes() -> None:
    state = table(1000, 40, ante=0)
    play(state, ("bet", 0, 100))
    emitted = state.call(1)
    assert emitted[:3] == (Called(1, 40, True), BetReturned(0, 60), BettingRoundEnded(1))
    assert state.seats[0].contributed == 40
    assert sum(p.amount for p in events(state, PotAwarded)) == 80
    assert sum(stacks(state).values()) == 1040


def test_a_bet_everyone_folds_to_goes_back_and_the_bettor_takes_the_pot() -> None:
    state = table(1000, 1000, 1000, ante=10)
    play(state, ("bet", 0, 100), ("fold", 1))
    emitted = state.fold(2)
    assert emitted == (
        Folded(2),
        BetReturned(0, 100),
        BettingRoundEnded(1),
        PotAwarded(30, (0,), ((0, 30),)),
        HandEnded(((0, 1020), (1, 990), (2, 990))),
    )


def test_a_walk_over_takes_the_pot_with_no_showdown_and_no_fourth_tile() -> None:
    state = table(1000, 1000, 1000, ante=10, manual_split=True, betting_rounds=2)
    play(state, ("check", 0), ("bet", 1, 50), ("fold", 2), ("raise_to", 0, 150))
    state.fold(1)
    assert state.is_over
    assert events(state, Showdown) == []
    assert events(state, FourthTileDealt) == []
    assert events(state, CuttingStarted) == []
    assert BetReturned(0, 100) in state.log
    assert events(state, PotAwarded) == [PotAwarded(130, (0,), ((0, 130),))]
    assert stacks(state) == {0: 1070, 1: 940, 2: 990}
    assert len(state.seats[0].tiles) == 3


def test_a_walk_over_in_the_second_round_shows_no_tiles() -> None:
    state = table(1000, 1000, ante=10, betting_rounds=2)
    check_around(state)
    assert state.round == 2
    play(state, ("bet", 0, 50), ("fold", 1))
    assert state.is_over
    assert len(events(state, FourthTileDealt)) == 2
    assert events(state, Showdown) == []
    assert events(state, PotAwarded) == [PotAwarded(20, (0,), ((0, 20),))]


def test_the_fourth_tile_goes_only_to_seats_still_in_from_their_own_place_in_the_deck() -> None:
    deck = shuffled_deck(random.Random(3))
    state = table(1000, 1000, 1000, deck=deck)
    play(state, ("bet", 0, 20), ("fold", 1), ("call", 2))
    assert events(state, FourthTileDealt) == [
        FourthTileDealt(0, deck[9]),
        FourthTileDealt(2, deck[11]),
    ]
    assert len(state.seats[1].tiles) == 3
    assert [h.seat for h in events(state, Showdown)[0].hands] == [0, 2]


def test_with_one_betting_round_the_showdown_follows_the_fourth_tile() -> None:
    state = table(100, 100)
    check_around(state)
    kinds = [type(e) for e in state.log]
    ended = kinds.index(BettingRoundEnded)
    assert kinds[ended + 1 : ended + 4] == [FourthTileDealt, FourthTileDealt, Showdown]
    assert state.is_over


def test_with_two_betting_rounds_a_second_round_follows_the_fourth_tile() -> None:
    state = table(1000, 1000, 1000, ante=10, betting_rounds=2)
    play(state, ("bet", 0, 20), ("raise_to", 1, 40), ("call", 2), ("call", 0))
    assert state.log[-5:] == (
        BettingRoundEnded(1),
        FourthTileDealt(0, ALL_TILES[9]),
        FourthTileDealt(1, ALL_TILES[10]),
        FourthTileDealt(2, ALL_TILES[11]),
        BettingRoundStarted(2),
    )
    assert state.phase is Phase.BETTING
    assert state.round == 2
    assert state.actor == 0
    assert state.current_bet == 0
    assert state.legal_actions(0) == LegalActions(check=True, bet=ChipRange(10, 950))
    play(state, ("bet", 0, 30), ("call", 1), ("call", 2))
    assert state.is_over
    assert sum(p.amount for p in events(state, PotAwarded)) == 3 * (10 + 40 + 30)


def test_the_second_round_is_skipped_when_fewer_than_two_seats_have_chips_behind() -> None:
    state = table(1000, 100, ante=10, betting_rounds=2)
    play(state, ("bet", 0, 90), ("call", 1))
    assert events(state, BettingRoundStarted) == [BettingRoundStarted(1)]
    assert state.is_over
    assert len(events(state, Showdown)) == 1


# -- manual_split -----------------------------------------------------------------


def test_under_manual_split_every_seat_still_in_declares_a_cut_before_the_showdown() -> None:
    state = table(1000, 1000, 1000, manual_split=True)
    play(state, ("bet", 0, 20), ("fold", 1), ("call", 2))
    assert state.log[-1] == CuttingStarted((0, 2))
    assert state.phase is Phase.CUTTING
    assert state.actor is None
    assert list(state.pending_cuts) == [0, 2]
    assert state.legal_actions(0) == LegalActions(declare_cut=True)
    assert state.legal_actions(2) == LegalActions(declare_cut=True)
    assert state.legal_actions(1) == NOTHING
    # Cuts may come in any order.
    cut2 = rank(Hand(state.seats[2].tiles)).cut
    assert state.declare_cut(2, cut2) == (CutDeclared(2, cut2),)
    assert list(state.pending_cuts) == [0]
    assert events(state, Showdown) == []
    cut0 = rank(Hand(state.seats[0].tiles)).cut
    emitted = state.declare_cut(0, cut0)
    assert emitted[0] == CutDeclared(0, cut0)
    assert isinstance(emitted[1], Showdown)
    assert state.is_over
    assert list(state.pending_cuts) == []


def test_a_declared_cut_is_binding_even_when_it_loses_a_pot_the_best_cut_would_win() -> None:
    nine_nine = parse_hand(NINE_NINE)
    worse = cut_with(nine_nine, Tile.parse("6-6"), Tile.parse("5-0"))
    assert worse.pairs == (7, 1)
    state = table(1000, 1000, ante=10, manual_split=True, deck=deal(NINE_NINE, NINE_FOUR))
    check_around(state)
    state.declare_cut(0, worse)
    state.time_out(1)
    shown = {h.seat: h for h in events(state, Showdown)[0].hands}
    assert shown[0].cut == worse
    assert shown[0].pairs == (7, 1)
    assert shown[1].pairs == (9, 4)
    assert events(state, PotAwarded) == [PotAwarded(20, (0, 1), ((1, 20),))]


def test_a_seat_that_times_out_at_the_cut_is_given_its_best_cut() -> None:
    state = table(1000, 1000, ante=10, manual_split=True, deck=deal(NINE_NINE, NINE_FOUR))
    check_around(state)
    best = rank(parse_hand(NINE_NINE)).cut
    assert state.time_out(0) == (TurnTimedOut(0), CutDeclared(0, best))
    state.time_out(1)
    shown = {h.seat: h for h in events(state, Showdown)[0].hands}
    assert shown[0].pairs == (9, 9)
    assert events(state, PotAwarded) == [PotAwarded(20, (0, 1), ((0, 20),))]


def test_a_declared_cut_is_judged_higher_pair_first_however_it_is_written() -> None:
    # 5-4 6-1 is a 6 and 1-1 3-2 is a 7: written low pair first, it is still a 7-6,
    # which beats the 7-1 it meets (README's rules: compare the higher pair first).
    low_first = Cut(parse_tiles("5-4 6-1"), parse_tiles("1-1 3-2"))  # type: ignore[arg-type]
    state = table(1000, 1000, ante=10, manual_split=True, deck=deal(NINE_FOUR, NINE_NINE))
    check_around(state)
    if not state.can_declare_cut(0, low_first):  # refusing the mis-ordered cut is fine too
        with pytest.raises(IllegalAction) as refused:
            state.verify_declare_cut(0, low_first)
        assert refused.value.code == "invalid_cut"
        return
    state.declare_cut(0, low_first)
    state.declare_cut(1, cut_with(parse_hand(NINE_NINE), Tile.parse("6-6"), Tile.parse("5-0")))
    shown = {h.seat: h for h in events(state, Showdown)[0].hands}
    assert shown[0].pairs == (7, 6)
    assert events(state, PotAwarded) == [PotAwarded(20, (0, 1), ((0, 20),))]


def test_cuts_are_declared_only_at_a_manual_split_showdown_by_the_seats_still_to_declare() -> None:
    state = table(1000, 1000, 1000, manual_split=True, deck=deal(NINE_NINE, NINE_FOUR, PURE_SMALL))
    best0 = rank(parse_hand(NINE_NINE)).cut
    assert_rejected(state, "not_cutting", "declare_cut", 0, best0)
    play(state, ("bet", 0, 20), ("fold", 1), ("call", 2))
    assert state.phase is Phase.CUTTING
    # Betting actions and time-outs of seats owing no cut are refused.
    assert_rejected(state, "no_betting_round", "check", 0)
    assert_rejected(state, "no_betting_round", "bet", 2, 10)
    assert_rejected(state, "cut_not_expected", "declare_cut", 1, rank(parse_hand(NINE_FOUR)).cut)
    assert_rejected(state, "not_your_turn", "time_out", 1)
    assert_rejected(state, "invalid_cut", "declare_cut", 0, rank(parse_hand(PURE_SMALL)).cut)
    state.declare_cut(0, best0)
    assert_rejected(state, "cut_not_expected", "declare_cut", 0, best0)
    assert_rejected(state, "not_your_turn", "time_out", 0)
    state.time_out(2)
    assert state.is_over
    assert_rejected(state, "not_cutting", "declare_cut", 2, rank(parse_hand(PURE_SMALL)).cut)


def test_without_manual_split_no_cut_is_asked_for() -> None:
    state = table(1000, 1000)
    check_around(state)
    assert events(state, CuttingStarted) == []
    assert state.is_over


# -- time-outs ------------------------------------------------------------------


def test_a_seat_that_times_out_checks_when_it_can() -> None:
    state = table(1000, 1000)
    assert state.time_out(0) == (TurnTimedOut(0), Checked(0))
    assert state.actor == 1


def test_a_seat_that_times_out_facing_a_bet_folds() -> None:
    state = table(1000, 1000, 1000)
    play(state, ("bet", 0, 20))
    assert state.time_out(1) == (TurnTimedOut(1), Folded(1))
    assert state.seats[1].folded
    assert state.actor == 2


def test_a_time_out_out_of_turn_is_refused() -> None:
    state = table(1000, 1000)
    assert_rejected(state, "not_your_turn", "time_out", 1)


# -- voiding ----------------------------------------------------------------------


def test_voiding_a_hand_gives_every_chip_back_and_ends_it() -> None:
    state = table(1000, 500, 1000, ante=10)
    play(state, ("bet", 0, 100), ("raise_to", 1, 300), ("fold", 2))
    emitted = state.void()
    assert emitted == (
        HandVoided(((0, 110), (1, 310), (2, 10))),
        HandEnded(((0, 1000), (1, 500), (2, 1000))),
    )
    assert state.is_over
    assert state.pot == 0
    assert state.actor is None
    assert_rejected(state, "hand_over", "void")
    assert_rejected(state, "no_betting_round", "call", 0)


def test_voiding_refunds_what_is_left_after_an_unmatched_bet_went_back() -> None:
    state = table(1000, 40, ante=10, manual_split=True)
    play(state, ("bet", 0, 100), ("call", 1))
    assert state.phase is Phase.CUTTING
    assert state.void()[0] == HandVoided(((0, 40), (1, 40)))
    assert stacks(state) == {0: 1000, 1: 40}


def test_a_finished_hand_cannot_be_voided() -> None:
    state = table(1000, 1000)
    check_around(state)
    assert_rejected(state, "hand_over", "void")
    assert_rejected(state, "no_betting_round", "check", 0)
    assert_rejected(state, "no_betting_round", "time_out", 1)


# -- showdown, side pots, ties ----------------------------------------------------------


def test_a_three_way_all_in_pays_the_main_pot_and_the_side_pot_to_the_best_eligible_hands() -> None:
    # Button on seat 1, so seat 2 acts first, then 0, then 1.
    deck = deal(EIGHT_ONE, SIX_GODS, FOUR_DOUBLES)
    state = table(50, 150, 300, button=1, ante=10, deck=deck)
    assert state.order == (2, 0, 1)
    play(state, ("bet", 2, 290), ("call", 0))
    state.call(1)
    assert state.is_over
    assert BetReturned(2, 150) in state.log
    assert events(state, PotAwarded) == [
        PotAwarded(150, (2, 0, 1), ((0, 150),)),
        PotAwarded(200, (2, 1), ((1, 200),)),
    ]
    assert stacks(state) == {0: 150, 1: 200, 2: 150}
    assert events(state, HandEnded) == [HandEnded(((0, 150), (1, 200), (2, 150)))]


def test_each_all_in_level_makes_a_pot_that_only_its_payers_can_win() -> None:
    deck = deal(SIX_GODS, PURE_SMALL, EIGHT_ONE, FOUR_DOUBLES)
    state = table(50, 150, 300, 400, ante=10, deck=deck)
    play(
        state,
        ("bet", 0, 40),
        ("raise_to", 1, 140),
        ("raise_to", 2, 290),
        ("call", 3),
    )
    assert state.is_over
    assert events(state, PotAwarded) == [
        PotAwarded(200, (0, 1, 2, 3), ((0, 200),)),
        PotAwarded(300, (1, 2, 3), ((3, 300),)),
        PotAwarded(300, (2, 3), ((3, 300),)),
    ]
    assert stacks(state) == {0: 200, 1: 0, 2: 0, 3: 700}


def test_folded_chips_stay_in_the_pot_but_the_folded_seat_cannot_win() -> None:
    deck = deal(EIGHT_ONE, SIX_GODS, PURE_SMALL)
    state = table(1000, 1000, 1000, ante=10, deck=deck)
    play(state, ("bet", 0, 50), ("call", 1), ("raise_to", 2, 200), ("call", 0))
    state.fold(1)
    assert [h.seat for h in events(state, Showdown)[0].hands] == [0, 2]
    assert events(state, PotAwarded) == [PotAwarded(480, (0, 2), ((2, 480),))]


def test_under_split_equal_hands_share_a_pot_and_the_odd_chip_goes_left_of_the_button() -> None:
    # Button on seat 0: seat 1 acts first, then 2, then 0. Seats 2 and 0 both make 9-5.
    deck = deal(EIGHT_FIVE, NINE_FIVE_LOW, NINE_FIVE_HIGH)
    state = table(100, 100, 100, button=0, ante=1, min_bet=1, tie_rule="split", deck=deck)
    check_around(state)
    assert [h.pairs for h in events(state, Showdown)[0].hands] == [(8, 5), (9, 5), (9, 5)]
    assert events(state, PotAwarded) == [PotAwarded(3, (1, 2, 0), ((2, 2), (0, 1)))]
    assert stacks(state) == {0: 100, 1: 99, 2: 101}


def test_under_split_a_side_pot_is_shared_on_its_own() -> None:
    # Seat 0 is all-in from the ante; seats 1 and 2 tie for the side pot.
    deck = deal(EIGHT_FIVE, NINE_FIVE_LOW, NINE_FIVE_HIGH)
    state = table(5, 100, 100, ante=10, tie_rule="split", deck=deck)
    play(state, ("bet", 1, 31), ("call", 2))
    assert events(state, PotAwarded) == [
        PotAwarded(15, (0, 1, 2), ((1, 8), (2, 7))),
        PotAwarded(72, (1, 2), ((1, 36), (2, 36))),
    ]


def test_under_highest_tile_the_hand_with_the_highest_tile_takes_equal_pairs() -> None:
    deck = deal(EIGHT_FIVE, NINE_FIVE_LOW, NINE_FIVE_HIGH)
    state = table(100, 100, 100, button=0, ante=1, min_bet=1, deck=deck)
    check_around(state)
    assert events(state, PotAwarded) == [PotAwarded(3, (1, 2, 0), ((0, 3),))]


@pytest.mark.parametrize(
    ("first", "second", "winner"),
    [
        (NINE_FIVE_LOW, NINE_FIVE_HIGH, 1),
        (NINE_FIVE_HIGH, NINE_FIVE_LOW, 0),
        (NINE_EIGHT_LOW, NINE_EIGHT_HIGH, 1),
        (NINE_EIGHT_HIGH, NINE_EIGHT_LOW, 0),
    ],
)
def test_highest_tile_decides_the_design_examples(first: str, second: str, winner: int) -> None:
    state = table(100, 100, ante=10, deck=deal(first, second))
    check_around(state)
    shown = events(state, Showdown)[0].hands
    assert shown[0].pairs == shown[1].pairs
    assert events(state, PotAwarded) == [PotAwarded(20, (0, 1), ((winner, 20),))]


def test_a_special_hand_beats_a_nine_nine() -> None:
    state = table(100, 100, ante=10, deck=deal(NINE_NINE, PURE_SMALL))
    check_around(state)
    assert events(state, PotAwarded) == [PotAwarded(20, (0, 1), ((1, 20),))]


# -- the log ------------------------------------------------------------------------


def test_replaying_the_log_rebuilds_the_same_state() -> None:
    state = table(1000, 150, 1000, ante=10, manual_split=True, betting_rounds=2)
    logs: list[tuple[Event, ...]] = [state.log]
    play(state, ("bet", 0, 100), ("raise_to", 1, 140), ("call", 2), ("call", 0))
    logs.append(state.log)
    check_around(state)
    state.time_out(0)
    logs.append(state.log)
    state.time_out(1)
    state.time_out(2)
    assert state.is_over
    assert HandState.replay(state.log) == state
    for log in logs:
        assert HandState.replay(log).log == log


def test_a_log_must_open_with_hand_started() -> None:
    state = table(100, 100)
    with pytest.raises(InvalidRules):
        HandState.replay(state.log[1:])
    with pytest.raises(InvalidRules):
        HandState.replay(())


# -- validation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seats", "button", "deck"),
    [
        ({0: 100}, 0, ALL_TILES),
        (dict.fromkeys(range(7), 100), 0, ALL_TILES),
        ({}, 0, ALL_TILES),
        ({0: 0, 1: 100}, 1, ALL_TILES),
        ({0: -5, 1: 100}, 1, ALL_TILES),
        ({0: True, 1: 100}, 1, ALL_TILES),
        ({0: 10.5, 1: 100}, 1, ALL_TILES),
        ({-1: 100, 1: 100}, 1, ALL_TILES),
        ({0: 100, 1: 100}, 2, ALL_TILES),
        ({0: 100, 1: 100}, 1, ALL_TILES[:27]),
        ({0: 100, 1: 100}, 1, (*ALL_TILES[:27], ALL_TILES[0])),
        ({0: 100, 1: 100}, 1, (*ALL_TILES, ALL_TILES[0])),
        ({0: 100, 1: 100}, 1, ()),
    ],
)
def test_a_hand_is_refused_an_impossible_table(
    seats: Mapping[int, Any], button: int, deck: Sequence[Tile]
) -> None:
    with pytest.raises(InvalidRules):
        HandState.start(TableRules(), seats, button, deck)


def test_a_hand_takes_two_to_six_seats() -> None:
    for n in (2, 6):
        state = HandState.start(TableRules(), dict.fromkeys(range(n), 100), 0, ALL_TILES)
        assert len(state.order) == n


def test_a_copy_of_a_seat_holds_every_field_and_shares_nothing_that_changes() -> None:
    from copy import copy
    from dataclasses import fields

    from qiuqiu.engine.state import SeatState

    tiles = tuple(ALL_TILES[:4])
    cut = Cut((tiles[0], tiles[1]), (tiles[2], tiles[3]))
    # Every field away from its default, so a field the copy forgot shows.
    seat = SeatState(3, 120, 20, 50, True, True, tiles, cut)
    defaults = SeatState(0, 0)
    assert all(getattr(seat, f.name) != getattr(defaults, f.name) for f in fields(SeatState))

    copied = copy(seat)

    assert copied == seat
    assert copied is not seat
    copied.stack = 0
    assert seat.stack == 120
