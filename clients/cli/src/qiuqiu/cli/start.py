"""The ``qiuqiu`` command's entry point. Loading the client takes a good half second
(rich, pydantic, the engine's table of every hand); Ctrl-C meanwhile ends it
quietly with status 130 (interrupted), instead of a traceback from the middle of
an import."""

from __future__ import annotations


def main() -> int:
    try:
        from qiuqiu.cli.__main__ import main as run
    except KeyboardInterrupt:
        return 130
    return run()
