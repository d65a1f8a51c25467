"""The table's state machine driven directly: no socket, no event loop, no store.

Each test feeds :class:`TableCore` inputs and reads what it asks for (messages,
timers, the next write), then says how the write went, as the runner would.
That is how the rules in the core's docstring are held: nothing is told before
the write it depends on, one write at a time, seq never going back.
"""

from __future__ import annotations

from functools import partial

import pytest

from qiuqiu.engine import Hand, HandState, rank
from qiuqiu.protocol import ErrorCode
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.errors import Refused
from qiuqiu.server.store import HOUSE
from qiuqiu.server.table import TablePhase
from qiuqiu.server.table.audience import NEXT_HAND, TURN, Timer
from qiuqiu.server.table.ledger import WriteKind
from tests.server.table.core_harness import (
    Harness,
    Watcher,
    action,
    actor,
    chips,
    duel,
    opened,
    seated,
    state,
)

# -- opening and seating ---------------------------------------------------------------


def test_a_dealer_bot_table_opens_with_one_write_that_funds_the_bot_from_the_house() -> None:
    h = Harness()
    h.do(h.core.open, Watcher("bot"))
    assert state(h) is TablePhase.OPENING
    write = h.core.next_write()
    assert write is not None
    assert write.kind is WriteKind.OPEN
    assert write.commit.moves == ((HOUSE, 10_000),)
    assert write.commit.table is not None
    assert [s.account_id for s in write.commit.table.seats] == [HOUSE]
    assert h.core.next_write() is None, "one write at a time"
    h.written(write)
    assert state(h) is TablePhase.WAITING
    assert chips(h) == 0


def test_a_seat_appears_only_once_its_buy_in_is_written() -> None:
    h = opened()
    ann, spectator = Watcher("ann"), Watcher("spectator")
    h.do(h.core.watch, spectator)
    spectator.take()
    h.do(h.core.sit, "ann", "Ann", ann, 500, None, 1)
    assert ann.got == [], "nothing is told before the write"
    assert spectator.got == []
    assert h.core.seat_of("ann") is None
    write = h.core.next_write()
    assert write is not None
    assert write.commit.moves == (("ann", 500),)
    h.written(write)
    assert ann.types() == ["table_joined", "table_snapshot"]
    assert spectator.types() == ["player_seated"]
    assert h.balances["ann"] == 500
    assert NEXT_HAND in h.timers


def test_a_buy_in_the_store_refuses_gets_its_error_and_changes_nothing() -> None:
    h = opened()
    ann = Watcher("ann")
    h.do(h.core.sit, "ann", "Ann", ann, 500, None, 1)
    write = h.core.next_write()
    assert write is not None
    refusal = Refused(ErrorCode.INSUFFICIENT_BALANCE, "your balance is 100 chips")
    h.do(h.core.refused, write, refusal)
    assert [getattr(m, "code", None) for m in ann.got] == [ErrorCode.INSUFFICIENT_BALANCE]
    assert h.core.seat_of("ann") is None
    assert h.core.next_write() is None


def test_a_request_that_needs_a_write_is_refused_while_the_store_is_away() -> None:
    h = opened()
    h.do(h.core.store_changed, False)
    with pytest.raises(Refused) as refused:
        h.core.sit("ann", "Ann", Watcher("ann"), 500)
    assert refused.value.code is ErrorCode.STORE_UNAVAILABLE
    assert h.core.next_write() is None
    h.do(h.core.store_changed, True)
    seated(h, "ann", Watcher("ann"))


def test_no_turn_runs_out_while_the_store_is_away_and_it_starts_again_once_it_is_back() -> None:
    """A player on another process cannot reach the table while the store is away."""
    h, ann, bob = duel()
    assert TURN in h.timers
    h.do(h.core.store_changed, False)
    assert TURN not in h.timers
    # A seat on this process plays on; the next turn's clock waits as well.
    h.do(h.core.act, actor(h), action(cmd.Bet, h, amount=50))
    assert TURN not in h.timers
    waiting = actor(h)
    ann.take(), bob.take()
    h.do(h.core.store_changed, True)
    assert h.timers[TURN] == h.core.options.turn_seconds
    for watcher in (ann, bob):
        turns = [m for m in watcher.got if isinstance(m, wire.TurnStarted)]
        assert [h.core.seats[t.seat].account_id for t in turns] == [waiting]
    h.do(h.core.act, waiting, action(cmd.Call, h))
    assert state(h) is TablePhase.SETTLING


def checked_to_the_cut(h: Harness) -> HandState:
    """Both seats of a ``manual_split`` duel check: the hand is at its cutting phase."""
    h.do(h.core.act, actor(h), action(cmd.Check, h))
    h.do(h.core.act, actor(h), action(cmd.Check, h))
    hand = h.core.hand
    assert hand is not None
    assert hand.phase.name == "CUTTING"
    return hand


def test_a_cutting_phase_that_waited_for_the_store_gets_its_whole_time_again() -> None:
    h, _, _ = duel(manual_split=True)
    checked_to_the_cut(h)
    h.do(h.core.store_changed, False)
    assert TURN not in h.timers
    h.do(h.core.store_changed, True)
    assert h.timers[TURN] == h.core.options.turn_seconds


def test_a_snapshot_shows_the_cut_a_seat_declared_to_that_seat_alone() -> None:
    """A player who comes back at a cutting phase sees the cut it declared; the other
    seat sees neither the cut nor the tiles until the showdown."""
    h, ann, bob = duel(manual_split=True)
    hand = checked_to_the_cut(h)
    ann_seat = h.core.seats[next(n for n, s in h.core.seats.items() if s.account_id == "ann")]
    cut = rank(Hand(hand.seats[ann_seat.seat].tiles)).cut
    (a, b), (c, d) = cut.high_pair, cut.low_pair
    pairs = ((str(a), str(b)), (str(c), str(d)))
    h.do(h.core.act, "ann", action(cmd.DeclareCut, h, pairs=pairs))
    mine = {s.seat: s for s in h.core.snapshot(ann, None).table.seats}[ann_seat.seat]
    assert mine.cut is not None
    assert (mine.cut.pairs, mine.cut.values) == (pairs, cut.pairs)
    theirs = {s.seat: s for s in h.core.snapshot(bob, None).table.seats}[ann_seat.seat]
    assert theirs.cut is None
    assert theirs.tiles is None


def test_a_table_not_sure_of_its_lease_plays_nothing_until_it_is_again() -> None:
    """Its process was stopped past the lease: another may have adopted the table and
    voided the hand, so no action is played, the overdue timer plays nobody, and the
    turn starts again, whole, once a renewal says the lease is still its own."""
    h, ann, bob = duel()
    waiting = actor(h)
    h.do(h.core.lease_certain, False)
    assert TURN not in h.timers
    ann.take(), bob.take()
    for account in ("ann", "bob"):
        with pytest.raises(Refused) as refused:
            h.core.act(account, action(cmd.Check if account == waiting else cmd.Fold, h))
        assert refused.value.code is ErrorCode.STORE_UNAVAILABLE
        with pytest.raises(Refused) as refused:
            h.core.leave(account, ann if account == "ann" else bob)
        assert refused.value.code is ErrorCode.STORE_UNAVAILABLE
    h.do(h.core.fire, TURN)  # the stale timer, fired as the process woke
    h.do(h.core.store_changed, True)  # another call to the store answered: not the lease
    assert ann.take() == bob.take() == []
    assert TURN not in h.timers
    h.do(h.core.lease_certain, True)
    assert h.timers[TURN] == h.core.options.turn_seconds
    for watcher in (ann, bob):
        turns = [m for m in watcher.got if isinstance(m, wire.TurnStarted)]
        assert [h.core.seats[t.seat].account_id for t in turns] == [waiting]
    h.do(h.core.act, waiting, action(cmd.Check, h))
    assert "checked" in ann.types()


@pytest.mark.parametrize("lease", ["kept", "lost"])
def test_a_table_not_sure_of_its_lease_shows_nobody_the_table_until_it_is_again(
    lease: str,
) -> None:
    """Its process woke from a stop past the lease: another may host the table now, with
    the hand voided, so a snapshot from here would show a table that has moved on. A
    player back waits for theirs; watching and asking for one are refused, nothing
    changed. Once the renewal answers, the player back gets the table as it is (their
    old connection's drop, seen meanwhile, is not told after it); if the table was lost,
    nothing but the close (the process then sends its players away, 1012)."""
    h, ann, bob = duel()
    waiting = actor(h)
    h.do(h.core.lease_certain, False)
    bob.take()
    back, cat = Watcher("ann back"), Watcher("cat")
    h.do(h.core.reconnect, "ann", back)
    h.do(h.core.disconnect, "ann", ann)
    for request in (partial(h.core.watch, cat, "cat-watches"), partial(h.core.show, bob, "b")):
        with pytest.raises(Refused) as refused:
            request()
        assert refused.value.code is ErrorCode.STORE_UNAVAILABLE
    assert back.got == bob.got == cat.got == []
    if lease == "lost":
        h.do(h.core.lease_lost)
        assert back.types() == []
        assert bob.types() == ["table_closed"]
        return
    h.do(h.core.lease_certain, True)
    assert back.types() == ["table_snapshot", "turn_started"]
    assert bob.types() == ["player_reconnected", "turn_started"]
    assert Timer("grace", "ann") not in h.timers
    turn = back.got[-1]
    assert isinstance(turn, wire.TurnStarted)
    assert h.core.seats[turn.seat].account_id == waiting


@pytest.mark.parametrize("then", ["closed", "moved"])
def test_a_seat_cashed_out_as_the_lease_falls_in_doubt_is_told_it_left(then: str) -> None:
    """The hand's end, its leaver cashed out in it, was written as the process stalled
    past the lease: the write proves the table was its own, so the leaver is told at
    once. Held back with what doubt holds, the table_left was lost when the table then
    closed (its last player gone, or here its server stopping) or moved, and the
    client, no longer seated, waited for ever (a full run here)."""
    h, ann, bob = duel()
    leaver = actor(h)
    viewer, other = (ann, bob) if leaver == "ann" else (bob, ann)
    h.do(h.core.leave, leaver, viewer, "bye")
    while state(h) is TablePhase.PLAYING:
        h.do(h.core.act, actor(h), action(cmd.Check, h))
    end = h.core.next_write()
    assert end is not None
    assert end.kind is WriteKind.HAND_END
    h.do(h.core.lease_certain, False)
    h.written(end)
    left = [m for m in viewer.got if isinstance(m, wire.TableLeft)]
    assert [m.ref for m in left] == ["bye"]
    if then == "moved":
        h.do(h.core.lease_lost)
        assert other.types()[-1] == "table_closed"
    else:
        h.do(h.core.close, "the server is stopping")
        h.write(WriteKind.CLOSE)
        assert other.types()[-2:] == ["table_left", "table_closed"]
    assert [m for m in viewer.got if isinstance(m, wire.TableLeft)] == left


def test_a_watch_held_by_a_hands_end_and_a_doubt_is_answered_before_a_close() -> None:
    """A watch asked while the hand's end is written waits for it, and then for a
    doubt on the lease: a close written meanwhile proves the lease, so the watcher is
    answered, then told the table closed, not left without a word."""
    h, _, _ = duel()
    h.do(h.core.act, actor(h), action(cmd.Bet, h, amount=20))
    h.do(h.core.act, actor(h), action(cmd.Fold, h))
    assert state(h) is TablePhase.SETTLING
    cat = Watcher("cat")
    h.do(h.core.watch, cat, "cat-watches")
    assert cat.got == []
    end = h.core.next_write()
    assert end is not None
    h.do(h.core.lease_certain, False)
    h.written(end)
    assert cat.got == []
    h.do(h.core.close, "the server is stopping")
    h.write(WriteKind.CLOSE)
    assert cat.types()[0] == "table_watched"
    assert cat.types()[-1] == "table_closed"


@pytest.mark.parametrize("asked", ["watch", "snapshot"])
def test_a_request_held_by_a_hands_end_and_a_doubt_is_answered_when_the_table_moves(
    asked: str,
) -> None:
    """A watch or a snapshot asked while the hand's end is written waits for it, then for
    the doubt on the lease; the renewal then finds the table adopted. It was dropped
    with the table, its asker never answered: now it is refused ``table_moving``,
    nothing changed, to be sent again (to the adopter)."""
    h, ann, _ = duel()
    h.do(h.core.act, actor(h), action(cmd.Bet, h, amount=20))
    h.do(h.core.act, actor(h), action(cmd.Fold, h))
    assert state(h) is TablePhase.SETTLING
    asker = Watcher("cat") if asked == "watch" else ann
    asker.take()
    if asked == "watch":
        h.do(h.core.watch, asker, "asked")
    else:
        h.do(h.core.show, asker, "asked")
    end = h.core.next_write()
    assert end is not None
    h.do(h.core.lease_certain, False)
    h.written(end)
    assert "table_snapshot" not in asker.types()
    asker.take()
    h.do(h.core.lease_lost)
    refusals = [m for m in asker.got if isinstance(m, wire.Error)]
    assert [(m.ref, m.code) for m in refusals] == [("asked", ErrorCode.TABLE_MOVING)]
    assert "table_snapshot" not in asker.types()


def test_a_seat_written_in_a_doubt_is_told_its_outcome_is_unknown_when_the_table_moves() -> None:
    """A buy-in written as the lease fell in doubt waits to be told (its snapshot would
    show the table as the adopter may have moved on from it); the renewal finds the
    table adopted. The player, asking to sit, got no answer at all: now
    ``outcome_unknown``, which says to reconnect, the adopter having the seat."""
    h, _, _ = duel(seats=3)
    cat = Watcher("cat")
    h.do(h.core.sit, "cat", "Cat", cat, 300, None, "sit")
    buy_in = h.core.next_write()
    assert buy_in is not None
    assert buy_in.kind is WriteKind.BUY_IN
    h.do(h.core.lease_certain, False)
    h.written(buy_in)
    assert cat.got == []
    h.do(h.core.lease_lost)
    assert [(m.ref, m.code) for m in cat.got if isinstance(m, wire.Error)] == [
        ("sit", ErrorCode.OUTCOME_UNKNOWN)
    ]


@pytest.mark.parametrize(
    ("wanted", "code"),
    [(5, ErrorCode.NO_SUCH_SEAT), (1, ErrorCode.SEAT_TAKEN)],
)
def test_a_seat_that_cannot_be_had_is_refused(wanted: int, code: ErrorCode) -> None:
    h = opened()
    with pytest.raises(Refused) as refused:
        h.core.sit("ann", "Ann", Watcher("ann"), 500, wanted)
    assert refused.value.code is code


def test_a_seat_asked_for_twice_is_refused_while_the_first_is_written() -> None:
    h = opened(dealer_bot=False, seats=3)
    h.do(h.core.sit, "ann", "Ann", Watcher("ann"), 300)
    with pytest.raises(Refused) as refused:
        h.core.sit("ann", "Ann", Watcher("ann again"), 300)
    assert refused.value.code is ErrorCode.ALREADY_SEATED


# -- a hand --------------------------------------------------------------------------


def test_a_hand_is_seen_only_once_its_start_is_written() -> None:
    h = opened(dealer_bot=False)
    ann, bob = Watcher("ann"), Watcher("bob")
    seated(h, "ann", ann)
    seated(h, "bob", bob)
    ann.take()
    h.fire(NEXT_HAND)
    assert state(h) is TablePhase.STARTING
    write = h.core.next_write()
    assert write is not None
    assert write.kind is WriteKind.HAND_START
    assert write.commit.table is not None
    assert write.commit.table.hand_open
    assert write.commit.table.hand_id == 1
    h.do(h.core.show, ann)
    snapshot = ann.got[-1]
    assert isinstance(snapshot, wire.TableSnapshot)
    assert snapshot.table.hand is None, "no commitment shown before it is written"
    ann.take()
    h.written(write)
    assert state(h) is TablePhase.PLAYING
    assert ann.types()[:2] == ["hand_started", "ante_taken"]
    assert "turn_started" in ann.types()
    assert TURN in h.timers


def test_a_hands_end_is_told_only_once_its_one_commit_is_written() -> None:
    h, ann, bob = duel()
    ann.take(), bob.take()
    first = actor(h)
    h.do(h.core.act, first, action(cmd.Bet, h, amount=50))
    second = actor(h)
    h.do(h.core.act, second, action(cmd.Call, h))
    assert state(h) is TablePhase.SETTLING
    caller = ann if second == "ann" else bob
    # The call is told at once, as every action before it; what it caused waits.
    assert caller.types()[-1] == "called"
    write = h.core.next_write()
    assert write is not None
    assert write.kind is WriteKind.HAND_END
    assert write.commit.hand is not None
    assert write.commit.table is not None
    assert not write.commit.table.hand_open
    events = [m for m in caller.got if isinstance(m, wire.TableEvent)]
    h.written(write)
    told = caller.types()[len(events) :]
    assert told[0] == "betting_round_ended"
    assert told[-1] == "hand_ended"
    assert "showdown" in told
    assert chips(h) == 0
    assert NEXT_HAND in h.timers


def test_an_action_on_a_hand_whose_end_is_being_written_is_refused_only_after_that_end() -> None:
    h, ann, bob = duel()
    h.do(h.core.act, actor(h), action(cmd.Bet, h, amount=20))
    second = actor(h)
    caller = ann if second == "ann" else bob
    h.do(h.core.act, second, action(cmd.Call, h))
    assert state(h) is TablePhase.SETTLING
    # Sent right behind the call, as a client unsure of its click would: its
    # stale_hand must not tell of an end the client has not been told yet (rule 2).
    h.do(h.core.act, second, action(cmd.Check, h, id="late"), caller)
    assert not [m for m in caller.got if isinstance(m, wire.Error)]
    h.write(WriteKind.HAND_END)
    told = caller.types()
    assert told.index("hand_ended") < told.index("error")
    error = caller.got[told.index("error")]
    assert isinstance(error, wire.Error)
    assert (error.code, error.ref) == (ErrorCode.STALE_HAND, "late")


def test_a_bust_seat_is_cashed_out_in_the_hands_own_commit_after_its_showdown() -> None:
    h, ann, bob = duel()
    while state(h) is TablePhase.PLAYING:
        who = actor(h)
        legal = h.core.hand.legal_actions(h.core.seat_of(who).seat)  # type: ignore[union-attr]
        if legal.bet is not None:
            h.do(h.core.act, who, action(cmd.Bet, h, amount=legal.bet.max))
        else:
            h.do(h.core.act, who, action(cmd.Call, h))
    write = h.core.next_write()
    assert write is not None
    assert write.kind is WriteKind.HAND_END
    assert len(write.seats) == 1, "one of two all-in stacks is bust"
    loser = h.core.seats[write.seats[0]].account_id
    assert write.commit.moves == ((loser, 0),)
    watcher, other = (ann, bob) if loser == "ann" else (bob, ann)
    watcher.take(), other.take()
    h.written(write)
    told = watcher.types()
    assert told.index("hand_ended") < told.index("table_left")
    assert other.types()[-1] == "player_left"
    assert h.core.seat_of(loser) is None
    assert chips(h) == 0


def test_a_leaver_is_played_at_once_without_a_time_out_and_paid_at_the_hands_end() -> None:
    h, ann, bob = duel()
    first = actor(h)
    viewer = ann if first == "ann" else bob
    h.do(h.core.leave, first, viewer, "bye")
    names = viewer.types()
    assert "turn_timed_out" not in names
    assert names[-1] in ("checked", "turn_started")
    # The other seat plays on; the hand ends with the leaver folded or checked down.
    while state(h) is TablePhase.PLAYING:
        h.do(h.core.act, actor(h), action(cmd.Check, h))
    write = h.write(WriteKind.HAND_END)
    assert h.core.seats.get(write.seats[0]) is None
    left = next(m for m in viewer.got if isinstance(m, wire.TableLeft))
    assert left.ref == "bye"
    assert chips(h) == 0


def test_a_turn_times_out_only_for_the_turn_it_was_armed_for() -> None:
    h, ann, _ = duel()
    h.fire(TURN)
    assert "turn_timed_out" in ann.types()
    h.fire(TURN)  # the second seat's turn, whose time-out ends the hand
    assert state(h) is TablePhase.SETTLING
    assert TURN not in h.timers
    ann.take()
    h.do(h.core.fire, TURN)  # a stale timer the runner could not cancel in time
    assert ann.types() == []
    h.write(WriteKind.HAND_END)
    assert ann.types().count("turn_timed_out") == 0
