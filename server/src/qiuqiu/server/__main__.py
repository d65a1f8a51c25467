"""``qiuqiu-server``: serve QiuQiu over WebSocket until SIGTERM or Ctrl-C, keeping
accounts, tables and hands in memory or, given ``--redis-url``, in Redis."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import signal
import socket
import sys
from collections.abc import Sequence

from qiuqiu.server import collector, logs, loops
from qiuqiu.server.config import ServerConfig, parse_config, unknown_variables
from qiuqiu.server.errors import StoreRefused, StoreUnavailable, StrategiesUnreadable
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.redis_clients import password_unchecked, url_address
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import Store

log = logging.getLogger("qiuqiu.server")


LEFTOVER_PATIENCE = 2.0
"""Seconds the tasks still alive once the server has stopped get to end when cancelled."""


async def run(config: ServerConfig) -> None:
    await _run(config)
    stubborn = await loops.end_other_tasks(LEFTOVER_PATIENCE)
    if stubborn:
        # The stop is done and its deadline kept: a task that will not end (a bug) must
        # not keep the process alive past it, as asyncio's runner would, for ever.
        log.warning(
            "%d tasks did not end when cancelled; exiting without them: %s",
            len(stubborn),
            "; ".join(stubborn),
            extra={"tasks": stubborn},
        )
        logging.shutdown()
        os._exit(0)


async def _run(config: ServerConfig) -> None:
    if config.redis_url is None:
        await serve(config, MemoryStore())
        return
    store = await RedisStore.from_url(config.redis_url, timeout=config.store_timeout)
    if await password_unchecked(config.redis_url, config.store_timeout):
        # Redis takes any password when it has none, so the store's connection, made
        # with the URL's, said nothing: an operator would believe Redis protected.
        log.warning(
            "the password in --redis-url is not checked: Redis at %s has none, so it "
            "takes any, and anyone who can reach it can use it without one; give Redis "
            "that password (requirepass) or take it out of the URL",
            store.where.removeprefix("in Redis at "),
        )
    try:
        await serve(config, store)
    finally:
        await store.close()


async def serve(config: ServerConfig, store: Store) -> None:
    server = QiuQiuServer(config, store=store)
    await server.start()
    # At once: a Ctrl-C that follows the listening line stops the server it names.
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, lambda: loop.create_task(server.stop()))
    freeze, threshold = collector.settings(
        config.gc_freeze, config.gc_threshold, loops.running_loop_name()
    )
    collector.freeze_start_up_heap(threshold)
    # auto resolves by the loop, and nothing else shows an operator what it came to.
    resolved = f" (auto on {loops.running_loop_name()})" if config.gc_freeze == "auto" else ""
    logging.getLogger(logs.START).info(
        "garbage collector: --gc-freeze %s%s, --gc-threshold %d",
        freeze,
        resolved,
        threshold,
        extra={"gc_freeze": freeze, "gc_threshold": threshold},
    )
    freezing = collector.FreezeAfter.chosen(freeze)
    if freezing is not None:
        freezing.start()
    try:
        await server.serve_until_stopped()
    finally:
        if freezing is not None:
            freezing.stop()


ELSEWHERE = (
    "qiuqiu-server: runs on Linux and macOS, not on Windows, whose event loops have no "
    "signal handlers (the server's clean stop on SIGTERM is one): run it with Docker "
    "(docker compose up) or in WSL (https://learn.microsoft.com/windows/wsl/)"
)


def main(argv: Sequence[str] | None = None) -> int:
    if sys.platform == "win32":
        print(ELSEWHERE, file=sys.stderr)
        return 1
    config = parse_config(argv)
    logs.configure(config.log_level, config.log_format)
    for line in unknown_variables(os.environ):
        log.warning(line)
    try:
        loops.run(run(config), config.loop)
    except OSError as error:
        refused = _cannot_listen(config, error)
        if refused is None:
            raise
        # Like a setting that does not fit: one line and status 2, not a traceback.
        print(f"qiuqiu-server: {refused}", file=sys.stderr)
        return 2
    except StrategiesUnreadable as unreadable:
        print(f"qiuqiu-server: --strategies: {unreadable}", file=sys.stderr)
        return 2
    except StoreRefused as refused:
        print(f"qiuqiu-server: --redis-url: {refused}", file=sys.stderr)
        return 2
    except StoreUnavailable as unavailable:
        # Redis's own words do not always name the address (a connection closed without
        # a word does not), and the URL's password is not to be shown.
        assert config.redis_url is not None
        print(
            f"qiuqiu-server: Redis at {url_address(config.redis_url)} cannot be reached, "
            f"so nothing started: {unavailable}",
            file=sys.stderr,
        )
        return 1
    return 0


def _cannot_listen(config: ServerConfig, error: OSError) -> str | None:
    """What is wrong with ``--host`` or ``--port``, if that is why listening failed."""
    host = "pick another with --host or QIUQIU_HOST"
    port = "pick another with --port or QIUQIU_PORT (0 picks a free one)"
    if isinstance(error, socket.gaierror):
        return f"host {config.host!r} is not a name this machine can resolve: {host}"
    if error.errno == errno.EADDRNOTAVAIL:
        return f"host {config.host} is not an address of this machine: {host}"
    if error.errno == errno.EADDRINUSE:
        return f"port {config.port} on {config.host} is already in use: {port}"
    if error.errno == errno.EACCES:
        return f"port {config.port} on {config.host} cannot be used: {port}"
    return None


if __name__ == "__main__":
    raise SystemExit(main())
