"""Where a loaded server's CPU goes: ``qiuqiu-server`` under :mod:`cProfile`, played by
:mod:`bench.load`'s clients.

Run from the repository root::

    uv run python -m bench.load_profile [--tables 100] [--seconds 10] [--redis] [--top 30]

It starts the server as ``python -m cProfile -o FILE -m qiuqiu.server`` with the
benchmark's flags, seats ``--tables`` duel tables (one player against the dealer
bot, every action the moment its turn comes, as in the closed-loop throughput
runs), lets them play for ``--seconds``, then stops the server with SIGTERM so
that the profile is written, and prints the functions with the most time of
their own and the groups the time falls into. cProfile itself slows every call
by a roughly even share, so read the shares, not the microseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import pstats
import random
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

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


async def play(url: str, tables: int, seconds: float) -> int:
    window = Window()
    players = await seat_players([url], "duel", tables, window, 0.0, random.Random(1))
    tasks = [asyncio.create_task(p.play()) for p in players]
    window.open = True
    await asyncio.sleep(seconds)
    window.open = False
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load_profile", description=__doc__)
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--redis", action="store_true", help="on Redis rather than in memory")
    parser.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args(argv)
    loop = loops.resolve(args.loop)
    with tempfile.TemporaryDirectory() as folder:
        profile = Path(folder) / "server.prof"
        redis = Redis() if args.redis else None
        store = ("--redis-url", redis.url) if redis else ()
        port = free_port()
        argv_server = [
            *(sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "qiuqiu.server"),
            *("--port", str(port), *SERVER_FLAGS, "--loop", loop, *store),
        ]
        server = Service(argv_server, port)
        try:
            server.wait_listening()
            hands = loops.run(play(server.url, args.tables, args.seconds), loop)
            if server.stop(timeout=60) != 0:
                raise RuntimeError("the profiled server did not exit cleanly")
        finally:
            server.kill()
            if redis is not None:
                redis.close()
        print(summary(profile, hands, args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
