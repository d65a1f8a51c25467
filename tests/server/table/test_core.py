"""The table's state machine driven directly: no socket, no event loop, no store.

Each test feeds :class:`TableCore` inputs and reads what it asks for (messages,
timers, the next write), then says how the write went, as the runner would.
That is how the rules in the core's docstring are held: nothing is told before
the write it depends on, one write at a time, seq never going back.
"""

from __future__ import annotations

import json
import random
from functools import partial
from typing import Any

import pytest

from qiuqiu.engine import Hand, HandState, rank
from qiuqiu.protocol import MAX_CHIPS, ErrorCode, TableOptions, fairness
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.errors import Refused
from qiuqiu.server.store import HOUSE, HandRecord, SeatRecord, TableRecord
from qiuqiu.server.table import TableCore, TablePhase, TableTimings
from qiuqiu.server.table.audience import DESERTED, ENDS_KEPT, NEXT_HAND, TURN, Arm, Timer
from qiuqiu.server.table.core import NOBODY_SAT
from qiuqiu.server.table.ledger import SEQ_WINDOW, Write, WriteKind

NOW = 1_800_000_000.0


class Watcher:
    """A viewer that keeps what it is sent."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.got: list[wire.Reply] = []

    def deliver(self, message: wire.Reply) -> None:
        self.got.append(message)

    def types(self) -> list[str]:
        return [str(m.model_dump()["type"]) for m in self.got]

    def take(self) -> list[str]:
        types, self.got = self.types(), []
        return types

    def __repr__(self) -> str:
        return self.name


class Harness:
    """A core with the runner's part played by hand."""

    def __init__(self, **options: Any) -> None:
        self.core = TableCore(
            "t1",
            TableOptions(**options),
            random.Random(7),
            lambda: NOW,
            TableTimings(hand_pause=0, grace=30, bot_delay=0),
        )
        self.timers: dict[Timer, float] = {}
        self.balances = {
            HOUSE: -3000,
            "ann": 1000,
            "bob": 1000,
            "cat": 1000,
        }  # granted by the house

    def outputs(self) -> None:
        deliveries, timers = self.core.take_outputs()
        for viewer, frame in deliveries:
            viewer.deliver(frame.message)
        for change in timers:
            if isinstance(change, Arm):
                self.timers[change.timer] = change.seconds
            else:
                self.timers.pop(change.timer, None)

    def do(self, work: Any, *args: Any, **kwargs: Any) -> None:
        work(*args, **kwargs)
        self.outputs()

    def write(self, kind: WriteKind | None = None) -> Write:
        """Take the next write and make it, as the store would."""
        write = self.core.next_write()
        assert write is not None, "a write was expected"
        if kind is not None:
            assert write.kind is kind, write
        self.written(write)
        return write

    def written(self, write: Write) -> None:
        for account, amount in write.commit.moves:
            self.balances[account] -= amount
        moved = {account: self.balances[account] for account, _ in write.commit.moves}
        self.do(self.core.written, write, moved)

    def fire(self, timer: Timer) -> None:
        assert timer in self.timers, f"{timer} is not armed"
        del self.timers[timer]
        self.do(self.core.fire, timer)


def opened(**options: Any) -> Harness:
    h = Harness(**options)
    h.do(h.core.open, Watcher("bot") if h.core.options.dealer_bot else None)
    h.write(WriteKind.OPEN)
    return h


def seated(h: Harness, account: str, viewer: Watcher, chips: int = 300) -> None:
    h.do(h.core.sit, account, account.title(), viewer, chips, None, f"{account}-sits")
    h.write(WriteKind.BUY_IN)


def duel(**options: Any) -> tuple[Harness, Watcher, Watcher]:
    """Ann and Bob at a table without the bot, the first hand dealt."""
    h = opened(dealer_bot=False, **options)
    ann, bob = Watcher("ann"), Watcher("bob")
    seated(h, "ann", ann)
    seated(h, "bob", bob)
    h.fire(NEXT_HAND)
    h.write(WriteKind.HAND_START)
    return h, ann, bob


def action(kind: type[cmd.TableAction], h: Harness, **fields: Any) -> cmd.TableAction:
    return kind(table_id="t1", hand_id=h.core.hand_id, **fields)


def actor(h: Harness) -> str:
    hand = h.core.hand
    assert hand is not None
    assert hand.actor is not None
    return h.core.seats[hand.actor].account_id


def state(h: Harness) -> TablePhase:
    """Read afresh each time (mypy would take one read for the next)."""
    return h.core.state


def chips(h: Harness) -> int:
    """Every balance and every stack the table's record would hold: always zero."""
    return sum(h.balances.values()) + sum(s.stack for s in h.core.seats.values())


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


# -- connections -----------------------------------------------------------------------


def test_a_player_back_whose_connection_drops_before_the_table_shows_itself_stays_away() -> None:
    """Ann's reconnection waits for the lease to be sure again, and her new connection
    drops meanwhile: once the table plays again, her seat is away, with its grace
    period running, not held by a connection that is gone (every turn of hers would
    run out and every ante be taken, for ever)."""
    h, ann, bob = duel()
    h.do(h.core.disconnect, "ann", ann)
    h.do(h.core.lease_certain, False)
    bob.take()
    back = Watcher("ann back")
    h.do(h.core.reconnect, "ann", back)
    h.do(h.core.disconnect, "ann", back)
    h.do(h.core.lease_certain, True)
    assert back.got == []
    assert "player_reconnected" not in bob.types()
    assert not h.core.seat_of("ann").connected  # type: ignore[union-attr]
    assert Timer("grace", "ann") in h.timers


@pytest.mark.parametrize("told", ["at once", "after a hand's end"])
def test_a_seat_whose_connection_went_while_it_was_written_is_away(told: str) -> None:
    """Cat's connection goes (another hello took her account over) while her buy-in is
    written, or after, while the hand's end that holds her seat's news back is: her
    seat is away from the start, with its grace period, not held by a connection that
    is gone."""
    h, _, bob = duel(seats=3)
    cat = Watcher("cat")
    h.do(h.core.sit, "cat", "Cat", cat, 300, None, "cat-sits")
    buy_in = h.core.next_write()
    assert buy_in is not None
    assert buy_in.kind is WriteKind.BUY_IN
    if told == "at once":
        h.do(h.core.disconnect, "cat", cat)
        bob.take()
        h.written(buy_in)
    else:
        while state(h) is TablePhase.PLAYING:
            h.fire(TURN)
        h.written(buy_in)
        h.do(h.core.disconnect, "cat", cat)
        bob.take()
        h.write(WriteKind.HAND_END)
    assert cat.got == []
    assert [t for t in bob.types() if t.startswith("player_")] == [
        "player_seated",
        "player_disconnected",
    ]
    assert not h.core.seat_of("cat").connected  # type: ignore[union-attr]
    assert Timer("grace", "cat") in h.timers


def test_a_spectator_gone_before_its_watch_was_answered_is_not_kept() -> None:
    """Cat asks to watch while a hand's end is being written, and her connection closes
    before it is: the table does not keep sending to a spectator that is gone, nor
    count her against its limit."""
    h, _, _ = duel()
    while state(h) is TablePhase.PLAYING:
        h.fire(TURN)
    assert state(h) is TablePhase.SETTLING
    cat = Watcher("cat")
    h.do(h.core.watch, cat, "cat-watches")
    h.do(h.core.unwatch, cat)
    h.write(WriteKind.HAND_END)
    assert cat.got == []
    assert cat not in h.core.spectators


def test_a_connection_the_seat_moved_away_from_changes_nothing_when_it_drops() -> None:
    h, ann, bob = duel()
    moved = Watcher("ann elsewhere")
    h.do(h.core.reconnect, "ann", moved)
    assert "player_reconnected" in bob.types()
    assert moved.types()[-1] == "table_snapshot"
    bob.take()
    h.do(h.core.disconnect, "ann", ann)  # the old connection closes after the move
    assert "player_disconnected" not in bob.types()
    assert h.core.seat_of("ann").connected  # type: ignore[union-attr]
    assert Timer("grace", "ann") not in h.timers


def played_away(h: Harness, hands: int) -> tuple[list[HandRecord], TableRecord]:
    """``hands`` hands played to their end by time-outs, the next one dealt: their
    records, and the table's record as the last write left it."""
    played = []
    table: TableRecord | None = None
    for _ in range(hands):
        while state(h) is TablePhase.PLAYING:
            h.fire(TURN)
        hand = h.write(WriteKind.HAND_END).commit.hand
        assert hand is not None
        played.append(hand)
        h.fire(NEXT_HAND)
        table = h.write(WriteKind.HAND_START).commit.table
    assert table is not None
    return played, table


def test_a_player_away_for_more_hands_than_are_kept_is_told_how_each_ended() -> None:
    h, ann, _ = duel()
    h.do(h.core.disconnect, "ann", ann)
    ended = [hand.hand_id for hand in played_away(h, ENDS_KEPT + 2)[0]]
    back = Watcher("ann again")
    h.do(h.core.reconnect, "ann", back)
    ends = [m for m in back.got if isinstance(m, wire.HandEnded)]
    assert [m.hand_id for m in ends] == ended
    assert [m.seq for m in ends] == sorted(m.seq for m in ends)
    assert back.types()[len(ends) :] == ["table_snapshot"]
    again = Watcher("ann once more")
    h.do(h.core.reconnect, "ann", again)
    assert [m.hand_id for m in again.got if isinstance(m, wire.HandEnded)] == ended[-ENDS_KEPT:]


def test_an_end_sent_as_the_connection_dropped_is_told_again_however_many_hands_pass() -> None:
    """Hand 1's end went to Ann's connection as it dropped, unnoticed (its process died
    with it), and the table learned of the drop only after: told again when she is
    back, though more hands than the table keeps ended meanwhile."""
    h, ann, _ = duel()
    first = played_away(h, 1)[0][0].hand_id
    h.do(h.core.disconnect, "ann", ann)
    later = [hand.hand_id for hand in played_away(h, ENDS_KEPT + 1)[0]]
    back = Watcher("ann again")
    h.do(h.core.reconnect, "ann", back)
    assert [m.hand_id for m in back.got if isinstance(m, wire.HandEnded)] == [first, *later]


def test_an_end_sent_as_the_connection_dropped_is_told_again_by_a_table_adopted_since() -> None:
    h, ann, _ = duel()
    before = played_away(h, 1)[0]
    h.do(h.core.disconnect, "ann", ann)
    after, record = played_away(h, ENDS_KEPT + 1)
    played = before + after
    assert [s.missed_since for s in record.seats] == [played[0].hand_id, 0]
    adopter = Harness(dealer_bot=False)
    adopter.do(adopter.core.adopt, record, None, played[-record.hands_to_tell() :])
    adopter.write(WriteKind.HAND_END)
    back = Watcher("ann again")
    adopter.do(adopter.core.reconnect, "ann", back)
    told = [m.hand_id for m in back.got if isinstance(m, wire.HandEnded)]
    assert told == [hand.hand_id for hand in played]


def test_a_table_adopted_after_a_player_missed_hands_tells_it_every_one_of_them() -> None:
    h, ann, _ = duel()
    h.do(h.core.disconnect, "ann", ann)
    hands, record = played_away(h, ENDS_KEPT + 2)
    assert record.hand_open
    assert [s.missed_since for s in record.seats] == [1, 0]
    assert record.hands_to_tell() == len(hands) + 1
    adopter = Harness(dealer_bot=False)
    adopter.do(adopter.core.adopt, record, None, hands)
    adopter.write(WriteKind.HAND_END)
    back, bob_back = Watcher("ann again"), Watcher("bob again")
    adopter.do(adopter.core.reconnect, "ann", back)
    ends = [(m.hand_id, m.seq) for m in back.got if isinstance(m, wire.HandEnded)]
    assert ends == [(hand.hand_id, json.loads(hand.events[-1])["seq"]) for hand in hands]
    assert back.types()[len(ends) :] == ["hand_voided", "table_snapshot"]
    adopter.do(adopter.core.reconnect, "bob", bob_back)
    assert bob_back.types() == ["hand_ended", "hand_voided", "table_snapshot"]
    again = bob_back.got[0]
    assert isinstance(again, wire.HandEnded)
    assert again.seq == ends[-1][1], "the last end again, which he ignores by its seq"


def test_a_hand_voided_while_a_player_was_away_is_told_by_the_next_adopter_too() -> None:
    """Ann is away when the table's host dies mid-hand: its adopter voids the hand, and
    dies too, mid-hand, before she is back. The last adopter tells her of both voids
    and of the hands between."""
    h, ann, _ = duel()
    h.do(h.core.disconnect, "ann", ann)
    hands, record = played_away(h, 1)
    second = Harness(dealer_bot=False)
    second.do(second.core.adopt, record, None, hands[-record.hands_to_tell() :])
    voided = second.write(WriteKind.HAND_END).commit.hand
    assert voided is not None
    assert voided.voided
    second.do(second.core.reconnect, "bob", Watcher("bob on the second"))
    second.fire(NEXT_HAND)
    second.write(WriteKind.HAND_START)
    later, record = played_away(second, 2)
    hands = [*hands, voided, *later]
    third = Harness(dealer_bot=False)
    third.do(third.core.adopt, record, None, hands[-record.hands_to_tell() :])
    third.write(WriteKind.HAND_END)
    back = Watcher("ann again")
    third.do(third.core.reconnect, "ann", back)
    told = [
        (m.type, m.hand_id) for m in back.got if isinstance(m, wire.HandEnded | wire.HandVoided)
    ]
    assert told == [
        ("hand_ended", hands[0].hand_id),
        ("hand_voided", voided.hand_id),
        *[("hand_ended", hand.hand_id) for hand in later],
        ("hand_voided", record.hand_id),
    ]
    seqs = [m.seq for m in back.got if isinstance(m, wire.HandEnded | wire.HandVoided)]
    assert seqs == sorted(seqs)


def test_a_seat_whose_grace_runs_out_is_cashed_out_by_a_write() -> None:
    h = opened()
    ann = Watcher("ann")
    seated(h, "ann", ann)
    h.do(h.core.disconnect, "ann", ann)
    assert Timer("grace", "ann") in h.timers
    h.fire(Timer("grace", "ann"))
    write = h.core.next_write()
    assert write is not None
    assert write.kind is WriteKind.CASH_OUT
    assert write.commit.moves == (("ann", -300),)
    h.written(write)
    assert h.core.seat_of("ann") is None
    assert chips(h) == 0


# -- closing, moving, adopting ---------------------------------------------------------


def test_closing_mid_hand_voids_it_then_cashes_everyone_out_and_then_says_so() -> None:
    h, ann, _ = duel()
    ann.take()
    h.do(h.core.close, "maintenance")
    assert ann.got == [], "the void waits for its write"
    h.write(WriteKind.HAND_END)
    assert ann.types()[:2] == ["hand_voided", "hand_ended"]
    ann.take()
    write = h.write(WriteKind.CLOSE)
    assert write.commit.table is None
    assert ann.types() == ["table_left", "table_closed"]
    assert state(h) is TablePhase.CLOSED
    assert h.core.next_write() is None
    assert chips(h) == 0
    with pytest.raises(Refused) as refused:
        h.core.sit("ann", "Ann", ann, 300)
    assert refused.value.code is ErrorCode.TABLE_CLOSED


def test_a_lost_lease_closes_the_table_here_without_a_write() -> None:
    h, ann, _ = duel()
    ann.take()
    h.do(h.core.lease_lost)
    assert ann.types() == ["table_closed"]
    assert state(h) is TablePhase.CLOSED
    assert h.core.next_write() is None


def codes(watcher: Watcher) -> list[tuple[object, ErrorCode]]:
    return [(m.ref, m.code) for m in watcher.got if isinstance(m, wire.Error)]


def test_a_lost_lease_answers_every_buy_in_and_seed_change_still_waiting() -> None:
    """Ann's buy-in is being written, Cat's waits behind it, and Bob's seed change waits
    too, when the renewal finds the table adopted elsewhere: nobody was left without an
    answer. Ann's may have reached the store first (the adopter has it then); Cat's and
    Bob's certainly did not."""
    h = opened(dealer_bot=False, seats=3)
    bob, ann, cat = Watcher("bob"), Watcher("ann"), Watcher("cat")
    seated(h, "bob", bob)
    h.do(h.core.sit, "ann", "Ann", ann, 300, None, "ann-sits")
    assert h.core.next_write() is not None
    h.do(h.core.sit, "cat", "Cat", cat, 300, None, "cat-sits")
    h.do(h.core.set_seed, "bob", bob, "bob-seed", "bob-seeds")
    h.do(h.core.lease_lost)
    assert codes(ann) == [("ann-sits", ErrorCode.OUTCOME_UNKNOWN)]
    assert codes(cat) == [("cat-sits", ErrorCode.TABLE_MOVED)]
    assert codes(bob) == [("bob-seeds", ErrorCode.TABLE_MOVED)]
    assert bob.types()[-1] == "table_closed"


def test_a_lease_lost_at_a_write_refuses_what_it_wrote_for_certain() -> None:
    """The store refused the write itself for the lease: nothing of it happened."""
    h = opened(dealer_bot=False)
    bob, ann = Watcher("bob"), Watcher("ann")
    seated(h, "bob", bob)
    h.do(h.core.set_seed, "bob", bob, "bob-seed", "bob-seeds")
    assert h.core.next_write() is not None
    h.do(h.core.sit, "ann", "Ann", ann, 300, None, "ann-sits")
    h.do(h.core.lease_lost, unwritten=True)
    assert codes(bob) == [("bob-seeds", ErrorCode.TABLE_MOVED)]
    assert codes(ann) == [("ann-sits", ErrorCode.TABLE_MOVED)]


def test_an_adopted_hand_is_voided_first_and_whoever_comes_back_is_told_so_above_any_seq() -> None:
    options = TableOptions(dealer_bot=False)
    record = TableRecord(
        "t1",
        options,
        (SeatRecord(0, "ann", "Ann", 300), SeatRecord(1, "bob", "Bob", 300)),
        hand_id=4,
        hand_open=True,
        seq=SEQ_WINDOW + 120,
    )
    h = Harness(dealer_bot=False)
    h.do(h.core.adopt, record, None)
    ann = Watcher("ann")
    h.do(h.core.reconnect, "ann", ann)
    assert ann.got == [], "the void is written before anyone is told"
    write = h.write(WriteKind.HAND_END)
    assert write.commit.hand is not None
    assert write.commit.hand.voided
    assert write.commit.hand.hand_id == 4
    assert ann.types() == ["hand_voided", "table_snapshot"]
    assert all(getattr(m, "seq", record.seq + 1) > record.seq for m in ann.got)


def test_a_seat_taken_during_the_hand_its_host_died_in_is_no_part_of_the_voided_hand() -> None:
    """Cat sits down mid-hand, and the host dies: the adopter voids the hand for Ann and
    Bob alone. Cat is neither in its record (his history, its names) nor told of it."""
    h, _, _ = duel(seats=3)
    h.do(h.core.sit, "cat", "Cat", Watcher("cat"), 300, None, "cat-sits")
    record = h.write(WriteKind.BUY_IN).commit.table
    assert record is not None
    assert record.hand_open
    adopter = Harness(dealer_bot=False, seats=3)
    adopter.do(adopter.core.adopt, record, None)
    voided = adopter.write(WriteKind.HAND_END).commit.hand
    assert voided is not None
    assert {a for _, a in voided.accounts} == {"ann", "bob"}
    assert sorted(name for _, name in voided.names) == ["Ann", "Bob"]
    ann, cat = Watcher("ann"), Watcher("cat")
    adopter.do(adopter.core.reconnect, "ann", ann)
    assert ann.types() == ["hand_voided", "table_snapshot"]
    adopter.do(adopter.core.reconnect, "cat", cat)
    assert cat.types() == ["table_snapshot"]


def test_an_adopted_table_deals_from_its_recorded_seed_with_each_seats_client_seed() -> None:
    options = TableOptions(dealer_bot=False)
    seats = (SeatRecord(0, "ann", "Ann", 300, client_seed="a"), SeatRecord(1, "bob", "Bob", 300))
    record = TableRecord("t1", options, seats, hand_id=4, seq=SEQ_WINDOW, table_seed="9e" * 32)
    h = Harness(dealer_bot=False)
    h.do(h.core.adopt, record, None)
    for account in ("ann", "bob"):
        h.do(h.core.reconnect, account, Watcher(account))
    if NEXT_HAND in h.timers:
        h.fire(NEXT_HAND)
    write = h.write(WriteKind.HAND_START)
    assert write.commit.table is not None
    assert write.commit.table.table_seed == "9e" * 32
    assert [s.client_seed for s in write.commit.table.seats] == ["a", ""]
    deal = h.core.deal
    assert deal is not None
    assert deal.client_seeds == ((0, "a"), (1, ""))
    hand_seed = fairness.hand_seed("9e" * 32, "t1", 5)
    assert deal.sealed == fairness.derive_deck(hand_seed, {0: "a", 1: ""})


def checked_down(h: Harness) -> None:
    while state(h) is TablePhase.PLAYING:
        h.do(h.core.act, actor(h), action(cmd.Check, h))
    h.write(WriteKind.HAND_END)


def test_a_seed_change_is_confirmed_only_once_written_and_deals_the_hands_after_it() -> None:
    h, ann, _ = duel()
    ann.take()
    h.do(h.core.set_seed, "ann", ann, "lucky", 8)
    assert ann.got == [], "a host that dies now deals on with the old seed: no seed_set yet"
    write = h.core.next_write()
    assert write is not None
    assert write.kind is WriteKind.SEED
    assert write.commit.table is not None
    assert write.commit.table.hand_open, "the hand in play goes on with the seed it has"
    assert [s.client_seed for s in write.commit.table.seats] == ["lucky", ""]
    h.written(write)
    assert ann.got == [wire.SeedSet(ref=8, table_id="t1", client_seed="lucky")]
    checked_down(h)
    h.fire(NEXT_HAND)
    h.write(WriteKind.HAND_START)
    deal = h.core.deal
    assert deal is not None
    assert deal.client_seeds == ((0, "lucky"), (1, ""))


def test_a_seed_change_is_refused_while_the_store_is_away_or_never_reached_it() -> None:
    h, ann, _ = duel()
    h.do(h.core.store_changed, False)
    with pytest.raises(Refused) as refused:
        h.core.set_seed("ann", ann, "lucky")
    assert refused.value.code is ErrorCode.STORE_UNAVAILABLE
    assert h.core.next_write() is None
    h.do(h.core.store_changed, True)
    ann.take()
    h.do(h.core.set_seed, "ann", ann, "lucky", 9)
    write = h.core.next_write()
    assert write is not None
    h.do(h.core.refused, write, Refused(ErrorCode.STORE_UNAVAILABLE, "away"))
    assert [(getattr(m, "ref", None), getattr(m, "code", None)) for m in ann.got] == [
        (9, ErrorCode.STORE_UNAVAILABLE)
    ]
    assert h.core.seats[0].client_seed == ""
    assert h.core.next_write() is None


def test_a_seed_change_of_a_seat_that_stands_up_first_is_refused() -> None:
    h, ann, _ = duel()
    checked_down(h)
    h.do(h.core.leave, "ann", ann, "bye")
    cash_out = h.core.next_write()
    assert cash_out is not None
    assert cash_out.kind is WriteKind.CASH_OUT
    h.do(h.core.set_seed, "ann", ann, "too-late", 10)
    ann.take()
    h.written(cash_out)
    assert ann.types() == ["error", "table_left"]
    error = ann.got[0]
    assert isinstance(error, wire.Error)
    assert (error.ref, error.code) == (10, ErrorCode.NOT_SEATED)
    assert h.core.next_write() is None


def test_a_table_recorded_before_protocol_2_draws_a_seed_and_keeps_it() -> None:
    old = TableRecord("t1", TableOptions(dealer_bot=False), (SeatRecord(0, "ann", "Ann", 300),))
    h = Harness(dealer_bot=False)
    drawn = h.core.table_seed
    h.do(h.core.adopt, old, None)
    assert h.core.table_seed == drawn
    h.do(h.core.reconnect, "ann", Watcher("ann"))
    h.do(h.core.leave, "ann", Watcher("ann"))
    assert h.write().commit.table is not None
    close = h.write(WriteKind.CLOSE)
    assert close.commit.revealed_seed == drawn


def test_the_close_reveals_the_seed_to_whoever_is_there_and_a_move_does_not() -> None:
    h, _, _ = duel()
    watcher = Watcher("watcher")
    h.do(h.core.watch, watcher)
    h.do(h.core.close, "closing")
    while (write := h.core.next_write()) is not None:
        h.written(write)
    closed = [m for m in watcher.got if isinstance(m, wire.TableClosed)]
    assert [m.table_seed for m in closed] == [h.core.table_seed]
    assert fairness.seed_commitment(h.core.table_seed) == h.core.seed_commitment
    moved, spectator = duel()[0], Watcher("spectator")
    moved.do(moved.core.watch, spectator)
    moved.do(moved.core.lease_lost)
    (gone,) = [m for m in spectator.got if isinstance(m, wire.TableClosed)]
    assert gone.table_seed is None


def seqs(watcher: Watcher) -> list[int]:
    return [m.seq for m in watcher.got if isinstance(m, wire.TableEvent)]


def test_a_buy_in_written_while_the_hand_end_waits_is_told_after_the_hands_end() -> None:
    h, ann, bob = duel(seats=3)
    cy = Watcher("cy")
    h.balances["cy"] = 1000
    h.do(h.core.sit, "cy", "Cy", cy, 300)
    buy_in = h.core.next_write()
    assert buy_in is not None
    assert buy_in.kind is WriteKind.BUY_IN, "in flight while the hand is played out"
    h.do(h.core.act, actor(h), action(cmd.Bet, h, amount=20))
    h.do(h.core.act, actor(h), action(cmd.Fold, h))
    assert state(h) is TablePhase.SETTLING
    h.written(buy_in)
    assert cy.got == [], "told nothing before the hand's end is"
    assert "cy" in {s.account_id for s in h.core.seats.values()}, "its chips are at the table"
    end = h.write(WriteKind.HAND_END)
    assert end.commit.table is not None
    assert "cy" in {s.account_id for s in end.commit.table.seats}, "the end commit keeps it"
    for watcher in (ann, bob):
        types = watcher.types()
        assert types[types.index("hand_ended") :].count("player_seated") == 1
        assert seqs(watcher) == sorted(seqs(watcher))
    assert cy.types() == ["table_joined", "table_snapshot"]


def test_a_cash_out_written_while_the_hand_end_waits_is_told_after_the_hands_end() -> None:
    h, ann, bob = opened(dealer_bot=False, seats=3), Watcher("ann"), Watcher("bob")
    cy = Watcher("cy")
    h.balances["cy"] = 1000
    for account, viewer in (("ann", ann), ("bob", bob)):
        seated(h, account, viewer)
    h.fire(NEXT_HAND)
    h.write(WriteKind.HAND_START)
    seated(h, "cy", cy)
    h.do(h.core.leave, "cy", cy, "cy-leaves")
    cash_out = h.core.next_write()
    assert cash_out is not None
    assert cash_out.kind is WriteKind.CASH_OUT
    h.do(h.core.act, actor(h), action(cmd.Bet, h, amount=20))
    h.do(h.core.act, actor(h), action(cmd.Fold, h))
    h.written(cash_out)
    assert "table_left" not in cy.types()
    h.write(WriteKind.HAND_END)
    for watcher in (ann, bob):
        types = watcher.types()
        assert types.index("hand_ended") < types.index("player_left")
        assert seqs(watcher) == sorted(seqs(watcher))
    assert cy.types()[-1] == "table_left"


def test_a_disconnect_while_the_hand_end_waits_is_told_after_the_hands_end() -> None:
    h, ann, bob = duel()
    h.do(h.core.act, actor(h), action(cmd.Bet, h, amount=20))
    folder = actor(h)
    h.do(h.core.act, folder, action(cmd.Fold, h))
    assert state(h) is TablePhase.SETTLING
    # The folder's connection drops as the end is written: the other player's
    # session would drop the held end, its seqs below this one's, had it come first.
    folders, other = (ann, bob) if folder == "ann" else (bob, ann)
    h.do(h.core.disconnect, folder, folders)
    assert "player_disconnected" not in other.types()
    h.write(WriteKind.HAND_END)
    types = other.types()
    assert types.index("hand_ended") < types.index("player_disconnected")
    assert seqs(other) == sorted(seqs(other))


def test_every_write_reserves_seqs_above_the_current_one() -> None:
    h, _, _ = duel()
    h.do(h.core.act, actor(h), action(cmd.Bet, h, amount=20))
    h.do(h.core.act, actor(h), action(cmd.Fold, h))
    write = h.core.next_write()
    assert write is not None
    assert write.commit.table is not None
    assert write.commit.table.seq == h.core.seq + SEQ_WINDOW


def play_a_shove(h: Harness, account: str) -> Write:
    """Play the hand dealt: ``account`` bets all it may at its first chance, everyone
    else checks or calls; its end written."""
    while state(h) is TablePhase.PLAYING:
        hand = h.core.hand
        assert hand is not None
        assert hand.actor is not None
        legal = hand.legal_actions(hand.actor)
        who = h.core.seats[hand.actor].account_id
        if legal.bet is not None and who == account:
            move: cmd.TableAction = action(cmd.Bet, h, amount=legal.bet.max)
        elif legal.call is not None:
            move = action(cmd.Call, h)
        else:
            move = action(cmd.Check, h)
        h.do(h.core.act, who, move)
    return h.write(WriteKind.HAND_END)


def play_all_in_hands_until_bust(h: Harness, account: str) -> None:
    """``account`` shoves every hand against the bot, who calls: within a few hands it
    is bust (each is about a coin flip, and a win only doubles a short stack)."""
    for _ in range(60):
        h.fire(NEXT_HAND)
        h.write(WriteKind.HAND_START)
        write = play_a_shove(h, account)
        if write.seats:
            return
    raise AssertionError(f"{account} never went bust")


def test_a_bot_table_whose_last_player_went_bust_waits_for_a_rebuy() -> None:
    h = opened()
    ann = Watcher("ann")
    seated(h, "ann", ann, 100)
    play_all_in_hands_until_bust(h, "ann")
    assert h.core.seat_of("ann") is None
    assert state(h) is TablePhase.WAITING, "the table stays open for a rebuy"
    assert DESERTED in h.timers
    seated(h, "ann", ann, 100)
    assert DESERTED not in h.timers
    assert chips(h) == 0


def test_a_bot_table_nobody_buys_into_again_closes_when_its_wait_is_over() -> None:
    h = opened()
    ann = Watcher("ann")
    seated(h, "ann", ann, 100)
    play_all_in_hands_until_bust(h, "ann")
    h.fire(DESERTED)
    h.write(WriteKind.CLOSE)
    assert state(h) is TablePhase.CLOSED
    assert chips(h) == 0


def test_a_table_nobody_sits_at_closes_when_its_wait_is_over() -> None:
    h = opened()
    assert DESERTED in h.timers
    watcher = Watcher("watcher")
    h.do(h.core.watch, watcher)
    h.fire(DESERTED)
    h.write(WriteKind.CLOSE)
    assert state(h) is TablePhase.CLOSED
    closed = [m for m in watcher.got if isinstance(m, wire.TableClosed)]
    assert [m.reason for m in closed] == [NOBODY_SAT]


def test_a_first_player_stops_the_wait_and_a_refused_one_starts_it_again() -> None:
    h = opened()
    ann = Watcher("ann")
    h.do(h.core.sit, "ann", "Ann", ann, 300, None, "ann-sits")
    assert DESERTED not in h.timers, "a buy-in being written is a player"
    write = h.core.next_write()
    assert write is not None
    assert write.kind is WriteKind.BUY_IN
    h.do(h.core.refused, write, Refused(ErrorCode.INVALID_BUY_IN, "the balance is short"))
    assert DESERTED in h.timers, "a refused buy-in must not leave the table open for good"
    seated(h, "ann", ann)
    assert DESERTED not in h.timers
    assert state(h) is TablePhase.WAITING


def test_a_table_whose_last_player_leaves_closes_at_once() -> None:
    h = opened()
    ann = Watcher("ann")
    seated(h, "ann", ann)
    h.do(h.core.leave, "ann", ann)
    h.write(WriteKind.CASH_OUT)
    h.write(WriteKind.CLOSE)
    assert state(h) is TablePhase.CLOSED
    assert chips(h) == 0


def test_a_seat_taken_after_a_hand_shows_nothing_of_the_hand_its_last_player_folded() -> None:
    h, _, bob = duel()
    if actor(h) == "ann":
        h.do(h.core.act, "ann", action(cmd.Bet, h, amount=50))
    h.do(h.core.act, "bob", action(cmd.Fold, h))
    h.write(WriteKind.HAND_END)
    bob_seat = h.core.seat_of("bob")
    assert bob_seat is not None
    h.do(h.core.leave, "bob", bob)
    h.write(WriteKind.CASH_OUT)
    cat = Watcher("cat")
    seated(h, "cat", cat)
    cat_seat = h.core.seat_of("cat")
    assert cat_seat is not None
    assert cat_seat.seat == bob_seat.seat
    snapshot = next(m for m in cat.got if isinstance(m, wire.TableSnapshot))
    assert snapshot.table.hand is not None, "the last hand is still shown"
    cats = next(s for s in snapshot.table.seats if s.seat == bob_seat.seat)
    assert cats.tiles is None, "Bob folded: his tiles are nobody's to see"
    assert cats.openings is None
    assert not cats.in_hand, "Cat was not in that hand"


def table_left_refs_once_the_hand_ends(h: Harness, watcher: Watcher) -> list[object]:
    """Check the hand to its end and write it: the ``ref`` of each ``table_left`` that
    ``watcher`` got."""
    while state(h) is TablePhase.PLAYING:
        h.do(h.core.act, actor(h), action(cmd.Check, h))
    h.write(WriteKind.HAND_END)
    return [m.ref for m in watcher.got if isinstance(m, wire.TableLeft)]


def test_a_leave_asked_twice_in_a_hand_is_answered_once_and_the_repeat_refused() -> None:
    h, ann, _ = duel()
    h.do(h.core.leave, "ann", ann, "first")
    with pytest.raises(Refused) as refused:
        h.core.leave("ann", ann, "again")
    assert refused.value.code is ErrorCode.ALREADY_LEAVING
    assert table_left_refs_once_the_hand_ends(h, ann) == ["first"]


def test_a_leave_asked_before_a_reconnect_is_answered_without_the_old_connections_id() -> None:
    h, ann, _ = duel()
    h.do(h.core.leave, "ann", ann, "first")
    back = Watcher("ann again")
    h.do(h.core.reconnect, "ann", back)
    assert table_left_refs_once_the_hand_ends(h, back) == [None]


def test_a_leave_asked_before_its_own_viewer_was_away_and_back_keeps_its_id() -> None:
    """A player on another process whose process stopped listening to Redis for a
    moment: the host took it for away, then its same session asked for the table again.
    Its connection never changed, so its leave is still answered with its id."""
    h, ann, _ = duel()
    h.do(h.core.leave, "ann", ann, "first")
    h.do(h.core.disconnect, "ann", ann)
    h.do(h.core.reconnect, "ann", ann)
    assert table_left_refs_once_the_hand_ends(h, ann) == ["first"]


def test_a_leave_asked_again_after_a_reconnect_is_the_one_table_left_answers() -> None:
    """The first request's connection is gone, and its answer with it: the new
    connection asking is not asking twice (already_leaving is per connection)."""
    h, ann, _ = duel()
    h.do(h.core.leave, "ann", ann, "first")
    back = Watcher("ann again")
    h.do(h.core.reconnect, "ann", back)
    h.do(h.core.leave, "ann", back, "second")
    with pytest.raises(Refused) as refused:
        h.core.leave("ann", back, "third")
    assert refused.value.code is ErrorCode.ALREADY_LEAVING
    assert table_left_refs_once_the_hand_ends(h, back) == ["second"]


def test_a_rebuy_s_snapshot_shows_the_chips_each_seat_has_now_not_at_the_last_hand_s_end() -> None:
    """Ann went bust against the bot and buys in again: the snapshot she gets still shows
    the hand that took her chips, but each seat's stack is what it has now, not what
    it had when that hand ended (0 for her), and no bet of that hand is left out."""
    h = opened(min_buy_in=50, max_buy_in=100)
    ann = Watcher("ann")
    seated(h, "ann", ann, 100)
    play_all_in_hands_until_bust(h, "ann")
    ann.got.clear()
    seated(h, "ann", ann, 60)
    snapshot = next(m for m in ann.got if isinstance(m, wire.TableSnapshot))
    assert snapshot.table.hand is not None, "the last hand is still shown"
    assert snapshot.table.hand.phase == "ended"
    now = {n: s.stack for n, s in h.core.seats.items()}
    assert now[0] == 60
    assert {s.seat: s.stack for s in snapshot.table.seats} == now
    assert all(s.bet == 0 for s in snapshot.table.seats), "no betting round is open"
    assert snapshot.table.hand.current_bet == 0
    hers = next(s for s in snapshot.table.seats if s.seat == 0)
    assert hers.in_hand, "the same player at the same seat keeps its part in the hand"
    assert hers.tiles is not None


def test_a_seat_whose_unmatched_chips_came_back_is_not_all_in_in_a_snapshot() -> None:
    """The bot shoves 90 at Ann's 50: its 40 nobody matched come back to it, and the
    snapshot does not say it put every chip in."""
    h = opened(min_buy_in=50, max_buy_in=100)
    ann = Watcher("ann")
    seated(h, "ann", ann, 60)
    h.fire(NEXT_HAND)
    h.write(WriteKind.HAND_START)
    play_a_shove(h, HOUSE)
    returned = [m for m in ann.got if isinstance(m, wire.BetReturned)]
    assert [(m.seat, m.amount) for m in returned] == [(h.core.bot_seat, 40)]
    bot = next(s for s in h.core.snapshot(ann, None).table.seats if s.seat == h.core.bot_seat)
    assert bot.stack > 0
    assert not bot.all_in


def test_a_table_closed_while_a_buy_in_is_written_seats_that_player_then_cashes_it_out() -> None:
    """The buy-in's chips are on their way when the server starts to stop: refusing it
    then (table_closed, "nothing changed") was untrue, and the write's end found no
    buy-in to seat, so the chips stayed in a table that was gone."""
    h = opened(dealer_bot=False)
    ann = Watcher("ann")
    h.do(h.core.sit, "ann", "Ann", ann, 300, None, "ann-sits")
    buy_in = h.core.next_write()
    assert buy_in is not None
    assert buy_in.kind is WriteKind.BUY_IN
    h.do(h.core.close, "the server is shutting down")
    h.written(buy_in)
    h.write(WriteKind.CLOSE)
    assert state(h) is TablePhase.CLOSED
    assert chips(h) == 0
    assert h.balances["ann"] == 1000
    assert not [m for m in ann.got if isinstance(m, wire.Error)]
    assert [t for t in ann.types() if t in ("table_joined", "table_left")] == [
        "table_joined",
        "table_left",
    ]


# -- the house's top-up ----------------------------------------------------------------


def test_the_house_tops_the_bot_up_only_as_far_as_every_chip_at_the_table_fits_in_one_amount() -> (
    None
):
    # Antes of every chip a seat may bring: each hand is one showdown, no decision
    # of the bot's. A player who won the first had 10^12, and a bot topped up to its
    # max_buy_in again made the second hand's pot worth more than any amount can be:
    # the hand's end could not be told, and the table stopped there.
    half = MAX_CHIPS // 2
    for n in range(50):
        h = opened(ante=half, min_buy_in=1, max_buy_in=half)
        h.balances["ann"] += half
        h.balances[HOUSE] -= half
        h.do(h.core.sit, "ann", "Ann", Watcher("ann"), half, None, "ann-sits", f"seed-{n}")
        h.write(WriteKind.BUY_IN)
        h.fire(NEXT_HAND)
        h.write(WriteKind.HAND_START)
        h.write(WriteKind.HAND_END)
        if h.core.seat_of("ann") is not None:
            break
    else:
        raise AssertionError("Ann won no first hand")
    stacks = {s.account_id: s.stack for s in h.core.seats.values()}
    assert stacks == {"ann": MAX_CHIPS, HOUSE: 0}
    assert chips(h) == 0


def test_a_winner_leaving_with_the_houses_chips_leaves_room_for_the_bots_whole_top_up() -> None:
    # Counted as if they stayed, the chips of a winner leaving would leave the bot with
    # nothing, and a table with another player at it would deal no more hands.
    half = MAX_CHIPS // 2
    for n in range(50):
        h = opened(ante=half, min_buy_in=1, max_buy_in=half)
        h.balances[HOUSE] -= half - h.balances["ann"]
        h.balances["ann"] = half
        ann = Watcher("ann")
        h.do(h.core.sit, "ann", "Ann", ann, half, None, "ann-sits", f"seed-{n}")
        h.write(WriteKind.BUY_IN)
        h.fire(NEXT_HAND)
        h.write(WriteKind.HAND_START)
        h.do(h.core.leave, "ann", ann, "ann-leaves", True)
        end = h.write(WriteKind.HAND_END)
        if ("ann", -MAX_CHIPS) in end.commit.moves:
            break
    else:
        raise AssertionError("Ann won no first hand")
    assert end.commit.moves == (("ann", -MAX_CHIPS), (HOUSE, half))
    assert [s.stack for s in h.core.seats.values()] == [half]
    assert chips(h) == 0


def test_a_buy_in_that_would_hold_more_chips_at_the_table_than_one_amount_is_refused() -> None:
    # Ann won Bob's buy-in: 10^12 at a two-seat table of 5*10^11 buy-ins. Cat's came
    # on top, and a pot of every chip (an ante of 5*10^11 each) came to more than any
    # amount can be: its end could not be told, and the table stopped there.
    half = MAX_CHIPS // 2
    h = opened(dealer_bot=False, ante=half, min_buy_in=1, max_buy_in=half)
    for account in ("ann", "bob", "cat"):
        h.balances[account] += half
        h.balances[HOUSE] -= half
    seated(h, "ann", Watcher("ann"), half)
    seated(h, "bob", Watcher("bob"), half)
    h.fire(NEXT_HAND)
    h.write(WriteKind.HAND_START)
    h.write(WriteKind.HAND_END)
    assert [s.stack for s in h.core.seats.values()] == [MAX_CHIPS]
    with pytest.raises(Refused) as refused:
        h.core.sit("cat", "Cat", Watcher("cat"), 1)
    assert refused.value.code is ErrorCode.INVALID_BUY_IN
    assert refused.value.message == (
        "the table holds 1000000000000 chips, and every chip at it must fit in one amount"
        " (at most 1000000000000): buy in with at most 0"
    )
    assert h.core.next_write() is None
    assert chips(h) == 0
