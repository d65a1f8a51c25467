"""Draw the solver's convergence: exploitability against iterations, one line a solve.

uv run --group bench python -m solver.chart   # reads docs/dealer-bot/*.json, writes convergence.png
"""

from __future__ import annotations

import importlib.util
import json
import sys

if importlib.util.find_spec("matplotlib") is None:
    raise SystemExit(
        "the chart needs matplotlib, in the bench dependency group: "
        "uv run --group bench python -m solver.chart"
    )

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from solver.__main__ import CONVERGENCE

TARGET = 50


def main() -> int:
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=110)
    records = [json.loads(p.read_text()) for p in CONVERGENCE.glob("r[12]-*.json")]
    # A lean strategy's exploitability is the price of its models, not a solve's error.
    records = [r for r in records if not r.get("lean")]
    records.sort(key=lambda r: (r["stakes"]["betting_rounds"], r["stakes"]["stack"], r["tie_rule"]))
    for record in records:
        curve = record["curve"]
        stakes = record["stakes"]
        depth = stakes["stack"] // stakes["ante"]
        rounds = stakes["betting_rounds"]
        label = (
            f"{'one round' if rounds == 1 else 'two rounds, bucketed'}: {depth} antes behind, "
            f"{record['tie_rule'].replace('_', ' ')}"
        )
        ax.plot(
            [c["iterations"] for c in curve],
            [c["milli_antes"] for c in curve],
            label=label,
            linestyle="-" if rounds == 1 else "--",
        )
    ax.axhline(TARGET, color="grey", linestyle="--", linewidth=1)
    ax.text(300, TARGET * 1.1, "target: 50 mA/hand", color="grey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("CFR+ iterations")
    ax.set_ylabel("exploitability (milli-antes a hand, best response)")
    ax.set_title("Heads-up, ante 10, no limit")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(CONVERGENCE / "convergence.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
