"""The ``qiuqiu`` command's entry point. Loading the client takes a good half second
(rich, pydantic, the engine's table of every hand); Ctrl-C meanwhile ends it
quietly with status 130 (interrupted), instead of a traceback from the middle of
an import."""

from __future__ import annotations


def main() -> int:
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
