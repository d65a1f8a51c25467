"""The ``qiuqiu-server`` command's entry point. Loading the server and opening its
store take a second or two, before its own stop (SIGTERM, Ctrl-C) is in place;
Ctrl-C meanwhile ends it with one line and status 130 (interrupted), instead of a
traceback from the middle of an import or of the start."""

from __future__ import annotations

import sys


def main() -> int:
    try:
        from qiuqiu.server.__main__ import main as run

        return run()
    except (KeyboardInterrupt, RuntimeError) as error:
        if not interrupted(error):
            raise
        print("qiuqiu-server: interrupted", file=sys.stderr)
        return 130


def interrupted(error: BaseException) -> bool:
    """Whether ``error`` is Ctrl-C: Python 3.11 wraps one that lands while a class is
    made, in a field's ``__set_name__`` (pydantic's models), in a ``RuntimeError``."""
    return isinstance(error, KeyboardInterrupt) or isinstance(error.__cause__, KeyboardInterrupt)
