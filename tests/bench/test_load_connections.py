"""Smoke test of bench.load's connections section: idle clients and four-player tables
driven from worker processes on their own loopback addresses, each beside the echo.

It asserts what was measured and reported, never how fast or how big.
"""

from __future__ import annotations

import json
import math

import pytest

from bench import load as bench_load
from bench.load_report import text_report


# A real run of the benchmark, a quarter of a minute: with the long suites.
@pytest.mark.long
def test_a_tiny_connections_run_reports_idle_memory_and_players_beside_the_echo(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [
        *("--sections", "connections", "--no-redis", "--runs", "1"),
        *("--idle-clients", "30", "--players", "8", "--human-think", "0.1"),
        *("--client-processes", "2", "--duration", "0.6", "--warmup", "0.2", "--json"),
    ]
    assert bench_load.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    idle, players = report["connections"]["idle"], report["connections"]["players"]
    assert idle["clients"] == 30
    # Thirty clients' memory is within what a process's resident size moves by on its
    # own (a collection, an arena given back): measured and reported, of either sign.
    assert math.isfinite(idle["server_kib"])
    assert math.isfinite(idle["echo_kib"])
    assert (players["tables"], players["clients"]) == (2, 8)
    for who in ("server", "echo"):
        assert players[who]["actions"] > 0, who
        assert players[who]["latency_samples"] > 0, who
        assert players[who]["client_cores"] > 0, who
    assert "loop_lag_max_ms" in players["server"]
    assert {t["target"] for t in report["targets"]} == {
        "memory/client vs echo, 30 idle",
        "p99 vs echo, 8 players",
    }
    assert "8 players at 2 four-player tables" in text_report(report)
