"""The hand state machine, rule by rule (see the docstring of qiuqiu.engine.state):
whose turn it is, the antes, and each betting action with its limits. The decks and
moves come from ``tests/engine/state_helpers.py``."""

import random

import pytest

from qiuqiu.engine import (
    ALL_TILES,
    AnteTaken,
    BetPlaced,
    BettingRoundEnded,
    BettingRoundStarted,
    Called,
    ChipRange,
    FourthTileDealt,
    HandEnded,
    HandStarted,
    HandState,
    IllegalAction,
    LegalActions,
    Phase,
    PotAwarded,
    Raised,
    Showdown,
    TableRules,
    TilesDealt,
    shuffled_deck,
)
from tests.engine.state_helpers import (
    NOTHING,
    assert_rejected,
    check_around,
    events,
    play,
    stacks,
    table,
)

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
