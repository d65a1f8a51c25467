"""The event loop a process runs on: uvloop where it is installed, asyncio's own elsewhere.

``--loop auto`` (the default) takes uvloop when it can be imported (the
``qiuqiu-server[uvloop]`` extra, Linux and macOS); ``asyncio`` always runs the
standard library's loop; ``uvloop`` insists, and is refused with a clear error
when it is not installed. The benchmark's echo floor runs through here too, so
that the server and its floor run on the same loop (BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

LoopChoice = Literal["auto", "asyncio", "uvloop"]
LoopName = Literal["asyncio", "uvloop"]

UVLOOP_MISSING = (
    "uvloop is not installed: install the extra (pip install 'qiuqiu-server[uvloop]') "
    "or choose --loop asyncio or auto"
)

T = TypeVar("T")


def uvloop_installed() -> bool:
    try:
        importlib.import_module("uvloop")
    except ImportError:
        return False
    return True


def resolve(choice: LoopChoice) -> LoopName:
    """The loop ``choice`` runs on here. ``uvloop`` when it is missing raises ValueError."""
    if choice == "asyncio":
        return "asyncio"
    if uvloop_installed():
        return "uvloop"
    if choice == "uvloop":
        raise ValueError(UVLOOP_MISSING)
    return "asyncio"


def factory(name: LoopName) -> Callable[[], asyncio.AbstractEventLoop]:
    if name == "uvloop":
        uvloop: Any = importlib.import_module("uvloop")
        new_loop: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
        return new_loop
    return asyncio.new_event_loop


def run(main: Coroutine[Any, Any, T], choice: LoopChoice) -> T:
    """``asyncio.run(main)`` on the loop ``choice`` resolves to."""
    with asyncio.Runner(loop_factory=factory(resolve(choice))) as runner:
        return runner.run(main)


async def end_other_tasks(seconds: float) -> list[str]:
    """Cancel every task of this loop but the one calling, and wait for them to end,
    ``seconds`` at most. Returns those still running then, each named with where it
    waits: a task that swallowed its cancellation, which asyncio's own runner, as the
    loop closes, would wait for without end."""
    this = asyncio.current_task()
    others = [task for task in asyncio.all_tasks() if task is not this]
    for task in others:
        task.cancel()
    if not others:
        return []
    _, running = await asyncio.wait(others, timeout=seconds)
    return sorted(map(_where, running))


def _where(task: asyncio.Task[Any]) -> str:
    """``task``'s name, and the line of its own code where it waits, then the innermost
    one (in a library, often): a task's stack shows only its outermost coroutine."""
    lines = []
    awaited: Any = task.get_coro()
    while (
        frame := getattr(awaited, "cr_frame", None) or getattr(awaited, "ag_frame", None)
    ) is not None:
        lines.append(f"{frame.f_code.co_name} at {frame.f_code.co_filename}:{frame.f_lineno}")
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "ag_await", None)
    if not lines:
        return task.get_name()
    inner = "" if len(lines) == 1 else f", waiting in {lines[-1]}"
    return f"{task.get_name()} in {lines[0]}{inner}"


def running_loop_name() -> LoopName:
    """Which loop this coroutine runs on, from the loop itself, not from a setting."""
    module = type(asyncio.get_running_loop()).__module__
    return "uvloop" if module.split(".")[0] == "uvloop" else "asyncio"
