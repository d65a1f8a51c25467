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


def test_a_mixed_table_reports_every_contestant_and_conserves_chips(tmp_path: Path) -> None:
    out = tmp_path / "mixed.json"
    assert (
        bench_multiway.main(["--mixed", "--seats", "4", "--hands", "40", "--json", str(out)]) == 0
    )
    rows = json.loads(out.read_text())
    for dealer in ("dealer", "dealer:threshold"):
        table = [r for r in rows if r["dealer"] == dealer]
        assert [r["opponent"] for r in table] == [dealer, *bench_multiway.MIXED[:3]]
        assert all(r["hands"] == 40 and r["seats"] == 4 for r in table)
        # What one contestant wins the others lose, deal by deal, so in the means too.
        assert abs(sum(float(r["chips_a_hand"]) for r in table)) < 0.01
