"""``TableState``: one table folded from a snapshot and the events after it, without I/O."""

from __future__ import annotations

import copy
import hashlib
from typing import get_args

from qiuqiu.cli import game
from qiuqiu.cli.deals import DealChecked
from qiuqiu.cli.game import Applied, Move, TableState
from qiuqiu.engine import Hand, parse_tiles, rank
from qiuqiu.protocol import (
    DealTampered,
    LegalActions,
    SeatAmount,
    fairness,
)
from qiuqiu.protocol import server as wire
from tests.cli.game_helpers import (
    BOT,
    BOT_TILES,
    CLIENT_SEEDS,
    COMMITMENT,
    DECK,
    FACING,
    HAND,
    ME,
    MY_TILES,
    OPENING,
    SEALED,
    START,
    TABLE,
    TABLE_SEED,
    TOTAL,
    WHERE,
    at,
    chips_on_table,
    event_at,
    fresh,
    hand_at,
    hand_view,
    played,
    played_to,
    replaced,
    seat_seeds,
    seat_view,
    shown,
    snapshot,
    whole_hand,
    winner,
)

# -- the snapshot --------------------------------------------------------------------


def test_a_snapshot_gives_every_seat_its_name_stack_and_own_tiles() -> None:
    seats = (
        seat_view(ME, 480, bet=10, in_hand=True, tile_count=3, tiles=MY_TILES[:3]),
        seat_view(BOT, 990, in_hand=True, tile_count=3, connected=False),
    )
    state = TableState.from_snapshot(snapshot(12, seats=seats))
    assert state.seq == 12
    assert state.you == ME
    assert state.me is state.seats[ME]
    assert (state.seats[ME].name, state.seats[ME].stack, state.seats[ME].bet) == ("Ana", 480, 10)
    assert state.seats[ME].tiles == MY_TILES[:3]
    assert state.seats[BOT].tiles == ()
    assert state.seats[BOT].is_bot
    assert not state.seats[BOT].connected


def test_a_snapshot_without_a_hand_has_no_hand_and_nothing_to_do() -> None:
    state = fresh()
    assert state.hand is None
    assert state.legal is None
    assert not state.closed


def test_a_snapshot_during_a_hand_gives_the_pot_the_actor_and_what_to_call() -> None:
    seats = (seat_view(ME, 440, bet=50, in_hand=True), seat_view(BOT, 390, bet=600, in_hand=True))
    hand = hand_view(pot=670, current_bet=600, actor=ME, deadline_ms=3_000)
    state = TableState.from_snapshot(snapshot(11, seats=seats, hand=hand, legal=FACING))
    assert state.hand is not None
    assert (state.hand.pot, state.hand.current_bet, state.hand.actor) == (670, 600, ME)
    assert state.hand.to_call == 550
    assert state.hand.commitment == COMMITMENT
    assert state.legal == FACING


def test_a_hand_that_came_in_a_snapshot_still_gives_its_net_when_it_ends() -> None:
    seats = (seat_view(ME, 440, bet=50, in_hand=True), seat_view(BOT, 390, bet=600, in_hand=True))
    hand = hand_view(pot=670, current_bet=600, actor=ME, deadline_ms=3_000)
    state = TableState.from_snapshot(snapshot(11, seats=seats, hand=hand, legal=FACING))
    ended = {ME: START[ME] - 60, BOT: START[BOT] + 60}
    stacks = tuple(SeatAmount(seat=s, amount=a) for s, a in ended.items())
    assert state.apply(wire.HandEnded(**hand_at(12), stacks=stacks)) is Applied.APPLIED
    assert state.net(ME) == -60
    assert state.net(BOT) == 60


def test_the_moves_of_a_hand_are_kept_in_order_and_a_snapshot_without_events_has_none() -> None:
    ended = played_to(wire.HandEnded).hand
    assert ended is not None
    assert ended.moves == [
        Move(ME, "bet", 1, 50, 50, False),
        Move(BOT, "raise", 1, 600, 600, False),
        Move(ME, "call", 1, 440, 490, True),
    ]
    seats = (seat_view(ME, 440, bet=50, in_hand=True), seat_view(BOT, 390, bet=600, in_hand=True))
    hand = hand_view(pot=670, current_bet=600, actor=ME, deadline_ms=3_000)
    state = TableState.from_snapshot(snapshot(11, seats=seats, hand=hand, legal=FACING))
    assert state.apply(wire.Folded(**hand_at(12), seat=ME)) is Applied.APPLIED
    assert state.hand is not None
    assert state.hand.moves == [Move(ME, "fold", 1, 0, 50, False)]


def test_a_snapshot_that_carries_the_hands_events_gives_the_moves_made_before_it() -> None:
    events = whole_hand()
    raised = next(i for i, e in enumerate(events) if isinstance(e, wire.Raised))
    so_far = tuple(e.model_dump(mode="json") for e in events[: raised + 1])
    seats = (seat_view(ME, 440, bet=50, in_hand=True), seat_view(BOT, 390, bet=600, in_hand=True))
    hand = hand_view(pot=670, current_bet=600, actor=ME, deadline_ms=3_000, events=so_far)
    state = TableState.from_snapshot(snapshot(events[raised].seq, seats=seats, hand=hand))
    assert state.hand is not None
    assert state.hand.moves == [
        Move(ME, "bet", 1, 50, 50, False),
        Move(BOT, "raise", 1, 600, 600, False),
    ]
    assert state.hand.betting_known, "so its payouts are checked as it ends"
    assert (state.seats[ME].stack, state.hand.pot) == (440, 670), "the replay changed nothing"
    assert state.apply(wire.Folded(**hand_at(events[raised].seq + 1), seat=ME)) is Applied.APPLIED
    assert state.hand.moves[-1] == Move(ME, "fold", 1, 0, 50, False)


def test_a_seat_that_is_not_there_is_named_by_its_number() -> None:
    state = fresh()
    assert state.name(BOT) == "Dealer"
    assert state.name(5) == "seat 6"


# -- seq: exactly one more, or nothing ---------------------------------------------------


def test_the_next_event_applies_and_moves_seq_on() -> None:
    state = fresh()
    assert state.apply(whole_hand()[0]) is Applied.APPLIED
    assert state.seq == 1
    assert state.hand is not None


def test_an_event_already_seen_is_ignored_and_changes_nothing() -> None:
    state = played_to(wire.AnteTaken, 2)
    before = copy.deepcopy(state)
    repeated = wire.AnteTaken(**hand_at(3), seat=BOT, amount=10, all_in=False)
    assert state.apply(repeated) is Applied.IGNORED
    older = wire.AnteTaken(**hand_at(1), seat=ME, amount=10, all_in=False)
    assert state.apply(older) is Applied.IGNORED
    assert state == before


def test_an_event_after_a_gap_changes_nothing() -> None:
    state = played_to(wire.AnteTaken, 2)
    before = copy.deepcopy(state)
    ahead = wire.BetPlaced(**hand_at(5), seat=ME, amount=50, all_in=False)
    assert state.apply(ahead) is Applied.GAP
    assert state == before


def test_a_hand_voided_after_a_gap_is_marked_voided_and_leaves_the_rest_to_the_snapshot() -> None:
    # As from a table's new host: its seq counts on from far above the dead one's.
    state = played_to(wire.Raised)
    voided = wire.HandVoided(**hand_at(state.seq + 1_000_000), reason="host died", refunds=())
    stacks = {seat: s.stack for seat, s in state.seats.items()}
    seq = state.seq
    assert state.apply(voided) is Applied.GAP
    assert state.hand is not None
    assert state.hand.voided
    assert state.seq == seq
    assert {seat: s.stack for seat, s in state.seats.items()} == stacks


def test_after_a_gap_the_missing_event_still_applies() -> None:
    state = fresh()
    assert state.apply(event_at(3)) is Applied.GAP
    assert state.apply(event_at(1)) is Applied.APPLIED
    assert state.seq == 1


# -- a whole hand ------------------------------------------------------------------------


def test_every_event_of_a_whole_hand_applies_in_order() -> None:
    state = fresh()
    results = [state.apply(message) for message in whole_hand()]
    assert results == [Applied.APPLIED] * len(results)
    assert state.seq == len(results)


def test_chips_are_conserved_through_a_whole_hand() -> None:
    state = fresh()
    for message in whole_hand():
        state.apply(message)
        assert chips_on_table(state) == TOTAL, type(message).__name__


def test_a_new_hand_takes_its_stacks_and_commitment() -> None:
    state = played_to(wire.HandStarted)
    assert state.hand is not None
    assert (state.hand.hand_id, state.hand.button) == (HAND, BOT)
    assert state.hand.commitment == COMMITMENT
    assert state.hand.pot == 0
    assert {n: s.stack for n, s in state.seats.items()} == START
    assert all(s.in_hand for s in state.seats.values())


def test_antes_move_from_the_stacks_to_the_pot_without_a_bet() -> None:
    state = played_to(wire.AnteTaken, 2)
    assert state.hand is not None
    assert state.hand.pot == 20
    assert (state.seats[ME].stack, state.seats[BOT].stack) == (490, 990)
    assert (state.seats[ME].bet, state.seats[BOT].bet) == (0, 0)


def test_own_tiles_are_kept_and_another_seats_stay_hidden() -> None:
    state = played_to(wire.TilesDealt, 2)
    assert state.seats[ME].tiles == MY_TILES[:3]
    assert state.seats[BOT].tiles == ()


def test_own_turn_gives_the_legal_actions_and_the_betting_picture() -> None:
    state = played_to(wire.TurnStarted, 1)
    assert state.hand is not None
    assert state.legal == OPENING
    assert (state.hand.actor, state.hand.to_call, state.hand.pot) == (ME, 0, 20)
    assert state.hand.deadline_ms == 1_000


def test_another_seats_turn_gives_no_legal_actions() -> None:
    state = played_to(wire.TurnStarted, 2)
    assert state.hand is not None
    assert state.hand.actor == BOT
    assert state.hand.to_call == 50
    assert state.legal is None


def test_own_bet_clears_the_legal_actions_and_moves_chips_into_the_bet() -> None:
    state = played_to(wire.BetPlaced)
    assert state.hand is not None
    assert state.legal is None
    assert state.hand.actor is None
    assert (state.seats[ME].stack, state.seats[ME].bet) == (440, 50)
    assert (state.hand.pot, state.hand.current_bet) == (70, 50)


def test_a_raise_adds_its_amount_and_sets_the_bet_to_beat() -> None:
    state = played_to(wire.Raised)
    assert state.hand is not None
    assert (state.seats[BOT].stack, state.seats[BOT].bet) == (390, 600)
    assert (state.hand.pot, state.hand.current_bet) == (670, 600)


def test_an_all_in_call_marks_the_seat_all_in_and_clears_the_legal_actions() -> None:
    state = played_to(wire.Called)
    assert state.hand is not None
    assert state.legal is None
    assert state.seats[ME].all_in
    assert (state.seats[ME].stack, state.seats[ME].bet) == (0, 490)
    assert state.hand.pot == 1110


def test_an_unmatched_bet_goes_back_to_its_owner() -> None:
    state = played_to(wire.BetReturned)
    assert state.hand is not None
    assert (state.seats[BOT].stack, state.seats[BOT].bet) == (500, 490)
    assert state.hand.pot == 1000


def test_a_seat_that_gets_unmatched_chips_back_is_no_longer_all_in() -> None:
    state = played_to(wire.Called)
    state.seats[BOT].all_in = True  # as if its raise had been every chip it had
    returned = next(m for m in whole_hand() if isinstance(m, wire.BetReturned))
    assert state.apply(returned) is Applied.APPLIED
    assert not state.seats[BOT].all_in


def test_the_end_of_a_betting_round_clears_the_bets_and_keeps_the_pot() -> None:
    state = played_to(wire.BettingRoundEnded)
    assert state.hand is not None
    assert state.hand.pot == 1000
    assert state.hand.current_bet == 0
    assert [s.bet for s in state.seats.values()] == [0, 0]


def test_the_fourth_tile_joins_own_tiles_only() -> None:
    state = played_to(wire.FourthTileDealt, 2)
    assert state.seats[ME].tiles == MY_TILES
    assert state.seats[BOT].tiles == ()


def test_showdown_shows_every_hand_with_its_cut_and_category() -> None:
    state = played_to(wire.Showdown)
    assert state.hand is not None
    assert state.hand.phase == "showdown"
    bot = state.seats[BOT]
    assert bot.tiles == BOT_TILES
    assert bot.cut == shown(BOT).cut
    assert bot.category == rank(Hand(parse_tiles(" ".join(BOT_TILES)))).category


def test_the_pot_award_pays_the_winner_and_empties_the_pot() -> None:
    state = played_to(wire.PotAwarded)
    assert state.hand is not None
    assert state.hand.pot == 0
    assert state.seats[winner()].stack == {ME: 0, BOT: 500}[winner()] + 1000


def test_the_end_of_the_hand_sets_the_stacks_and_leaves_nothing_to_do() -> None:
    state = played_to(wire.HandEnded)
    assert state.hand is not None
    assert state.hand.phase == "ended"
    assert state.hand.actor is None
    assert state.legal is None
    assert sum(s.stack for s in state.seats.values()) == TOTAL


def test_a_new_hand_clears_the_last_hands_tiles_and_flags() -> None:
    state = played_to(wire.HandEnded)
    stacks = tuple(SeatAmount(seat=s, amount=state.seats[s].stack) for s in (ME, BOT))
    state.apply(
        wire.HandStarted(
            **at(20),
            hand_id=HAND + 1,
            button=ME,
            stacks=stacks,
            commitment=COMMITMENT,
            leaves=SEALED.leaves,
            client_seeds=seat_seeds(),
        )
    )
    assert state.hand is not None
    assert state.hand.hand_id == HAND + 1
    for seat in state.seats.values():
        assert (seat.tiles, seat.cut, seat.category) == ((), None, None)
        assert not seat.all_in
        assert not seat.folded


def test_the_dealer_bots_top_up_is_its_stack_at_the_end_seen_against_the_next_start() -> None:
    state = played_to(wire.HandEnded)
    mine, its = state.seats[ME].stack, state.seats[BOT].stack
    state.apply(
        wire.HandStarted(
            **at(20),
            hand_id=HAND + 1,
            button=ME,
            stacks=(SeatAmount(seat=ME, amount=mine), SeatAmount(seat=BOT, amount=its + 500)),
            commitment=COMMITMENT,
            leaves=SEALED.leaves,
            client_seeds=seat_seeds(),
        )
    )
    assert state.hand is not None
    assert state.hand.topped_up == {BOT: its}


# -- turns that end without a bet ----------------------------------------------------------


def test_own_turn_timing_out_clears_the_legal_actions() -> None:
    state = played_to(wire.TurnStarted, 1)
    state.apply(wire.TurnTimedOut(**hand_at(8), seat=ME))
    assert state.hand is not None
    assert state.legal is None
    assert state.hand.actor is None


def test_a_check_clears_the_legal_actions() -> None:
    state = played_to(wire.TurnStarted, 1)
    state.apply(wire.Checked(**hand_at(8), seat=ME))
    assert state.legal is None


def test_a_fold_marks_the_seat_folded_and_clears_the_legal_actions() -> None:
    state = played_to(wire.TurnStarted, 3)
    state.apply(wire.Folded(**hand_at(12), seat=ME))
    assert state.seats[ME].folded
    assert state.legal is None


# -- cutting (manual_split) ----------------------------------------------------------------


def test_cutting_lets_a_seat_that_must_cut_declare_its_cut() -> None:
    state = played_to(wire.FourthTileDealt, 2)
    state.apply(wire.CuttingStarted(**hand_at(17), seats=(ME, BOT), deadline_ms=9_000))
    assert state.hand is not None
    assert state.hand.phase == "cutting"
    assert state.legal == LegalActions(declare_cut=True)


def test_own_declared_cut_is_kept_and_clears_the_legal_actions() -> None:
    state = played_to(wire.FourthTileDealt, 2)
    state.apply(wire.CuttingStarted(**hand_at(17), seats=(ME, BOT), deadline_ms=9_000))
    cut = shown(ME).cut
    state.apply(wire.CutDeclared(**hand_at(18), seat=ME, cut=cut))
    assert state.seats[ME].cut == cut
    assert state.legal is None


# -- seats and the table -------------------------------------------------------------------


def test_a_player_seated_adds_the_seat() -> None:
    state = fresh()
    state.apply(wire.PlayerSeated(**at(1), seat=2, name="Budi", is_bot=False, stack=300))
    seat = state.seats[2]
    assert (seat.name, seat.is_bot, seat.stack, seat.connected) == ("Budi", False, 300, True)


def test_a_player_left_removes_the_seat() -> None:
    state = fresh()
    state.apply(wire.PlayerLeft(**at(1), seat=BOT, name="Dealer", cashed_out=1000))
    assert BOT not in state.seats
    assert state.you == ME


def test_leaving_oneself_forgets_the_own_seat_and_the_legal_actions() -> None:
    state = played_to(wire.TurnStarted, 1)
    state.apply(wire.PlayerLeft(**at(8), seat=ME, name="Ana", cashed_out=490))
    assert state.you is None
    assert state.me is None
    assert state.legal is None


def test_a_disconnection_and_a_reconnection_toggle_connected() -> None:
    state = fresh()
    state.apply(wire.PlayerDisconnected(**at(1), seat=BOT, grace_ms=30_000))
    assert not state.seats[BOT].connected
    state.apply(wire.PlayerReconnected(**at(2), seat=BOT))
    assert state.seats[BOT].connected


def test_a_disconnection_of_an_unknown_seat_is_harmless() -> None:
    state = fresh()
    assert state.apply(wire.PlayerDisconnected(**at(1), seat=5, grace_ms=1)) is Applied.APPLIED
    assert set(state.seats) == {ME, BOT}


def test_a_closed_table_has_no_hand_and_nothing_to_do() -> None:
    state = played_to(wire.TurnStarted, 1)
    state.apply(wire.TableClosed(**at(8), reason="server stopping", table_seed="ab" * 32))
    assert state.closed
    assert state.hand is None
    assert state.legal is None


def test_a_table_that_moved_to_another_server_is_not_closed() -> None:
    # No seed: it goes on elsewhere, and the snapshot after the reconnect says how.
    state = played_to(wire.TurnStarted, 1)
    state.apply(wire.TableClosed(**at(8), reason="the table moved to another server"))
    assert not state.closed
    assert state.legal is None


def test_every_table_event_the_server_may_send_has_its_rule() -> None:
    (union, _) = get_args(wire.AnyServerMessage)
    events = {kind for kind in get_args(union) if issubclass(kind, wire.TableEvent)}
    assert events == set(game._APPLY)


def test_a_voided_hand_gives_every_chip_back() -> None:
    state = played_to(wire.Raised)
    refunds = (SeatAmount(seat=ME, amount=60), SeatAmount(seat=BOT, amount=610))
    state.apply(wire.HandVoided(**hand_at(11), reason="server stopping", refunds=refunds))
    assert state.hand is not None
    assert state.hand.pot == 0
    assert (state.seats[ME].stack, state.seats[BOT].stack) == (START[ME], START[BOT])
    assert chips_on_table(state) == TOTAL


# -- the deal: each hand's tiles against what the server committed to ---------------------


def failure(state: TableState) -> DealTampered:
    assert state.hand is not None
    check = state.hand.deal_check
    assert isinstance(check, DealTampered), check
    assert state.deals.tampered is check
    return check


def test_an_honest_deal_verifies_every_tile_seen_and_this_clients_seed() -> None:
    state = played_to(wire.HandEnded)
    assert state.hand is not None
    # Its own four, and the bot's four shown down (its own are opened twice, counted once).
    assert state.hand.deal_check == DealChecked(tiles=8, own_seed=True, paid=True)
    assert state.deals.tampered is None
    assert set(state.deals.kept) == {HAND}


def test_a_deal_is_not_checked_before_the_hand_ends() -> None:
    state = played_to(wire.PotAwarded)
    assert state.hand is not None
    assert state.hand.deal_check is None


def test_a_tile_other_than_the_committed_one_fails_the_check() -> None:
    events = whole_hand()
    honest = SEALED.opening(0)
    swapped = honest.model_copy(update={"tile": DECK[27]})
    replaced(
        events,
        wire.TilesDealt,
        tiles=(DECK[27], DECK[1], DECK[2]),
        openings=(swapped, SEALED.opening(1), SEALED.opening(2)),
    )
    assert "position 0 does not open to" in failure(played(events)).reason


def test_a_tile_dealt_twice_fails_the_check_even_when_every_leaf_opens() -> None:
    tiles = list(DECK)
    tiles[WHERE[BOT][0]] = tiles[WHERE[ME][0]]  # committed twice, so both open
    twice = fairness.seal(tiles, SEALED.salts)
    state = played(whole_hand(twice))
    assert failure(state).reason == f"tile {DECK[0]} was dealt twice"


def test_a_deal_without_this_clients_seed_fails_the_check() -> None:
    # The deck honestly derived, but from seeds that leave this client's out.
    without = {ME: "", BOT: ""}
    sealed = fairness.derive_deck(fairness.hand_seed(TABLE_SEED, TABLE, HAND), without)
    state = played(whole_hand(sealed, without))
    assert failure(state).reason == f"the deal was not made with this client's seed for seat {ME}"


def test_openings_that_do_not_hash_to_the_commitment_fail_the_check() -> None:
    events = whole_hand()
    replaced(events, wire.HandStarted, commitment=hashlib.sha256(b"another").hexdigest())
    assert failure(played(events)).reason == "the positions do not hash to the hand's commitment"


def test_a_tile_opened_at_another_seats_position_fails_the_check() -> None:
    events = whole_hand()
    theirs = (SEALED.opening(3), SEALED.opening(1), SEALED.opening(2))
    replaced(events, wire.TilesDealt, tiles=tuple(o.tile for o in theirs), openings=theirs)
    assert "not its own" in failure(played(events)).reason


def test_a_session_resumed_elsewhere_checks_the_tiles_but_cannot_check_its_seed() -> None:
    state = played(whole_hand(), fresh(my_seed=None))
    assert state.hand is not None
    assert state.hand.deal_check == DealChecked(tiles=8, own_seed=False, paid=True)


def test_a_seed_change_on_its_way_may_deal_the_next_hand_with_either_seed() -> None:
    new = "a-new-seed"
    seeds = {ME: new, BOT: ""}
    sealed = fairness.derive_deck(fairness.hand_seed(TABLE_SEED, TABLE, HAND), seeds)
    waiting = fresh()
    waiting.deals.sent_seed(new)
    assert isinstance(check_of(played(whole_hand(sealed, seeds), waiting)), DealChecked)
    waiting = fresh()
    waiting.deals.sent_seed(new)
    assert isinstance(check_of(played(whole_hand(SEALED), waiting)), DealChecked)


def test_every_hand_started_after_a_confirmation_must_list_the_new_seed() -> None:
    """The server confirms a seed once it has written it, after announcing any hand
    dealt before: a hand that starts afterwards with the old seed is caught."""
    confirmed = fresh()
    confirmed.deals.seed_set("a-new-seed")
    late = check_of(played(whole_hand(SEALED), confirmed))
    assert isinstance(late, DealTampered)
    assert late.reason == f"the deal was not made with this client's seed for seat {ME}"


def test_a_first_seed_set_in_a_resumed_session_is_checked_from_the_next_hand() -> None:
    resumed = fresh(my_seed=None)
    assert check_of(played(whole_hand(), resumed)) == DealChecked(
        tiles=8, own_seed=False, paid=True
    )
    resumed = fresh(my_seed=None)
    resumed.deals.seed_set("a-new-seed")
    late = check_of(played(whole_hand(), resumed))
    assert isinstance(late, DealTampered), "the seed it confirmed was not dealt with"


def check_of(state: TableState) -> DealChecked | DealTampered | None:
    assert state.hand is not None
    return state.hand.deal_check


def test_a_snapshot_in_the_middle_of_a_hand_brings_the_own_openings() -> None:
    """A client that missed the deal (a gap, a reconnect) checks what the snapshot opens."""
    state = fresh()
    events = whole_hand()
    played(events[:1], state)  # hand_started, then the connection drops
    mine = tuple(SEALED.opening(p) for p in WHERE[ME][:3])
    seats = (
        seat_view(ME, 490, in_hand=True, tile_count=3, tiles=MY_TILES[:3], openings=mine),
        seat_view(BOT, 990, in_hand=True, tile_count=3),
    )
    hand = hand_view(pot=20, current_bet=0)
    state = TableState.from_snapshot(snapshot(6, seats=seats, hand=hand), state.deals)
    for message in events[6:]:
        assert state.apply(message) is Applied.APPLIED
    assert state.hand is not None
    assert state.hand.deal_check == DealChecked(tiles=8, own_seed=True)


def test_a_snapshot_whose_hand_has_another_commitment_fails_the_check() -> None:
    state = played(whole_hand()[:4])
    other = fairness.derive_deck(fairness.hand_seed(TABLE_SEED, TABLE, HAND + 1), CLIENT_SEEDS)
    hand = hand_view(other, pot=20, current_bet=0)
    state = TableState.from_snapshot(snapshot(4, hand=hand), state.deals)
    for message in whole_hand()[4:]:
        state.apply(message)
    assert "commitment changed" in failure(state).reason


def test_tiles_other_than_the_ones_opened_fail_the_check() -> None:
    events = whole_hand()
    replaced(events, wire.TilesDealt, tiles=(DECK[27], DECK[1], DECK[2]))
    assert failure(played(events)).reason == f"seat {ME + 1}'s tiles are not the tiles opened"
