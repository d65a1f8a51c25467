"""The table core as seats go bust, wait, leave and come back, and the house tops up its
bot (see ``core_harness`` for how the core is driven)."""

from __future__ import annotations

import pytest

from qiuqiu.protocol import MAX_CHIPS, ErrorCode
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.errors import Refused
from qiuqiu.server.store import HOUSE
from qiuqiu.server.table import TablePhase
from qiuqiu.server.table.audience import DESERTED, NEXT_HAND
from qiuqiu.server.table.ledger import Write, WriteKind
from qiuqiu.server.table.reasons import NOBODY_SAT
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


def test_a_bot_table_waits_for_a_rebuy_when_a_bust_and_a_leaver_stand_up_together() -> None:
    """Bob (seat 1) asks to leave in the hand that leaves Ann (seat 0) bust: one of the
    last players went bust, so the table waits for her rebuy, as it would with their
    seats the other way round."""
    h = opened(seats=3)
    ann, bob = Watcher("ann"), Watcher("bob")
    seated(h, "ann", ann, 100)
    for _ in range(60):
        if h.core.seat_of("bob") is None:
            seated(h, "bob", bob, 100)
        h.fire(NEXT_HAND)
        h.write(WriteKind.HAND_START)
        h.do(h.core.leave, "bob", bob)
        play_a_shove(h, "ann")
        if h.core.seat_of("ann") is None:
            break
    else:
        raise AssertionError("ann never went bust")
    assert h.core.seat_of("bob") is None
    assert state(h) is TablePhase.WAITING, "the table stays open for Ann's rebuy"
    assert DESERTED in h.timers
    seated(h, "ann", ann, 100)
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
        "the table holds 1,000,000,000,000 chips, and every chip at it must fit in one amount"
        " (at most 1,000,000,000,000): buy in with at most 0"
    )
    assert h.core.next_write() is None
    assert chips(h) == 0


# -- a leave asked while the seat's buy-in is written ------------------------------------


def test_a_leave_asked_while_the_seat_is_written_stands_it_up_after_the_join() -> None:
    """It was refused ``not_at_table`` before the join was answered, and the seat came
    after: a client that trusted its answers took itself for not seated."""
    h = opened()
    ann, balance = Watcher("ann"), h.balances["ann"]
    h.do(h.core.sit, "ann", "Ann", ann, 500, None, "sit")
    h.do(h.core.leave, "ann", ann, "leave")
    with pytest.raises(Refused) as twice:
        h.core.leave("ann", ann, "again")
    assert twice.value.code is ErrorCode.ALREADY_LEAVING
    assert ann.got == [], "nothing is told before the write"
    h.write(WriteKind.BUY_IN)
    assert ann.take() == ["table_joined", "table_snapshot"]
    h.write(WriteKind.CASH_OUT)
    (left,) = ann.got
    assert isinstance(left, wire.TableLeft)
    assert (left.ref, left.cashed_out) == ("leave", 500)
    assert h.core.seat_of("ann") is None
    assert h.balances["ann"] == balance


@pytest.mark.parametrize("outcome", ["refused", "lease_lost"])
def test_a_leave_that_waited_on_a_buy_in_never_written_is_refused_after_it(
    outcome: str,
) -> None:
    h = opened()
    ann = Watcher("ann")
    h.do(h.core.sit, "ann", "Ann", ann, 500, None, "sit")
    h.do(h.core.leave, "ann", ann, "leave")
    write = h.core.next_write()
    assert write is not None
    if outcome == "refused":
        h.do(h.core.refused, write, Refused(ErrorCode.STORE_UNAVAILABLE, "the store is away"))
        expected = [("sit", ErrorCode.STORE_UNAVAILABLE), ("leave", ErrorCode.NOT_AT_TABLE)]
    else:
        h.do(h.core.lease_lost)
        expected = [("sit", ErrorCode.OUTCOME_UNKNOWN), ("leave", ErrorCode.TABLE_MOVED)]
    errors = [m for m in ann.got if isinstance(m, wire.Error)]
    assert [(e.ref, e.code) for e in errors] == expected
