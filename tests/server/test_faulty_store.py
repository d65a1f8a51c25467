"""The fault-injection harness itself, on the test's Redis: each fault does what it
says, and every method of the Store Protocol goes through it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from qiuqiu.server.errors import StoreUnavailable
from tests.server.faulty_store import Fault, FaultPlan, FaultyStore, Journal, store_methods


async def test_every_store_method_is_counted_once_per_call_from_outside(
    redis_url: str, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.jsonl"
    store = await FaultyStore.open(redis_url, FaultPlan(), journal)
    try:
        assert set(store_methods()) <= set(vars(store)), "each method wrapped on the store"
        await store.create_account("a1", "Ann", "hash", 100)
        # account_for_token reads the account through account(): that call is the store's.
        assert await store.account_for_token("hash") is not None
        assert (store.calls["account_for_token"], store.calls["account"]) == (1, 0)
        assert Journal.read(journal).called == {"create_account", "account_for_token"}
    finally:
        await store.close()


async def test_fail_changes_nothing_and_fail_after_changes_everything(redis_url: str) -> None:
    plan = FaultPlan((Fault("create_account", 1, "fail"), Fault("create_account", 2, "fail_after")))
    store = await FaultyStore.open(redis_url, plan)
    try:
        with pytest.raises(StoreUnavailable):
            await store.create_account("a1", "Ann", "h1", 100)
        assert await store.account("a1") is None
        with pytest.raises(StoreUnavailable):
            await store.create_account("a2", "Bo", "h2", 100)
        assert await store.account("a2") is not None
        await store.create_account("a3", "Cy", "h3", 100)
        assert sum((await store.balances()).values()) == 0
    finally:
        await store.close()


async def test_a_run_of_faults_ends_and_a_stall_calls_redis_at_last(
    redis_url: str, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.jsonl"
    plan = FaultPlan((Fault("ping", 2, "fail", count=2), Fault("tables", 1, "stall", stall=30)))
    store = await FaultyStore.open(redis_url, plan, journal)
    try:
        await store.ping()
        for _ in range(2):
            with pytest.raises(StoreUnavailable):
                await store.ping()
        await store.ping()
        stalled = asyncio.create_task(store.tables())
        await asyncio.sleep(0.2)
        assert not stalled.done()
        assert not Journal.read(journal).all_over
        stalled.cancel()
        await asyncio.gather(stalled, return_exceptions=True)
        assert Journal.read(journal).all_over
    finally:
        await store.close()


def test_a_plan_names_only_methods_of_the_store_protocol() -> None:
    with pytest.raises(ValueError, match="no method"):
        Fault("move_chips", 1, "fail")  # a method the Protocol does not have
    plan = FaultPlan((Fault("commit", 3, "stall", count=2, stall=1.5),))
    assert FaultPlan.from_json(plan.to_json()) == plan


async def test_the_outage_switch_fails_every_call_or_every_other_one(
    redis_url: str, tmp_path: Path
) -> None:
    outage = tmp_path / "outage"
    store = await FaultyStore.open(redis_url, FaultPlan(), outage=outage)
    try:
        await store.ping()
        outage.write_text("down")
        for _ in range(3):
            with pytest.raises(StoreUnavailable):
                await store.ping()
        outage.write_text("flap")
        failed = []
        for _ in range(4):
            try:
                await store.ping()
                failed.append(False)
            except StoreUnavailable:
                failed.append(True)
        assert failed == [True, False, True, False]
        outage.unlink()
        await store.ping()
    finally:
        await store.close()
