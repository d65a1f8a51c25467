"""The ``qiuqiu-server`` command's entry point: Ctrl-C before the server's own stop is
in place (while it loads, or waits on Redis) is an interruption, status 130, not a
traceback."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path


def test_ctrl_c_while_the_start_waits_on_redis_is_one_line_and_status_130() -> None:
    # It was a KeyboardInterrupt traceback from the middle of the start.
    with socket.socket() as redis:
        redis.bind(("127.0.0.1", 0))
        redis.listen()
        redis.settimeout(60)
        url = f"redis://127.0.0.1:{redis.getsockname()[1]}/0"
        command = Path(sys.executable).parent / "qiuqiu-server"
        # asyncio's loop: uvloop, waiting on a socket, runs Python's own Ctrl-C handler
        # only once something wakes it (here the store's timeout).
        flags = ("--port", "0", "--redis-url", url, "--store-timeout", "60", "--loop", "asyncio")
        process = subprocess.Popen([command, *flags], stderr=subprocess.PIPE, text=True)
        try:
            connection, _ = redis.accept()  # a Redis that never answers: the start waits
            with connection:
                process.send_signal(signal.SIGINT)
                _, err = process.communicate(timeout=60)
        finally:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert err.splitlines() == ["qiuqiu-server: interrupted"]
