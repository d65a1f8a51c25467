"""Properties of the hand state machine over thousands of random hands.

Tables (2 to 6 seats, tiny to deep stacks, every rule variant), decks and
actions are random; the actions are drawn from :meth:`HandState.legal_actions`
(amounts anywhere in the ranges it gives), with time-outs and voids mixed in.
After every step the state is checked (chips conserved, nobody acts out of
turn, the log replays to the same state, ...), and each finished hand's log is
audited event by event against the betting rules.
"""

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import TypeVar

from hypothesis import given, settings
from hypothesis import strategies as st

from qiuqiu.engine import (
    TIE_RULES,
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
    LegalActions,
    Phase,
    PotAwarded,
    Raised,
    Rank,
    SeatState,
    Showdown,
    TableRules,
    TilesDealt,
    TurnTimedOut,
    compare_ranks,
    cuts,
    parse_hand,
    rank,
    rank_with_cut,
    shuffled_deck,
)

NOTHING = LegalActions()
UNKNOWN_SEAT = 99
# A cut for seats that hold no four tiles of their own (it is nobody's hand in
# particular; every attempt with it must be refused before its tiles matter).
STRAY_CUT = rank(parse_hand("6-6 5-5 4-4 3-3")).cut

E = TypeVar("E")
Move = Callable[[], tuple[Event, ...]]


@dataclass(frozen=True)
class Table:
    rules: TableRules
    stacks: Mapping[int, int]
    button: int


# -- making tables ------------------------------------------------------------------


def make_rules(
    *,
    ante: int,
    min_bet: int,
    max_bet_extra: int | None,
    max_raises: int | None,
    betting_rounds: int,
    tie_rule: str,
    manual_split: bool,
) -> TableRules:
    return TableRules(
        ante=ante,
        min_bet=min_bet,
        max_bet=None if max_bet_extra is None else min_bet + max_bet_extra,
        max_raises=max_raises,
        betting_rounds=betting_rounds,
        tie_rule="split" if tie_rule == "split" else "highest_tile",
        manual_split=manual_split,
    )


@st.composite
def tables(draw: st.DrawFn) -> Table:
    rules = make_rules(
        ante=draw(st.sampled_from([0, 0, 1, 5, 10, 25])),
        min_bet=draw(st.integers(1, 20)),
        max_bet_extra=draw(st.none() | st.integers(0, 60)),
        max_raises=draw(st.none() | st.integers(0, 3)),
        betting_rounds=draw(st.sampled_from([1, 2])),
        tie_rule=draw(st.sampled_from(TIE_RULES)),
        manual_split=draw(st.booleans()),
    )
    seats = draw(st.lists(st.integers(0, 9), min_size=2, max_size=6, unique=True))
    stack = st.integers(1, 30) | st.integers(1, 400) | st.integers(300, 5000)
    stacks = {seat: draw(stack) for seat in seats}
    button = draw(st.sampled_from(sorted(seats)))
    return Table(rules, stacks, button)


def random_table(rng: random.Random) -> Table:
    rules = make_rules(
        ante=rng.choice([0, 0, 1, 5, 10, 25]),
        min_bet=rng.randint(1, 20),
        max_bet_extra=rng.choice([None, rng.randint(0, 60)]),
        max_raises=rng.choice([None, None, 0, 1, 2, 3]),
        betting_rounds=rng.choice([1, 2]),
        tie_rule=rng.choice(TIE_RULES),
        manual_split=rng.random() < 0.5,
    )
    seats = rng.sample(range(10), rng.randint(2, 6))
    high = rng.choice([30, 400, 5000])
    stacks = {seat: rng.randint(1, high) for seat in seats}
    return Table(rules, stacks, rng.choice(seats))


# -- playing a hand at random ---------------------------------------------------------


def pick(chips: ChipRange, rng: random.Random) -> int:
    roll = rng.random()
    if roll < 0.3:
        return chips.min
    if roll < 0.5:
        return chips.max
    return rng.randint(chips.min, chips.max)


def random_move(state: HandState, rng: random.Random, void_chance: float) -> Move:
    if rng.random() < void_chance:
        return state.void
    if state.phase is Phase.CUTTING:
        seat = rng.choice(state.pending_cuts)
        if rng.random() < 0.3:
            return lambda: state.time_out(seat)
        cut = rng.choice(cuts(Hand(state.seats[seat].tiles)))
        return lambda: state.declare_cut(seat, cut)
    actor = state.actor
    assert actor is not None
    if rng.random() < 0.05:
        return lambda: state.time_out(actor)
    legal = state.legal_actions(actor)
    moves: list[tuple[int, Move]] = []
    if legal.check:
        moves.append((4, lambda: state.check(actor)))
    if legal.fold:
        moves.append((1, lambda: state.fold(actor)))
    if legal.call is not None:
        moves.append((4, lambda: state.call(actor)))
    if legal.bet is not None:
        bet = pick(legal.bet, rng)
        moves.append((3, lambda: state.bet(actor, bet)))
    if legal.raise_to is not None:
        to = pick(legal.raise_to, rng)
        moves.append((3, lambda: state.raise_to(actor, to)))
    weights = [weight for weight, _ in moves]
    chosen: Move = rng.choices([move for _, move in moves], weights=weights)[0]
    return chosen


def play_random_hand(table: Table, rng: random.Random) -> HandState:
    """Play one hand at random, checking the state after every step; return it finished."""
    void_chance = rng.choice([0.0, 0.0, 0.0, 0.02, 0.1])
    state = HandState.start(table.rules, table.stacks, table.button, shuffled_deck(rng))
    total = sum(table.stacks.values())
    check_state(state, total)
    for _ in range(500):
        if state.is_over:
            break
        mark = len(state.log)
        emitted = random_move(state, rng, void_chance)()
        assert emitted == state.log[mark:]
        assert emitted
        check_state(state, total)
    assert state.is_over, "a hand went on for 500 moves"
    check_finished(state, table.stacks)
    audit_log(state, table.stacks)
    return state


# -- checked after every step -------------------------------------------------------


def check_state(state: HandState, total: int) -> None:
    seats = state.seats.values()
    assert all(s.stack >= 0 and s.contributed >= 0 and s.round_bet >= 0 for s in seats)
    assert sum(s.stack for s in seats) + state.pot == total
    paid_out = sum(
        amount
        for e in state.log
        if isinstance(e, PotAwarded | HandVoided)
        for _, amount in (e.shares if isinstance(e, PotAwarded) else e.refunds)
    )
    assert state.pot == sum(s.contributed for s in seats) - paid_out >= 0
    assert HandState.replay(state.log) == state
    if state.phase is Phase.BETTING:
        assert state.actor is not None
        assert state.legal_actions(state.actor).any
        assert state.pending_cuts == ()
        check_legal_actions(state, state.actor)
    elif state.phase is Phase.CUTTING:
        assert state.actor is None
        assert state.pending_cuts
        assert all(len(state.seats[s].tiles) == 4 for s in state.pending_cuts)
        assert not any(state.seats[s].folded for s in state.pending_cuts)
    else:
        assert state.phase is Phase.ENDED, f"the hand rests in phase {state.phase}"
        assert state.actor is None
        assert state.pending_cuts == ()
    check_nobody_acts_out_of_turn(state)


def refusal(verify: Callable[..., None], *args: object) -> str:
    try:
        verify(*args)
    except IllegalAction as refused:
        return refused.code
    raise AssertionError(f"{verify.__name__}{args} was accepted")


def own_cut(s: SeatState) -> Cut:
    return rank(Hand(s.tiles)).cut if len(s.tiles) == 4 else STRAY_CUT


def check_nobody_acts_out_of_turn(state: HandState) -> None:
    phase = state.phase
    bet, to = state.rules.min_bet, state.current_bet + state.rules.min_bet
    betting_code = "not_your_turn" if phase is Phase.BETTING else "no_betting_round"
    for seat, s in [*state.seats.items(), (UNKNOWN_SEAT, SeatState(UNKNOWN_SEAT, 0))]:
        verbs: list[tuple[Callable[..., None], Callable[..., bool], tuple[object, ...]]] = [
            (state.verify_check, state.can_check, (seat,)),
            (state.verify_fold, state.can_fold, (seat,)),
            (state.verify_call, state.can_call, (seat,)),
            (state.verify_bet, state.can_bet, (seat, bet)),
            (state.verify_raise_to, state.can_raise_to, (seat, to)),
        ]
        cut = own_cut(s)
        if phase is Phase.BETTING and seat == state.actor:
            assert refusal(state.verify_declare_cut, seat, cut) == "not_cutting"
            assert not state.can_declare_cut(seat, cut)
            continue
        if phase is Phase.CUTTING and seat in state.pending_cuts:
            assert state.legal_actions(seat) == LegalActions(declare_cut=True)
            assert state.can_declare_cut(seat, cut)
            assert state.can_time_out(seat)
            for verify, can, args in verbs:
                assert not can(*args)
                assert refusal(verify, *args) == "no_betting_round"
            continue
        code = "unknown_seat" if seat == UNKNOWN_SEAT else betting_code
        for verify, can, args in verbs:
            assert not can(*args)
            assert refusal(verify, *args) == code
        assert not state.can_declare_cut(seat, cut)
        if seat == UNKNOWN_SEAT:
            assert refusal(state.verify_declare_cut, seat, cut) == "unknown_seat"
            assert refusal(state.verify_time_out, seat) == "unknown_seat"
        else:
            assert refusal(state.verify_declare_cut, seat, cut) == (
                "cut_not_expected" if phase is Phase.CUTTING else "not_cutting"
            )
        assert not state.can_time_out(seat)
        if seat != UNKNOWN_SEAT:
            assert state.legal_actions(seat) == NOTHING
            assert refusal(state.verify_time_out, seat) == (
                "no_betting_round" if phase is Phase.ENDED else "not_your_turn"
            )
    assert state.can_void() is not state.is_over


def check_legal_actions(state: HandState, seat: int) -> None:
    """What legal_actions offers is exactly what verify_x accepts, and follows the rules."""
    rules, s, current = state.rules, state.seats[seat], state.current_bet
    legal = state.legal_actions(seat)
    facing = s.round_bet < current
    assert legal.check is (not facing) is state.can_check(seat)
    assert legal.fold is facing is state.can_fold(seat)
    assert (legal.call is not None) is facing is state.can_call(seat)
    if legal.call is not None:
        assert legal.call == state.to_call(seat) == min(current - s.round_bet, s.stack) > 0
    assert not legal.declare_cut
    if legal.bet is None:
        assert current > 0
        assert not state.can_bet(seat, rules.min_bet)
        assert not state.can_bet(seat, s.stack)
    else:
        low, high = legal.bet.min, legal.bet.max
        assert current == 0
        assert 1 <= low <= high <= s.stack
        assert low == min(rules.min_bet, s.stack)
        assert rules.max_bet is None or high <= rules.max_bet
        assert high == s.stack or high == rules.max_bet
        assert state.can_bet(seat, low)
        assert state.can_bet(seat, high)
        assert not state.can_bet(seat, low - 1)
        assert not state.can_bet(seat, high + 1)
    all_in_to = s.round_bet + s.stack
    if legal.raise_to is None:
        assert not state.can_raise_to(seat, current + rules.min_bet)
        assert not state.can_raise_to(seat, all_in_to)
    else:
        low, high = legal.raise_to.min, legal.raise_to.max
        assert current > 0
        assert current < low <= high <= all_in_to
        assert low - current >= rules.min_bet or low == high == all_in_to
        assert rules.max_bet is None or high - current <= rules.max_bet
        assert rules.max_raises is None or rules.max_raises > 0
        others = [o for o in state.seats.values() if o.seat != seat]
        assert any(o.stack > 0 and not o.folded for o in others), "a raise nobody can answer"
        assert state.can_raise_to(seat, low)
        assert state.can_raise_to(seat, high)
        assert not state.can_raise_to(seat, low - 1)
        assert not state.can_raise_to(seat, high + 1)


# -- checked at the end of a hand ---------------------------------------------------------


def of(state: HandState, kind: type[E]) -> list[E]:
    return [e for e in state.log if isinstance(e, kind)]


def check_finished(state: HandState, start: Mapping[int, int]) -> None:
    total = sum(start.values())
    final = {seat: s.stack for seat, s in state.seats.items()}
    assert state.is_over
    assert state.pot == 0
    ended = state.log[-1]
    assert isinstance(ended, HandEnded)
    assert len(of(state, HandEnded)) == 1
    assert dict(ended.stacks) == final
    assert [seat for seat, _ in ended.stacks] == sorted(start)
    assert sum(final.values()) == total

    contributed = {seat: s.contributed for seat, s in state.seats.items()}
    folded = {seat for seat, s in state.seats.items() if s.folded}
    live = [seat for seat in state.order if seat not in folded]
    awards = [e for e in state.log if isinstance(e, PotAwarded)]
    shows = [e for e in state.log if isinstance(e, Showdown)]
    voids = [e for e in state.log if isinstance(e, HandVoided)]

    if voids:
        assert len(voids) == 1
        assert not awards
        assert not shows
        assert voids[0].refunds == tuple((s, contributed[s]) for s in state.order if contributed[s])
        assert final == dict(start)
        return

    assert sum(p.amount for p in awards) == sum(contributed.values())
    won = dict.fromkeys(start, 0)
    for pot in awards:
        assert pot.amount > 0
        assert pot.amount == sum(amount for _, amount in pot.shares)
        assert pot.eligible
        assert list(pot.eligible) == [s for s in state.order if s in pot.eligible]
        assert not folded & set(pot.eligible)
        winners = [seat for seat, _ in pot.shares]
        assert set(winners) <= set(pot.eligible)
        assert len(set(winners)) == len(winners)
        assert not folded & set(winners)
        if len(winners) > 1:
            assert state.rules.tie_rule == "split"
            # Even shares; the odd chips go to the first winner left of the button.
            each, odd = divmod(pot.amount, len(winners))
            assert [a for _, a in pot.shares] == [each + odd] + [each] * (len(winners) - 1)
        for seat, amount in pot.shares:
            won[seat] += amount
    for seat in start:
        # A seat wins at most what it put in from each seat (itself included).
        assert won[seat] <= sum(min(c, contributed[seat]) for c in contributed.values())
        assert final[seat] == start[seat] - contributed[seat] + won[seat]
    for bigger, smaller in pairwise(awards):
        assert set(smaller.eligible) < set(bigger.eligible)

    if len(live) == 1:
        # The walk-over: no tile shown, the last seat takes everything.
        assert not shows
        assert not of(state, CuttingStarted)
        everything = sum(contributed.values())
        assert awards == (
            [PotAwarded(everything, (live[0],), ((live[0], everything),))] if everything else []
        )
        if BettingRoundStarted(2) not in state.log:
            assert not of(state, FourthTileDealt)
        return

    assert len(shows) == 1
    shown = {h.seat: h for h in shows[0].hands}
    assert [h.seat for h in shows[0].hands] == live
    if awards:
        assert awards[0].eligible == tuple(s for s in live if contributed[s] > 0)
    declared = {e.seat: e.cut for e in state.log if isinstance(e, CutDeclared)}
    assert bool(of(state, CuttingStarted)) is state.rules.manual_split
    ranks: dict[int, Rank] = {}
    for seat in live:
        hand = Hand(state.seats[seat].tiles)
        assert Hand(shown[seat].tiles) == hand
        if state.rules.manual_split:
            assert shown[seat].cut == declared[seat]
            ranks[seat] = rank_with_cut(hand, declared[seat])
        else:
            assert shown[seat].cut == rank(hand).cut
            ranks[seat] = rank(hand)
        assert shown[seat].pairs == ranks[seat].pairs
        assert shown[seat].category == ranks[seat].category
    for pot in awards:
        best = [
            seat
            for seat in pot.eligible
            if all(
                compare_ranks(ranks[seat], ranks[other], state.rules.tie_rule) >= 0
                for other in pot.eligible
            )
        ]
        assert [seat for seat, _ in pot.shares] == best


def audit_log(state: HandState, start: Mapping[int, int]) -> None:
    """Replay the log by hand and check every event against the betting rules."""
    log = state.log
    started = log[0]
    assert isinstance(started, HandStarted)
    assert dict(started.stacks) == dict(start)
    rules, order, deck = state.rules, state.order, started.deck
    first_fourth = 3 * len(order)
    stack = dict(start)
    round_bet = dict.fromkeys(start, 0)
    folded: set[int] = set()
    acted: set[int] = set()
    current = full = raises = 0

    def min_raise() -> int:
        return max(rules.min_bet, full)

    for i, event in enumerate(log[1:], start=1):
        match event:
            case AnteTaken(seat, amount, all_in):
                assert amount == min(rules.ante, start[seat]) > 0
                stack[seat] -= amount
                assert all_in is (stack[seat] == 0)
            case TilesDealt(seat, tiles):
                at = order.index(seat) * 3
                assert tiles == deck[at : at + 3]
            case BettingRoundStarted(number):
                assert number in (1, 2)
                assert number <= rules.betting_rounds
                live_with_chips = [s for s in order if s not in folded and stack[s] > 0]
                assert len(live_with_chips) >= 2
                round_bet = dict.fromkeys(start, 0)
                acted = set()
                current = full = raises = 0
            case Checked(seat):
                assert round_bet[seat] == current
                acted.add(seat)
            case Folded(seat):
                assert round_bet[seat] < current
                folded.add(seat)
                acted.add(seat)
            case BetPlaced(seat, amount, all_in):
                assert current == 0
                assert amount >= rules.min_bet or amount == stack[seat]
                assert rules.max_bet is None or amount <= rules.max_bet
                stack[seat] -= amount
                round_bet[seat] += amount
                assert stack[seat] >= 0
                assert all_in is (stack[seat] == 0)
                current = amount
                full = amount if amount >= rules.min_bet else 0
                acted.add(seat)
            case Called(seat, amount, all_in):
                assert amount == min(current - round_bet[seat], stack[seat]) > 0
                stack[seat] -= amount
                round_bet[seat] += amount
                assert all_in is (stack[seat] == 0)
                acted.add(seat)
            case Raised(seat, to, amount, all_in):
                assert current > 0
                assert amount == to - round_bet[seat]
                assert amount <= stack[seat]
                stack[seat] -= amount
                assert all_in is (stack[seat] == 0)
                increase = to - current
                assert increase >= min_raise() or all_in
                assert increase > 0
                assert rules.max_bet is None or increase <= rules.max_bet
                assert seat not in acted or current - round_bet[seat] >= min_raise()
                raises += 1
                assert rules.max_raises is None or raises <= rules.max_raises
                assert any(stack[o] > 0 for o in order if o != seat and o not in folded)
                if increase >= min_raise():
                    full = increase
                round_bet[seat] = current = to
                acted.add(seat)
            case BetReturned(seat, amount):
                others = max(b for s, b in round_bet.items() if s != seat)
                assert amount == round_bet[seat] - others > 0
                stack[seat] += amount
                round_bet[seat] -= amount
            case BettingRoundEnded():
                top = max(round_bet.values())
                live = [s for s in order if s not in folded]
                assert all(round_bet[s] == top or stack[s] == 0 for s in live)
                assert all(s in acted or stack[s] == 0 for s in live)
            case FourthTileDealt(seat, tile):
                assert seat not in folded
                assert tile == deck[first_fourth + order.index(seat)]
            case TurnTimedOut(seat):
                following = log[i + 1]
                assert isinstance(following, Checked | Folded | CutDeclared)
                assert following.seat == seat
            case CuttingStarted(seats):
                assert rules.manual_split
                assert seats == tuple(s for s in order if s not in folded)
            case PotAwarded() | HandVoided() | HandEnded() | CutDeclared() | Showdown():
                pass
            case HandStarted():
                raise AssertionError("a second HandStarted")
    assert {seat: s.stack for seat, s in state.seats.items()} == {
        seat: stack[seat] + won for seat, won in winnings(log).items()
    }


def winnings(log: tuple[Event, ...]) -> dict[int, int]:
    started = log[0]
    assert isinstance(started, HandStarted)
    won = {seat: 0 for seat, _ in started.stacks}
    for event in log:
        if isinstance(event, PotAwarded):
            for seat, amount in event.shares:
                won[seat] += amount
        elif isinstance(event, HandVoided):
            for seat, amount in event.refunds:
                won[seat] += amount
    return won


# -- the tests ------------------------------------------------------------------------


@settings(max_examples=1000, deadline=None)
@given(table=tables(), seeds=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=4))
def test_random_hands_keep_every_invariant(table: Table, seeds: list[int]) -> None:
    for seed in seeds:
        play_random_hand(table, random.Random(seed))


def test_two_thousand_seeded_random_hands_keep_every_invariant() -> None:
    outcomes = {"showdown": 0, "walk_over": 0, "void": 0, "side_pots": 0, "split": 0}
    for i in range(2000):
        rng = random.Random(i)
        state = play_random_hand(random_table(rng), rng)
        awards = [e for e in state.log if isinstance(e, PotAwarded)]
        if any(isinstance(e, HandVoided) for e in state.log):
            outcomes["void"] += 1
        elif any(isinstance(e, Showdown) for e in state.log):
            outcomes["showdown"] += 1
        else:
            outcomes["walk_over"] += 1
        outcomes["side_pots"] += len(awards) > 1
        outcomes["split"] += any(len(p.shares) > 1 for p in awards)
    # The random hands do reach every ending, side pots and split pots.
    assert all(count >= 20 for count in outcomes.values()), outcomes
