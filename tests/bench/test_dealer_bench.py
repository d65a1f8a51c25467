"""Smoke tests of the dealer bot's benchmarks: they run and report sane figures.

No time or speed is asserted; the figures are for people reading the output.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest

from bench import dealer as bench_dealer
from bench import decision as bench_decision
from qiuqiu.server.house import policy
from qiuqiu.server.house.record import Memo


def test_the_decision_benchmark_reports_both_policies_beside_its_floor(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bench_decision.main(["--hands", "30", "--repeat", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["decisions"] >= 10
    assert set(report["us_per_decision"]) == {
        "solved",
        "threshold",
        "floor",
        "solved, from the turn",
        "threshold, from the turn",
    }
    assert all(v > 0 for v in report["us_per_decision"].values())
    assert report["rounds"] == 1
    assert report["solved_over_threshold"] > 0
    assert report["from_the_turn"] > 0


@pytest.mark.parametrize("rounds", [1, 2])
def test_each_policy_decides_the_same_from_the_turn_as_from_its_situation(rounds: int) -> None:
    """The two views time the same decisions: from the turn message, each bot makes what
    the policy makes from the situation (the solved one with the same draws)."""
    house = bench_decision.recorded(60, 4, rounds)  # type: ignore[arg-type]
    assert len(house.turns) == len(house.seen) >= 20
    for k, (seen, turn) in enumerate(zip(house.seen, house.turns, strict=True)):
        assert bench_decision.threshold_from_turn(turn) == policy.threshold(seen)
        fresh = dataclasses.replace(seen, memo=Memo())
        turn.record.memo = Memo()
        from_turn = bench_decision.solved_from_turn(turn, random.Random(k))
        assert from_turn == policy.decide(fresh, random.Random(k))


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
