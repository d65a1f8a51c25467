"""The hand state machine, rule by rule (see the docstring of qiuqiu.engine.state):
how a round closes, the cut, time-outs, voiding, the showdown and its pots, the log,
and the rules a hand takes. The decks and moves come from ``tests/engine/state_helpers.py``."""

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from qiuqiu.engine import (
    ALL_TILES,
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
    HandState,
    HandVoided,
    IllegalAction,
    InvalidRules,
    LegalActions,
    Phase,
    PotAwarded,
    Showdown,
    TableRules,
    Tile,
    TurnTimedOut,
    cut_with,
    parse_hand,
    parse_tiles,
    rank,
    shuffled_deck,
)
from tests.engine.state_helpers import (
    EIGHT_FIVE,
    EIGHT_ONE,
    FOUR_DOUBLES,
    NINE_EIGHT_HIGH,
    NINE_EIGHT_LOW,
    NINE_FIVE_HIGH,
    NINE_FIVE_LOW,
    NINE_FOUR,
    NINE_NINE,
    NOTHING,
    PURE_SMALL,
    SIX_GODS,
    assert_rejected,
    check_around,
    deal,
    events,
    play,
    stacks,
    table,
)

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
    foreign = Cut(parse_tiles("1-0 2-0"), parse_tiles("3-0 4-0"))  # type: ignore[arg-type]
    with pytest.raises(IllegalAction) as refused:
        state.verify_declare_cut(0, foreign)
    said = f"the cut 3-0 4-0 | 1-0 2-0 is not your hand {parse_hand(NINE_NINE)}"
    assert refused.value.message == said
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
