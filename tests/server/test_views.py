"""What each viewer may see of a hand (docs/ARCHITECTURE.md, "What each viewer sees").

Hands are dealt from fixed decks and played by script, or at random over
hypothesis-drawn seeds; every event and every state along the way is turned into
the copy each seat and a spectator would get, and checked for tiles that are not
theirs to see.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from typing import get_args

from hypothesis import given, settings
from hypothesis import strategies as st

from qiuqiu import engine
from qiuqiu.engine import ALL_TILES, Hand, HandState, Phase, TableRules, Tile, cuts, shuffled_deck
from qiuqiu.protocol import MAX_CHIPS, ChipRange, LegalActions, encode, fairness
from qiuqiu.protocol import server as wire
from qiuqiu.server.views import Audience, HandWire, Publication, legal_view, seat_views

SEATS = (0, 1, 2)
VIEWERS: tuple[Audience, ...] = (*SEATS, None)
RULES = TableRules(betting_rounds=2, manual_split=True)
STACKS = {0: 500, 1: 500, 2: 500}
TILE_TEXT = re.compile(r'"([0-6]-[0-6])"')
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)

Move = Callable[[], tuple[engine.Event, ...]]


def deal(seed: int) -> HandState:
    return HandState.start(RULES, STACKS, button=2, deck=shuffled_deck(random.Random(seed)))


def full_hand(seed: int) -> HandState:
    """A hand with every kind of betting in it, seat 2 folded, and a showdown after
    each seat still in has declared a cut (one by hand, one on time-out)."""
    hand = deal(seed)
    hand.bet(0, 20)
    hand.raise_to(1, 40)
    hand.fold(2)
    hand.call(0)
    hand.check(0)
    hand.time_out(1)
    assert hand.phase is Phase.CUTTING
    hand.declare_cut(0, cuts(Hand(hand.seats[0].tiles))[0])
    hand.time_out(1)
    assert hand.is_over
    return hand


def walk_over(seed: int) -> HandState:
    """Seat 0 bets and both others fold: the bet nobody matched goes back, no tile is shown."""
    hand = deal(seed)
    hand.bet(0, 20)
    hand.fold(1)
    hand.fold(2)
    assert hand.is_over
    return hand


def voided(seed: int) -> HandState:
    hand = deal(seed)
    hand.void()
    return hand


def random_hand(seed: int) -> Iterator[HandState]:
    """A hand dealt from ``seed``'s deck and played by ``seed``'s choices among the
    legal moves (time-outs included), yielded after the deal and after every move."""
    rng = random.Random(seed)
    hand = HandState.start(RULES, STACKS, button=2, deck=shuffled_deck(rng))
    yield hand
    while not hand.is_over:
        random_move(hand, rng)
        yield hand


def random_move(hand: HandState, rng: random.Random) -> None:
    if hand.phase is Phase.CUTTING:
        seat = hand.pending_cuts[0]
        cut = rng.choice(cuts(Hand(hand.seats[seat].tiles)))
        either: list[Move] = [lambda: hand.declare_cut(seat, cut), lambda: hand.time_out(seat)]
        rng.choice(either)()
        return
    actor = hand.actor
    assert actor is not None
    legal = hand.legal_actions(actor)
    moves: list[Move] = [lambda: hand.time_out(actor)]
    if legal.check:
        moves.append(lambda: hand.check(actor))
    if legal.fold:
        moves.append(lambda: hand.fold(actor))
    if legal.call is not None:
        moves.append(lambda: hand.call(actor))
    if (bet := legal.bet) is not None:
        moves.append(lambda: hand.bet(actor, rng.randint(bet.min, bet.max)))
    if (raise_to := legal.raise_to) is not None:
        moves.append(lambda: hand.raise_to(actor, rng.randint(raise_to.min, raise_to.max)))
    rng.choice(moves)()


def to_the_cut(seed: int) -> HandState:
    """Every seat checks through both rounds: all three owe a cut."""
    hand = deal(seed)
    for seat in (*SEATS, *SEATS):
        hand.check(seat)
    assert hand.phase is Phase.CUTTING
    return hand


def made(hand: HandState) -> HandWire:
    """The translator of ``hand``, its deck sealed as a server would seal it."""
    started = hand.log[0]
    assert isinstance(started, engine.HandStarted)
    salts = [f"{p:032x}" for p in range(len(started.deck))]
    sealed = fairness.seal([str(t) for t in started.deck], salts)
    return HandWire("t1", 1, sealed, ((seat, "") for seat in SEATS))


CANONICAL = fairness.seal([str(t) for t in ALL_TILES], [f"{p:032x}" for p in range(28)])


def seen_by(event: engine.Event, viewer: Audience) -> wire.TableEvent | None:
    """``event`` as ``viewer`` gets it, from the one translator of a hand's events."""
    published = HandWire("t1", 1, CANONICAL, ()).event(event, 1)
    return None if published is None else published.for_seat(viewer)


def tiles_of(hand: HandState, seat: int) -> set[str]:
    return {str(tile) for tile in hand.seats[seat].tiles}


def texts(tiles: tuple[Tile, ...]) -> tuple[str, ...]:
    return tuple(str(tile) for tile in tiles)


def seat_list() -> list[wire.SeatView]:
    return [
        wire.SeatView(seat=n, name=f"P{n}", is_bot=False, connected=True, stack=500) for n in SEATS
    ]


# -- the scripted hands ----------------------------------------------------------------


def test_the_scripted_hands_hold_every_kind_of_engine_event() -> None:
    # Else the event-by-event tests below would pass without meeting some event at all.
    kinds = {type(e) for h in (full_hand(1), walk_over(1), voided(1)) for e in h.log}
    assert kinds == set(get_args(engine.Event))


# -- HandWire.event ------------------------------------------------------------------------


def test_hand_started_goes_to_nobody_so_the_deck_never_goes_out() -> None:
    started = full_hand(7).log[0]
    assert isinstance(started, engine.HandStarted)
    for viewer in VIEWERS:
        assert seen_by(started, viewer) is None


def test_a_seats_own_copy_of_its_tiles_dealt_shows_them_and_no_other_copy_does() -> None:
    dealt = [e for e in full_hand(7).log if isinstance(e, engine.TilesDealt)]
    assert [e.seat for e in dealt] == [0, 1, 2]
    for event in dealt:
        for viewer in VIEWERS:
            message = seen_by(event, viewer)
            assert isinstance(message, wire.TilesDealt)
            assert message.seat == event.seat
            assert message.tiles == (texts(event.tiles) if viewer == event.seat else None)


def test_a_seats_own_copy_of_its_fourth_tile_shows_it_and_no_other_copy_does() -> None:
    fourth = [e for e in full_hand(7).log if isinstance(e, engine.FourthTileDealt)]
    assert [e.seat for e in fourth] == [0, 1]
    for event in fourth:
        for viewer in VIEWERS:
            message = seen_by(event, viewer)
            assert isinstance(message, wire.FourthTileDealt)
            assert message.seat == event.seat
            assert message.tile == (str(event.tile) if viewer == event.seat else None)


def test_a_seats_own_copy_of_its_cut_shows_it_and_no_other_copy_does() -> None:
    declared = [e for e in full_hand(7).log if isinstance(e, engine.CutDeclared)]
    assert [e.seat for e in declared] == [0, 1]
    for event in declared:
        (a, b), (c, d) = event.cut.high_pair, event.cut.low_pair
        for viewer in VIEWERS:
            message = seen_by(event, viewer)
            assert isinstance(message, wire.CutDeclared)
            if viewer == event.seat:
                assert message.cut is not None
                assert message.cut.pairs == ((str(a), str(b)), (str(c), str(d)))
                assert message.cut.values == event.cut.pairs
            else:
                assert message.cut is None


def test_the_showdown_shows_every_hand_still_in_to_everyone_and_no_folded_one() -> None:
    hand = full_hand(7)
    showdown = next(e for e in hand.log if isinstance(e, engine.Showdown))
    for viewer in VIEWERS:
        message = seen_by(showdown, viewer)
        assert isinstance(message, wire.Showdown)
        shown = {h.seat: set(h.tiles) for h in message.hands}
        assert shown == {0: tiles_of(hand, 0), 1: tiles_of(hand, 1)}


def test_every_event_but_a_seats_secrets_reads_the_same_to_every_viewer() -> None:
    for hand in (full_hand(7), walk_over(7), voided(7)):
        for event in hand.log:
            if isinstance(event, engine.TilesDealt | engine.FourthTileDealt | engine.CutDeclared):
                continue
            spectator = seen_by(event, None)
            assert all(seen_by(event, seat) == spectator for seat in SEATS)


@settings(max_examples=50, deadline=None)
@given(SEEDS)
def test_no_copy_of_an_event_shows_a_tile_that_is_not_the_viewers_before_the_showdown(
    seed: int,
) -> None:
    hand = list(random_hand(seed))[-1]
    for event in hand.log:
        for viewer in VIEWERS:
            message = seen_by(event, viewer)
            if message is None:
                continue
            seen = set(TILE_TEXT.findall(message.model_dump_json()))
            if isinstance(event, engine.Showdown):
                still_in = [s.seat for s in event.hands]
                assert not any(hand.seats[s].folded for s in still_in)
                assert seen == {t for s in still_in for t in tiles_of(hand, s)}
            else:
                mine: set[str] = set() if viewer is None else tiles_of(hand, viewer)
                assert seen <= mine, (event, viewer)
            if viewer is not None and getattr(event, "seat", None) != viewer:
                assert message == seen_by(event, None)


@settings(max_examples=30, deadline=None)
@given(SEEDS)
def test_each_seats_own_copy_says_whose_it_is_and_the_copy_for_everyone_says_no_ones(
    seed: int,
) -> None:
    # The dealer bot reads only its own copies of turns and tiles dealt by this mark.
    told = 0
    for hand in random_hand(seed):
        translator = made(hand)
        published = [translator.event(e, 1, actor=0, ref=7) for e in hand.log]
        if hand.actor is not None:
            published.append(translator.turn(hand, 2, 0))
        for publication in published:
            if publication is None:
                continue
            assert publication.public_frame.own_seat is None
            for seat, frame in publication.own_frames.items():
                assert frame.own_seat == seat
                told += 1
    assert told > 0


# -- seat_views ------------------------------------------------------------------------

EVERY_SEAT = range(6)
"""Every seat held by the player dealt in there."""


def test_without_a_hand_the_seats_go_out_as_they_are() -> None:
    seats = seat_list()
    for viewer in VIEWERS:
        assert seat_views(None, None, seats, viewer, EVERY_SEAT) == tuple(seats)


def test_during_the_betting_each_seat_sees_its_own_tiles_and_only_their_count_for_others() -> None:
    hand = deal(3)
    hand.bet(0, 20)
    for viewer in VIEWERS:
        views = seat_views(hand, made(hand), seat_list(), viewer, EVERY_SEAT)
        for view in views:
            assert view.in_hand
            assert view.tile_count == 3
            expected = texts(hand.seats[view.seat].tiles) if view.seat == viewer else None
            assert view.tiles == expected
        assert [(v.stack, v.bet) for v in views] == [(470, 20), (490, 0), (490, 0)]


def test_a_seat_not_dealt_into_the_hand_goes_out_as_it_is() -> None:
    late = wire.SeatView(seat=3, name="Late", is_bot=False, connected=True, stack=800)
    views = seat_views((dealt := deal(3)), made(dealt), [*seat_list(), late], 3, EVERY_SEAT)
    assert views[3] == late
    assert all(v.tiles is None for v in views)


def test_a_seat_taken_by_another_player_since_shows_nothing_of_the_hand() -> None:
    hand = full_hand(5)
    assert hand.seats[2].folded
    for viewer in VIEWERS:
        views = seat_views(hand, made(hand), seat_list(), viewer, {0, 1})
        assert views[2] == seat_list()[2], "its player now was not in the hand"
        assert views[0].tiles == texts(hand.seats[0].tiles)


def test_while_cutting_the_tiles_are_still_hidden() -> None:
    hand = to_the_cut(3)
    for viewer in VIEWERS:
        for view in seat_views(hand, made(hand), seat_list(), viewer, EVERY_SEAT):
            assert view.tile_count == 4
            assert (view.tiles is not None) == (view.seat == viewer)


def test_after_a_showdown_everyone_sees_the_hands_still_in_but_not_the_folded_one() -> None:
    hand = full_hand(5)
    assert hand.seats[2].folded
    for viewer in VIEWERS:
        views = {v.seat: v for v in seat_views(hand, made(hand), seat_list(), viewer, EVERY_SEAT)}
        assert views[0].tiles == texts(hand.seats[0].tiles)
        assert views[1].tiles == texts(hand.seats[1].tiles)
        assert views[2].folded
        assert views[2].tiles == (texts(hand.seats[2].tiles) if viewer == 2 else None)


def test_after_a_walk_over_or_a_void_no_seat_sees_another_seats_tiles() -> None:
    for hand in (walk_over(5), voided(5)):
        assert hand.is_over
        for viewer in VIEWERS:
            for view in seat_views(hand, made(hand), seat_list(), viewer, EVERY_SEAT):
                assert (view.tiles is not None) == (view.seat == viewer)


@settings(max_examples=50, deadline=None)
@given(SEEDS)
def test_at_every_step_of_a_hand_a_seats_tiles_show_only_to_it_until_the_showdown(
    seed: int,
) -> None:
    for hand in random_hand(seed):
        shown = any(isinstance(e, engine.Showdown) for e in hand.log)
        for viewer in VIEWERS:
            for view in seat_views(hand, made(hand), seat_list(), viewer, EVERY_SEAT):
                s = hand.seats[view.seat]
                visible = view.seat == viewer or (shown and not s.folded)
                assert view.tiles == (texts(s.tiles) if visible else None), (view, viewer)


# -- legal_view ------------------------------------------------------------------------


def test_a_seat_with_nothing_to_do_gets_no_legal_view() -> None:
    hand = deal(3)
    assert hand.actor == 0
    assert legal_view(hand.legal_actions(1)) is None
    assert legal_view(hand.legal_actions(2)) is None
    assert legal_view(full_hand(3).legal_actions(0)) is None


def test_the_first_to_act_may_check_or_bet_up_to_its_stack() -> None:
    assert legal_view(deal(3).legal_actions(0)) == LegalActions(
        check=True, bet=ChipRange(min=10, max=490)
    )


def test_a_seat_facing_a_bet_may_fold_call_or_raise() -> None:
    hand = deal(3)
    hand.bet(0, 20)
    assert legal_view(hand.legal_actions(1)) == LegalActions(
        fold=True, call=20, raise_to=ChipRange(min=40, max=490)
    )


def test_a_seat_owing_a_cut_may_only_declare_it() -> None:
    hand = to_the_cut(3)
    assert hand.pending_cuts == (0, 1, 2)
    assert legal_view(hand.legal_actions(0)) == LegalActions(declare_cut=True)


CHIPS = st.integers(min_value=0, max_value=MAX_CHIPS)
CHIP_RANGES = st.builds(engine.ChipRange, CHIPS, CHIPS)
ENGINE_LEGAL = st.builds(
    engine.LegalActions,
    check=st.booleans(),
    fold=st.booleans(),
    call=st.none() | CHIPS,
    bet=st.none() | CHIP_RANGES,
    raise_to=st.none() | CHIP_RANGES,
    declare_cut=st.booleans(),
)


@settings(max_examples=50, deadline=None)
@given(ENGINE_LEGAL)
def test_legal_view_carries_every_engine_legal_action_over_as_it_is(
    legal: engine.LegalActions,
) -> None:
    view = legal_view(legal)
    if not legal.any:
        assert view is None
        return
    assert view is not None
    assert (view.check, view.fold, view.call, view.declare_cut) == (
        legal.check,
        legal.fold,
        legal.call,
        legal.declare_cut,
    )
    for wire_range, engine_range in ((view.bet, legal.bet), (view.raise_to, legal.raise_to)):
        assert (wire_range is None) == (engine_range is None)
        if wire_range is not None and engine_range is not None:
            assert (wire_range.min, wire_range.max) == (engine_range.min, engine_range.max)


def publications(hand: HandState) -> list[Publication]:
    """Every publication of ``hand``, its actions' copies naming a ``ref``."""
    translator = HandWire("t1", 1, CANONICAL, ((seat, f"seed-{seat}") for seat in SEATS))
    published = [translator.started(1, hand.button, STACKS.items())]
    for seq, event in enumerate(hand.log, 2):
        actor = getattr(event, "seat", None)
        made = translator.event(event, seq, actor=actor, ref=f"r{seq}", reason='a "quoted" é')
        if made is not None:
            published.append(made)
    return published


@settings(max_examples=30, deadline=None)
@given(SEEDS)
def test_every_frame_is_its_models_json_field_for_field(seed: int) -> None:
    # The text is written by hand: the model read from it must write it back the same.
    steps = list(random_hand(seed))
    turns = [made(h).turn(h, 1, 0) for h in steps if h.actor is not None and not h.is_over]
    for hand in (steps[-1], full_hand(seed), walk_over(seed), voided(seed)):
        for published in [*publications(hand), *turns]:
            for viewer in VIEWERS:
                frame = published.frame_for(viewer)
                model = wire.SERVER_MESSAGES.validate_json(frame.text)
                assert type(model) is frame.kind
                assert isinstance(model, wire.TableEvent)
                assert json.loads(frame.text) == json.loads(encode(model))
                assert (frame.table_id, frame.seq, frame.ref) == (
                    model.table_id,
                    model.seq,
                    model.ref,
                )


def test_a_frame_is_written_once_for_everyone_who_sees_the_event_alike() -> None:
    for published in publications(full_hand(7)):
        public = published.frame_for(None)
        shared = [s for s in SEATS if s not in published.own_frames]
        assert all(published.frame_for(seat) is public for seat in shared)
        assert all(published.frame_for(s) is not public for s in published.own_frames)
