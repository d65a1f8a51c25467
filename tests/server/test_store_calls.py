"""Each store call the server makes for a request, failed at that very moment, on real
Redis under a real server and real WebSocket clients: a named hello's new account, the
reads a request needs, a hello with a token, a spectator's leaving. A table's writes,
and the leases they need, are test_store_calls_writes.py.

test_faults.py fails every method of the Store Protocol at random moments of a
long scenario and checks what must hold whatever the moment (chips, no error
after an effect, play going on). Here each call is failed where a request or a
write needs it, and the test checks what the clients were told, what they hold
(seats, spectating, an allowance of new accounts) and what Redis holds:
``fail`` never reached Redis, so nothing changed; ``fail_after`` did (a lost
answer), so a write is retried, a new account found (its hello welcomed), and a new
table's lease let go.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from tests.server.conftest import FAST, WAIT, Client, chip_total
from tests.server.faulty_store import Fault, FaultPlan, FaultyStore, Mode
from tests.server.recorder import errors_after_effects, of_client, seq_regressions

Connect = Callable[[], Any]

HEADS_UP = {"seats": 2, "dealer_bot": False, "turn_seconds": 30}
"""No dealer bot, whose writes would take the calls a test means to fail."""

QUICK = FAST.model_copy(update={"lease": 1.5})
"""A store found away is found back within half a second (a third of the lease)."""

WAITING = {"seats": 3, "min_players": 3, "dealer_bot": False, "turn_seconds": 30}
"""Two seated wait for a third: no hand starts, so each write is the test's own."""


@pytest.fixture(name="store")
async def faulty_store(redis_url: str) -> AsyncIterator[FaultyStore]:
    store = await FaultyStore.open(redis_url, FaultPlan())
    yield store
    await store.close()


@pytest.fixture(name="config")
def quick_config() -> ServerConfig:
    return QUICK


@pytest.fixture(name="server")
async def server_on_faulty_store(
    store: FaultyStore, config: ServerConfig
) -> AsyncIterator[QiuQiuServer]:
    server = QiuQiuServer(config, store=store, rng=random.Random(2026))
    await server.start()
    yield server
    await server.stop()


def fail_next(
    store: FaultyStore, method: str, mode: Mode = "fail", count: int = 1, skip: int = 0
) -> None:
    """The next ``count`` calls of ``method`` (after ``skip`` good ones) fail so; it is
    the only fault planned."""
    store.plan = FaultPlan((Fault(method, store.calls[method] + 1 + skip, mode, count),))


async def hello(client: Client, **fields: Any) -> dict[str, Any]:
    return await client.reply("hello", version=PROTOCOL_VERSION, **fields)


async def served(client: Client, type: str, **fields: Any) -> dict[str, Any]:
    """The answer to ``type``, asked again while the store is found away (a refusal
    with ``store_unavailable`` lasts until the server sees it back)."""
    async with asyncio.timeout(WAIT):
        while True:
            answer = await client.reply(type, **fields)
            if answer.get("code") != "store_unavailable":
                return answer
            await asyncio.sleep(0.05)


async def balance(store: FaultyStore, account_id: str) -> int:
    account = await store.account(account_id)
    assert account is not None
    return account.balance


def wrongly_told(*clients: Client) -> list[str]:
    """What no client may be told: an error about a message that also had an effect,
    or a table's seq going back."""
    problems: list[str] = []
    for client in clients:
        frames = of_client(client.frames)
        problems += [f"error after effects: {e}" for e in errors_after_effects(frames)]
        problems += seq_regressions(frames)
    return problems


async def gone(server: QiuQiuServer, table_id: str) -> None:
    """Once the table has closed here (its close written)."""
    async with asyncio.timeout(WAIT):
        while table_id in server.lobby.tables:
            await asyncio.sleep(0.01)


async def keys(redis_url: str, pattern: str) -> list[str]:
    async with Redis.from_url(redis_url, decode_responses=True) as raw:
        return sorted(str(key) for key in await raw.keys(pattern))


# -- create_account: a named hello -------------------------------------------------------

TWO_ACCOUNTS = QUICK.model_copy(update={"new_accounts_per_address": 2})


@pytest.mark.parametrize("config", [pytest.param(TWO_ACCOUNTS, id="two accounts an hour")])
async def test_a_new_account_the_store_never_made_is_not_counted_against_the_address(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect
) -> None:
    """A named hello refused with ``store_unavailable`` made nothing, so it spends none
    of its address's allowance."""
    client = await connect_client()
    balances = await store.balances()
    fail_next(store, "create_account")
    assert (await hello(client, name="Ann"))["code"] == "store_unavailable"
    assert await store.balances() == balances, "nothing made"
    assert (await hello(client, name="Ann"))["type"] == "welcome"
    assert await chip_total(server) == 0


@pytest.mark.parametrize("config", [pytest.param(TWO_ACCOUNTS, id="two accounts an hour")])
async def test_a_new_account_whose_answer_was_lost_is_welcomed_not_refused(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect
) -> None:
    """Bo's account is written but the answer lost (Redis went silent as it ran the
    script). It exists, with its chips, and only his hello holds its token: he is
    welcomed to it once the store answers, not told that nothing changed, and it
    counts against the address. Before, he got store_unavailable, and the account
    was left in Redis with nobody able to open it."""
    balances = await store.balances()
    bo = await connect_client()
    fail_next(store, "create_account", "fail_after")
    welcome = await hello(bo, name="Bo")
    assert welcome["type"] == "welcome", welcome
    assert len(await store.balances()) == len(balances) + 1, "Bo's account was made once"
    assert await balance(store, welcome["account_id"]) == TWO_ACCOUNTS.starting_balance
    back = await connect_client()
    resumed = await hello(back, token=welcome["token"])
    assert resumed["account_id"] == welcome["account_id"]
    assert (await hello(await connect_client(), name="Cy"))["type"] == "welcome"
    assert (await hello(await connect_client(), name="Di"))["code"] == "too_many_accounts"
    assert await chip_total(server) == 0


@pytest.mark.parametrize("method", ["claim_connection", "seated_tables", "account"])
async def test_a_new_account_whose_arrival_the_store_failed_is_welcomed_not_refused(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect, method: str
) -> None:
    """Bo's account is made, then a read his welcome needs fails: only this hello holds
    the new account's token, so the reads are made again until the store answers and he
    is welcomed. Before, he was told store_unavailable, "nothing changed", and the
    account was left in Redis, its chips with it, for nobody."""
    balances = await store.balances()
    bo = await connect_client()
    fail_next(store, method, count=3)
    welcome = await hello(bo, name="Bo")
    assert welcome["type"] == "welcome", welcome
    assert len(await store.balances()) == len(balances) + 1, "Bo's account was made once"
    resumed = await hello(await connect_client(), token=welcome["token"])
    assert resumed["account_id"] == welcome["account_id"]
    assert await chip_total(server) == 0


SHORT_HELLO = QUICK.model_copy(update={"hello_timeout": 1.0})


@pytest.mark.parametrize("config", [pytest.param(SHORT_HELLO, id="a hello within 1 s")])
async def test_a_new_account_is_welcomed_past_the_hellos_deadline_if_the_store_takes_that_long(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect
) -> None:
    """The reads after Bo's account is made fail for longer than a hello may take (1.55
    s of pauses between 7 tries): the deadline is for a client that says nothing, not
    for a store that answers slowly, and closing him would leave the account unowned."""
    bo = await connect_client()
    fail_next(store, "account", count=6)
    welcome = await hello(bo, name="Bo")
    assert welcome["type"] == "welcome", welcome
    assert (await hello(await connect_client(), token=welcome["token"]))["type"] == "welcome"


ONE_ACCOUNT = QUICK.model_copy(update={"new_accounts_per_address": 1})


@pytest.mark.parametrize("config", [pytest.param(ONE_ACCOUNT, id="one account an hour")])
async def test_a_named_hello_refused_before_the_store_is_not_counted_against_the_address(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    assert (await hello(client, name="dealer"))["code"] == "reserved_name"
    assert (await hello(client, name="Ann"))["type"] == "welcome"


# -- a request's own reads, and the lease a new table takes --------------------------------


async def test_a_read_a_request_needs_refuses_it_and_changes_nothing(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect, redis_url: str
) -> None:
    """Each read (and the new table's lease) failed at the request that needs it: the
    request is refused with ``store_unavailable``, nothing is made, and the same request
    is served once the store answers. A lease taken whose answer was lost is let go."""
    client = await connect_client()
    await hello(client, name="Ann")
    requests: list[tuple[str, Mode, str, dict[str, Any], str]] = [
        ("tables", "fail", "list_tables", {}, "table_list"),
        ("account_hands", "fail", "list_hands", {}, "hand_list"),
        ("table_hands", "fail", "list_hands", {"table_id": "tnothere"}, "unknown_table"),
        ("table", "fail", "list_hands", {"table_id": "tnothere"}, "unknown_table"),
        (
            "table_host",
            "fail",
            "join_table",
            {"table_id": "tnothere", "buy_in": 100},
            "unknown_table",
        ),
        ("account", "fail", "create_table", {"options": HEADS_UP, "buy_in": 100}, ""),
        ("seated_tables", "fail", "create_table", {"options": HEADS_UP, "buy_in": 100}, ""),
        ("acquire_table", "fail", "create_table", {"options": HEADS_UP}, ""),
        ("acquire_table", "fail_after", "create_table", {"options": HEADS_UP}, ""),
    ]
    for method, mode, type, fields, then in requests:
        before = (await store.balances(), await store.tables(), set(server.lobby.tables))
        fail_next(store, method, mode)
        refused = await client.reply(type, **fields)
        assert refused["code"] == "store_unavailable", (method, refused)
        after = (await store.balances(), await store.tables(), set(server.lobby.tables))
        assert after == before, f"a failed {method} changed something"
        leased = {k.removeprefix("qiuqiu:lease:") for k in await keys(redis_url, "qiuqiu:lease:*")}
        assert leased <= set(server.lobby.tables), f"a failed {method} left a lease behind"
        answer = await served(client, type, **fields)
        if then:
            assert answer.get("code", answer["type"]) == then, (method, answer)
        else:
            assert answer["type"] == "table_created", (method, answer)
            table_id = answer["table"]["table_id"]
            if "buy_in" in fields:  # she leaves, and the table closes before the next
                await client.expect("table_joined", table_id=table_id)
                await client.send("leave_table", table_id=table_id)
                await client.expect("table_left", table_id=table_id)
                await gone(server, table_id)
    assert await chip_total(server) == 0
    assert not wrongly_told(client)


# -- a hello with a token: its account, its claim on the connection, its tables ------------


async def test_a_hello_whose_store_call_fails_is_refused_and_leaves_the_seat_where_it_was(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect
) -> None:
    """Ann comes back on a new connection while her first still plays. Each call her
    hello makes, failed, refuses it: her seat stays with the first connection, which
    stays open, until a hello gets through and takes both over."""
    first = await connect_client()
    welcome = await hello(first, name="Ann")
    created = await first.reply("create_table", options=HEADS_UP, buy_in=300)
    table_id = created["table"]["table_id"]
    await first.expect("table_joined", table_id=table_id)
    table = server.lobby.tables[table_id]
    second = await connect_client()
    calls: tuple[tuple[str, Mode], ...] = (
        ("account_for_token", "fail"),
        ("claim_connection", "fail"),
        ("claim_connection", "fail_after"),
        ("seated_tables", "fail"),
    )
    for method, mode in calls:
        fail_next(store, method, mode)
        refused = await hello(second, token=welcome["token"])
        assert refused["code"] == "store_unavailable", (method, mode, refused)
        seat = table.seat_of(welcome["account_id"])
        assert seat is not None
        assert seat.connected
        assert first.connection.close_code is None, f"a failed {method} closed the first"
    back = await served(second, "hello", version=PROTOCOL_VERSION, token=welcome["token"])
    assert back["tables"] == [table_id]
    await first.closed()
    assert first.connection.close_code == 4000
    assert await store.seated_tables(welcome["account_id"]) == (table_id,)
    assert await chip_total(server) == 0
    assert not wrongly_told(first, second)


# -- a spectator's leaving: its balance read -------------------------------------------------

ONE_SPECTATOR = QUICK.model_copy(update={"max_spectators": 1})


@pytest.mark.parametrize("config", [pytest.param(ONE_SPECTATOR, id="one spectator a table")])
async def test_a_spectator_whose_leaving_meets_the_store_away_still_watches(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect
) -> None:
    """Leaving reads the balance it answers with: failed, the spectator is refused, still
    watches and still takes the table's one place, until it leaves for good."""
    host, dee, eve = [await connect_client() for _ in range(3)]
    for client, name in ((host, "Host"), (dee, "Dee"), (eve, "Eve")):
        await hello(client, name=name)
    table_id = (await host.reply("create_table", options=WAITING))["table"]["table_id"]
    assert (await dee.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    errors = server.metrics.errors.labels("store_unavailable")
    counted = errors._value.get()
    fail_next(store, "account")
    refused = await dee.reply("leave_table", table_id=table_id)
    assert refused["code"] == "store_unavailable"
    assert errors._value.get() == counted + 1, "counted as every refusal is"
    assert (await eve.reply("watch_table", table_id=table_id))["code"] == "too_many_spectators"
    await served(host, "join_table", table_id=table_id, buy_in=100)
    await dee.expect("player_seated", table_id=table_id)
    left = await served(dee, "leave_table", table_id=table_id)
    assert left["type"] == "table_left"
    assert (await eve.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    assert not wrongly_told(host, dee, eve)
