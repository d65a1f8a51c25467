"""The Redis clients a :class:`~qiuqiu.server.redis_store.RedisStore` talks through:
each call with a timeout, each round trip counted, and no handshake Redis 6.2 refuses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from redis.asyncio import BlockingConnectionPool, ConnectionPool, Redis
from redis.connection import parse_url
from redis.exceptions import RedisError
from redis.maint_notifications import MaintNotificationsConfig

QUIET: dict[str, Any] = {
    "driver_info": None,
    "maint_notifications_config": MaintNotificationsConfig(enabled=False),
}
"""Neither CLIENT SETINFO nor CLIENT MAINT_NOTIFICATIONS on each new connection:
older Redis (the 6.2 the scripts are written for among them) refuses both, and
each refusal, like the package version looked up for the first, leaves reference
cycles that only a full collection frees, for round trips the store has no use for."""


class CountedRedis(Redis):
    """A client that counts its round trips: each command, and each script run, is one
    request sent and its answer waited for (the store's batches count their own)."""

    round_trips = 0

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        self.round_trips += 1
        return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


def address(given: Mapping[str, Any]) -> str:
    """Where a Redis client's arguments point, ``host:port/db`` or ``path/db``, with
    Redis's own defaults for what they leave out, and never a password."""
    where = given.get("path") or f"{given.get('host', 'localhost')}:{given.get('port', 6379)}"
    return f"{where}/{given.get('db', 0)}"


def url_address(url: str) -> str:
    """:func:`address` of the Redis ``url`` names."""
    return address(parse_url(url))  # type: ignore[no-untyped-call]


def clients(url: str, timeout: float) -> tuple[Redis, Redis, Redis]:
    """Three clients of ``url``: a pool for the store's calls, one connection of its own
    for lease renewals (so that a renewal never queues behind table writes), and one
    for the channels between processes, which may stay quiet as long as it likes."""
    limits: dict[str, Any] = {
        "decode_responses": True,
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        # A burst of callers beyond the pool's connections waits for one, not fails.
        "timeout": timeout,
        **QUIET,
    }
    pool = BlockingConnectionPool.from_url(url, **limits)
    leases = BlockingConnectionPool.from_url(url, max_connections=1, **limits)
    channels = CountedRedis.from_url(
        url, decode_responses=True, socket_connect_timeout=timeout, **QUIET
    )
    return CountedRedis.from_pool(pool), CountedRedis.from_pool(leases), channels


async def password_unchecked(url: str, timeout: float) -> bool:
    """Whether the password in ``url`` is one Redis takes without checking it: a
    Redis without a password accepts any in the handshake redis-py sends (HELLO 3
    AUTH default ...), so only a connection without it tells. A user other than
    ``default`` has its password checked whatever the default user needs."""
    pool = ConnectionPool.from_url(url, socket_timeout=timeout, **QUIET)
    given = pool.connection_kwargs
    if not given.get("password") or given.get("username") not in (None, "default"):
        await pool.disconnect()
        return False
    del given["password"]
    given.pop("username", None)
    async with Redis.from_pool(pool) as bare:
        try:
            await bare.ping()
        except RedisError:  # NOAUTH: it does need the password; or it cannot tell
            return False
    return True


def reply_text(reply: bytes | str | None) -> str:
    """A reply as the clients give it: text, since they decode every reply
    (``decode_responses``), which their types do not know."""
    assert isinstance(reply, str), reply
    return reply
