"""Each store call the server makes for a request, failed at that very request, on
real Redis under a real server and real WebSocket clients.

test_faults.py fails every method of the Store Protocol at random moments of a
long scenario and checks what must hold whatever the moment (chips, no error
after an effect, play going on). Here each call is failed where a request needs
it, and the test checks what that request's client was told, what it holds
(seats, spectating, its allowance of new accounts) and what Redis holds:
``fail`` never reached Redis, so nothing changed; ``fail_after`` did (a lost
answer), so a write is retried or, for a request's own write, refused with what
it made kept whole.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from tests.server.conftest import FAST, Client, chip_total
from tests.server.faulty_store import Fault, FaultPlan, FaultyStore, Mode

Connect = Callable[[], Any]

HEADS_UP = {"seats": 2, "dealer_bot": False, "turn_seconds": 30}
"""No dealer bot, whose writes would take the calls a test means to fail."""


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[FaultyStore]:
    store = await FaultyStore.open(redis_url, FaultPlan())
    yield store
    await store.close()


@pytest.fixture
async def server(store: FaultyStore, config: ServerConfig) -> AsyncIterator[QiuQiuServer]:
    server = QiuQiuServer(config, store=store, rng=random.Random(2026))
    await server.start()
    yield server
    await server.stop()


def fail_next(store: FaultyStore, method: str, mode: Mode = "fail", count: int = 1) -> None:
    """The next ``count`` calls of ``method`` fail so (each the only fault planned)."""
    store.plan = FaultPlan((Fault(method, store.calls[method] + 1, mode, count),))


async def hello(client: Client, **fields: Any) -> dict[str, Any]:
    return await client.reply("hello", version=PROTOCOL_VERSION, **fields)


# -- create_account: a named hello -------------------------------------------------------

TWO_ACCOUNTS = FAST.model_copy(update={"new_accounts_per_address": 2})


@pytest.mark.parametrize("config", [pytest.param(TWO_ACCOUNTS, id="two accounts an hour")])
async def test_a_new_account_the_store_never_made_is_not_counted_against_the_address(
    server: QiuQiuServer, store: FaultyStore, connect_client: Connect
) -> None:
    """A named hello refused with ``store_unavailable`` made nothing, so it spends none
    of its address's allowance; one whose answer alone was lost made the account, which
    counts."""
    client = await connect_client()
    balances = await store.balances()
    fail_next(store, "create_account")
    assert (await hello(client, name="Ann"))["code"] == "store_unavailable"
    assert await store.balances() == balances, "nothing made"
    assert (await hello(client, name="Ann"))["type"] == "welcome"

    other = await connect_client()
    fail_next(store, "create_account", "fail_after")
    assert (await hello(other, name="Bo"))["code"] == "store_unavailable"
    assert len(await store.balances()) == len(balances) + 2, "Bo's account was made"
    assert (await hello(other, name="Bo"))["code"] == "too_many_accounts"
    assert await chip_total(server) == 0


ONE_ACCOUNT = FAST.model_copy(update={"new_accounts_per_address": 1})


@pytest.mark.parametrize("config", [pytest.param(ONE_ACCOUNT, id="one account an hour")])
async def test_a_named_hello_refused_before_the_store_is_not_counted_against_the_address(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    assert (await hello(client, name="dealer"))["code"] == "reserved_name"
    assert (await hello(client, name="Ann"))["type"] == "welcome"
