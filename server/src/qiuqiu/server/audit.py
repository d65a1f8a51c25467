"""``python -m qiuqiu.server.audit``: whether every chip in a Redis is accounted for.

Every balance (the house's below zero: it granted the others theirs) plus every
stack at every table sums to zero while no chip was made or lost. Read in one
Lua script, so it may run beside live servers. Exit status 0 when the sum is
zero, 1 when it is not, 2 for a URL that does not fit or a Redis it cannot read.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from redis.asyncio import Redis
from redis.asyncio.connection import parse_url
from redis.exceptions import AuthenticationError, InvalidResponse, RedisError

from qiuqiu.server import redis_scripts as scripts
from qiuqiu.server.config import redis_address, secret_hidden
from qiuqiu.server.redis_errors import refused_at_start
from qiuqiu.server.redis_store import PREFIX


async def audit(url: str, prefix: str = PREFIX) -> tuple[int, int, int, int]:
    """Every balance summed, every stack summed, how many accounts and tables."""
    async with Redis.from_url(url, decode_responses=True) as redis:
        keys = [f"{prefix}accounts", f"{prefix}tables"]
        found = await redis.eval(
            scripts.AUDIT, len(keys), *keys, f"{prefix}account:", f"{prefix}table:"
        )
    balances, stacks = sum(map(int, found[0])), sum(map(int, found[1]))
    return balances, stacks, int(found[2]), int(found[3])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m qiuqiu.server.audit",
        # Written out, not the docstring: its markup is for readers of the code.
        description="Check that every chip in a Redis is accounted for: every balance (the "
        "house's below zero) plus every stack at every table must sum to zero. It reads "
        "them all at one instant, so it may run beside live servers.",
        epilog="Exit status 0 when the sum is zero, 1 when it is not, 2 for a URL that does "
        "not fit or a Redis it cannot read.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("QIUQIU_REDIS_URL"),
        help="the Redis the servers use (default $QIUQIU_REDIS_URL)",
    )
    args = parser.parse_args(argv)
    if args.redis_url is None:
        parser.error("--redis-url (or QIUQIU_REDIS_URL) is needed")
    try:
        redis_address(args.redis_url)
    except ValueError as invalid:
        parser.error(f"--redis-url {secret_hidden(args.redis_url)!r}: {invalid}")
    try:
        balances, stacks, accounts, tables = asyncio.run(audit(args.redis_url))
    except (AuthenticationError, InvalidResponse) as refused:
        # In the server's words: Redis's own, for a missing password, talk of HELLO.
        password = bool(parse_url(args.redis_url).get("password"))  # unix://...?password= too
        print(
            f"{parser.prog}: cannot read Redis: {refused_at_start(refused, password)}",
            file=sys.stderr,
        )
        return 2
    except RedisError as unread:  # its words name the host and port, not a password
        print(f"{parser.prog}: cannot read Redis: {unread}", file=sys.stderr)
        return 2
    said = (
        f"balances {balances:+,}, stacks {stacks:+,} (tables: {tables}, accounts: {accounts}), "
        f"sum {balances + stacks:+,}"
    )
    if balances + stacks:
        print(f"{said}: chips were made or lost", file=sys.stderr)
        return 1
    print(f"{said}: every chip accounted for")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
