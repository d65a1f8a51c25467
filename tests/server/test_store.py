"""The contract every :class:`Store` keeps (store.py; docs/ARCHITECTURE.md, "Storage").

Each store test runs once per implementation in ``STORES``, each the name of a
fixture that makes an empty one (the Redis one in a Redis emptied for the test);
they use only the methods of the :class:`Store` protocol, so a store that passes
here can stand in for any other. A table is written only by :meth:`Store.commit`,
with the commits built as a table builds them (tests/server/store_helpers.py).
The chip audit sums every balance, the house's included, and every stack at
every table in the lobby.

A second process on the same store (``rival``) is a second :class:`RedisStore`
on the same Redis; a store in memory cannot be shared by two processes, so its
rival is a second :class:`MemoryStore` over the same accounts, tables and
leases, holding leases of its own under another owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qiuqiu.protocol import MAX_BALANCE, TableOptions
from qiuqiu.server.errors import LeaseExpired, LeaseLost, Refused
from qiuqiu.server.lobby import token_hash
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import (
    CLAIMS_KEPT,
    HISTORY_LENGTH,
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
    open_account,
    saved,
    seat,
    with_seat,
    without_seat,
)

STORES = ["memory_store", "redis_store"]

TABLES = ("t1", "t2", "t3")

SHORT = 0.05
"""Seconds of a lease a test lets run out: it shortens its lease to this only once it
has written what it needs, so that a slow machine cannot make that write fail."""

RUN_OUT = SHORT * 2
"""Seconds a test waits for a short lease to run out."""


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


@pytest.fixture
async def rival(store: Store, request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    """Another process on the same store as ``store``, with leases of its own."""
    if isinstance(store, MemoryStore):
        yield replace(store, owner=secrets.token_hex(6), _holding={})
        return
    other = await RedisStore.from_url(request.getfixturevalue("redis_url"))
    yield other
    await other.close()


EmptyStores = Callable[[], contextlib.AbstractAsyncContextManager[Store]]


@pytest.fixture
def empty_stores(store: Store, request: pytest.FixtureRequest) -> EmptyStores:
    """More empty stores of the kind ``store`` is, one per example of a property (the
    Redis ones under a prefix of their own), each holding the leases on ``TABLES``."""
    url = None if isinstance(store, MemoryStore) else request.getfixturevalue("redis_url")
    prefixes = itertools.count()

    @contextlib.asynccontextmanager
    async def empty() -> AsyncIterator[Store]:
        if url is None:
            made: Store = MemoryStore()
        else:
            made = await RedisStore.from_url(url, prefix=f"example{next(prefixes)}:")
        try:
            for table_id in TABLES:
                assert await made.acquire_table(table_id, 60)
            yield made
        finally:
            if isinstance(made, RedisStore):
                await made.close()

    return empty


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


def played(finished: HandRecord) -> TableCommit:
    """The commit that keeps ``finished``, with its table as a bare record after it."""
    after = TableRecord(finished.table_id, OPTIONS, hand_id=finished.hand_id)
    return TableCommit(finished.table_id, after, hand=finished)


def hand_ids(hands: Iterable[HandRecord]) -> list[tuple[str, int]]:
    return [(h.table_id, h.hand_id) for h in hands]


async def everything(
    store: Store, table_ids: Iterable[str], account_ids: Iterable[str]
) -> dict[str, Any]:
    """All a commit may change, as the protocol shows it: to compare before and after."""
    tables, accounts = sorted(table_ids), sorted({HOUSE, *account_ids})
    return {
        "balances": await store.balances(),
        "lobby": sorted((t.table_id, t) for t in await store.tables()),
        "table": {t: await store.table(t) for t in tables},
        "table hands": {t: await store.table_hands(t) for t in tables},
        "account hands": {a: await store.account_hands(a) for a in accounts},
        "seated": {a: await store.seated_tables(a) for a in accounts},
        "hosts": {t: await store.table_host(t) for t in tables},
        "orphans": await store.orphaned_tables(),
    }


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
    assert str(GRANT) in refused.value.message
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


# -- leases ----------------------------------------------------------------------------


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
