"""The contract every :class:`Store` keeps (DESIGN §4).

Each store test runs once per implementation in ``STORES``, each the name of a
fixture that makes an empty one (the Redis one in a Redis emptied for the test);
they use only the methods of the :class:`Store` protocol, so a store that passes
here can stand in for any other. The chip audit sums what a test can name
through the protocol: the balances of the accounts it opened, the house's, and
every stack at every saved table.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import pytest

from qiuqiu.protocol import TableOptions
from qiuqiu.server.errors import LeaseLost, Refused
from qiuqiu.server.lobby import token_hash
from qiuqiu.server.store import (
    HISTORY_LENGTH,
    HOUSE,
    Account,
    HandRecord,
    MemoryStore,
    SeatRecord,
    Store,
    TableRecord,
)

STORES = ["memory_store", "redis_store"]

GRANT = 1_000
OPTIONS = TableOptions(seats=3, dealer_bot=False)


TABLES = ("t1", "t2", "t3")


@pytest.fixture
def memory_store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest) -> Store:
    made: Store = request.getfixturevalue(request.param)
    return made


@pytest.fixture(autouse=True)
async def leases(store: Store) -> None:
    """The store holds the leases on the tables the tests write: a write needs one."""
    for table_id in TABLES:
        assert await store.acquire_table(table_id, 60)


async def chip_total(store: Store, account_ids: Iterable[str]) -> int:
    """The balances of ``account_ids`` and the house, plus every stack at every saved
    table: zero as long as no chip is created or lost."""
    total = 0
    for account_id in {HOUSE, *account_ids}:
        account = await store.account(account_id)
        assert account is not None, account_id
        total += account.balance
    return total + sum(s.stack for table in await store.tables() for s in table.seats)


async def balance(store: Store, account_id: str) -> int:
    account = await store.account(account_id)
    assert account is not None, account_id
    return account.balance


async def open_account(store: Store, account_id: str = "ann", grant: int = GRANT) -> Account:
    return await store.create_account(account_id, account_id.title(), token_hash(account_id), grant)


def seat(number: int, account_id: str, stack: int) -> SeatRecord:
    return SeatRecord(number, account_id, account_id.title(), stack)


def hand(
    table_id: str,
    hand_id: int,
    accounts: dict[int, str],
    won: dict[int, int] | None = None,
) -> HandRecord:
    """A finished hand at ``table_id`` with every seat in ``accounts`` starting on 500
    and ending on 500 plus what ``won`` says (nothing by default)."""
    won = won or {}
    return HandRecord(
        table_id=table_id,
        hand_id=hand_id,
        accounts=tuple(sorted(accounts.items())),
        stacks_before=tuple((n, 500) for n in sorted(accounts)),
        stacks_after=tuple((n, 500 + won.get(n, 0)) for n in sorted(accounts)),
        events=(f'{{"type": "hand_ended", "hand_id": {hand_id}}}',),
    )


def hand_ids(hands: Iterable[HandRecord]) -> list[tuple[str, int]]:
    return [(h.table_id, h.hand_id) for h in hands]


# -- a new store -----------------------------------------------------------------------


async def test_a_new_store_holds_the_house_at_zero_and_nothing_else(store: Store) -> None:
    house = await store.account(HOUSE)
    assert house is not None
    assert house.balance == 0
    assert await store.tables() == ()
    assert await store.table_hands("t1") == ()
    assert await store.account_hands(HOUSE) == ()


# -- accounts --------------------------------------------------------------------------


async def test_a_new_account_is_granted_its_chips_by_the_house(store: Store) -> None:
    ann = await store.create_account("ann", "Ann", token_hash("secret"), GRANT)
    assert ann == Account("ann", "Ann", GRANT)
    assert await store.account("ann") == ann
    assert await balance(store, HOUSE) == -GRANT
    assert await chip_total(store, ["ann"]) == 0


async def test_every_grant_comes_from_the_house_so_the_balances_sum_to_zero(
    store: Store,
) -> None:
    for n, grant in enumerate([1_000, 250, 1]):
        await open_account(store, f"player{n}", grant)
    assert await balance(store, HOUSE) == -1_251
    assert await chip_total(store, ["player0", "player1", "player2"]) == 0


async def test_an_account_id_already_taken_is_refused_and_changes_nothing(store: Store) -> None:
    ann = await open_account(store, "ann")
    with pytest.raises(Refused) as refused:
        await store.create_account("ann", "Impostor", token_hash("other"), 5_000)
    assert refused.value.code == "account_exists"
    assert await store.account("ann") == ann
    assert await store.account_for_token(token_hash("other")) is None
    assert await balance(store, HOUSE) == -GRANT


async def test_a_negative_grant_is_a_mistake_and_changes_nothing(store: Store) -> None:
    with pytest.raises(ValueError, match="never negative"):
        await store.create_account("ann", "Ann", token_hash("secret"), -1)
    assert await store.account("ann") is None
    assert await store.account_for_token(token_hash("secret")) is None
    assert await balance(store, HOUSE) == 0


async def test_balances_lists_every_account_the_house_included(store: Store) -> None:
    await open_account(store, "ann")
    await open_account(store, "bob", 300)
    await store.move_chips("bob", 100, TableRecord("t1", OPTIONS).with_seat(seat(0, "bob", 100)))
    assert await store.balances() == {HOUSE: -1_300, "ann": GRANT, "bob": 200}


async def test_an_unknown_account_is_none(store: Store) -> None:
    assert await store.account("nobody") is None


async def test_an_account_is_found_by_the_hash_of_its_token_and_not_by_the_token(
    store: Store,
) -> None:
    ann = await store.create_account("ann", "Ann", token_hash("secret"), GRANT)
    assert await store.account_for_token(token_hash("secret")) == ann
    assert await store.account_for_token("secret") is None


async def test_an_unknown_token_finds_no_account(store: Store) -> None:
    await open_account(store, "ann")
    assert await store.account_for_token(token_hash("not-a-token")) is None


async def test_the_account_found_by_token_has_its_balance_as_it_is_now(store: Store) -> None:
    await store.create_account("ann", "Ann", token_hash("secret"), GRANT)
    table = TableRecord("t1", OPTIONS).with_seat(seat(0, "ann", 300))
    await store.move_chips("ann", 300, table)
    found = await store.account_for_token(token_hash("secret"))
    assert found == Account("ann", "Ann", GRANT - 300)


# -- moving chips ----------------------------------------------------------------------


async def test_a_buy_in_moves_the_chips_and_saves_the_table_that_holds_them(
    store: Store,
) -> None:
    await open_account(store, "ann")
    table = TableRecord("t1", OPTIONS).with_seat(seat(0, "ann", 400))
    account = await store.move_chips("ann", 400, table)
    assert account == Account("ann", "Ann", GRANT - 400)
    assert await store.account("ann") == account
    assert await store.table("t1") == table
    assert await chip_total(store, ["ann"]) == 0


async def test_a_buy_in_of_the_whole_balance_is_allowed(store: Store) -> None:
    await open_account(store, "ann")
    table = TableRecord("t1", OPTIONS).with_seat(seat(0, "ann", GRANT))
    account = await store.move_chips("ann", GRANT, table)
    assert account.balance == 0
    assert await chip_total(store, ["ann"]) == 0


async def test_a_buy_in_beyond_the_balance_is_refused_and_changes_nothing(store: Store) -> None:
    await open_account(store, "ann")
    await open_account(store, "bob")
    saved = TableRecord("t1", OPTIONS).with_seat(seat(0, "bob", 500))
    await store.move_chips("bob", 500, saved)
    with pytest.raises(Refused) as refused:
        await store.move_chips("ann", GRANT + 1, saved.with_seat(seat(1, "ann", GRANT + 1)))
    assert refused.value.code == "insufficient_balance"
    assert str(GRANT) in refused.value.message
    assert await balance(store, "ann") == GRANT
    assert await store.table("t1") == saved
    assert await chip_total(store, ["ann", "bob"]) == 0


async def test_a_refused_buy_in_at_a_new_table_saves_no_table(store: Store) -> None:
    await open_account(store, "ann")
    table = TableRecord("t1", OPTIONS).with_seat(seat(0, "ann", GRANT + 1))
    with pytest.raises(Refused):
        await store.move_chips("ann", GRANT + 1, table)
    assert await store.table("t1") is None
    assert await store.tables() == ()


async def test_a_move_for_an_unknown_account_is_refused_and_saves_no_table(
    store: Store,
) -> None:
    table = TableRecord("t1", OPTIONS).with_seat(seat(0, "nobody", 100))
    with pytest.raises(Refused) as refused:
        await store.move_chips("nobody", 100, table)
    assert refused.value.code == "unknown_account"
    assert await store.account("nobody") is None
    assert await store.tables() == ()
    assert await balance(store, HOUSE) == 0


async def test_a_negative_amount_pays_the_chips_back_to_the_balance(store: Store) -> None:
    await open_account(store, "ann")
    await open_account(store, "bob")
    table = TableRecord("t1", OPTIONS).with_seat(seat(0, "ann", 400))
    await store.move_chips("ann", 400, table)
    table = table.with_seat(seat(1, "bob", 400))
    await store.move_chips("bob", 400, table)
    # Ann wins 250 of Bob's chips; leaving, she is paid back her whole stack.
    table = table.with_seat(seat(0, "ann", 650)).with_seat(seat(1, "bob", 150))
    await store.save_table(table)
    left = table.without_seat(0)
    account = await store.move_chips("ann", -650, left)
    assert account.balance == GRANT + 250
    assert await store.table("t1") == left
    assert await chip_total(store, ["ann", "bob"]) == 0


async def test_the_house_may_go_below_zero_to_seat_the_dealer_bot(store: Store) -> None:
    table = TableRecord("t1", OPTIONS).with_seat(
        SeatRecord(2, HOUSE, "Dealer", 10_000, is_bot=True)
    )
    house = await store.move_chips(HOUSE, 10_000, table)
    assert house.balance == -10_000
    assert await store.table("t1") == table
    assert await chip_total(store, []) == 0


# -- tables ----------------------------------------------------------------------------


async def test_a_saved_table_is_read_back_as_it_was_saved(store: Store) -> None:
    table = TableRecord(
        "t1",
        TableOptions(seats=6, betting_rounds=2, max_bet=50),
        (seat(1, "ann", 250), SeatRecord(3, HOUSE, "Dealer", 0, is_bot=True)),
        hand_id=7,
        hand_open=True,
        seq=41,
        created_by="ann",
    )
    await store.save_table(table)
    assert await store.table("t1") == table


async def test_an_unknown_table_is_none(store: Store) -> None:
    await store.save_table(TableRecord("t1", OPTIONS))
    assert await store.table("t2") is None


async def test_saving_a_table_again_replaces_it(store: Store) -> None:
    first = TableRecord("t1", OPTIONS)
    await store.save_table(first)
    await store.save_table(TableRecord("t2", OPTIONS))
    second = first.with_seat(seat(1, "ann", 0))
    await store.save_table(second)
    assert await store.table("t1") == second
    by_id = {t.table_id: t for t in await store.tables()}
    assert by_id == {"t1": second, "t2": TableRecord("t2", OPTIONS)}


async def test_a_dropped_table_is_gone_but_its_hands_stay(store: Store) -> None:
    await store.save_table(TableRecord("t1", OPTIONS))
    await store.save_table(TableRecord("t2", OPTIONS))
    hand = HandRecord("t1", 1, ((0, "ann"),), ((0, 100),), ((0, 120),), ())
    await store.record_hand(hand)
    await store.drop_table("t1")
    assert await store.table("t1") is None
    assert [t.table_id for t in await store.tables()] == ["t2"]
    assert await store.table_hands("t1") == (hand,)


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
    await store.record_hand(recorded)
    assert await store.table_hands("t1") == (recorded,)
    assert await store.account_hands("ann") == (recorded,)
    assert await store.account_hands(HOUSE) == (recorded,)


async def test_a_tables_hands_come_oldest_first(store: Store) -> None:
    for hand_id in (1, 2, 3):
        await store.record_hand(hand("t1", hand_id, {0: "ann", 1: "bob"}))
    assert hand_ids(await store.table_hands("t1")) == [("t1", 1), ("t1", 2), ("t1", 3)]


async def test_a_limit_gives_the_latest_hands_oldest_first(store: Store) -> None:
    for hand_id in range(1, 6):
        await store.record_hand(hand("t1", hand_id, {0: "ann", 1: "bob"}))
    assert hand_ids(await store.table_hands("t1", limit=2)) == [("t1", 4), ("t1", 5)]
    assert hand_ids(await store.account_hands("bob", limit=2)) == [("t1", 4), ("t1", 5)]


async def test_only_the_last_history_length_hands_are_kept(store: Store) -> None:
    extra = 5
    for hand_id in range(1, HISTORY_LENGTH + extra + 1):
        await store.record_hand(hand("t1", hand_id, {0: "ann", 1: "bob"}))
    kept = [("t1", n) for n in range(extra + 1, HISTORY_LENGTH + extra + 1)]
    assert hand_ids(await store.table_hands("t1")) == kept
    assert hand_ids(await store.account_hands("ann")) == kept
    assert hand_ids(await store.table_hands("t1", limit=HISTORY_LENGTH + extra)) == kept


async def test_a_tables_hands_are_its_own(store: Store) -> None:
    await store.record_hand(hand("t1", 1, {0: "ann", 1: "bob"}))
    await store.record_hand(hand("t2", 1, {0: "cy", 1: "dee"}))
    assert hand_ids(await store.table_hands("t1")) == [("t1", 1)]
    assert hand_ids(await store.table_hands("t2")) == [("t2", 1)]
    assert await store.table_hands("t3") == ()


async def test_an_accounts_hands_span_every_table_it_sat_at_in_the_order_played(
    store: Store,
) -> None:
    await store.record_hand(hand("t1", 1, {0: "ann", 1: "bob"}))
    await store.record_hand(hand("t2", 1, {0: "cy", 1: "ann"}))
    await store.record_hand(hand("t1", 2, {0: "ann", 1: "bob"}))
    await store.record_hand(hand("t2", 2, {0: "cy", 1: "dee"}))
    assert hand_ids(await store.account_hands("ann")) == [("t1", 1), ("t2", 1), ("t1", 2)]
    assert hand_ids(await store.account_hands("bob")) == [("t1", 1), ("t1", 2)]
    assert hand_ids(await store.account_hands("dee")) == [("t2", 2)]
    assert await store.account_hands("eve") == ()


# -- the records themselves ------------------------------------------------------------


def test_a_hands_net_is_what_each_account_won_or_lost() -> None:
    played = hand("t1", 1, {0: "ann", 1: "bob", 2: HOUSE}, won={0: 60, 1: -50, 2: -10})
    assert played.net("ann") == 60
    assert played.net("bob") == -50
    assert played.net(HOUSE) == -10
    assert sum(played.net(a) for a in ("ann", "bob", HOUSE)) == 0


def test_an_account_not_in_the_hand_nets_nothing() -> None:
    played = hand("t1", 1, {0: "ann", 1: "bob"}, won={0: 20, 1: -20})
    assert played.net("eve") == 0


def test_with_seat_keeps_the_seats_in_seat_order() -> None:
    table = TableRecord("t1", OPTIONS).with_seat(seat(2, "cy", 300)).with_seat(seat(0, "ann", 100))
    assert [s.seat for s in table.seats] == [0, 2]
    table = table.with_seat(seat(1, "bob", 200))
    assert [s.account_id for s in table.seats] == ["ann", "bob", "cy"]


def test_with_seat_replaces_whoever_had_that_seat_and_leaves_the_record_it_came_from() -> None:
    before = TableRecord("t1", OPTIONS).with_seat(seat(0, "ann", 100))
    after = before.with_seat(seat(0, "ann", 250))
    assert after.seats == (seat(0, "ann", 250),)
    assert before.seats == (seat(0, "ann", 100),)


def test_without_seat_removes_that_seat_only() -> None:
    table = TableRecord("t1", OPTIONS).with_seat(seat(0, "ann", 100)).with_seat(seat(1, "bob", 200))
    assert table.without_seat(0).seats == (seat(1, "bob", 200),)
    assert table.without_seat(5) == table


def test_seat_finds_a_seat_by_its_number() -> None:
    table = TableRecord("t1", OPTIONS).with_seat(seat(1, "bob", 200))
    assert table.seat(1) == seat(1, "bob", 200)
    assert table.seat(0) is None


async def test_a_table_nobody_holds_a_lease_on_is_an_orphan_until_a_store_takes_it(
    store: Store,
) -> None:
    await store.save_table(TableRecord("t1", OPTIONS))
    assert await store.orphaned_tables() == ()
    await store.release_table("t1")
    assert await store.orphaned_tables() == ("t1",)
    assert await store.acquire_table("t1", 10)
    assert await store.orphaned_tables() == ()
    await store.release_table("t1")
    assert await store.orphaned_tables() == ("t1",)


async def test_a_store_whose_lease_ran_out_cannot_write_the_table(store: Store) -> None:
    assert await store.acquire_table("t1", 0.05)
    await store.save_table(TableRecord("t1", OPTIONS))
    await asyncio.sleep(0.1)
    with pytest.raises(LeaseLost):
        await store.save_table(TableRecord("t1", OPTIONS, hand_id=1))
    assert await store.table("t1") == TableRecord("t1", OPTIONS)
    assert await store.renew_tables(10) == (), "the lost table is forgotten"
    # Forgotten is not free: with nobody holding the lease, a write still needs it.
    with pytest.raises(LeaseLost):
        await store.move_chips("ann", 0, TableRecord("t1", OPTIONS, hand_id=2))
    with pytest.raises(LeaseLost):
        await store.drop_table("t1")
    assert await store.table("t1") == TableRecord("t1", OPTIONS)


async def test_a_finished_hand_and_the_table_after_it_are_saved_in_one_step(
    store: Store,
) -> None:
    await store.acquire_table("t1", 10)
    after = TableRecord("t1", OPTIONS, seats=(seat(0, "ann", 510),), hand_id=1)
    await store.record_hand(hand("t1", 1, {0: "ann"}, won={0: 10}), after)
    assert await store.table("t1") == after
    assert [h.hand_id for h in await store.table_hands("t1")] == [1]


async def test_the_tables_an_account_sits_at_follow_its_buy_ins_and_cash_outs(
    store: Store,
) -> None:
    await open_account(store, "ann")
    await open_account(store, "bob")
    assert await store.seated_tables("ann") == ()
    at_one = TableRecord("t1", OPTIONS).with_seat(seat(0, "ann", 100))
    await store.move_chips("ann", 100, at_one)
    both = TableRecord("t2", OPTIONS).with_seat(seat(0, "ann", 100))
    await store.move_chips("ann", 100, both)
    await store.move_chips("bob", 100, both.with_seat(seat(1, "bob", 100)))
    assert await store.seated_tables("ann") == ("t1", "t2")
    assert await store.seated_tables("bob") == ("t2",)
    # Ann cashes out of t1 (the table as saved has no seat of hers any more).
    await store.move_chips("ann", -100, TableRecord("t1", OPTIONS))
    assert await store.seated_tables("ann") == ("t2",)
