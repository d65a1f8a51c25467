"""The table core closing, losing its lease, being adopted, and the writes that wait for a
hand's end (see ``core_harness`` for how the core is driven)."""

from __future__ import annotations

import pytest

from qiuqiu.protocol import ErrorCode, TableOptions, fairness
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.errors import Refused
from qiuqiu.server.store import SeatRecord, TableRecord
from qiuqiu.server.table import TablePhase
from qiuqiu.server.table.audience import NEXT_HAND
from qiuqiu.server.table.ledger import SEQ_WINDOW, WriteKind
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


def test_a_cash_out_written_while_the_hand_end_waits_is_seen_by_the_others_after_that_end() -> None:
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
    # Cy's own answer, which takes no seq, is told at once; the player_left the others
    # see takes one, so it waits for the hand's end.
    assert cy.types()[-1] == "table_left"
    assert "player_left" not in ann.types() + bob.types()
    h.write(WriteKind.HAND_END)
    for watcher in (ann, bob):
        types = watcher.types()
        assert types.index("hand_ended") < types.index("player_left")
        assert seqs(watcher) == sorted(seqs(watcher))


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


# -- a seed or a snapshot asked while the seat's buy-in is written ---------------------


def test_a_seed_asked_while_the_seat_is_written_is_set_after_the_join() -> None:
    """It was refused ``not_seated`` before the join was answered, though the seat
    came: a bot that sends its seed after ``join_table`` deals without it."""
    h = opened()
    ann = Watcher("ann")
    h.do(h.core.sit, "ann", "Ann", ann, 500, None, "sit")
    h.do(h.core.set_seed, "ann", ann, "lucky", "seed")
    assert ann.got == [], "nothing is told before the write"
    h.write(WriteKind.BUY_IN)
    assert ann.take() == ["table_joined", "table_snapshot"]
    write = h.write(WriteKind.SEED)
    assert write.seeds[0].client_seed == "lucky"
    assert ann.got == [wire.SeedSet(ref="seed", table_id="t1", client_seed="lucky")]
    assert h.core.seats[0].client_seed == "lucky"


def test_a_seed_and_a_leave_asked_while_the_seat_is_written_are_answered_in_order() -> None:
    h = opened()
    ann = Watcher("ann")
    h.do(h.core.sit, "ann", "Ann", ann, 500, None, "sit")
    h.do(h.core.set_seed, "ann", ann, "lucky", "seed")
    h.do(h.core.leave, "ann", ann, "leave")
    h.write(WriteKind.BUY_IN)
    assert ann.take() == ["table_joined", "table_snapshot"]
    h.write(WriteKind.SEED)
    h.write(WriteKind.CASH_OUT)
    assert ann.types() == ["seed_set", "table_left"]
    assert [getattr(m, "ref", None) for m in ann.got] == ["seed", "leave"]


@pytest.mark.parametrize("outcome", ["refused", "lease_lost"])
def test_a_seed_that_waited_on_a_buy_in_never_written_is_refused_after_it(outcome: str) -> None:
    h = opened()
    ann = Watcher("ann")
    h.do(h.core.sit, "ann", "Ann", ann, 500, None, "sit")
    h.do(h.core.set_seed, "ann", ann, "lucky", "seed")
    write = h.core.next_write()
    assert write is not None
    if outcome == "refused":
        h.do(h.core.refused, write, Refused(ErrorCode.STORE_UNAVAILABLE, "the store is away"))
        expected = [("sit", ErrorCode.STORE_UNAVAILABLE), ("seed", ErrorCode.NOT_SEATED)]
    else:
        h.do(h.core.lease_lost)
        expected = [("sit", ErrorCode.OUTCOME_UNKNOWN), ("seed", ErrorCode.TABLE_MOVED)]
    errors = [m for m in ann.got if isinstance(m, wire.Error)]
    assert [(e.ref, e.code) for e in errors] == expected
    assert h.core.next_write() is None


def test_a_snapshot_asked_while_the_seat_is_written_comes_after_the_join() -> None:
    """It was refused ``not_at_table`` before the join was answered."""
    h = opened()
    ann = Watcher("ann")
    h.do(h.core.sit, "ann", "Ann", ann, 500, None, "sit")
    h.do(h.core.show, ann, "look", "ann")
    assert ann.got == []
    h.write(WriteKind.BUY_IN)
    assert ann.types() == ["table_joined", "table_snapshot", "table_snapshot"]
    asked = ann.got[-1]
    assert isinstance(asked, wire.TableSnapshot)
    assert asked.ref == "look"
    assert asked.table.you == 0


def test_a_snapshot_that_waited_on_a_buy_in_never_written_is_refused_after_it() -> None:
    h = opened()
    ann = Watcher("ann")
    h.do(h.core.sit, "ann", "Ann", ann, 500, None, "sit")
    h.do(h.core.show, ann, "look", "ann")
    write = h.core.next_write()
    assert write is not None
    h.do(h.core.refused, write, Refused(ErrorCode.INSUFFICIENT_BALANCE, "short"))
    errors = [m for m in ann.got if isinstance(m, wire.Error)]
    expected = [("sit", ErrorCode.INSUFFICIENT_BALANCE), ("look", ErrorCode.NOT_AT_TABLE)]
    assert [(e.ref, e.code) for e in errors] == expected
