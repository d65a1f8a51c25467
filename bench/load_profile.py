"""Where a loaded server's CPU goes: ``qiuqiu-server`` under :mod:`cProfile`, played by
:mod:`bench.load`'s clients.

Run from the repository root::

    uv run python -m bench.load_profile [--tables 100] [--warmup 3] [--seconds 10] [--redis]

It starts the server through this module (``serve``: ``qiuqiu-server``'s own
``main`` with the benchmark's flags, and a profiler that SIGUSR1 starts and
SIGUSR2 stops and writes out), seats ``--tables`` duel tables (one player
against the dealer bot, every action the moment its turn comes, as in the
closed-loop throughput runs), lets them play ``--warmup`` seconds unprofiled
(start-up and the first hands, which fill the dealer bot's caches, are left
out), then profiles ``--seconds`` of play, and prints the groups the time
falls into and the functions with the most time of their own. cProfile
slows every call by a roughly even share: read the shares, not the
microseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import random
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench import plain
from bench.load import SERVER_FLAGS, Redis
from bench.load_clients import Window, seat_players
from bench.processes import Service, free_port
from qiuqiu.server import loops

GROUPS = (
    ("the engine", "/engine/"),
    ("the dealer bot", "server/dealer.py"),
    ("the dealer bot's strategy", "server/strategy.py"),
    ("the table", "server/table/"),
    ("the views (events to messages)", "server/views.py"),
    ("the frames (outbound text)", "server/frames.py"),
    ("the session", "server/session.py"),
    ("the gateway", "server/gateway.py"),
    ("the stores", "server/store.py"),
    ("the Redis store", "server/redis_store.py"),
    ("the protocol (pydantic models, codec)", "/protocol/"),
    ("pydantic itself", "/pydantic"),
    ("websockets", "/websockets/"),
    ("redis-py", "/redis/"),
    ("asyncio", "/asyncio/"),
    ("json", "/json/"),
    ("the logger", "/logging/"),
)
"""Where a function's own time is counted, by its file; first match wins."""


def group_of(filename: str) -> str:
    for name, part in GROUPS:
        if part in filename:
            return name
    return "other (builtins, C functions, the rest)"


async def play(server: Service, tables: int, warmup: float, seconds: float) -> int:
    window = Window()
    players = await seat_players([server.url], "duel", tables, window, 0.0, random.Random(1))
    tasks = [asyncio.create_task(p.play()) for p in players]
    await asyncio.sleep(warmup)
    server.process.send_signal(signal.SIGUSR1)
    window.open = True
    await asyncio.sleep(seconds)
    window.open = False
    server.process.send_signal(signal.SIGUSR2)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return window.tally.hands


def summary(profile: Path, hands: int, top: int) -> str:
    stats = pstats.Stats(str(profile))
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, object]]
    raw = stats.stats  # type: ignore[attr-defined]
    total = sum(own for _, _, own, _, _ in raw.values())
    groups: dict[str, float] = {}
    for (filename, _, _), (_, _, own, _, _) in raw.items():
        groups[group_of(filename)] = groups.get(group_of(filename), 0.0) + own
    out = [f"{hands:,} hands; {total:.1f} s of profiled time, own time by group:"]
    for name, own in sorted(groups.items(), key=lambda g: -g[1]):
        out.append(f"  {100 * own / total:5.1f}%  {name}")
    text = io.StringIO()
    pstats.Stats(str(profile), stream=text).sort_stats("tottime").print_stats(top)
    out += ["", f"the {top} functions with the most time of their own:", text.getvalue()]
    return "\n".join(out)


def serve(profile: Path, flags: Sequence[str]) -> int:
    """``qiuqiu-server`` with ``flags``, profiled from SIGUSR1 to SIGUSR2 into ``profile``."""
    from qiuqiu.server.__main__ import main as server_main

    profiler = cProfile.Profile()
    signal.signal(signal.SIGUSR1, lambda *_: profiler.enable())

    def dump(*_: object) -> None:
        profiler.disable()
        profiler.dump_stats(profile)

    signal.signal(signal.SIGUSR2, dump)
    return server_main(flags)


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["serve"]:
        return serve(Path(args_in[1]), args_in[2:])
    parser = argparse.ArgumentParser(
        prog="python -m bench.load_profile",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds played unprofiled")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds profiled")
    parser.add_argument("--redis", action="store_true", help="on Redis rather than in memory")
    parser.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--save", type=Path, help="keep the profile (pstats) here")
    args = parser.parse_args(args_in)
    loop = loops.resolve(args.loop)
    with tempfile.TemporaryDirectory() as folder:
        profile = Path(folder) / "server.prof"
        redis = Redis() if args.redis else None
        store = ("--redis-url", redis.url) if redis else ()
        port = free_port()
        argv_server = [
            *(sys.executable, "-m", "bench.load_profile", "serve", str(profile)),
            *("--port", str(port), *SERVER_FLAGS, "--loop", loop, *store),
        ]
        server = Service(argv_server, port)
        try:
            server.wait_listening()
            hands = loops.run(play(server, args.tables, args.warmup, args.seconds), loop)
            deadline = time.monotonic() + 30
            while not profile.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(0.5)  # for the dump to be written whole
            if server.stop(timeout=60) != 0:
                raise RuntimeError("the profiled server did not exit cleanly")
        finally:
            server.kill()
            if redis is not None:
                redis.close()
        print(summary(profile, hands, args.top))
        if args.save is not None:
            shutil.copy(profile, args.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
