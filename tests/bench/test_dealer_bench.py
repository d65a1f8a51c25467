"""Smoke tests of the dealer bot's benchmarks: they run and report sane figures.

No time or speed is asserted; the figures are for people reading the output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import dealer as bench_dealer
from bench import decision as bench_decision


def test_the_decision_benchmark_reports_both_policies_beside_its_floor(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bench_decision.main(["--hands", "30", "--repeat", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["decisions"] >= 10
    assert set(report["us_per_decision"]) == {"solved", "threshold", "floor"}
    assert all(v > 0 for v in report["us_per_decision"].values())
    assert report["rounds"] == 1
    assert report["solved_over_threshold"] > 0


@pytest.mark.parametrize("rounds", ["1", "2"])
def test_the_arena_benchmark_compares_todays_policy_on_the_caller(
    tmp_path: Path, rounds: str
) -> None:
    out = tmp_path / "arena.json"
    argv = ["--hands", "40", "--only", "always_call", "--rounds", rounds, "--json", str(out)]
    assert bench_dealer.main(argv) == 0
    report = json.loads(out.read_text())
    assert report["rounds"] == int(rounds)
    rows = report["rows"]
    assert [r["dealer"] for r in rows] == ["dealer", "dealer:threshold"]
    assert all(r["hands"] == 40 and r["opponent"] == "always_call" for r in rows)
    # The paired difference is the two matches' difference of means, deal by deal.
    (difference,) = report["paired"]
    expected = rows[1]["chips_a_hand"] - rows[0]["chips_a_hand"]
    assert difference["more_chips_a_hand"] == pytest.approx(expected, abs=0.002)
