"""Smoke test of the multiway benchmark: it runs, on the same deals for both policies.

No time or speed is asserted; the figures are for people reading the output.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench import multiway as bench_multiway


def test_the_multiway_benchmark_measures_both_policies(tmp_path: Path) -> None:
    out = tmp_path / "multiway.json"
    args = ["--hands", "30", "--only", "always_call", "--json", str(out)]
    assert bench_multiway.main(args) == 0
    rows = json.loads(out.read_text())
    assert [r["dealer"] for r in rows] == ["dealer", "dealer:threshold"]
    for r in rows:
        assert r["hands"] == 30
        assert r["seats"] == 3
        assert r["illegal"] == 0
        # The dealer's chips are what the two copies lose between them.
        assert abs(r["dealer_chips_a_hand"] + 2 * r["chips_a_hand"]) < 0.01
