"""The ``qiuqiu-server`` command's entry point: Ctrl-C before the server's own stop is
in place (while it loads, or waits on Redis) is an interruption, status 130, not a
traceback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest


def test_ctrl_c_while_the_start_waits_on_redis_is_one_line_and_status_130() -> None:
    # It was a KeyboardInterrupt traceback from the middle of the start.
    with socket.socket() as redis:
        # An address no other test uses (Linux answers all of 127/8): another test's
        # client that retries a port just freed can never be the connection accepted
        # here, and have the Ctrl-C sent before this server even runs.
        redis.bind(("127.0.0.3", 0))
        redis.listen()
        redis.settimeout(60)
        url = f"redis://127.0.0.3:{redis.getsockname()[1]}/0"
        command = Path(sys.executable).parent / "qiuqiu-server"
        # asyncio's loop: uvloop, waiting on a socket, runs Python's own Ctrl-C handler
        # only once something wakes it (here the store's timeout).
        flags = ("--port", "0", "--redis-url", url, "--store-timeout", "60", "--loop", "asyncio")
        # A start that outlives its Ctrl-C is aborted, and says where it was (faulthandler).
        environment = {**os.environ, "PYTHONFAULTHANDLER": "1"}
        process = subprocess.Popen(
            [command, *flags], stderr=subprocess.PIPE, text=True, env=environment
        )
        try:
            connection, _ = redis.accept()  # a Redis that never answers: the start waits
            with connection:
                process.send_signal(signal.SIGINT)
                try:
                    _, err = process.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    status = Path(f"/proc/{process.pid}/status").read_text().splitlines()
                    process.send_signal(signal.SIGABRT)
                    _, err = process.communicate(timeout=10)
                    masks = [line for line in status if line.startswith(("Sig", "ShdPnd"))]
                    pytest.fail(f"no exit 30 s after Ctrl-C; {masks}; its stderr: {err}")
        finally:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert err.splitlines() == ["qiuqiu-server: interrupted"]
