"""The contract every :class:`Store` keeps (store.py; docs/ARCHITECTURE.md, "Storage").

Each store test runs once per implementation in ``STORES``, each the name of a
fixture that makes an empty one (the Redis one in a Redis emptied for the test;
the fixtures are in tests/server/conftest.py, and test_store_tables.py goes on);
they use only the methods of the :class:`Store` protocol, so a store that passes
here can stand in for any other. A table is written only by :meth:`Store.commit`,
with the commits built as a table builds them (tests/server/store_helpers.py).
The chip audit sums every balance, the house's included, and every stack at
every table in the lobby.

Every test holds the leases on ``TABLES`` (the ``leases`` fixture). A second
process on the same store (``rival``) is a second :class:`RedisStore`
on the same Redis; a store in memory cannot be shared by two processes, so its
rival is a second :class:`MemoryStore` over the same accounts, tables and
leases, holding leases of its own under another owner.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import replace

import pytest

from qiuqiu.protocol import MAX_BALANCE
from qiuqiu.server.accounts import token_hash
from qiuqiu.server.errors import Refused
from qiuqiu.server.store import (
    HOUSE,
    Account,
    HandRecord,
    SeatRecord,
    Store,
    TableCommit,
    TableRecord,
)
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


async def seated_by_records(store: Store, account_id: str) -> tuple[str, ...]:
    """The tables whose record in the lobby has a seat of ``account_id``."""
    tables = await store.tables()
    return tuple(
        sorted(t.table_id for t in tables if any(s.account_id == account_id for s in t.seats))
    )


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
    assert await chip_audit(store) == 0


async def test_every_grant_comes_from_the_house_so_the_balances_sum_to_zero(
    store: Store,
) -> None:
    for n, grant in enumerate([1_000, 250, 1]):
        await open_account(store, f"player{n}", grant)
    assert await balance(store, HOUSE) == -1_251
    assert await chip_audit(store) == 0


async def test_an_account_id_already_taken_is_refused_and_changes_nothing(store: Store) -> None:
    ann = await open_account(store, "ann")
    with pytest.raises(Refused) as refused:
        await store.create_account("ann", "Impostor", token_hash("other"), 5_000)
    assert refused.value.code == "account_exists"
    assert await store.account("ann") == ann
    assert await store.account_for_token(token_hash("other")) is None
    assert await balance(store, HOUSE) == -GRANT


@pytest.mark.parametrize("grant", [-1, MAX_BALANCE + 1])
async def test_a_grant_below_zero_or_past_the_most_a_balance_holds_is_a_mistake_and_changes_nothing(
    store: Store, grant: int
) -> None:
    with pytest.raises(ValueError, match=f"from 0 to {MAX_BALANCE}"):
        await store.create_account("ann", "Ann", token_hash("secret"), grant)
    assert await store.account("ann") is None
    assert await store.account_for_token(token_hash("secret")) is None
    assert await balance(store, HOUSE) == 0


async def test_balances_lists_every_account_the_house_included(store: Store) -> None:
    await open_account(store, "ann")
    await open_account(store, "bob", 300)
    await store.commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "bob", 100)))
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
    await store.commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", 300)))
    found = await store.account_for_token(token_hash("secret"))
    assert found == Account("ann", "Ann", GRANT - 300)


# -- moving chips ----------------------------------------------------------------------


async def test_a_buy_in_moves_the_chips_and_saves_the_table_that_holds_them(
    store: Store,
) -> None:
    await open_account(store, "ann")
    commit = buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", 400))
    assert await store.commit(commit) == {"ann": GRANT - 400}
    assert await store.account("ann") == Account("ann", "Ann", GRANT - 400)
    assert await store.table("t1") == commit.table
    assert await chip_audit(store) == 0


async def test_a_buy_in_of_the_whole_balance_is_allowed(store: Store) -> None:
    await open_account(store, "ann")
    balances = await store.commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", GRANT)))
    assert balances == {"ann": 0}
    assert await chip_audit(store) == 0


async def test_a_buy_in_beyond_the_balance_is_refused_and_changes_nothing(store: Store) -> None:
    await open_account(store, "ann")
    await open_account(store, "bob")
    first = buy_in(TableRecord("t1", OPTIONS), seat(0, "bob", 500))
    await store.commit(first)
    assert first.table is not None
    with pytest.raises(Refused) as refused:
        await store.commit(buy_in(first.table, seat(1, "ann", GRANT + 1)))
    assert refused.value.code == "insufficient_balance"
    assert f"{GRANT:,}" in refused.value.message
    assert await balance(store, "ann") == GRANT
    assert await store.table("t1") == first.table
    assert await chip_audit(store) == 0


async def test_a_refused_buy_in_at_a_new_table_saves_no_table(store: Store) -> None:
    await open_account(store, "ann")
    with pytest.raises(Refused):
        await store.commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", GRANT + 1)))
    assert await store.table("t1") is None
    assert await store.tables() == ()


async def test_a_move_for_an_unknown_account_is_refused_and_saves_no_table(
    store: Store,
) -> None:
    with pytest.raises(Refused) as refused:
        await store.commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "nobody", 100)))
    assert refused.value.code == "unknown_account"
    assert await store.account("nobody") is None
    assert await store.tables() == ()
    assert await balance(store, HOUSE) == 0


async def test_a_cash_out_pays_the_whole_stack_back_to_the_balance(store: Store) -> None:
    await open_account(store, "ann")
    await open_account(store, "bob")
    table = TableRecord("t1", OPTIONS)
    for sitting in (seat(0, "ann", 400), seat(1, "bob", 400)):
        await store.commit(buy_in(table, sitting))
        table = with_seat(table, sitting)
    # Ann wins 250 of Bob's chips; leaving, she is paid back her whole stack.
    table = with_seat(with_seat(table, seat(0, "ann", 650)), seat(1, "bob", 150))
    await store.commit(saved(table))
    leaving = cash_out(table, 0)
    assert leaving.moves == (("ann", -650),)
    assert await store.commit(leaving) == {"ann": GRANT + 250}
    assert await store.table("t1") == without_seat(table, 0)
    assert await chip_audit(store) == 0


async def test_the_house_may_go_below_zero_to_seat_the_dealer_bot(store: Store) -> None:
    commit = buy_in(TableRecord("t1", OPTIONS), SeatRecord(2, HOUSE, "Dealer", 10_000, True))
    assert await store.commit(commit) == {HOUSE: -10_000}
    assert await store.table("t1") == commit.table
    assert await chip_audit(store) == 0


async def test_two_moves_for_one_account_in_one_commit_cannot_overdraw_it(
    store: Store,
) -> None:
    """Only the house may go below zero, however the chips it moves are split."""
    await open_account(store, "ann")
    table = with_seat(TableRecord("t1", OPTIONS), seat(0, "ann", 1_200))
    with pytest.raises(Refused) as refused:
        await store.commit(TableCommit("t1", table, (("ann", 600), ("ann", 600))))
    assert refused.value.code == "insufficient_balance"
    assert await balance(store, "ann") == GRANT
    assert await store.table("t1") is None


# -- one commit, all or nothing --------------------------------------------------------

BEFORE = TableRecord(
    "t1", OPTIONS, (seat(0, "ann", 400), seat(1, "bob", 400), seat(2, HOUSE, 1_000))
)
"""Ann and Bob against the dealer bot, as the hand below starts."""

ENDED = HandRecord(
    table_id="t1",
    hand_id=1,
    accounts=((0, "ann"), (1, "bob"), (2, HOUSE)),
    stacks_before=((0, 400), (1, 400), (2, 1_000)),
    stacks_after=((0, 1_000), (1, 0), (2, 800)),
    events=('{"type": "hand_ended", "hand_id": 1}',),
)


def hand_end() -> TableCommit:
    """The end of ``ENDED``: Ann leaves with her winnings, Bob is out of chips, and the
    house tops the bot up to 1,000 again; only the bot is left at the table."""
    after = TableRecord("t1", OPTIONS, (seat(2, HOUSE, 1_000),), hand_id=1)
    return TableCommit("t1", after, (("ann", -1_000), ("bob", 0), (HOUSE, 200)), ENDED)


async def at_hand_end(store: Store) -> None:
    """Ann, Bob and Cy with their grants; Ann, Bob and the bot at ``BEFORE``."""
    for account_id in ("ann", "bob", "cy"):
        await open_account(store, account_id)
    table = TableRecord("t1", OPTIONS)
    for sitting in BEFORE.seats:
        await store.commit(buy_in(table, sitting))
        table = with_seat(table, sitting)
    assert await store.table("t1") == BEFORE
    assert await chip_audit(store) == 0


async def test_a_hands_end_moves_every_chip_and_keeps_the_hand_in_one_commit(
    store: Store,
) -> None:
    await at_hand_end(store)
    commit = hand_end()
    assert await store.commit(commit) == {"ann": 1_600, "bob": 600, HOUSE: -4_200}
    assert await store.table("t1") == commit.table
    assert await store.table_hands("t1") == (ENDED,)
    for account_id in ("ann", "bob", HOUSE):
        assert await store.account_hands(account_id) == (ENDED,)
    assert await store.seated_tables("ann") == ()
    assert await store.seated_tables("bob") == ()
    assert await chip_audit(store) == 0


def short_of_chips(end: TableCommit) -> TableCommit:
    """Cy sits down in Bob's seat with more than her balance in the same commit."""
    assert end.table is not None
    table = with_seat(end.table, seat(1, "cy", GRANT + 1))
    return replace(end, table=table, moves=(*end.moves, ("cy", GRANT + 1)))


def with_a_stranger(end: TableCommit) -> TableCommit:
    """A cash-out for an account that does not exist."""
    return replace(end, moves=(*end.moves, ("nobody", -50)))


@pytest.mark.parametrize(
    ("spoil", "code"),
    [(short_of_chips, "insufficient_balance"), (with_a_stranger, "unknown_account")],
    ids=["short of chips", "unknown account"],
)
@pytest.mark.parametrize("refused_move", ["first", "last"])
async def test_one_refused_move_refuses_the_whole_commit_and_changes_nothing(
    store: Store, spoil: Callable[[TableCommit], TableCommit], code: str, refused_move: str
) -> None:
    await at_hand_end(store)
    commit = spoil(hand_end())
    if refused_move == "first":
        commit = replace(commit, moves=(commit.moves[-1], *commit.moves[:-1]))
    accounts = ("ann", "bob", "cy", "nobody")
    before = await everything(store, ["t1"], accounts)
    with pytest.raises(Refused) as refused:
        await store.commit(commit)
    assert refused.value.code == code
    assert await everything(store, ["t1"], accounts) == before
    assert await chip_audit(store) == 0
    # Refused is not done: the same commit without the bad move is applied whole.
    assert await store.commit(hand_end()) == {"ann": 1_600, "bob": 600, HOUSE: -4_200}
    assert await store.table_hands("t1") == (ENDED,)


# -- the same commit twice -------------------------------------------------------------


async def test_the_same_commit_twice_is_applied_once_and_answered_twice(store: Store) -> None:
    """As when the answer to the first was lost and the table retried it."""
    await at_hand_end(store)
    commit = hand_end()
    first = await store.commit(commit)
    done = await everything(store, ["t1"], ["ann", "bob", "cy"])
    assert await store.commit(commit) == first
    assert await everything(store, ["t1"], ["ann", "bob", "cy"]) == done
    assert await store.table_hands("t1") == (ENDED,)
    assert await chip_audit(store) == 0


async def test_the_same_buy_in_twice_takes_the_chips_once(store: Store) -> None:
    await open_account(store, "ann")
    commit = buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", 400))
    assert await store.commit(commit) == {"ann": 600}
    assert await store.commit(commit) == {"ann": 600}
    assert await balance(store, "ann") == 600
    assert await chip_audit(store) == 0


async def test_a_dropped_tables_last_commit_again_is_answered_and_not_refused(
    store: Store,
) -> None:
    """The drop gave the lease up, so only its id can tell the retry from a stale write."""
    await open_account(store, "ann")
    sitting = buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", 400))
    await store.commit(sitting)
    assert sitting.table is not None
    drop = dropped(sitting.table)
    assert await store.commit(drop) == {"ann": GRANT}
    assert await store.commit(drop) == {"ann": GRANT}
    assert await balance(store, "ann") == GRANT
    assert await store.table("t1") is None
    assert await chip_audit(store) == 0


async def test_another_commit_with_the_same_content_is_applied_again(store: Store) -> None:
    first = played(hand("t1", 1, {0: "ann"}))
    twin = replace(first, commit_id=secrets.token_hex(8))
    assert twin == replace(first, commit_id=twin.commit_id)
    await store.commit(first)
    await store.commit(twin)
    assert hand_ids(await store.table_hands("t1")) == [("t1", 1), ("t1", 1)]
    top_up = TableCommit("t2", TableRecord("t2", OPTIONS), ((HOUSE, 100),))
    assert await store.commit(top_up) == {HOUSE: -100}
    assert await store.commit(replace(top_up, commit_id=secrets.token_hex(8))) == {HOUSE: -200}


# -- the seat index --------------------------------------------------------------------


async def test_the_tables_an_account_sits_at_follow_the_record_of_each_commit(
    store: Store,
) -> None:
    await open_account(store, "ann")
    await open_account(store, "bob")
    seen: list[dict[str, tuple[str, ...]]] = []

    async def commit(made: TableCommit) -> None:
        await store.commit(made)
        indexed = {a: await store.seated_tables(a) for a in ("ann", "bob")}
        assert indexed == {a: await seated_by_records(store, a) for a in ("ann", "bob")}
        seen.append(indexed)

    assert await store.seated_tables("ann") == ()
    one = with_seat(TableRecord("t1", OPTIONS), seat(0, "ann", 100))
    await commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", 100)))
    two = with_seat(TableRecord("t2", OPTIONS), seat(0, "ann", 100))
    await commit(buy_in(TableRecord("t2", OPTIONS), seat(0, "ann", 100)))
    await commit(buy_in(two, seat(1, "bob", 100)))
    two = with_seat(two, seat(1, "bob", 100))
    # A hand starts at t2 (no chips move) and Bob loses everything in it.
    await commit(saved(replace(two, hand_id=1, hand_open=True)))
    lost = hand("t2", 1, {0: "ann", 1: "bob"}, won={0: 100, 1: -100})
    after = replace(with_seat(without_seat(two, 1), seat(0, "ann", 200)), hand_id=1)
    await commit(TableCommit("t2", after, (("bob", 0),), lost))
    await commit(cash_out(one, 0))
    await commit(dropped(after))
    assert seen == [
        {"ann": ("t1",), "bob": ()},
        {"ann": ("t1", "t2"), "bob": ()},
        {"ann": ("t1", "t2"), "bob": ("t2",)},
        {"ann": ("t1", "t2"), "bob": ("t2",)},
        {"ann": ("t1", "t2"), "bob": ()},
        {"ann": ("t2",), "bob": ()},
        {"ann": (), "bob": ()},
    ]


async def test_the_index_follows_the_moves_and_leaves_the_house_out(store: Store) -> None:
    """A seat is taken and given up only with chips, so the moves keep the index; the
    house, which seats the dealer bot, sits nowhere."""
    await open_account(store, "ann")
    bot = SeatRecord(2, HOUSE, "Dealer", 1_000, True)
    table = with_seat(with_seat(TableRecord("t1", OPTIONS), bot), seat(0, "ann", 100))
    await store.commit(TableCommit("t1", table, ((HOUSE, 1_000), ("ann", 100))))
    assert await store.seated_tables("ann") == ("t1",)
    assert await store.seated_tables(HOUSE) == ()
    await store.commit(TableCommit("t1", without_seat(table, 0), (("ann", -100),)))
    assert await store.seated_tables("ann") == ()


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


def test_seat_finds_a_seat_by_its_number() -> None:
    table = with_seat(TableRecord("t1", OPTIONS), seat(1, "bob", 200))
    assert table.seat(1) == seat(1, "bob", 200)
    assert table.seat(0) is None


def test_each_commit_has_an_id_of_its_own() -> None:
    commits = [saved(TableRecord("t1", OPTIONS)) for _ in range(3)]
    assert len({c.commit_id for c in commits}) == 3
