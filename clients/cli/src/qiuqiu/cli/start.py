"""The ``qiuqiu`` command's entry point. Loading the client takes a good half second
(rich, pydantic, the engine's table of every hand); Ctrl-C meanwhile ends it
quietly with status 130 (interrupted), instead of a traceback from the middle of
an import. On Windows it says where to play instead: the client's terminal
(``termios``), its standard input and its Ctrl-C are POSIX's, and its first import
would fail with a traceback."""

from __future__ import annotations

import sys

ELSEWHERE = (
    "the terminal client and the bot SDK run on Linux and macOS, not on Windows: "
    "run them in WSL (https://learn.microsoft.com/windows/wsl/), or play in the browser "
    "on a server started with Docker (docker compose up, then http://localhost:8765/)"
)


def main() -> int:
    if sys.platform == "win32":
        print(f"qiuqiu: {ELSEWHERE}", file=sys.stderr)
        return 1
    try:
        from qiuqiu.cli.__main__ import main as run
    except (KeyboardInterrupt, RuntimeError) as error:
        if not interrupted(error):
            raise
        return 130
    return run()


def interrupted(error: BaseException) -> bool:
    """Whether ``error`` is Ctrl-C: Python 3.11 wraps one that lands while a class is
    made, in a field's ``__set_name__`` (rich's dataclasses), in a ``RuntimeError``."""
    return isinstance(error, KeyboardInterrupt) or isinstance(error.__cause__, KeyboardInterrupt)
