"""Each write of a table the server makes, failed at that very moment, on real Redis under
a real server and real WebSocket clients, as test_store_calls.py fails a request's
calls: a new table, a buy-in, a seed, a cash-out, a close, a hand's start and end (and
the watches that wait for it); a write whose answer was lost and whose table then moved;
a write that reaches Redis after its lease ran out; a lease a stopping server fails to
let go."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from redis.asyncio import Redis
from websockets.asyncio.client import connect

from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.table.audience import TablePhase
from tests.server.conftest import FAST, WAIT, Client, chip_total
from tests.server.faulty_store import Fault, FaultPlan, FaultyStore, Mode

# The store, config and server fixtures come from test_store_calls.py: pytest finds a
# fixture by its name in the test's module.
from tests.server.test_store_calls import (
    HEADS_UP,
    QUICK,
    WAITING,
    Connect,
    balance,
    fail_next,
    faulty_store,  # noqa: F401
    gone,
    hello,
    keys,
    quick_config,  # noqa: F401
    served,
    server_on_faulty_store,  # noqa: F401
    wrongly_told,
)

MODES_OF_A_WRITE: tuple[Mode, ...] = ("fail", "fail_after")


def runs(mode: Mode) -> int:
    """Calls failed in a row: a call that never reached Redis fails a few times (an
    outage); one whose answer was lost, once (then its retry is recognised)."""
    return 3 if mode == "fail" else 1


@asynccontextmanager
async def beside_another(
    redis_url: str, config: ServerConfig
) -> AsyncIterator[tuple[FaultyStore, QiuQiuServer, QiuQiuServer, RedisStore, list[Client]]]:
    """A server on a store whose calls can be failed, another on the same Redis, and the
    clients a test opens (closed with them)."""
    faulty = await FaultyStore.open(redis_url, FaultPlan())
    plain = await RedisStore.from_url(redis_url)
    here, there = QiuQiuServer(config, store=faulty), QiuQiuServer(config, store=plain)
    clients: list[Client] = []
    try:
        for server in (here, there):
            await server.start()
        yield faulty, here, there, plain, clients
    finally:
        for client in clients:
            await client.close()
        for server in (here, there):
            await server.stop()
        await faulty.close()
        await plain.close()


# -- a table's writes (docs/ARCHITECTURE.md, "Commit points") --------------------------------


@pytest.mark.parametrize("mode", MODES_OF_A_WRITE)
async def test_a_table_whose_opening_write_fails_opens_once_and_funds_the_bot_once(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect, mode: Mode
) -> None:
    client = await connect_client()
    await hello(client, name="Ann")
    fail_next(store, "commit", mode, runs(mode))
    created = await client.reply("create_table", options={"dealer_bot": True})
    assert created["type"] == "table_created"
    (record,) = await store.tables()
    assert [(s.account_id, s.stack) for s in record.seats] == [("house", 10_000)]
    assert (await store.balances())["house"] == -10_000 - 1000, "the bot and Ann's grant"
    assert await chip_total(server) == 0


ONE_SEAT = QUICK.model_copy(update={"max_seats_per_account": 1})


@pytest.mark.parametrize("config", [pytest.param(ONE_SEAT, id="one table an account")])
@pytest.mark.parametrize("mode", MODES_OF_A_WRITE)
async def test_a_buy_in_whose_write_fails_seats_once_or_not_at_all_and_the_cap_holds(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect, mode: Mode
) -> None:
    """A buy-in that never reached Redis is refused at once; one whose answer was lost
    is written again, recognised, and seats the player once: one seat, one move of
    chips, one table in the account's index, which the seat cap counts."""
    host = await connect_client()
    await hello(host, name="Host")
    tables = [
        (await host.reply("create_table", options=HEADS_UP))["table"]["table_id"] for _ in "ab"
    ]
    bo = await connect_client()
    welcome = await hello(bo, name="Bo")
    fail_next(store, "commit", mode)
    answer = await bo.reply("join_table", table_id=tables[0], buy_in=100)
    if mode == "fail":
        assert answer["code"] == "store_unavailable"
        assert await store.seated_tables(welcome["account_id"]) == ()
        assert await balance(store, welcome["account_id"]) == welcome["balance"]
        answer = await served(bo, "join_table", table_id=tables[0], buy_in=100)
    assert answer["type"] == "table_joined"
    assert answer["balance"] == welcome["balance"] - 100
    assert await balance(store, welcome["account_id"]) == welcome["balance"] - 100
    assert await store.seated_tables(welcome["account_id"]) == (tables[0],)
    record = await store.table(tables[0])
    assert record is not None
    assert [s.account_id for s in record.seats] == [welcome["account_id"]]
    refused = await bo.reply("join_table", table_id=tables[1], buy_in=100)
    assert refused["code"] == "too_many_tables"
    assert await chip_total(server) == 0
    assert not wrongly_told(host, bo)


async def sent_as_the_buy_in_is_written(
    store: FaultyStore, connect_client: Connect, mode: Mode, kind: str, **fields: Any
) -> tuple[Client, Client, str, dict[str, Any], list[tuple[str, str | None]]]:
    """Host opens a table that waits for players; Bo asks to sit at it, its buy-in's
    write planned to ``mode``, and sends a ``kind`` before the answer. Host, Bo, the
    table, Bo's welcome, and the answers to both requests in the order they came."""
    host = await connect_client()
    await hello(host, name="Host")
    table_id = (await host.reply("create_table", options=WAITING))["table"]["table_id"]
    bo = await connect_client()
    welcome = await hello(bo, name="Bo")
    store.plan = FaultPlan((Fault("commit", store.calls["commit"] + 1, mode, stall=0.3),))
    joining = await bo.send("join_table", table_id=table_id, buy_in=100)
    asking = await bo.send(kind, table_id=table_id, **fields)
    await bo.wait(lambda m: m.get("ref") == asking)
    answers = [(m["type"], m.get("code")) for m in bo.frames if m.get("ref") in (joining, asking)]
    return host, bo, table_id, welcome, answers


@pytest.mark.parametrize("mode", ["stall", "fail"])
async def test_a_leave_sent_as_the_buy_in_is_written_is_answered_after_the_join(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect, mode: Mode
) -> None:
    """Bo asks to sit and, before the answer, to leave. The leave was refused
    ``not_at_table`` while the buy-in was on its way to Redis, and the seat came after
    it: a client that trusted its answers took itself for not seated, its chips at the
    table. The leave now waits for the join: Bo sits and stands up again, his chips back;
    or, where the store never got the buy-in, both are refused, in the order sent."""
    host, bo, _, welcome, answers = await sent_as_the_buy_in_is_written(
        store, connect_client, mode, "leave_table"
    )
    if mode == "stall":
        assert answers == [("table_joined", None), ("table_left", None)], answers
    else:
        assert answers == [("error", "store_unavailable"), ("error", "not_at_table")], answers
    assert await store.seated_tables(welcome["account_id"]) == ()
    assert await balance(store, welcome["account_id"]) == welcome["balance"]
    assert await chip_total(server) == 0
    assert not wrongly_told(host, bo)


@pytest.mark.parametrize("mode", ["stall", "fail"])
async def test_a_seed_sent_as_the_buy_in_is_written_is_set_after_the_join(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect, mode: Mode
) -> None:
    """As the leave above: a ``set_seed`` sent before the join's answer was refused
    ``not_seated``, and the seat came after it, dealt without that seed."""
    host, bo, table_id, welcome, answers = await sent_as_the_buy_in_is_written(
        store, connect_client, mode, "set_seed", client_seed="bo-lucky"
    )
    record = await store.table(table_id)
    assert record is not None
    seeds = [s.client_seed for s in record.seats if s.account_id == welcome["account_id"]]
    if mode == "stall":
        assert answers == [("table_joined", None), ("seed_set", None)], answers
        assert seeds == ["bo-lucky"]
    else:
        assert answers == [("error", "store_unavailable"), ("error", "not_seated")], answers
        assert seeds == []
    assert await chip_total(server) == 0
    assert not wrongly_told(host, bo)


async def test_a_snapshot_asked_as_the_buy_in_is_written_comes_after_the_join(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect
) -> None:
    """As the leave above: a ``request_snapshot`` sent before the join's answer was
    refused ``not_at_table``, then the seat came."""
    host, bo, _, _, answers = await sent_as_the_buy_in_is_written(
        store, connect_client, "stall", "request_snapshot"
    )
    assert answers == [("table_joined", None), ("table_snapshot", None)], answers
    snapshot = [m for m in bo.frames if m["type"] == "table_snapshot"][-1]
    assert snapshot["table"]["you"] is not None
    assert not wrongly_told(host, bo)


async def test_a_table_made_with_a_buy_in_the_store_never_got_is_made_and_nobody_sits(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect
) -> None:
    """``create_table`` with a ``buy_in`` is two writes: the table is made, then the
    seat is refused (PROTOCOL.md, ``create_table``), and the table, nobody at it,
    waits for a player like any other."""
    client = await connect_client()
    welcome = await hello(client, name="Ann")
    fail_next(store, "commit", skip=1)  # the table's opening is written, not the buy-in
    ref = await client.send("create_table", options=HEADS_UP, buy_in=300)
    created = await client.expect("table_created", ref=ref)
    refused = await client.expect("error", ref=ref)
    assert refused["code"] == "store_unavailable"
    table_id = created["table"]["table_id"]
    record = await store.table(table_id)
    assert record is not None
    assert record.seats == ()
    assert await balance(store, welcome["account_id"]) == welcome["balance"]
    joined = await served(client, "join_table", table_id=table_id, buy_in=300)
    assert joined["type"] == "table_joined"
    assert await chip_total(server) == 0


@pytest.mark.parametrize("mode", MODES_OF_A_WRITE)
async def test_a_seed_a_cash_out_and_a_close_whose_writes_fail_are_each_told_once(
    server: QiuQiuServer,
    store: FaultyStore,
    connect_client: Connect,
    redis_url: str,
    mode: Mode,
) -> None:
    ann, bo = await connect_client(), await connect_client()
    at_ann, at_bo = await hello(ann, name="Ann"), await hello(bo, name="Bo")
    created = await ann.reply("create_table", options=WAITING, buy_in=300)
    table_id = created["table"]["table_id"]
    await ann.expect("table_joined")
    await bo.reply("join_table", table_id=table_id, buy_in=200)

    # The seed: refused at once if it never reached Redis, else confirmed once written.
    fail_next(store, "commit", mode, runs(mode))
    answer = await bo.reply("set_seed", table_id=table_id, client_seed="b0b5eed")
    if mode == "fail":
        assert answer["code"] == "store_unavailable"
        answer = await served(bo, "set_seed", table_id=table_id, client_seed="b0b5eed")
    assert answer["type"] == "seed_set"
    record = await store.table(table_id)
    assert record is not None
    assert [s.client_seed for s in record.seats if s.account_id == at_bo["account_id"]] == [
        "b0b5eed"
    ]

    # Bo's cash-out: retried until written, then told once.
    fail_next(store, "commit", mode, runs(mode))
    left = await served(bo, "leave_table", table_id=table_id)
    assert left["type"] == "table_left"
    assert left["balance"] == await balance(store, at_bo["account_id"]) == at_bo["balance"]
    assert await store.seated_tables(at_bo["account_id"]) == ()

    # Ann's, then the close (the table's last player left): each retried until written.
    fail_next(store, "commit", mode, runs(mode), skip=1)
    left = await served(ann, "leave_table", table_id=table_id)
    assert left["balance"] == at_ann["balance"]
    await gone(server, table_id)
    assert await store.table(table_id) is None
    assert await keys(redis_url, f"qiuqiu:*:{table_id}") == [
        f"qiuqiu:commit:{table_id}",
        f"qiuqiu:fence:{table_id}",
        f"qiuqiu:version:{table_id}",
    ], "no lease, no record"
    async with Redis.from_url(redis_url, decode_responses=True) as raw:
        assert await raw.hexists("qiuqiu:revealed", table_id), "its seed kept for its hands"
    for client in (ann, bo):
        assert [f["type"] for f in client.frames].count("table_left") == 1
    assert await chip_total(server) == 0
    assert not wrongly_told(ann, bo)


async def play_out(table_id: str, hand_id: int, clients: tuple[Client, ...]) -> None:
    """Check or call every turn of the hand for whoever's it is, asking for a snapshot
    after each action (one asked after the last waits for the hand's end write), until
    the hand's end is told."""
    played: set[int] = set()
    async with asyncio.timeout(WAIT):
        while not any(
            f["type"] == "hand_ended" and f["hand_id"] == hand_id for f in clients[0].frames
        ):
            for client in clients:
                for turn in list(client.frames):
                    if (
                        turn["type"] == "turn_started"
                        and turn.get("hand_id") == hand_id
                        and "legal" in turn
                        and turn["seq"] not in played
                    ):
                        played.add(turn["seq"])
                        action = "call" if turn["legal"].get("call") else "check"
                        await client.send(action, table_id=table_id, hand_id=hand_id)
                        await client.send("request_snapshot", table_id=table_id)
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("mode", MODES_OF_A_WRITE)
async def test_a_hand_whose_start_and_end_writes_fail_is_told_once_whole_and_recorded_once(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect, mode: Mode
) -> None:
    """The hand's start write fails, then its end write, which holds Bo's cash-out
    (he asked to stand up after the hand) and the hand's record with its players'
    names. Each is told once it is written, and once: the hand's start, its end before
    any snapshot asked meanwhile, Bo's ``table_left`` after the end; the record is
    kept once."""
    ann, bo = await connect_client(), await connect_client()
    at_ann, at_bo = await hello(ann, name="Ann"), await hello(bo, name="Bo")
    created = await ann.reply("create_table", options=HEADS_UP, buy_in=300)
    table_id = created["table"]["table_id"]
    await ann.expect("table_joined")
    fail_next(store, "commit", mode, runs(mode), skip=1)  # Bo's buy-in is written first
    await bo.reply("join_table", table_id=table_id, buy_in=300)
    started = await bo.expect("hand_started", table_id=table_id)
    hand_id = started["hand_id"]
    record = await store.table(table_id)
    assert record is not None
    assert (record.hand_id, record.hand_open) == (hand_id, True)

    fail_next(store, "commit", mode, runs(mode))
    leave = await bo.send("leave_table", table_id=table_id, after_hand=True)
    await play_out(table_id, hand_id, (ann, bo))
    left = await bo.expect("table_left", table_id=table_id)
    assert left["ref"] == leave
    types = [f["type"] for f in bo.frames if f.get("table_id") == table_id]
    assert types.index("hand_ended") < types.index("table_left")
    assert left["balance"] == await balance(store, at_bo["account_id"])
    assert await store.seated_tables(at_bo["account_id"]) == ()

    hands = await store.table_hands(table_id)
    assert [h.hand_id for h in hands] == [hand_id], "recorded once"
    names = {at_ann["account_id"]: "Ann", at_bo["account_id"]: "Bo"}
    assert hands[0].names == tuple((n, names[a]) for n, a in hands[0].accounts)
    after_end: list[dict[str, Any]] = []
    for client in (ann, bo):
        seen = [f["type"] for f in client.frames if f.get("hand_id") == hand_id]
        assert (seen.count("hand_started"), seen.count("hand_ended")) == (1, 1)
        ended = next(i for i, f in enumerate(client.frames) if f["type"] == "hand_ended")
        after_end += [f for f in client.frames[ended:] if f["type"] == "table_snapshot"]
    # The snapshot asked after the last action waited for the end, and shows it.
    assert after_end
    for snapshot in after_end:
        assert snapshot["table"]["hand"]["events"][-1]["type"] == "hand_ended"
    listed = await ann.reply("list_hands", table_id=table_id)
    assert [s["name"] for s in listed["hands"][0]["seats"]] == ["Ann", "Bo"]
    assert await chip_total(server) == 0
    assert not wrongly_told(ann, bo)


SPECTATOR_CAP = QUICK.model_copy(update={"max_spectators": 1})
ONE_EACH = SPECTATOR_CAP.model_copy(update={"max_watched_tables": 1})


@pytest.mark.parametrize(
    "config",
    [
        pytest.param(SPECTATOR_CAP, id="one spectator a table"),
        pytest.param(ONE_EACH, id="one spectator a table, one table a connection"),
    ],
)
async def test_watches_asked_while_a_hands_end_is_written_wait_for_it_and_the_cap_holds(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect
) -> None:
    """The hand's end write is slow; two spectators ask to watch meanwhile. Each is
    answered once the end is written (a snapshot then shows the hand's end), and the
    table's one place goes to one of them. The watch refused then was served and counted
    before; refused, it counts no more: its connection watches another table, even where
    a connection may watch only one."""
    ann, bo, dee, eve = [await connect_client() for _ in range(4)]
    for client, name in ((ann, "Ann"), (bo, "Bo"), (dee, "Dee"), (eve, "Eve")):
        await hello(client, name=name)
    table_id = (await ann.reply("create_table", options=HEADS_UP, buy_in=300))["table"]["table_id"]
    other = (await bo.reply("create_table", options=WAITING))["table"]["table_id"]
    await bo.reply("join_table", table_id=table_id, buy_in=300)
    hand_id = (await bo.expect("hand_started", table_id=table_id))["hand_id"]
    table = server.lobby.tables[table_id]
    store.plan = FaultPlan((Fault("commit", store.calls["commit"] + 1, "stall", stall=0.5),))

    async def watch_while_settling() -> list[int]:
        while table.core.state is not TablePhase.SETTLING:
            await asyncio.sleep(0.005)
        return [await c.send("watch_table", table_id=table_id) for c in (dee, eve)]

    watching = asyncio.create_task(watch_while_settling())
    await play_out(table_id, hand_id, (ann, bo))
    refs = await watching
    answers = [
        await c.wait(lambda m, ref=ref: m.get("ref") == ref and "seq" not in m)
        for c, ref in zip((dee, eve), refs, strict=True)
    ]
    assert sorted(a.get("code", a["type"]) for a in answers) == [
        "table_watched",
        "too_many_spectators",
    ]
    (watcher,) = [c for c, a in zip((dee, eve), answers, strict=True) if a["type"] != "error"]
    snapshot = await watcher.expect("table_snapshot")
    assert snapshot["table"]["hand"]["events"][-1]["type"] == "hand_ended"
    assert len(table.core.spectators) == 1
    assert not wrongly_told(ann, bo, dee, eve)
    (refused,) = [c for c, a in zip((dee, eve), answers, strict=True) if a["type"] == "error"]
    watched = await refused.reply("watch_table", table_id=other)
    assert watched["type"] == "table_watched", watched


# -- a write whose answer was lost, then whose retry finds the table moved -----------------


@pytest.mark.parametrize("request_type", ["join_table", "set_seed"])
async def test_a_write_whose_answer_was_lost_then_whose_table_moved_is_outcome_unknown(
    redis_url: str, request_type: str
) -> None:
    """Bo's write reaches Redis, its answer does not; the retry stalls past the lease
    (renewals failing too), another process adopts the table, and the retry finds the
    lease gone. The write may well be in the adopter's record, so Bo is told that its
    outcome is unknown, not that the table moved before anything changed."""
    lease = 1.0
    config = FAST.model_copy(update={"lease": lease})
    async with beside_another(redis_url, config) as (faulty, here, _there, plain, clients):
        ann, bo = [Client(await connect(here.url)) for _ in range(2)]
        clients += (ann, bo)
        await hello(ann, name="Ann")
        at_bo = await hello(bo, name="Bo")
        table_id = (await ann.reply("create_table", options=WAITING, buy_in=300))["table"][
            "table_id"
        ]
        fields: dict[str, Any] = {"table_id": table_id, "client_seed": "b0b5eed"}
        if request_type == "join_table":
            fields["buy_in"] = 200
        else:
            await bo.reply("join_table", table_id=table_id, buy_in=200)
        call, renewal = faulty.calls["commit"] + 1, faulty.calls["renew_tables"] + 1
        faulty.plan = FaultPlan(
            (
                Fault("commit", call, "fail_after"),
                Fault("commit", call + 1, "stall", stall=3 * lease),
                Fault("renew_tables", renewal, "fail", count=1000),
            )
        )
        answer = await bo.reply(request_type, **fields)
        assert answer["code"] == "outcome_unknown", answer
        record = await plain.table(table_id)
        assert record is not None, "adopted"
        (seat,) = [s for s in record.seats if s.account_id == at_bo["account_id"]]
        assert seat.client_seed == "b0b5eed", "written, as the first try left it"
        assert sum((await plain.balances()).values()) + sum(s.stack for s in record.seats) == 0


async def next_turn(
    clients: tuple[Client, ...], hand_id: int, after: Client | None = None
) -> Client:
    """The client whose turn it is in ``hand_id`` (once ``after`` has had its own)."""

    def turns(client: Client) -> int:
        return sum(
            f["type"] == "turn_started" and f.get("hand_id") == hand_id and "legal" in f
            for f in client.frames
        )

    async with asyncio.timeout(WAIT):
        while True:
            for client in clients:
                if client is not after and turns(client):
                    return client
            await asyncio.sleep(0.01)


async def at_the_last_turn(ann: Client, bo: Client) -> tuple[str, int, Client]:
    """Ann and Bo heads-up, the first of them to act checked: the table, the hand, and
    the client whose check now ends the hand."""
    await hello(ann, name="Ann")
    await hello(bo, name="Bo")
    created = await ann.reply("create_table", options=HEADS_UP, buy_in=300)
    table_id = created["table"]["table_id"]
    await bo.reply("join_table", table_id=table_id, buy_in=300)
    hand_id = (await bo.expect("hand_started", table_id=table_id))["hand_id"]
    first = await next_turn((ann, bo), hand_id)
    await first.send("check", table_id=table_id, hand_id=hand_id)
    return table_id, hand_id, await next_turn((ann, bo), hand_id, after=first)


async def test_a_hands_end_retried_after_the_lease_ran_out_unclaimed_waits_for_the_renewal(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect
) -> None:
    """Cut off from Redis for longer than the lease (its renewals failing), the server
    retries a hand's end while the table's lease has run out in Redis and nobody has
    taken it. Written then, the end found the lease lost and the server gave its table
    up to nobody: its players were sent away, and the hand voided once another process
    adopted it. The end waits for the renewal, which takes the lease back, and the hand
    ends where it was played."""
    ann, bo = await connect_client(), await connect_client()
    table_id, hand_id, second = await at_the_last_turn(ann, bo)
    # The end's tries fail for 1.55 s (a third of which passes the lease's 1.5), and
    # the renewals for longer: the end is tried again with the lease run out.
    store.plan = FaultPlan(
        (
            Fault("commit", store.calls["commit"] + 1, "fail", count=5),
            Fault("renew_tables", store.calls["renew_tables"] + 1, "fail", count=12),
        )
    )
    await second.send("check", table_id=table_id, hand_id=hand_id)
    for client in (ann, bo):
        await client.expect("hand_ended", table_id=table_id, hand_id=hand_id)
    assert table_id in server.lobby.tables
    for client in (ann, bo):
        assert "table_closed" not in [f["type"] for f in client.frames]
    assert await chip_total(server) == 0
    assert not wrongly_told(ann, bo)


ONE_SECOND_LEASE = QUICK.model_copy(update={"lease": 1.0})


def redis_slower_than_the_lease(store: FaultyStore) -> None:
    """The next write reaches Redis two leases late, after the lease ran out there with
    nobody taking it, and the renewal that takes it back comes later still."""
    lease = ONE_SECOND_LEASE.lease
    store.plan = FaultPlan(
        (
            Fault("commit", store.calls["commit"] + 1, "stall", stall=2 * lease),
            Fault("renew_tables", store.calls["renew_tables"] + 1, "stall", stall=3.5 * lease),
        )
    )


async def told(client: Client, found: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first message ``found`` picks, after the stalls above: the write waits for the
    renewal, then for its own next try (backing off up to 2 s)."""
    async with asyncio.timeout(WAIT + 3.5 * ONE_SECOND_LEASE.lease):
        while not (picked := [f for f in client.frames if found(f)]):
            await asyncio.sleep(0.01)
    return picked[0]


@pytest.mark.parametrize("config", [pytest.param(ONE_SECOND_LEASE, id="lease 1 s")])
async def test_a_new_tables_write_that_reaches_redis_after_its_lease_ran_out_unclaimed_opens_it(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect
) -> None:
    """Redis slower than the lease (a store timeout longer than it): the new table's
    first write reaches Redis after its lease ran out there, nobody having taken it,
    and the renewal that would take it back comes later still. The write found the
    lease lost, and create_table answered table_moved, which it never does, for a
    table nobody had seen. The write waits for the renewal, and the table opens."""
    client = await connect_client()
    await hello(client, name="Ann")
    redis_slower_than_the_lease(store)
    ref = await client.send("create_table", options=HEADS_UP)
    answer = await told(client, lambda m: m.get("ref") == ref)
    assert answer["type"] == "table_created", answer
    table_id = answer["table"]["table_id"]
    assert await store.table(table_id) is not None
    assert table_id in server.lobby.tables
    joined = await served(client, "join_table", table_id=table_id, buy_in=300)
    assert joined["type"] == "table_joined"
    assert await chip_total(server) == 0


# -- letting a lease go ------------------------------------------------------------------


async def test_a_lease_a_stopping_server_fails_to_let_go_runs_out_and_the_table_lives_on(
    redis_url: str,
) -> None:
    """A server stops beside another and leaves its table to it, but the release of
    the table's lease fails: the lease runs out instead, the other adopts the table
    then, and Ann, back there, finds her seat and every chip."""
    config = FAST.model_copy(update={"lease": 1.0})
    async with beside_another(redis_url, config) as (faulty, here, there, _plain, clients):
        ann = Client(await connect(here.url))
        clients.append(ann)
        welcome = await hello(ann, name="Ann")
        created = await ann.reply("create_table", options=WAITING, buy_in=300)
        table_id = created["table"]["table_id"]
        await ann.expect("table_joined", table_id=table_id)
        fail_next(faulty, "release_table", count=10)
        await here.stop()
        await ann.closed()
        assert ann.connection.close_code == 1012
        assert faulty.calls["release_table"] >= 1, "asked, and failed"
        async with asyncio.timeout(WAIT):
            while table_id not in there.lobby.tables:
                await asyncio.sleep(0.05)
        back = Client(await connect(there.url))
        clients.append(back)
        assert (await hello(back, token=welcome["token"]))["tables"] == [table_id]
        snapshot = await back.expect("table_snapshot")
        assert [(s["name"], s["stack"]) for s in snapshot["table"]["seats"]] == [("Ann", 300)]
        assert await chip_total(there) == 0


@pytest.mark.parametrize("config", [pytest.param(ONE_SECOND_LEASE, id="lease 1 s")])
async def test_a_hands_end_that_reaches_redis_after_its_lease_ran_out_unclaimed_is_written(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect
) -> None:
    """The same with a hand's end: it found the lease lost, and the server gave its
    table up to nobody (its players sent away with 1012), for the hand to be voided
    wherever the table was adopted. The end waits for the renewal, and is written."""
    ann, bo = await connect_client(), await connect_client()
    table_id, hand_id, second = await at_the_last_turn(ann, bo)
    redis_slower_than_the_lease(store)
    await second.send("check", table_id=table_id, hand_id=hand_id)
    for client in (ann, bo):
        ended = await told(client, lambda m: m["type"] in ("hand_ended", "table_closed"))
        assert ended["type"] == "hand_ended", ended
        assert client.connection.close_code is None
    assert table_id in server.lobby.tables
    assert await chip_total(server) == 0
    assert not wrongly_told(ann, bo)


async def test_a_join_relayed_to_a_table_that_closed_meanwhile_is_unknown_table(
    redis_url: str,
) -> None:
    """Bo, on one process, asks to join Ann's table on the other as Ann, its last
    player, leaves. The relaying process read the table's host before the close was
    written, and the host, the table closed, answered ``table_moving`` ("send it
    again"), as if it had moved. It says ``unknown_table``, as it would to its own."""
    async with beside_another(redis_url, FAST) as (faulty, here, there, _plain, clients):
        ann, bo = Client(await connect(there.url)), Client(await connect(here.url))
        clients += [ann, bo]
        await hello(ann, name="Ann")
        created = await ann.reply("create_table", options=WAITING, buy_in=300)
        table_id = created["table"]["table_id"]
        await ann.expect("table_joined", table_id=table_id)
        await hello(bo, name="Bo")
        late = Fault("table_host", faulty.calls["table_host"] + 1, "late", stall=1.0)
        faulty.plan = FaultPlan((late,))
        joining = await bo.send("join_table", table_id=table_id, buy_in=100)
        assert (await ann.reply("leave_table", table_id=table_id))["type"] == "table_left"
        async with asyncio.timeout(WAIT):
            while table_id in there.lobby.tables:
                await asyncio.sleep(0.01)
        answer = await bo.wait(lambda m: m.get("ref") == joining)
        assert (answer["type"], answer.get("code")) == ("error", "unknown_table"), answer
        assert faulty.calls["table_host"] >= late.call, "the host was read, and told late"
        assert await chip_total(there) == 0
