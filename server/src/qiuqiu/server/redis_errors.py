"""Which of Redis's errors are an outage: the store's trouble, answered as a state
(:class:`~qiuqiu.server.errors.StoreUnavailable`), never as a bug with a traceback.

Out of reach, or too slow to answer, is one. So is a Redis that answers but
refuses every write for a while: full (``maxmemory`` under ``noeviction``, its
default), unable to save its snapshot (``MISCONF``), a replica (``READONLY``), a
primary without its replicas (``NOREPLICAS``, ``MASTERDOWN``), or busy with a
script (``BUSY``). Such a refusal comes before anything is written, even inside
one of the store's scripts: Redis refuses a script at its first write or not at
all, so that a script stays whole. So the call is ``unsent``, as when Redis could
not be reached.

At start, what waiting will not mend is the operator's to fix, and stops the
server (:class:`~qiuqiu.server.errors.StoreRefused`): a database Redis does not
have, a password missing or refused, something else than Redis on that port, or
a Redis that deletes accounts to make room when full.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

from redis.asyncio import Redis
from redis.exceptions import (
    AuthenticationError,
    InvalidResponse,
    MasterDownError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from qiuqiu.server.errors import StoreRefused, StoreUnavailable

REFUSING_WRITES = re.compile(r"(?:^|-)(?:OOM|MISCONF|READONLY|NOREPLICAS|MASTERDOWN|BUSY) ")
"""The codes of Redis's refusals of a write for what state Redis is in, at the start
of its answer or, from inside a script, after the script's name (``... -OOM ...``)."""

NAMED = (OutOfMemoryError, ReadOnlyError, MasterDownError)
"""The refusals redis-py gives a class of their own, taking their code off the text."""

S = TypeVar("S")
P = ParamSpec("P")
T = TypeVar("T")


def refusing_writes(error: ResponseError) -> bool:
    return isinstance(error, NAMED) or REFUSING_WRITES.search(str(error)) is not None


def never_sent(error: BaseException) -> bool:
    """Whether a call that failed with ``error`` certainly never reached Redis: redis-py
    says "Error N connecting to host:port" when it could not connect, and a refusal is
    Redis's own answer. Anything else may have reached Redis, and only its answer was
    lost (a connection cut mid-reply, a Redis slower than the timeout)."""
    if isinstance(error, ResponseError):
        return True
    return isinstance(error, RedisConnectionError) and " connecting to " in str(error)


def reachable(
    method: Callable[Concatenate[S, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
    """Redis out of reach, too slow to answer, or refusing writes is
    :class:`StoreUnavailable`, which the server answers with an error code or, for a
    table's commit, a retry."""

    async def reaching(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await method(self, *args, **kwargs)
        except (RedisConnectionError, RedisTimeoutError, TimeoutError, InvalidResponse) as error:
            text = str(error) or type(error).__name__
            raise StoreUnavailable(text, unsent=never_sent(error)) from error
        except ResponseError as error:
            if not refusing_writes(error):
                raise
            code = getattr(error, "status_code", None)
            text = f"{code} {error}" if isinstance(error, NAMED) and code else str(error)
            raise StoreUnavailable(text, unsent=True) from error

    return reaching


async def refuse_evicting(redis: Redis) -> None:
    """Raise :class:`StoreRefused` if Redis, when full, deletes keys that never expire:
    accounts, and their chips, among them."""
    try:
        policy = str((await redis.info("memory")).get("maxmemory_policy", ""))
    except ResponseError:  # INFO is not for this user: nothing to go by
        return
    if policy.startswith("allkeys-"):
        raise StoreRefused(
            f"Redis refused it: its maxmemory-policy {policy} deletes accounts, "
            "and their chips, when Redis is full: set it to noeviction"
        )


def refused_at_start(
    error: ResponseError | AuthenticationError | InvalidResponse, password: bool
) -> StoreRefused:
    """What the operator is told, at start, of an error that waiting will not mend."""
    if isinstance(error, InvalidResponse):  # an HTTP server or a proxy on that port, say
        return StoreRefused(f"what answers there is not Redis: {error}")
    if isinstance(error, AuthenticationError):
        # Redis's own words for a missing password talk of HELLO, which says nothing
        # to whoever runs the server.
        if not password:
            return StoreRefused(
                "Redis refused it: no password: put it in the URL, redis://:PASSWORD@host:port/db"
            )
        return StoreRefused(f"Redis refused it: the URL's user or password: {error}")
    return StoreRefused(f"Redis refused it: {error}")
