"""Smoke test of the table benchmark: it plays the hands it says, and its floor plays
the same ones. It never asserts a time; those are for people reading its output."""

from __future__ import annotations

import dataclasses
import json

import pytest

from bench import table as bench_table
from qiuqiu import engine
from qiuqiu.server import loops


def test_the_benchmark_reports_the_table_beside_the_engine_as_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bench_table.main(["--hands", "30", "--loop", "asyncio", "--json"]) == 0

    report = json.loads(capsys.readouterr().out)

    assert report["hands"] == 30
    assert report["loop"] == "asyncio"
    for key in ("table_us_a_hand", "engine_us_a_hand", "ratio"):
        assert report[key] > 0, key


def test_the_floor_plays_the_tables_hands_and_refuses_one_that_ends_otherwise() -> None:
    _, logs = loops.run(bench_table.table_hands(5), "asyncio")
    assert len(logs) == 5
    assert all(isinstance(log[-1], engine.HandEnded) for log in logs)
    bench_table.engine_hands(logs)

    ended = logs[0][-1]
    assert isinstance(ended, engine.HandEnded)
    (seat, stack), *rest = ended.stacks
    other_end = dataclasses.replace(ended, stacks=((seat, stack + 1), *rest))
    with pytest.raises(AssertionError, match="the engine ended a hand as"):
        bench_table.engine_hands([(*logs[0][:-1], other_end)])
