"""Messages between the server processes that share a store.

:class:`Bus` is all the relay (:mod:`qiuqiu.server.relay`) needs: send a
message to one process, or to all, and be handed the messages sent to this
one. :class:`RedisBus` carries them over Redis pub/sub, on a connection of its
own; a store that lives in one process has no bus. Messages are JSON objects;
what each means is the relay's business.

Pub/sub reaches only those listening: a message to a process that has just
died is lost, and Redis says so (it counts the listeners it reached), which a
sender may ask to be told. Everything sent from one process goes out in order,
through one queue and one task.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any, Protocol

from redis.asyncio import Redis
from redis.exceptions import RedisError

from qiuqiu.server.redis_errors import never_sent, reachable

log = logging.getLogger(__name__)

ALL = "all"
"""The channel every process listens to, besides its own."""

STOP_PATIENCE = 2.0
"""Seconds :meth:`RedisBus.stop` waits for its tasks to end once cancelled."""

Outgoing = tuple[str, str, Callable[[], None] | None, Callable[[], None] | None]
"""A message queued: its channel, its JSON, and what to call if it is lost or unheard."""


def stopped_in(error: Exception) -> None:
    """Raise :class:`asyncio.CancelledError` if this task was cancelled while it met
    ``error``: a cancellation that reached redis-py in the middle of a call may come
    out as an error of Redis's, and a loop that took it for Redis being away would
    go on for ever, and the process with it, waiting on it as it stops."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError from error


class Bus(Protocol):
    owner: str
    """This process, as other processes address it."""

    async def start(
        self, receive: Callable[[dict[str, Any]], None], resumed: Callable[[], None]
    ) -> None:
        """Hand every message for this process (or for all) to ``receive``, in order;
        call ``resumed`` when it listens again after Redis was away (what was sent to
        it meanwhile is lost)."""

    def send(
        self,
        process: str,
        message: dict[str, Any],
        lost: Callable[[], None] | None = None,
        unheard: Callable[[], None] | None = None,
    ) -> None:
        """Queue ``message`` for ``process`` (:data:`ALL` for every one); never blocks.
        ``lost`` is called if it certainly never reached Redis (away), ``unheard`` if it
        was sent and no process listened (the process is gone, so nobody has it); one
        that may have reached Redis, its answer lost, is neither: its process may
        have it."""

    async def listening(self) -> int:
        """How many processes listen, this one included; 0 if that cannot be known."""

    async def stop(self) -> None:
        """Send what is queued (for a moment at most), then stop listening."""


class RedisBus:
    def __init__(self, redis: Redis, owner: str, prefix: str) -> None:
        self.owner = owner
        self._redis = redis
        self._prefix = prefix
        self._outbox: asyncio.Queue[Outgoing] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._pubsub = redis.pubsub()

    @reachable  # a Redis lost since the store's first call stops the start in one line
    async def start(
        self, receive: Callable[[dict[str, Any]], None], resumed: Callable[[], None]
    ) -> None:
        await self._pubsub.subscribe(self._channel(self.owner), self._channel(ALL))
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._listen(receive, resumed)),
            loop.create_task(self._publish()),
        ]

    def send(
        self,
        process: str,
        message: dict[str, Any],
        lost: Callable[[], None] | None = None,
        unheard: Callable[[], None] | None = None,
    ) -> None:
        self._outbox.put_nowait((self._channel(process), json.dumps(message), lost, unheard))

    async def listening(self) -> int:
        try:
            ((_, count),) = await self._redis.pubsub_numsub(self._channel(ALL))
        except RedisError:
            return 0
        return int(count)

    async def stop(self) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2):
                while not self._outbox.empty():
                    await asyncio.sleep(0.01)
        for task in self._tasks:
            task.cancel()
        # A read of a frozen Redis, which has no timeout here (a channel may be quiet for
        # ever), can outlive its cancellation inside redis-py; its socket closed, it ends.
        with contextlib.suppress(Exception):
            async with asyncio.timeout(STOP_PATIENCE):
                await self._redis.connection_pool.disconnect()
        await asyncio.wait(self._tasks, timeout=STOP_PATIENCE)
        with contextlib.suppress(Exception):
            await self._pubsub.aclose()  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated

    def _channel(self, process: str) -> str:
        return f"{self._prefix}process:{process}"

    async def _publish(self) -> None:
        failing = False
        while True:
            channel, payload, lost, unheard = await self._outbox.get()
            try:
                listeners = await self._redis.publish(channel, payload)
                if failing:
                    log.warning("publishing to other processes again")
                failing = False
            except Exception as error:
                stopped_in(error)
                if not failing:
                    log.warning("could not publish to other processes: %s", error)
                failing = True
                # Lost only if it never reached Redis: one whose answer alone was lost
                # may be in its process's hands, and a command said to be lost then
                # applied would be an error for something that happened.
                if lost is not None and never_sent(error):
                    lost()
                continue
            if listeners == 0 and unheard is not None:
                unheard()

    async def _listen(
        self, receive: Callable[[dict[str, Any]], None], resumed: Callable[[], None]
    ) -> None:
        failing = False
        while True:
            try:
                async for item in self._pubsub.listen():
                    if failing:
                        failing = False
                        log.warning("listening to other processes again")
                        resumed()
                    if item["type"] == "message":
                        receive(json.loads(item["data"]))
            except asyncio.CancelledError:
                raise
            except Exception as error:
                stopped_in(error)
                # The connection dropped: redis-py subscribes again on the next read.
                if not failing:
                    log.warning("listening to other processes failed: %s", error)
                failing = True
                await asyncio.sleep(0.5)
