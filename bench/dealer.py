"""The dealer bot measured in the arena: every exploiting bot, the caller and the ranker.

Run from the repository root::

    uv run python -m bench.dealer [--hands 100000] [--rounds 2] [--only NAME] [--json PATH]

Each opponent plays a duplicate match of ``--hands`` hands (half as many
deals, each played twice with the seats swapped) at the default table
(ante 10, buy-in 500 against the dealer's 10,000, one betting round, or two
with ``--rounds 2``; ``AlwaysShove@N`` shoves with a stack of N chips, short of
the smallest buy-in, as a player who lost down to it is), against the dealer bot
and against the threshold policy it played before it was solved
(``dealer:threshold``), the deals the same for both. The dealer keeps the
button, as the server seats it. A figure is the opponent's chips a hand with its
95% interval; an exploiter "wins at 2 sigma" when its mean minus two standard
errors is above zero. Where both dealers played an opponent, the difference is
measured deal by deal on the same deals (a paired interval, much narrower than
the two intervals side by side).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from bench import plain
from bench.text_grid import grid
from qiuqiu.cli.arena.match import Z95, MatchResult, duplicate_match
from qiuqiu.cli.arena.seats import DEALER, THRESHOLD_DEALER, entrant
from qiuqiu.protocol import TableOptions

ROOT = Path(__file__).resolve().parent.parent
EXPLOITERS = [
    "AlwaysShove",
    "AlwaysMinBet",
    "FoldToRaise",
    "SizedByStrength",
    "PolarBluffer",
    "TinyBluffer",
    "OffTreeSizer",
    "MinRaiser",
    "PotOddsCaller",
    "Switcher",
]
OPPONENTS = {
    **{name: f"{ROOT / 'bench/exploiters.py'}:{name}" for name in EXPLOITERS},
    "always_call": str(ROOT / "clients/examples/always_call.py"),
    "tile_ranker": str(ROOT / "clients/examples/tile_ranker.py"),
}
SHORT_STACKS = {f"AlwaysShove@{chips}": chips for chips in (11, 20, 30, 60)}
"""Shovers with a stack of so many chips: the short end of the strategies' grid."""
SIDE_BY_SIDE = ("always_call", "tile_ranker")
"""Measured against the old threshold policy too: the bot must beat them by more than it did."""
SEED = 15


def measure(opponent: str, dealer: str, hands: int, rounds: Literal[1, 2]) -> MatchResult:
    buy_in = SHORT_STACKS.get(opponent, 500)
    return duplicate_match(
        entrant(OPPONENTS[opponent.partition("@")[0]]),
        entrant(dealer),
        deals=hands // 2,
        options=TableOptions(betting_rounds=rounds, min_buy_in=min(buy_in, 100)),
        buy_in=buy_in,
        seed=SEED,
        house=lambda: random.Random(SEED),
    )


def row(opponent: str, result: MatchResult) -> dict[str, float | int | str]:
    sigma = result.half_width / 1.96
    return {
        "opponent": opponent,
        "dealer": result.b,
        "hands": result.hands,
        "chips_a_hand": round(result.mean, 3),
        "interval95": round(result.half_width, 3),
        "milli_antes_a_hand": round(1000 * result.mean / result.ante, 1),
        "wins_at_2_sigma": result.mean - 2 * sigma > 0,
        "hands_a_second": round(result.rate),
    }


def results_grid(rows: Sequence[dict[str, float | int | str]], chips: str) -> str:
    """The rows of a run as a text table; ``chips`` heads the chips column."""
    return grid(
        ["opponent", "dealer", chips, "±95%", "wins at 2 sigma", "hands/s"],
        [
            [
                str(r["opponent"]),
                str(r["dealer"]),
                f"{r['chips_a_hand']:+.2f}",
                f"{r['interval95']:.2f}",
                "yes" if r["wins_at_2_sigma"] else "no",
                f"{r['hands_a_second']:,}",
            ]
            for r in rows
        ],
    )


def paired(solved: MatchResult, threshold: MatchResult) -> dict[str, float | int | str]:
    """How much more the solved dealer takes from an opponent than the threshold policy
    does, deal by deal on the same deals, with its 95% interval."""
    taken = [t - s for s, t in zip(solved.scores, threshold.scores, strict=True)]
    n = len(taken)
    mean = sum(taken) / n
    variance = sum((d - mean) ** 2 for d in taken) / (n - 1)
    half_width = Z95 * math.sqrt(variance / n)
    return {
        "opponent": solved.a,
        "more_chips_a_hand": round(mean, 3),
        "interval95": round(half_width, 3),
        "more_milli_antes_a_hand": round(1000 * mean / solved.ante, 1),
        "significantly_more": mean - half_width > 0,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.dealer",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--hands", type=int, default=100_000)
    parser.add_argument("--only", choices=sorted([*OPPONENTS, *SHORT_STACKS]), action="append")
    parser.add_argument(
        "--threshold-too",
        action="store_true",
        help="the old threshold policy against the exploiters too",
    )
    parser.add_argument("--rounds", type=int, choices=(1, 2), default=1, help="betting rounds")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    rows = []
    differences = []
    for opponent in args.only or [*OPPONENTS, *SHORT_STACKS]:
        compared = args.threshold_too or opponent in SIDE_BY_SIDE
        results = []
        for dealer in [DEALER, THRESHOLD_DEALER] if compared else [DEALER]:
            result = measure(opponent, dealer, args.hands, args.rounds)
            results.append(result)
            rows.append(row(opponent, result))
            print(result.summary(), flush=True)
        if compared:
            differences.append(paired(*results))
            d = differences[-1]
            more = float(d["more_chips_a_hand"])
            print(
                f"  the solved dealer takes {abs(more):.3f} ± {d['interval95']:.3f} chips a hand"
                f" {'more' if more > 0 else 'less'} from {opponent} than the threshold policy",
                flush=True,
            )
    print()
    print(results_grid(rows, "chips/hand"))
    if args.json:
        report = {"rounds": args.rounds, "rows": rows, "paired": differences}
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
