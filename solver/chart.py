"""Draw the solver's convergence: exploitability against iterations, one line a solve.

uv run python -m solver.chart      # reads docs/dealer-bot/*.json, writes convergence.png
"""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from solver.__main__ import CONVERGENCE

TARGET = 50


def main() -> int:
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    for path in sorted(
        CONVERGENCE.glob("r1-*.json"), key=lambda p: json.loads(p.read_text())["stakes"]["stack"]
    ):
        record = json.loads(path.read_text())
        curve = record["curve"]
        depth = record["stakes"]["stack"] // record["stakes"]["ante"]
        label = f"{depth} antes behind, {record['tie_rule'].replace('_', ' ')}"
        ax.plot([c["iterations"] for c in curve], [c["milli_antes"] for c in curve], label=label)
    ax.axhline(TARGET, color="grey", linestyle="--", linewidth=1)
    ax.text(300, TARGET * 1.1, "target: 50 mA/hand", color="grey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("CFR+ iterations")
    ax.set_ylabel("exploitability (milli-antes a hand, best response)")
    ax.set_title("Heads-up, one betting round, ante 10, no limit")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(CONVERGENCE / "convergence.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
