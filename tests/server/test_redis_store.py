"""What the Redis store must keep beyond the contract (test_store.py and
test_store_tables.py): a commit is one atomic step even with many writers at once,
a commit whose answer was lost is applied once however often it is retried, and
what one store object writes another sees, as a second server process on the same
Redis would."""

from __future__ import annotations

import asyncio
import gc
import logging
import re
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import NoReturn

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from websockets.asyncio.client import connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.accounts import token_hash
from qiuqiu.server.errors import LeaseLost, Refused, StoreUnavailable
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.redis_store import RENEWED_AT_ONCE, RedisStore
from qiuqiu.server.store import HOUSE, HandRecord, TableCommit, TableRecord
from tests.server.conftest import FAST, Client, at_bot_table, my_turn
from tests.server.store_helpers import (
    GRANT,
    OPTIONS,
    buy_in,
    chip_audit,
    dropped,
    saved,
    seat,
    seated,
    with_seat,
)

HELD = 60.0
"""Seconds of a lease that outlasts the test that takes it."""


def sitting_down(table_id: str, account_id: str, stack: int) -> TableCommit:
    """``account_id`` buys in alone at a new table ``table_id``."""
    return buy_in(TableRecord(table_id, OPTIONS), seat(0, account_id, stack))


async def dump(url: str) -> dict[bytes, bytes | None]:
    """Every key in the database with its value, serialized by Redis itself."""
    async with Redis.from_url(url) as raw:
        return {key: await raw.dump(key) async for key in raw.scan_iter()}


async def test_a_refused_commit_leaves_every_key_in_redis_as_it_was(
    redis_store: RedisStore, redis_url: str
) -> None:
    for account_id in ("ann", "bob"):
        await redis_store.create_account(
            account_id, account_id.title(), token_hash(account_id), GRANT
        )
    for table_id in ("t1", "t2"):
        assert await redis_store.acquire_table(table_id, HELD)
    first = sitting_down("t1", "ann", 400)
    await redis_store.commit(first)
    assert first.table is not None
    table = with_seat(first.table, seat(1, "bob", 400))
    await redis_store.commit(buy_in(first.table, seat(1, "bob", 400)))
    before = await dump(redis_url)
    with pytest.raises(Refused, match="insufficient_balance"):
        await redis_store.commit(buy_in(table, seat(2, "ann", 601)))
    with pytest.raises(Refused, match="unknown_account"):
        await redis_store.commit(sitting_down("t2", "nobody", 1))
    # Both cash out and the table closes with a hand, but one move is for nobody.
    stacks = ((0, 400), (1, 400))
    played = HandRecord("t1", 1, ((0, "ann"), (1, "bob")), stacks, stacks, (), voided=True)
    closing = replace(dropped(table), hand=played)
    with pytest.raises(Refused, match="unknown_account"):
        await redis_store.commit(replace(closing, moves=(*closing.moves, ("nobody", -1))))
    assert await dump(redis_url) == before
    ann = await redis_store.account("ann")
    assert ann is not None
    assert ann.balance == GRANT - 400
    assert await redis_store.table("t1") == table


async def test_two_hundred_buy_ins_at_once_never_overdraw_and_create_or_lose_no_chip(
    redis_store: RedisStore,
) -> None:
    await redis_store.create_account("ann", "Ann", token_hash("ann"), GRANT)
    chips = 30

    async def buy_in_at(n: int) -> str | None:
        """None for a buy-in made, the code of its refusal otherwise."""
        try:
            assert await redis_store.acquire_table(f"t{n}", HELD)
            await redis_store.commit(sitting_down(f"t{n}", "ann", chips))
        except Refused as refused:
            return refused.code
        return None

    outcomes = await asyncio.gather(*(buy_in_at(n) for n in range(200)))
    assert outcomes.count(None) == GRANT // chips
    assert set(outcomes) == {None, "insufficient_balance"}
    balances = await redis_store.balances()
    assert balances["ann"] == GRANT % chips
    assert len(await redis_store.tables()) == GRANT // chips
    assert await chip_audit(redis_store) == 0


async def test_buy_ins_at_once_from_two_processes_never_seat_an_account_past_the_limit(
    redis_store: RedisStore, redis_url: str
) -> None:
    """One account sat at a thousand tables at once. Two processes' buy-ins, twenty at
    once, seat it at the limit and no more; each one past it changes nothing."""
    await redis_store.create_account("ann", "Ann", token_hash("ann"), GRANT)
    other = await RedisStore.from_url(redis_url)
    limit, chips = 3, 10

    async def buy_in_at(n: int) -> str | None:
        """None for a buy-in made, the code of its refusal otherwise."""
        store = (redis_store, other)[n % 2]
        try:
            assert await store.acquire_table(f"t{n}", HELD)
            await store.commit(replace(sitting_down(f"t{n}", "ann", chips), seat_limit=limit))
        except Refused as refused:
            return refused.code
        return None

    try:
        outcomes = await asyncio.gather(*(buy_in_at(n) for n in range(20)))
        assert outcomes.count(None) == limit
        assert set(outcomes) == {None, "too_many_tables"}
        seated_at = await redis_store.seated_tables("ann")
        assert len(seated_at) == limit
        assert (await redis_store.balances())["ann"] == GRANT - limit * chips
        assert len(await redis_store.tables()) == limit
        # More chips at a table where it sits already are no seat more: written by the
        # process that holds that table.
        (table,) = [t for t in await redis_store.tables() if t.table_id == seated_at[0]]
        holder = (redis_store, other)[int(table.table_id.removeprefix("t")) % 2]
        await holder.commit(replace(buy_in(table, seat(1, "ann", chips)), seat_limit=limit))
    finally:
        await other.close()
    assert await chip_audit(redis_store) == 0


async def test_an_account_at_the_seat_limit_on_one_process_gets_no_table_on_another(
    redis_url: str,
) -> None:
    """The seats counted are those on every process: the second refuses the table
    before making it, as it reads them from Redis."""
    config = FAST.model_copy(update={"max_seats_per_account": 1})
    stores = [await RedisStore.from_url(redis_url) for _ in range(2)]
    here, there = (QiuQiuServer(config, store=store) for store in stores)
    for server in (here, there):
        await server.start()
    try:
        ann = await _client(here)
        token = (await ann.hello("Ann"))["token"]
        assert (await ann.reply("create_table", buy_in=100))["type"] == "table_created"
        await ann.expect("table_joined")
        again = await _client(there)
        await again.reply("hello", version=PROTOCOL_VERSION, token=token)
        refused = await again.reply("create_table", buy_in=100)
        assert refused["code"] == "too_many_tables"
        assert there.lobby.tables == {}
        await again.close()
    finally:
        for server in (here, there):
            await server.stop()
        for store in stores:
            await store.close()


async def test_a_second_store_on_the_same_redis_sees_what_the_first_wrote(
    redis_store: RedisStore, redis_url: str
) -> None:
    await redis_store.create_account("ann", "Ann", token_hash("ann"), GRANT)
    table = seated("t1", "ann", 400)
    assert await redis_store.acquire_table("t1", HELD)
    await redis_store.commit(sitting_down("t1", "ann", 400))
    hand = HandRecord("t1", 1, ((0, "ann"),), ((0, 400),), ((0, 420),), ('{"type": "x"}',))
    await redis_store.commit(TableCommit("t1", table, hand=hand))
    other = await RedisStore.from_url(redis_url)
    try:
        # Opening it found the house there already and left its balance alone.
        assert await other.balances() == {HOUSE: -GRANT, "ann": GRANT - 400}
        assert await other.account_for_token(token_hash("ann")) == await redis_store.account("ann")
        assert await other.tables() == (table,)
        assert await other.account_hands("ann") == (hand,)
        await redis_store.release_table("t1")
        assert await other.acquire_table("t1", HELD)
        assert await other.commit(dropped(table)) == {"ann": GRANT}
    finally:
        await other.close()
    assert await redis_store.table("t1") is None
    assert await redis_store.seated_tables("ann") == ()


async def test_a_table_unchanged_since_the_last_read_is_not_decoded_again(
    redis_store: RedisStore,
) -> None:
    # Each list_tables reads every table other processes host: decoding all of them
    # again at each one held the event loop some 20 ms at a thousand tables.
    tables = [TableRecord(t, OPTIONS) for t in ("t1", "t2")]
    for table in tables:
        assert await redis_store.acquire_table(table.table_id, HELD)
        await redis_store.commit(saved(table))
    first = await redis_store.tables()
    again = await redis_store.tables()
    assert first == tuple(tables)
    assert [a is b for a, b in zip(first, again, strict=True)] == [True, True]
    changed = replace(tables[1], hand_id=3)
    await redis_store.commit(saved(changed))
    after = await redis_store.tables()
    assert after == (tables[0], changed)
    assert after[0] is first[0]


async def test_stores_under_different_prefixes_share_a_redis_without_seeing_each_other(
    redis_url: str,
) -> None:
    blue = await RedisStore.from_url(redis_url, prefix="blue:")
    green = await RedisStore.from_url(redis_url, prefix="green:")
    try:
        await blue.create_account("ann", "Ann", token_hash("ann"), GRANT)
        assert await blue.acquire_table("t1", HELD)
        await blue.commit(saved(TableRecord("t1", OPTIONS)))
        assert await green.acquire_table("t1", HELD), "green's t1 is another table"
        assert await green.account("ann") is None
        assert await green.tables() == ()
        assert await green.balances() == {HOUSE: 0}
        await green.create_account("ann", "Ann", token_hash("ann"), 5)
        assert await blue.balances() == {HOUSE: -GRANT, "ann": GRANT}
    finally:
        await blue.close()
        await green.close()


async def test_the_keys_are_laid_out_under_the_prefix_as_the_module_says(
    redis_store: RedisStore, redis_url: str
) -> None:
    await redis_store.create_account("ann", "Ann", "hash-of-anns-token", GRANT)
    await redis_store.acquire_table("t1", 10)
    await redis_store.commit(sitting_down("t1", "ann", 400))
    hand = HandRecord("t1", 1, ((0, "ann"),), ((0, 400),), ((0, 400),), ())
    last = TableCommit("t1", seated("t1", "ann", 400), hand=hand)
    await redis_store.commit(last)
    await redis_store.claim_connection("ann", "process:session")
    async with Redis.from_url(redis_url, decode_responses=True) as raw:
        assert sorted(await raw.keys()) == [
            "qiuqiu:account:ann",
            "qiuqiu:account:house",
            "qiuqiu:accounts",
            "qiuqiu:claims",
            "qiuqiu:commit:t1",
            "qiuqiu:connection:ann",
            "qiuqiu:fence:t1",
            "qiuqiu:hands:account:ann",
            "qiuqiu:hands:table:t1",
            "qiuqiu:lease:t1",
            "qiuqiu:seats:ann",
            "qiuqiu:table:t1",
            "qiuqiu:tables",
            "qiuqiu:token:hash-of-anns-token",
            "qiuqiu:version:t1",
        ]
        assert await raw.get("qiuqiu:lease:t1") == f"{redis_store.owner}:1"
        assert await raw.hgetall("qiuqiu:account:ann") == {"name": "Ann", "balance": "600"}
        assert await raw.smembers("qiuqiu:seats:ann") == {"t1"}
        assert await raw.get("qiuqiu:commit:t1") == last.commit_id
        assert await raw.get("qiuqiu:version:t1") == "2"


async def test_every_key_the_store_writes_is_a_row_of_the_readmes_table_of_keys(
    redis_store: RedisStore, redis_url: str
) -> None:
    # An operator reading Redis looks each key up there.
    async def written() -> set[str]:
        async with Redis.from_url(redis_url, decode_responses=True) as raw:
            return {key.removeprefix("qiuqiu:") async for key in raw.scan_iter()}

    await redis_store.create_account("ann", "Ann", "hash-of-anns-token", GRANT)
    await redis_store.acquire_table("t1", 10)
    await redis_store.commit(sitting_down("t1", "ann", 400))
    hand = HandRecord("t1", 1, ((0, "ann"),), ((0, 400),), ((0, 400),), ())
    await redis_store.commit(TableCommit("t1", seated("t1", "ann", 400), hand=hand))
    await redis_store.claim_connection("ann", "process:session")
    keys = await written()
    closing = dropped(seated("t1", "ann", 400))
    await redis_store.commit(replace(closing, revealed_seed="the table's seed"))
    await redis_store.ping()
    keys |= await written()
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    table = readme.split("**What is kept where**")[1].split("\n\n")[1]
    names = [
        name
        for row in table.splitlines()[2:]
        for name in re.findall(r"`([^`]+)`", row.split(" | ")[0])
    ]
    # {id}, {sha256}, {account id}: one key for each value there.
    listed = [re.compile(re.sub(r"\\\{[^}]*\\\}", "[^:]+", re.escape(name))) for name in names]
    assert {"table:t1", "lease:t1", "seats:ann", "revealed", "health"} <= keys
    assert sorted(key for key in keys if not any(p.fullmatch(key) for p in listed)) == []


async def test_an_accounts_connection_written_before_claims_were_a_list_is_the_first_before(
    redis_store: RedisStore, redis_url: str
) -> None:
    """A Redis written by a server that kept only the last connection, as a string."""
    async with Redis.from_url(redis_url, decode_responses=True) as raw:
        await raw.set("qiuqiu:connection:ann", "old:session")
    before, _ = await redis_store.claim_connection("ann", "new:session")
    assert before == ("old:session",)
    before, _ = await redis_store.claim_connection("ann", "newer:session")
    assert before == ("old:session", "new:session")


async def test_an_account_opened_on_a_redis_that_lost_its_data_reopens_the_house_and_says_so(
    redis_store: RedisStore, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis restarted empty under a running server (no append-only file): the house's
    account went with everything else. The next account's grant opens it again whole,
    so the audit counts it, and the operator is told, once, what happened."""
    await redis_store.create_account("ann", "Ann", "hash-of-anns-token", GRANT)
    async with Redis.from_url(redis_url, decode_responses=True) as raw:
        await raw.flushdb()
    await redis_store.create_account("bob", "Bob", "hash-of-bobs-token", GRANT)
    await redis_store.create_account("cat", "Cat", "hash-of-cats-token", GRANT)
    balances = await redis_store.balances()
    assert balances == {HOUSE: -2 * GRANT, "bob": GRANT, "cat": GRANT}
    house = await redis_store.account(HOUSE)
    assert house is not None
    lost = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(lost) == 1
    assert "lost its data" in lost[0].getMessage()


async def test_a_store_keeps_working_after_redis_forgets_its_scripts(
    redis_store: RedisStore, redis_url: str
) -> None:
    # As after a restart of Redis: the scripts are loaded again on first use.
    async with Redis.from_url(redis_url) as raw:
        await raw.script_flush()
    await redis_store.create_account("ann", "Ann", token_hash("ann"), GRANT)
    assert await redis_store.balances() == {HOUSE: -GRANT, "ann": GRANT}


async def test_a_new_connection_to_redis_leaves_no_reference_cycle_behind(
    redis_store: RedisStore,
) -> None:
    """A call cancelled mid-answer costs the pool its connection, so a server makes new
    ones all its life: whatever each left in a cycle would wait for a full collection
    (or, frozen by ``--gc-freeze``, stay for good)."""
    await redis_store.ping()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(3):
            await redis_store._redis.connection_pool.disconnect()
            await redis_store.ping()
        gc.collect()
        # Not the transports: the selector loop's keep themselves in a cycle of their
        # own (asyncio's; the server runs on uvloop where it is installed).
        left = [
            type(o).__qualname__
            for o in gc.garbage
            if isinstance(o, BaseException | FrameType)
            or type(o).__module__.startswith(("redis", "importlib"))
        ]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left == []


# -- a commit retried ----------------------------------------------------------------


async def answer_lost(
    store: RedisStore, commit: TableCommit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Send ``commit`` to Redis, which applies it, and lose the connection before its
    answer comes back, as a table would see a Redis that dropped it just then."""
    # The store's own script with the keys and arguments the store built: a copy of
    # them here would test the copy.
    script = store._commit

    async def applied_then_cut(keys: list[str], args: list[int | str]) -> NoReturn:
        await script(keys=keys, args=args)
        raise RedisConnectionError("Connection closed by server.")

    with monkeypatch.context() as patched:
        patched.setattr(store, "_commit", applied_then_cut)
        with pytest.raises(StoreUnavailable):
            await store.commit(commit)


async def test_a_commit_whose_answer_was_lost_is_recognised_by_its_id_when_retried(
    redis_store: RedisStore, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await redis_store.create_account("ann", "Ann", token_hash("ann"), GRANT)
    await redis_store.create_account("bob", "Bob", token_hash("bob"), GRANT)
    assert await redis_store.acquire_table("t1", HELD)
    first = sitting_down("t1", "ann", 400)
    await answer_lost(redis_store, first, monkeypatch)
    applied = await dump(redis_url)
    assert await redis_store.commit(first) == {"ann": GRANT - 400}
    assert await dump(redis_url) == applied, "applied once"
    # The retry told the store the version it wrote, so its next commit is not stale.
    assert first.table is not None
    second = buy_in(first.table, seat(1, "bob", 300))
    assert await redis_store.commit(second) == {"bob": GRANT - 300}
    assert second.table is not None
    stacks = ((0, 400), (1, 300))
    voided = HandRecord("t1", 1, ((0, "ann"), (1, "bob")), stacks, stacks, (), voided=True)
    closing = replace(dropped(second.table), hand=voided)
    await answer_lost(redis_store, closing, monkeypatch)
    applied = await dump(redis_url)
    assert await redis_store.commit(closing) == {"ann": GRANT, "bob": GRANT}
    assert await dump(redis_url) == applied, "applied once"
    assert await redis_store.table_hands("t1") == (voided,)
    assert await redis_store.tables() == ()
    assert await chip_audit(redis_store) == 0


# -- leases: one writer per table ---------------------------------------------------

LEASE = 0.3
"""Seconds a lease lasts in these tests: short, so that letting one run out is quick."""


async def two_stores(url: str) -> tuple[RedisStore, RedisStore]:
    """Two store objects on one Redis, as two server processes would have."""
    return await RedisStore.from_url(url), await RedisStore.from_url(url)


async def test_only_one_of_two_processes_gets_a_tables_lease(redis_url: str) -> None:
    first, second = await two_stores(redis_url)
    assert await first.acquire_table("t1", LEASE)
    assert not await second.acquire_table("t1", LEASE)
    assert await first.acquire_table("t1", LEASE), "taking it again just extends it"
    assert await first.orphaned_tables() == ()
    await first.close()
    await second.close()


async def test_a_lease_not_renewed_runs_out_and_another_process_takes_the_table_over(
    redis_url: str,
) -> None:
    first, second = await two_stores(redis_url)
    await first.acquire_table("t1", LEASE)
    await first.commit(saved(TableRecord("t1", OPTIONS)))
    assert await second.orphaned_tables() == ()
    await asyncio.sleep(LEASE * 2)
    assert await second.orphaned_tables() == ("t1",)
    assert await second.acquire_table("t1", LEASE)
    assert await first.renew_tables(LEASE) == ("t1",)
    assert await first.renew_tables(LEASE) == (), "a lost table is forgotten"
    await first.close()
    await second.close()


async def test_many_leases_are_renewed_a_batch_at_a_time_and_a_lost_one_is_told(
    redis_url: str,
) -> None:
    first, second = await two_stores(redis_url)
    table_ids = [f"t{n}" for n in range(RENEWED_AT_ONCE + 10)]
    for table_id in table_ids:
        assert await first.acquire_table(table_id, LEASE)
    await asyncio.sleep(LEASE * 2)
    taken = table_ids[-1]  # in the second batch
    assert await second.acquire_table(taken, HELD)
    before = first.round_trips
    assert await first.renew_tables(HELD) == (taken,)
    assert first.round_trips - before == 2
    # Every other lease, run out and not taken, was taken back.
    assert not await second.acquire_table(table_ids[0], HELD)
    assert not await second.acquire_table(table_ids[-2], HELD)
    assert await first.renew_tables(HELD) == (), "a lost table is forgotten"
    await first.close()
    await second.close()


async def test_renewing_keeps_a_lease_past_its_first_term(redis_url: str) -> None:
    first, second = await two_stores(redis_url)
    await first.acquire_table("t1", LEASE)
    for _ in range(4):
        await asyncio.sleep(LEASE / 3)
        assert await first.renew_tables(LEASE) == ()
    assert not await second.acquire_table("t1", LEASE)
    await first.close()
    await second.close()


async def test_the_process_that_lost_its_lease_writes_nothing_more(redis_url: str) -> None:
    old, new = await two_stores(redis_url)
    await old.create_account("ann", "Ann", token_hash("ann"), GRANT)
    await old.acquire_table("t1", LEASE)
    await old.commit(saved(TableRecord("t1", OPTIONS)))
    await asyncio.sleep(LEASE * 2)
    assert await new.acquire_table("t1", LEASE)
    before = await dump(redis_url)
    stale = seated("t1", "ann", 100)
    hand = HandRecord("t1", 1, ((0, "ann"),), ((0, 100),), ((0, 100),), ())
    for write in (
        saved(stale),
        sitting_down("t1", "ann", 100),
        TableCommit("t1", stale, hand=hand),
        TableCommit("t1", None),
    ):
        with pytest.raises(LeaseLost):
            await old.commit(write)
    assert await dump(redis_url) == before
    await new.commit(saved(stale))
    assert await new.table("t1") == stale
    await old.close()
    await new.close()


async def test_two_processes_racing_to_apply_the_same_change_only_one_wins(
    redis_url: str,
) -> None:
    """Both believe they host the table (the first stalled past its lease while the
    second took over): each tries to seat Ann with her whole balance at once."""
    first, second = await two_stores(redis_url)
    await first.create_account("ann", "Ann", token_hash("ann"), GRANT)
    await first.acquire_table("t1", LEASE)
    await first.commit(saved(TableRecord("t1", OPTIONS)))
    await asyncio.sleep(LEASE * 2)
    await second.acquire_table("t1", LEASE)
    outcomes = await asyncio.gather(
        first.commit(sitting_down("t1", "ann", GRANT)),
        second.commit(sitting_down("t1", "ann", GRANT)),
        return_exceptions=True,
    )
    assert isinstance(outcomes[0], LeaseLost)
    assert not isinstance(outcomes[1], BaseException)
    assert await balance_of(second, "ann") == 0
    assert await second.table("t1") == seated("t1", "ann", GRANT)
    await first.close()
    await second.close()


async def test_a_released_lease_is_free_at_once_and_a_dropped_table_frees_its_lease(
    redis_url: str,
) -> None:
    first, second = await two_stores(redis_url)
    await first.acquire_table("t1", LEASE)
    await first.release_table("t1")
    assert await second.acquire_table("t1", LEASE)
    await second.commit(saved(TableRecord("t1", OPTIONS)))
    await second.commit(TableCommit("t1", None))
    assert await first.acquire_table("t1", LEASE)
    await first.close()
    await second.close()


async def test_a_lease_taken_back_after_it_ran_out_keeps_its_fence(
    redis_store: RedisStore, redis_url: str
) -> None:
    assert await redis_store.acquire_table("t1", LEASE)
    await asyncio.sleep(LEASE * 2)
    async with Redis.from_url(redis_url, decode_responses=True) as raw:
        assert await raw.get("qiuqiu:lease:t1") is None
        assert await redis_store.renew_tables(HELD) == ()
        assert await raw.get("qiuqiu:lease:t1") == f"{redis_store.owner}:1"
        assert await raw.get("qiuqiu:fence:t1") == "1"


async def balance_of(store: RedisStore, account_id: str) -> int:
    account = await store.account(account_id)
    assert account is not None
    return account.balance


async def test_a_hand_costs_one_round_trip_at_its_start_and_one_at_its_end(
    redis_store: RedisStore,
) -> None:
    # A lease that outlasts the test: no renewal and no scan for orphans in between.
    server = QiuQiuServer(FAST.model_copy(update={"lease": 600.0}), store=redis_store)
    await server.start()
    try:
        client, turn = await at_bot_table(lambda: _client(server), max_bet=10, max_raises=1)
        before, first = redis_store.round_trips, turn["hand_id"]
        while turn["hand_id"] < first + 3:  # the bot may end a hand itself: count hands
            action = "fold" if turn["legal"].get("fold") else "check"
            await client.send(action, table_id=turn["table_id"], hand_id=turn["hand_id"])
            turn = await my_turn(client, turn["table_id"])
        hands = turn["hand_id"] - first
        # Each hand played between: its start's commit and its end's, nothing else.
        assert redis_store.round_trips - before == 2 * hands
    finally:
        await server.stop()


async def _client(server: QiuQiuServer) -> Client:
    return Client(await connect(server.url))
