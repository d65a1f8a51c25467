"""The table core and the connections of its seats and spectators: one dropping, away, back,
or told the hands it missed (see ``core_harness`` for how the core is driven)."""

from __future__ import annotations

import json

import pytest

from qiuqiu.protocol import server as wire
from qiuqiu.server.store import HandRecord, TableRecord
from qiuqiu.server.table import TablePhase
from qiuqiu.server.table.audience import ENDS_KEPT, NEXT_HAND, TURN, Timer
from qiuqiu.server.table.ledger import WriteKind
from tests.server.table.core_harness import (
    Harness,
    Watcher,
    chips,
    duel,
    opened,
    seated,
    state,
)

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
