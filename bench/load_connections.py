"""``bench.load --sections connections``: tens of thousands of clients on one server process.

Two measurements, each beside the echo floor (:mod:`bench.echo`) on the same loop:

- **idle**: ``--idle-clients`` connections (20,000 by default), each after its
  ``hello`` and ``welcome`` (one echoed message for the floor); the server's
  RSS growth over a fresh process, per client;
- **players**: ``--players`` clients (10,000) at four-player tables (2,500),
  every player taking ``--human-think`` seconds on average (3) before each
  action, as a person would: p99 from an action to its first event, beside the
  echo's p99 at the same pace and concurrency, and the server's CPU.

So many clients are more than one Python process can drive on two cores
without becoming the bottleneck, so they run in ``--client-processes`` worker
processes (``python -m bench.load_connections``), each from a loopback address
of its own (127.0.0.2, 127.0.0.3, ...: an address pair has only some 28,000
ephemeral ports). The workers' CPU is measured apart from the server's. The
parent raises its open-file limit to the hard limit, which the servers and
workers inherit; a server needs one descriptor a connection and a few of its
own, so where the hard limit is below that the run takes as many clients as it
allows and the report says so.

A worker talks to the parent over its stdin and stdout, a line each way:
``ready`` once its clients are connected (and seated), then ``open`` and
``close`` around the measured window (for the echo, ``open`` carries the
shape of what to ask), and a JSON tally at the end; it lives on until killed,
so that the parent can still read its CPU time.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from bench.load_clients import (
    SETUP_AT_ONCE,
    EchoClient,
    Player,
    Shape,
    Tally,
    Window,
    at_most,
    seat_players,
)
from bench.load_pauses import Scrape, pauses_in
from bench.processes import ROOT, Service, cpu_seconds, rss_bytes
from qiuqiu.server import loops

OWN_FILES = 64
"""Descriptors a server or the echo needs besides its connections (and a margin)."""

SEATS = 4


def file_limit() -> int:
    """Raise this process's open-file limit to the hard limit (children inherit it);
    the limit now."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def split(total: int, parts: int) -> list[int]:
    share, extra = divmod(total, parts)
    return [share + (i < extra) for i in range(parts)]


class Workers:
    """Client worker processes, each with its share and a loopback address of its own."""

    def __init__(self, procs: Sequence[asyncio.subprocess.Process]) -> None:
        self.procs = list(procs)

    @classmethod
    async def start(
        cls, loop: loops.LoopName, mode: str, url: str, shares: Sequence[int], think: float
    ) -> Workers:
        at_once = max(1, SETUP_AT_ONCE // len(shares))
        procs = []
        for i, share in enumerate(shares):
            argv = [
                *("-m", "bench.load_connections", mode, "--url", url, "--count", str(share)),
                *("--local", f"127.0.0.{2 + i}", "--think", str(think), "--loop", loop),
                *("--at-once", str(at_once), "--seed", str(i)),
            ]
            procs.append(
                await asyncio.create_subprocess_exec(
                    sys.executable,
                    *argv,
                    cwd=ROOT,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                )
            )
        workers = cls(procs)
        for proc in procs:
            assert proc.stdout is not None
            line = await proc.stdout.readline()
            if line.strip() != b"ready":
                await workers.kill()
                raise RuntimeError(f"a client worker failed to get ready: {line!r}")
        return workers

    async def tell(self, line: str) -> None:
        for proc in self.procs:
            assert proc.stdin is not None
            proc.stdin.write(line.encode() + b"\n")
            await proc.stdin.drain()

    async def tallies(self) -> list[dict[str, Any]]:
        """Each worker's tally of its window, with ``cpu``: the CPU seconds it spent in it."""
        out = []
        for proc in self.procs:
            assert proc.stdout is not None
            out.append(json.loads(await proc.stdout.readline()))
        return out

    async def kill(self) -> None:
        for proc in self.procs:
            if proc.returncode is None:
                proc.kill()
            await proc.wait()


def merged(tallies: Sequence[dict[str, Any]]) -> Tally:
    tally = Tally()
    for t in tallies:
        tally.frames_in += t["frames_in"]
        tally.frames_out += t["frames_out"]
        tally.bytes_in += t["bytes_in"]
        tally.bytes_out += t["bytes_out"]
        tally.hands += t["hands"]
        tally.latencies += t["latencies"]
    return tally


# -- the parent's side ------------------------------------------------------------


class Connections:
    """The section's runs, for :class:`bench.load.Bench`."""

    def __init__(
        self,
        loop: loops.LoopName,
        start_server: Callable[[], Service],
        start_echo: Callable[[], Service],
        processes: int,
        say: Callable[[str], None],
    ) -> None:
        self.loop = loop
        self.start_server = start_server
        self.start_echo = start_echo
        self.processes = processes
        self.say = say
        self.hard_limit = file_limit()

    def capped(self, wanted: int) -> int:
        return max(1, min(wanted, self.hard_limit - OWN_FILES))

    async def idle(self, wanted: int) -> dict[str, Any]:
        count = self.capped(wanted)
        row: dict[str, Any] = {"clients": count, "wanted": wanted, "hard_limit": self.hard_limit}
        for who, start, mode in (
            ("server", self.start_server, "idle"),
            ("echo", self.start_echo, "idle-echo"),
        ):
            service = start()
            try:
                service.wait_listening()
                before = rss_bytes(service.pid)
                began = time.perf_counter()
                workers = await Workers.start(
                    self.loop, mode, service.url, split(count, self.processes), 0
                )
                seconds = time.perf_counter() - began
                await asyncio.sleep(1.0)  # for the last writes to settle
                row[f"{who}_kib"] = (rss_bytes(service.pid) - before) / 1024 / count
                row[f"{who}_connect_s"] = seconds
                await workers.kill()
            finally:
                service.kill()
        row["ratio"] = row["server_kib"] / row["echo_kib"] if row["echo_kib"] else 0.0
        self.say(
            f"  {count:,} idle: {row['server_kib']:.1f} KiB/client,"
            f" echo {row['echo_kib']:.1f} ({row['ratio']:.2f}x)"
        )
        return row

    async def players(
        self, wanted: int, think: float, duration: float, warmup: float
    ) -> dict[str, Any]:
        tables = max(1, self.capped(wanted) // SEATS)
        count = tables * SEATS
        server = self.start_server()
        try:
            server.wait_listening()
            began = time.perf_counter()
            workers = await Workers.start(
                self.loop, "play", server.url, split(tables, self.processes), think
            )
            seated = time.perf_counter() - began
            await asyncio.sleep(max(warmup, 1.5 * think))
            scraped = await asyncio.to_thread(Scrape.of, [server.port])
            cpu, start = cpu_seconds(server.pid), time.perf_counter()
            await workers.tell("open")
            await asyncio.sleep(duration)
            await workers.tell("close")
            seconds = time.perf_counter() - start
            cpu = cpu_seconds(server.pid) - cpu
            tallies = await workers.tallies()
            tally, clients = merged(tallies), sum(t["cpu"] for t in tallies)
            pauses = pauses_in(scraped, await asyncio.to_thread(Scrape.of, [server.port]))
            await workers.kill()
        finally:
            server.kill()
        ours = figures(tally, seconds, cpu, clients) | pauses | {"seat_s": seated}
        floor = await self.echo_players(count, SEATS * think, Shape.of(tally))
        row: dict[str, Any] = {"tables": tables, "clients": count, "wanted": wanted}
        row["think"] = think
        row |= {"server": ours, "echo": floor}
        row["p99_ratio"] = ours["p99_ms"] / floor["p99_ms"] if floor["p99_ms"] else 0.0
        row["cpu_per_msg_ratio"] = (
            ours["cpu_us_per_msg"] / floor["cpu_us_per_msg"] if floor["cpu_us_per_msg"] else 0.0
        )
        self.say(
            f"  {count:,} players at {tables:,} tables: {ours['actions_per_s']:,.0f} actions/s,"
            f" p99 {ours['p99_ms']:.1f} ms (echo {floor['p99_ms']:.1f} ms,"
            f" {row['p99_ratio']:.2f}x), server {ours['server_cores']:.2f} cores,"
            f" clients {ours['client_cores']:.2f}"
        )
        return row

    async def echo_players(self, count: int, think: float, shape: Shape) -> dict[str, float]:
        """The echo asked what the players asked: as many requests, at the same pace per
        connection (a player acts once a round of its table's four turns)."""
        echo = self.start_echo()
        try:
            echo.wait_listening()
            workers = await Workers.start(
                self.loop, "ask", echo.url, split(count, self.processes), think
            )
            requests = split(shape.requests, self.processes)
            cpu, start = cpu_seconds(echo.pid), time.perf_counter()
            for proc, n in zip(workers.procs, requests, strict=True):
                assert proc.stdin is not None
                proc.stdin.write(f"open {json.dumps(asdict(shape) | {'requests': n})}\n".encode())
                await proc.stdin.drain()
            tallies = await workers.tallies()
            seconds = time.perf_counter() - start
            cpu = cpu_seconds(echo.pid) - cpu
            tally, clients = merged(tallies), sum(t["cpu"] for t in tallies)
            await workers.kill()
        finally:
            echo.kill()
        return figures(tally, seconds, cpu, clients)


def figures(tally: Tally, seconds: float, cpu: float, client_cpu: float) -> dict[str, float]:
    lat = sorted(tally.latencies)
    messages = tally.frames_in + tally.frames_out
    return {
        "seconds": seconds,
        "actions": tally.frames_in,
        "actions_per_s": tally.frames_in / seconds,
        "messages": messages,
        "hands": tally.hands,
        "server_cores": cpu / seconds,
        "client_cores": client_cpu / seconds,
        "cpu_us_per_msg": 1e6 * cpu / max(messages, 1),
        "cpu_us_per_hand": 1e6 * cpu / tally.hands if tally.hands else 0.0,
        "p50_ms": 1e3 * statistics.median(lat) if lat else 0.0,
        "p99_ms": 1e3 * lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else 0.0,
        "max_ms": 1e3 * lat[-1] if lat else 0.0,
        "latency_samples": len(lat),
    }


# -- a worker's side --------------------------------------------------------------


async def read_line() -> str:
    line: str = await asyncio.to_thread(sys.stdin.readline)
    return line.strip()


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def tally_json(tally: Tally, cpu_since: float) -> str:
    # The worker's own clock, not the parent's reading of /proc: that counts in ticks
    # of 10 ms, more than a tiny run's clients spend.
    return json.dumps(asdict(tally) | {"cpu": time.process_time() - cpu_since})


async def work(args: argparse.Namespace) -> None:
    window = Window()
    rng = random.Random(args.seed)
    local = args.local
    if args.mode == "play":
        players = await seat_players(
            [args.url], "four", args.count, window, args.think, rng, local, args.at_once
        )
        plays = [asyncio.create_task(p.play()) for p in players]
        say("ready")
        await read_line()  # open
        window.open, opened = True, time.process_time()
        await read_line()  # close
        window.open = False
        say(tally_json(window.tally, opened))
        await read_line()  # connected until the parent has scraped the server and kills it
        for play in plays:
            play.cancel()
        return
    clients: list[Player | EchoClient]
    if args.mode == "idle":
        clients = [Player(window, 0, rng, False, local) for _ in range(args.count)]
    else:
        clients = [
            EchoClient(window, args.think, random.Random(rng.random()), local)
            for _ in range(args.count)
        ]
    await at_most(args.at_once, [functools.partial(c.connect, args.url) for c in clients])
    say("ready")
    line = await read_line()
    if args.mode == "ask":
        shape_fields = json.loads(line.split(" ", 1)[1])
        shape = Shape(**shape_fields)
        askers = [c for c in clients if isinstance(c, EchoClient)]
        shares = split(shape.requests, len(askers))
        window.open, opened = True, time.process_time()
        window.go.set()
        await asyncio.gather(*(a.ask(n, shape) for a, n in zip(askers, shares, strict=True)))
        say(tally_json(window.tally, opened))
        await read_line()  # connected until the parent has scraped the server and kills it


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load_connections")
    parser.add_argument("mode", choices=("idle", "idle-echo", "play", "ask"))
    parser.add_argument("--url", required=True)
    parser.add_argument("--count", type=int, required=True, help="clients, or tables to play")
    parser.add_argument("--local", required=True, help="loopback address to connect from")
    parser.add_argument("--think", type=float, default=0.0)
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio")
    parser.add_argument("--at-once", type=int, default=SETUP_AT_ONCE)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    file_limit()
    loops.run(work(args), args.loop)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
