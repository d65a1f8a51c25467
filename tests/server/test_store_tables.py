"""The store's contract, continued (tests/server/test_store.py says how these run):
tables and their leases, hand histories, claims on a connection, and the chip audit
after any sequence of commits."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qiuqiu.protocol import TableOptions
from qiuqiu.server.errors import LeaseExpired, LeaseLost, Refused
from qiuqiu.server.store import (
    CLAIMS_KEPT,
    HISTORY_LENGTH,
    HOUSE,
    HandRecord,
    SeatRecord,
    Store,
    TableCommit,
    TableRecord,
)
from tests.server.conftest import EmptyStores
from tests.server.store_helpers import (
    GRANT,
    OPTIONS,
    balance,
    buy_in,
    cash_out,
    chip_audit,
    dropped,
    everything,
    hand,
    hand_ids,
    open_account,
    played,
    saved,
    seat,
    with_seat,
    without_seat,
)

pytestmark = pytest.mark.usefixtures("leases")


SHORT = 0.05
"""Seconds of a lease a test lets run out: it shortens its lease to this only once it
has written what it needs, so that a slow machine cannot make that write fail."""

RUN_OUT = SHORT * 2
"""Seconds a test waits for a short lease to run out."""


# -- tables ----------------------------------------------------------------------------


async def test_a_claim_of_a_connection_returns_those_before_it_oldest_first(
    store: Store,
) -> None:
    """Each is kept until it falls off the last few, so a claim whose answer was lost
    (it never served) does not hide the live connection before it from the next."""
    holders = [f"process:session-{n}" for n in range(CLAIMS_KEPT + 2)]
    assert (await store.claim_connection("ann", holders[0]))[0] == ()
    assert (await store.claim_connection("ann", holders[1]))[0] == (holders[0],)
    for n in range(2, len(holders)):
        before, _ = await store.claim_connection("ann", holders[n])
        assert before == tuple(holders[max(0, n - CLAIMS_KEPT) : n])
    assert (await store.claim_connection("bo", "process:session-0"))[0] == ()


async def test_a_saved_table_is_read_back_as_it_was_saved(store: Store) -> None:
    table = TableRecord(
        "t1",
        TableOptions(seats=6, betting_rounds=2, max_bet=50),
        (
            seat(1, "ann", 250),
            SeatRecord(2, "bob", "Bob", 90, client_seed="b0", missed_since=5),
            SeatRecord(3, HOUSE, "Dealer", 0, is_bot=True),
        ),
        hand_id=7,
        hand_open=True,
        dealt=(1, 3),
        seq=41,
        created_by="ann",
    )
    await store.commit(saved(table))
    assert await store.table("t1") == table


async def test_an_unknown_table_is_none(store: Store) -> None:
    await store.commit(saved(TableRecord("t1", OPTIONS)))
    assert await store.table("t2") is None


async def test_saving_a_table_again_replaces_it(store: Store) -> None:
    first = TableRecord("t1", OPTIONS)
    await store.commit(saved(first))
    await store.commit(saved(TableRecord("t2", OPTIONS)))
    second = with_seat(first, seat(1, "ann", 0))
    await store.commit(saved(second))
    assert await store.table("t1") == second
    by_id = {t.table_id: t for t in await store.tables()}
    assert by_id == {"t1": second, "t2": TableRecord("t2", OPTIONS)}


async def test_the_lobby_leaves_out_the_tables_it_is_asked_to_skip(store: Store) -> None:
    for table_id in ("t1", "t2", "t3"):
        await store.commit(saved(TableRecord(table_id, OPTIONS)))
    kept = await store.tables(skip={"t1": None, "t3": None})
    assert [t.table_id for t in kept] == ["t2"]
    assert await store.tables(skip=("t1", "t2", "t3")) == ()


async def test_a_dropped_table_is_gone_but_its_hands_stay(store: Store) -> None:
    await store.commit(saved(TableRecord("t1", OPTIONS)))
    await store.commit(saved(TableRecord("t2", OPTIONS)))
    kept = HandRecord("t1", 1, ((0, "ann"),), ((0, 100),), ((0, 120),), ())
    await store.commit(TableCommit("t1", TableRecord("t1", OPTIONS, hand_id=1), hand=kept))
    await store.commit(TableCommit("t1", None))
    assert await store.table("t1") is None
    assert [t.table_id for t in await store.tables()] == ["t2"]
    assert await store.table_hands("t1") == (kept,)


async def test_a_table_closed_with_its_hand_voided_keeps_the_hand_it_drops_with(
    store: Store,
) -> None:
    await open_account(store, "ann")
    table = TableRecord("t1", OPTIONS, (seat(0, "ann", 400),), hand_id=3, hand_open=True)
    await store.commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", 400)))
    await store.commit(saved(table))
    voided = HandRecord.voided_in(table)
    assert voided.names == ((0, "Ann"),), "who played it, as the table's record names them"
    assert await store.commit(replace(dropped(table), hand=voided)) == {"ann": GRANT}
    assert await store.tables() == ()
    assert await store.table_hands("t1") == (voided,)
    assert await store.account_hands("ann") == (voided,)
    assert await chip_audit(store) == 0


async def test_a_closed_tables_seed_comes_with_its_hands_and_an_open_ones_does_not(
    store: Store,
) -> None:
    secret = TableRecord("t1", OPTIONS, table_seed="a1" * 32)
    await store.commit(saved(secret))
    assert await store.table("t1") == secret, "kept for the process that adopts it"
    await store.commit(played(hand("t1", 1, {0: "ann"})))
    await store.commit(played(hand("t2", 1, {0: "ann"})))
    assert [h.table_seed for h in await store.account_hands("ann")] == ["", ""]
    await store.commit(TableCommit("t1", None, revealed_seed="a1" * 32))
    assert [h.table_seed for h in await store.table_hands("t1")] == ["a1" * 32]
    assert [h.table_seed for h in await store.account_hands("ann")] == ["a1" * 32, ""]
    assert await store.table_hands("t2") == (hand("t2", 1, {0: "ann"}),)


async def test_dropping_a_table_gives_its_lease_up_at_once(store: Store, rival: Store) -> None:
    await open_account(store, "ann")
    await store.commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", 400)))
    await store.commit(played(hand("t1", 1, {0: "ann"})))
    await store.commit(TableCommit("t1", None))
    assert await store.table_host("t1") is None
    assert await rival.acquire_table("t1", 60), "nobody holds the lease"
    assert await store.table_host("t1") == rival.owner
    assert await store.renew_tables(60) == (), "given up, not lost"
    assert hand_ids(await store.table_hands("t1")) == [("t1", 1)]
    assert await store.orphaned_tables() == ()


# -- hand histories --------------------------------------------------------------------


async def test_a_recorded_hand_is_read_back_as_it_was_recorded(store: Store) -> None:
    recorded = HandRecord(
        table_id="t1",
        hand_id=7,
        accounts=((0, "ann"), (2, HOUSE)),
        stacks_before=((0, 500), (2, 1_000)),
        stacks_after=((0, 0), (2, 1_500)),
        events=('{"type": "hand_voided"}', '{"type": "hand_ended", "hand_id": 7}'),
        voided=True,
    )
    await store.commit(played(recorded))
    assert await store.table_hands("t1") == (recorded,)
    assert await store.account_hands("ann") == (recorded,)
    assert await store.account_hands(HOUSE) == (recorded,)


async def test_a_tables_hands_come_oldest_first(store: Store) -> None:
    for hand_id in (1, 2, 3):
        await store.commit(played(hand("t1", hand_id, {0: "ann", 1: "bob"})))
    assert hand_ids(await store.table_hands("t1")) == [("t1", 1), ("t1", 2), ("t1", 3)]


async def test_a_limit_gives_the_latest_hands_oldest_first(store: Store) -> None:
    for hand_id in range(1, 6):
        await store.commit(played(hand("t1", hand_id, {0: "ann", 1: "bob"})))
    assert hand_ids(await store.table_hands("t1", limit=2)) == [("t1", 4), ("t1", 5)]
    assert hand_ids(await store.account_hands("bob", limit=2)) == [("t1", 4), ("t1", 5)]


async def test_only_the_last_history_length_hands_are_kept(store: Store) -> None:
    extra = 5
    for hand_id in range(1, HISTORY_LENGTH + extra + 1):
        await store.commit(played(hand("t1", hand_id, {0: "ann", 1: "bob"})))
    kept = [("t1", n) for n in range(extra + 1, HISTORY_LENGTH + extra + 1)]
    assert hand_ids(await store.table_hands("t1")) == kept
    assert hand_ids(await store.account_hands("ann")) == kept
    assert hand_ids(await store.table_hands("t1", limit=HISTORY_LENGTH + extra)) == kept


async def test_a_tables_hands_are_its_own(store: Store) -> None:
    await store.commit(played(hand("t1", 1, {0: "ann", 1: "bob"})))
    await store.commit(played(hand("t2", 1, {0: "cy", 1: "dee"})))
    assert hand_ids(await store.table_hands("t1")) == [("t1", 1)]
    assert hand_ids(await store.table_hands("t2")) == [("t2", 1)]
    assert await store.table_hands("t3") == ()


async def test_an_accounts_hands_span_every_table_it_sat_at_in_the_order_played(
    store: Store,
) -> None:
    await store.commit(played(hand("t1", 1, {0: "ann", 1: "bob"})))
    await store.commit(played(hand("t2", 1, {0: "cy", 1: "ann"})))
    await store.commit(played(hand("t1", 2, {0: "ann", 1: "bob"})))
    await store.commit(played(hand("t2", 2, {0: "cy", 1: "dee"})))
    assert hand_ids(await store.account_hands("ann")) == [("t1", 1), ("t2", 1), ("t1", 2)]
    assert hand_ids(await store.account_hands("bob")) == [("t1", 1), ("t1", 2)]
    assert hand_ids(await store.account_hands("dee")) == [("t2", 2)]
    assert await store.account_hands("eve") == ()


async def test_a_finished_hand_and_the_table_after_it_are_saved_in_one_step(
    store: Store,
) -> None:
    after = TableRecord("t1", OPTIONS, seats=(seat(0, "ann", 510),), hand_id=1)
    await store.commit(TableCommit("t1", after, hand=hand("t1", 1, {0: "ann"}, won={0: 10})))
    assert await store.table("t1") == after
    assert [h.hand_id for h in await store.table_hands("t1")] == [1]


# -- leases ----------------------------------------------------------------------------


async def test_a_new_table_is_refused_an_id_a_closed_table_had_and_an_adopter_is_not(
    store: Store, rival: Store
) -> None:
    """The hands and the seed of a closed table stay under its id: a new table given it
    would list them as its own, and a client checking them would cry tampering."""
    await open_account(store, "ann")
    await store.commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", 400)))
    await store.commit(played(hand("t1", 1, {0: "ann"})))
    await store.commit(TableCommit("t1", None))
    assert not await rival.acquire_table("t1", 60, new=True)
    assert not await store.acquire_table("t2", 60, new=True), "leased by this store"
    assert await rival.acquire_table("t9", 60, new=True), "an id no table had"
    assert await rival.acquire_table("t1", 60), "taken as a table's own lease"


async def test_a_table_nobody_holds_a_lease_on_is_an_orphan_until_a_store_takes_it(
    store: Store,
) -> None:
    await store.commit(saved(TableRecord("t1", OPTIONS)))
    assert await store.orphaned_tables() == ()
    await store.release_table("t1")
    assert await store.orphaned_tables() == ("t1",)
    assert await store.acquire_table("t1", 10)
    assert await store.orphaned_tables() == ()
    await store.release_table("t1")
    assert await store.orphaned_tables() == ("t1",)


async def test_a_store_whose_lease_ran_out_writes_the_table_only_once_it_renews_it(
    store: Store,
) -> None:
    """Run out with nobody taking it since, the lease is not lost: no write is made
    until a renewal takes it back, and then they are."""
    await store.commit(saved(TableRecord("t1", OPTIONS)))
    await open_account(store, "ann")
    assert await store.acquire_table("t1", SHORT)
    await asyncio.sleep(RUN_OUT)
    for write in (
        saved(TableRecord("t1", OPTIONS, hand_id=1)),
        buy_in(TableRecord("t1", OPTIONS, hand_id=1), seat(0, "ann", 100)),
        TableCommit("t1", None),
    ):
        with pytest.raises(LeaseExpired):
            await store.commit(write)
    assert await store.table("t1") == TableRecord("t1", OPTIONS)
    assert await balance(store, "ann") == GRANT
    assert await store.renew_tables(10) == ()
    await store.commit(saved(TableRecord("t1", OPTIONS, hand_id=1)))
    assert await store.table("t1") == TableRecord("t1", OPTIONS, hand_id=1)


async def test_renewing_takes_back_a_lease_that_ran_out_if_nobody_took_it_since(
    store: Store, rival: Store
) -> None:
    await open_account(store, "ann")
    await store.commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", 400)))
    assert await store.acquire_table("t1", SHORT)
    await asyncio.sleep(RUN_OUT)
    assert await store.table_host("t1") is None, "run out"
    assert await store.renew_tables(60) == ()
    assert await store.table_host("t1") == store.owner
    assert not await rival.acquire_table("t1", 60)
    # Its fence is the one it had: its writes still count.
    table = TableRecord("t1", OPTIONS, (seat(0, "ann", 400),))
    assert await store.commit(cash_out(table, 0)) == {"ann": GRANT}
    assert await store.table("t1") == TableRecord("t1", OPTIONS)
    assert await chip_audit(store) == 0


@pytest.mark.parametrize("rival_keeps_it", [True, False], ids=["held", "run out again"])
async def test_a_lease_another_store_took_meanwhile_is_lost_and_written_no_more(
    store: Store, rival: Store, rival_keeps_it: bool
) -> None:
    """The rival still holds the table, or took it and let it run out in turn: either
    way the lease this store had is not its to take back."""
    await open_account(store, "ann")
    table = TableRecord("t1", OPTIONS, (seat(0, "ann", 400),))
    await store.commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", 400)))
    assert await store.acquire_table("t1", SHORT)
    await asyncio.sleep(RUN_OUT)
    assert await rival.acquire_table("t1", 60 if rival_keeps_it else SHORT)
    if not rival_keeps_it:
        await asyncio.sleep(RUN_OUT)
    assert await store.renew_tables(60) == ("t1",)
    assert await store.renew_tables(60) == (), "a lost table is forgotten"
    before = await everything(store, ["t1"], ["ann"])
    for stale in (
        cash_out(table, 0),
        played(hand("t1", 1, {0: "ann"})),
        TableCommit("t1", None, (("ann", -400),)),
    ):
        with pytest.raises(LeaseLost):
            await store.commit(stale)
    assert await everything(store, ["t1"], ["ann"]) == before
    assert await store.table_host("t1") == (rival.owner if rival_keeps_it else None)


# -- the chip audit --------------------------------------------------------------------

PLAYERS = ("ann", "bob", "cy")
STEP = st.tuples(
    st.sampled_from(["buy_in", "bot", "hand", "cash_out", "drop", "stranger"]),
    st.sampled_from(("t1", "t2")),
    st.sampled_from(PLAYERS),
    st.integers(min_value=0, max_value=400),
)
"""What happens next, where, to whom, and how many chips it takes."""


def next_commit(table: TableRecord, kind: str, account_id: str, chips: int) -> TableCommit | None:
    """The commit a table would make for ``kind``, or ``None`` if it has none to make
    (a seat that is not there, a hand with nobody to play it)."""
    free = [n for n in range(table.options.seats) if table.seat(n) is None]
    mine = next((s.seat for s in table.seats if s.account_id == account_id), None)
    bot = next((s.seat for s in table.seats if s.account_id == HOUSE), None)
    if kind == "buy_in" and mine is None and free:
        return buy_in(table, seat(free[0], account_id, chips))
    if kind == "bot" and bot is None and free:
        return buy_in(table, seat(free[-1], HOUSE, chips))
    if kind == "cash_out" and mine is not None:
        return cash_out(table, mine)
    if kind == "drop" and table.seats:
        return dropped(table)
    if kind == "stranger" and table.seats:
        # A cash-out with a move for an account that does not exist: refused whole.
        leaving = cash_out(table, table.seats[0].seat)
        return replace(leaving, moves=(*leaving.moves, ("nobody", -chips)))
    if kind == "hand" and len(table.seats) >= 2:
        return hand_end_at(table, chips)
    return None


def hand_end_at(table: TableRecord, chips: int) -> TableCommit:
    """A hand in which the first seat wins up to ``chips`` from the last; whoever is
    out of chips leaves, and the house tops the bot back up to 400."""
    winner, loser = table.seats[0], table.seats[-1]
    won = min(chips, loser.stack)
    stacks = {s.seat: s.stack for s in table.seats}
    stacks[winner.seat] += won
    stacks[loser.seat] -= won
    finished = HandRecord(
        table_id=table.table_id,
        hand_id=table.hand_id + 1,
        accounts=tuple((s.seat, s.account_id) for s in table.seats),
        stacks_before=tuple((s.seat, s.stack) for s in table.seats),
        stacks_after=tuple(sorted(stacks.items())),
        events=(),
    )
    after = replace(table, hand_id=table.hand_id + 1)
    moves: list[tuple[str, int]] = []
    for s in table.seats:
        if s.account_id == HOUSE and stacks[s.seat] < 400:
            moves.append((HOUSE, 400 - stacks[s.seat]))
            after = with_seat(after, replace(s, stack=400))
        elif s.account_id != HOUSE and stacks[s.seat] == 0:
            moves.append((s.account_id, 0))
            after = without_seat(after, s.seat)
        else:
            after = with_seat(after, replace(s, stack=stacks[s.seat]))
    return TableCommit(table.table_id, after, tuple(moves), finished)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(STEP, max_size=15))
async def test_no_sequence_of_commits_makes_or_loses_a_chip(
    empty_stores: EmptyStores, steps: list[tuple[str, str, str, int]]
) -> None:
    """After every commit, applied or refused, the audit is zero; a refused one
    changed nothing, an applied one left its record."""
    async with empty_stores() as fresh:
        for account_id in PLAYERS:
            await open_account(fresh, account_id, 300)
        for kind, table_id, account_id, chips in steps:
            table = await fresh.table(table_id) or TableRecord(table_id, OPTIONS)
            commit = next_commit(table, kind, account_id, chips)
            if commit is None:
                continue
            before = await everything(fresh, ["t1", "t2"], PLAYERS)
            try:
                await fresh.commit(commit)
            except Refused:
                assert await everything(fresh, ["t1", "t2"], PLAYERS) == before
            else:
                assert await fresh.table(table_id) == commit.table
                if commit.table is None:
                    assert await fresh.acquire_table(table_id, 60)
            assert await chip_audit(fresh) == 0


async def test_claims_on_a_connection_are_numbered_in_the_order_the_store_takes_them(
    store: Store,
) -> None:
    first = await store.claim_connection("ann", "p1:s1")
    second = await store.claim_connection("ann", "p2:s2")
    other = await store.claim_connection("bob", "p1:s3")
    assert (first[0], second[0], other[0]) == ((), ("p1:s1",), ())
    assert first[1] < second[1] < other[1]
