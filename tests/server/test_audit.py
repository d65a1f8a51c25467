"""``python -m qiuqiu.server.audit``, as an operator runs it against a real Redis: every
chip accounted for, or a line saying by how much not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from redis.asyncio import Redis

from qiuqiu.protocol import MAX_BALANCE
from qiuqiu.server.accounts import token_hash
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import TableRecord
from tests.server.processes import PASSWORDS_REFUSED, redis_asking_a_password
from tests.server.store_helpers import GRANT, OPTIONS, buy_in, seat


def audited(*args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "qiuqiu.server.audit", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout, done.stderr


async def test_the_audit_sums_balances_and_stacks_and_says_when_a_chip_is_missing(
    redis_store: RedisStore, redis_url: str
) -> None:
    for account_id in ("ann", "bob"):
        await redis_store.create_account(account_id, account_id, token_hash(account_id), GRANT)
    assert await redis_store.acquire_table("t1", 60)
    await redis_store.commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "ann", 400)))
    assert audited("--redis-url", redis_url) == (
        0,
        "balances -400, stacks +400 (tables: 1, accounts: 3), sum +0: every chip accounted for\n",
        "",
    )
    async with Redis.from_url(redis_url) as raw:
        await raw.hincrby("qiuqiu:account:bob", "balance", -5)
    status, out, err = audited("--redis-url", redis_url)
    assert (status, out) == (1, "")
    assert err == (
        "balances -405, stacks +400 (tables: 1, accounts: 3), sum -5: chips were made or lost\n"
    )


async def test_the_audit_sums_balances_near_the_most_one_holds_to_the_chip(
    redis_store: RedisStore, redis_url: str
) -> None:
    """The house's balance is minus every grant: past 2^53 here, where a double rounds."""
    grants = {"ann": MAX_BALANCE, "bob": MAX_BALANCE - 2, "cara": 1}
    for account_id, grant in grants.items():
        await redis_store.create_account(account_id, account_id, token_hash(account_id), grant)
    assert await redis_store.acquire_table("t1", 60)
    await redis_store.commit(buy_in(TableRecord("t1", OPTIONS), seat(0, "cara", 1)))
    assert audited("--redis-url", redis_url) == (
        0,
        "balances -1, stacks +1 (tables: 1, accounts: 4), sum +0: every chip accounted for\n",
        "",
    )


def test_a_url_that_does_not_fit_or_a_redis_out_of_reach_is_one_line_and_status_2() -> None:
    status, _, err = audited("--redis-url", "redis://:hunter2@localhost/abc")
    assert status == 2
    assert err.splitlines()[-1].endswith("the database after the host is a number, not 'abc'")
    assert "hunter2" not in err
    status, _, err = audited("--redis-url", "redis://:hunter2@127.0.0.1:1/0")
    assert status == 2
    assert err.startswith("python -m qiuqiu.server.audit: cannot read Redis:")
    assert "hunter2" not in err


@pytest.mark.parametrize(("password", "said"), PASSWORDS_REFUSED)
async def test_a_redis_that_refuses_the_password_says_so_as_the_server_does(
    tmp_path: Path, password: str, said: str
) -> None:
    # A missing password was Redis's own words about HELLO, which name no password.
    async with redis_asking_a_password(tmp_path) as port:
        status, out, err = audited("--redis-url", f"redis://{password}127.0.0.1:{port}/0")
    assert (status, out) == (2, "")
    prefix = "python -m qiuqiu.server.audit: cannot read Redis: Redis refused it: "
    assert err.startswith(prefix + said)
    assert "hunter2" not in err


def test_a_prefix_of_the_flag_is_refused_not_taken_for_it() -> None:
    status, _, err = audited("--redis", "redis://127.0.0.1:1/0")
    assert status == 2
    assert "unrecognized arguments: --redis" in err


def test_the_help_is_plain_text_saying_what_the_audit_checks() -> None:
    status, out, _ = audited("--help")
    assert status == 0
    assert "`" not in out, "reStructuredText markup, not text"
    words = " ".join(out.split())  # as wrapped to the terminal's width
    assert "Check that every chip in a Redis is accounted for" in words
    assert "Exit status 0 when the sum is zero, 1 when it is not" in words
