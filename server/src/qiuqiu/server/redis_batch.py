"""Script runs asked for in one turn of the event loop, sent to Redis as one pipeline.

A table's commit is one script run (:mod:`qiuqiu.server.redis_scripts`). Sent
alone, each pays redis-py's whole cost of a command: a connection from the
pool and its checks, a write, a read. A server with a hundred tables ends many
hands in the same turn of its loop, so :class:`ScriptBatch` holds each run
asked for until the loop's next turn and sends all of them as one pipeline,
outside any transaction: one connection, one write, one read.

What a run does is unchanged. Each is still its own script, atomic by itself,
and its reply or its error is its own. Runs are not ordered between callers,
as they were not before: a table has one write in flight at a time
(docs/ARCHITECTURE.md, "Commit points"). A pipeline that fails (Redis away, a
timeout) fails every run in it with the same error, which may have reached
Redis or not, as a single command's could. A run Redis does not know the
script of (``NOSCRIPT``: Redis restarted and lost its script cache) did
nothing: the script is loaded, and those runs are sent again, in their order.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from typing import Any, NamedTuple

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError


class Run(NamedTuple):
    """One script run asked for, and where its reply goes."""

    script: AsyncScript
    keys: Sequence[Any]
    args: Sequence[Any]
    answer: asyncio.Future[Any]


class ScriptBatch:
    """Runs ``script``s through ``redis``, a pipeline a turn of the loop."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._waiting: list[Run] = []
        self._sending: set[asyncio.Task[None]] = set()
        self.round_trips = 0
        """Pipelines sent so far (a script loaded again counts where ``redis`` counts)."""

    async def run(self, script: AsyncScript, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        """What ``script`` answers for ``keys`` and ``args``, or the error it raised."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if not self._waiting:
            # A task runs at the loop's next turn, after what this turn has still to do.
            task = asyncio.create_task(self._send())
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)
        self._waiting.append(Run(script, keys, args, future))
        return await future

    async def close(self) -> None:
        """Stop the pipelines in flight; their runs fail as a lost connection's would."""
        for task in list(self._sending):
            task.cancel()
        await asyncio.gather(*self._sending, return_exceptions=True)

    async def _send(self) -> None:
        # A run whose caller gave up before it was sent is left out: it never was.
        runs = [run for run in self._waiting if not run.answer.done()]
        self._waiting = []
        try:
            for last in (False, True):
                if not runs:
                    return
                runs = await self._pipeline(runs, last)
        except BaseException as error:
            # Whatever went wrong, no caller is left waiting.
            for run in runs:
                if not run.answer.done():
                    run.answer.set_exception(_copy(error))
            if isinstance(error, asyncio.CancelledError):
                raise

    async def _pipeline(self, runs: list[Run], last: bool) -> list[Run]:
        """Send ``runs``, answer each, and give back those to send again: the ones
        whose script Redis did not know, once it has been loaded (unless ``last``)."""
        pipeline = self._redis.pipeline(transaction=False)
        for run in runs:
            pipeline.evalsha(run.script.sha, len(run.keys), *run.keys, *run.args)
        self.round_trips += 1
        replies = await pipeline.execute(raise_on_error=False)
        forgotten: list[Run] = []
        for run, reply in zip(runs, replies, strict=True):
            if run.answer.done():
                continue
            if isinstance(reply, NoScriptError) and not last:
                forgotten.append(run)
            elif isinstance(reply, BaseException):
                run.answer.set_exception(reply)
            else:
                run.answer.set_result(reply)
        for script in {run.script.sha: run.script for run in forgotten}.values():
            await self._redis.script_load(script.script)
        return forgotten


def _copy(error: BaseException) -> BaseException:
    """An exception of its own for each run: one instance raised in several tasks
    would gather every task's traceback."""
    if isinstance(error, asyncio.CancelledError):
        return RedisConnectionError("the store closed with the command in flight")
    try:
        return copy.copy(error)
    except Exception:
        return error
