"""Smoke test of the engine benchmark: it runs and reports sane figures.

It never asserts a time or a speed; those are for people reading the
benchmark's output, not for the test suite.
"""

from __future__ import annotations

import json

import pytest

from bench import engine as bench_engine


def test_the_benchmark_reports_positive_rates_beside_its_floors_as_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bench_engine.main(["--compares", "50", "--hands", "8", "--seed", "7", "--json"]) == 0

    report = json.loads(capsys.readouterr().out)

    assert report["seed"] == 7
    assert report["compare"]["count"] == 50
    assert report["hand"]["count"] == 8
    assert report["hand"]["actions"] > 0
    for figure in (report["compare"], report["hand"]):
        for key in ("seconds", "floor_seconds", "rate", "floor_rate", "ratio"):
            assert figure[key] > 0, key


def test_the_benchmark_prints_a_table_with_both_figures_and_their_floors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bench_engine.main(["--compares", "20", "--hands", "4"]) == 0

    lines = capsys.readouterr().out.splitlines()

    header = next(line for line in lines if line.startswith("figure"))
    assert header.split() == ["figure", "count", "engine", "/s", "floor", "/s", "floor/engine"]
    assert any(line.startswith("compare ") and line.endswith("x") for line in lines)
    assert any(line.startswith("hand ") and line.endswith("x") for line in lines)


def test_the_same_seed_draws_the_same_hands_and_plays_them_the_same_way(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for _ in range(2):
        bench_engine.main(["--compares", "10", "--hands", "6", "--seed", "11", "--json"])
    first, second = (json.loads(line) for line in capsys.readouterr().out.splitlines())

    assert first["hand"]["actions"] == second["hand"]["actions"]
