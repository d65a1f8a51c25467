"""Smoke test of the server benchmark: a tiny run of every part of it, with Redis, reports
every figure beside its floor and draws its charts.

It never asserts a time, a speed or a size: the machine is shared and noisy, and
those are for people reading BENCHMARKS.md, not for the test suite.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from pathlib import Path

import pytest

from bench import load as bench_load
from bench import load_clients
from bench.load_clients import Player, Window
from bench.load_report import text_report
from bench.processes import Service

FIGURES = ("hands_per_s", "cpu_us_per_msg", "p50_ms", "p99_ms", "max_ms", "messages")


# A real run of the benchmark, a quarter of a minute: with the long suites.
@pytest.mark.long
def test_a_tiny_run_reports_every_figure_beside_the_echo_floor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        *("--runs", "1", "--duration", "0.3", "--warmup", "0.1", "--tables", "2"),
        *("--levels", "1", "--connections", "3", "--curve", "200"),
        *("--chart", str(tmp_path), "--json"),
    ]
    assert bench_load.main(argv) == 0
    report = json.loads(capsys.readouterr().out)

    throughput = {row["name"]: row for row in report["throughput"]}
    assert set(throughput) == {
        "duel, memory",
        "4-player, memory",
        "duel, Redis",
        "4-player, Redis",
        "duel, Redis, 2 processes",
    }
    for row in [*report["throughput"], *report["latency"], *report["curve"]]:
        assert set(FIGURES) <= set(row["server"]), row["name"]
        assert row["server"]["messages"] > 0, row["name"]
        assert row["echo"]["messages"] > 0, row["name"]
        assert set(row["ratio"]) == {"cpu_per_msg", "p50", "p99", "max"}
    # Played hands, and Redis ran commands for them.
    assert throughput["duel, memory"]["server"]["hands"] > 0
    assert throughput["duel, Redis"]["server"]["redis_cmds_per_hand"] > 0
    assert throughput["duel, Redis"]["server"]["redis_round_trips_per_hand"] > 0
    # Each of the two processes has the tables the one alone had.
    two = throughput["duel, Redis, 2 processes"]
    assert (two["processes"], two["tables"]) == (2, 2 * throughput["duel, Redis"]["tables"])
    assert [row["tables"] for row in report["latency"]] == [1, 1]
    # The servers' own loop lag and collector pauses, and the loop everything ran on.
    for row in report["latency"]:
        assert row["server"]["loop_lag_max_ms"] > 0, row["name"]
        assert "gc_max_ms" in row["server"]
    assert report["plan"]["loop"] in ("asyncio", "uvloop")
    memory = [(row["clients"], row["state"]) for row in report["memory"]["rows"]]
    assert memory == [(3, "idle"), (3, "playing")]
    assert {t["target"].split(",")[0] for t in report["targets"]} == {
        "CPU/msg vs echo",
        "p99 vs echo",
        "memory/client vs echo",
        "hands/s",
        "CPU/hand",
    }
    charts = [Path(p) for p in report["charts"]]
    assert [p.name for p in charts] == ["latency.png", "throughput.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in charts)
    assert json.loads((tmp_path / "load.json").read_text()) == report

    text = text_report(report)
    assert "duel, Redis, 2 processes" in text
    assert "MISSED" in text or "met" in text


def test_a_run_whose_servers_play_nothing_fails_rather_than_report_a_ratio() -> None:
    # The dealer bot waits a quarter of the benchmark's 600 s turns: no hand moves.
    run = bench_load.qiuqiu_run("asyncio", "duel", 1, 0.0, 0.3, 0.1, flags=("--bot-delay", "1000"))
    with pytest.raises(RuntimeError, match=r"sent nothing.* Every player was still connected"):
        asyncio.run(run)


def test_a_player_that_goes_bust_buys_in_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """At a duel the dealer bot may win every chip in one hand: a run with one table
    once stopped dead so. Here ten antes a buy-in make it happen every few dozen hands."""
    monkeypatch.setattr(load_clients, "BUY_IN", 100)

    async def hands_played() -> int:
        flags = ("--starting-balance", "100000")
        with bench_load.running([bench_load.qiuqiu_server("asyncio", extra=flags)]) as servers:
            window = Window(open=True)
            player = Player(window, 0.0, random.Random(1), counts_hands=True)
            await player.connect(servers[0].url)
            await player.sit("duel", None)
            playing = asyncio.create_task(player.play())
            async with asyncio.timeout(60):
                while window.tally.hands < 500:
                    await asyncio.sleep(0.05)
            playing.cancel()
            return window.tally.hands

    assert asyncio.run(hands_played()) >= 500


@pytest.mark.long
def test_a_pinned_run_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two cores")
    mine = os.sched_getaffinity(0)
    monkeypatch.setattr(Service, "cpus", None)  # as it was, once main has pinned
    argv = [
        *("--runs", "1", "--duration", "0.3", "--warmup", "0.1", "--no-redis"),
        *("--sections", "latency", "--levels", "1", "--pin", "--json"),
    ]
    try:
        assert bench_load.main(argv) == 0
    finally:
        os.sched_setaffinity(0, mine)  # main pins the process that runs it: this test's
    report = json.loads(capsys.readouterr().out)
    assert report["plan"]["pinned"] is True
    assert "servers, echo and Redis on one core" in text_report(report)
