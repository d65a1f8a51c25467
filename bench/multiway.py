"""The dealer bot at a table of three or more, measured in the arena's rotated matches.

Run from the repository root::

    uv run python -m bench.multiway [--seats 3] [--hands 20000] [--only NAME] [--json PATH]
    uv run python -m bench.multiway --mixed [--seats 6] [--hands 20000] [--json PATH]

Each opponent sits ``--seats - 1`` copies of itself at a table with the dealer
bot, at the default table otherwise (ante 10, buy-in 500 against the dealer's
10,000, one betting round), and plays ``--hands`` hands: each deal once per
rotation of the seats (:mod:`qiuqiu.cli.arena.rotation`). The same deals are
played against the dealer's range-aware policy (``dealer``) and against its old
threshold policy (``dealer:threshold``). A figure is one copy's chips a hand
(the copies' mean) with its 95% interval; the copies, as a team, "win at 2
sigma" when that mean minus two standard errors is above zero. With ``--mixed``
the dealer sits with the first ``--seats - 1`` bots of :data:`MIXED`, one of
each, and every contestant's own chips a hand are reported: at such a table a
bot can win from the others without beating the dealer, so the dealer's own
figure is the one that says whether it is exploited.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from bench import plain
from bench.dealer import OPPONENTS, SEED, results_grid
from qiuqiu.cli.arena.match import half_width
from qiuqiu.cli.arena.rotation import RotationResult, rotation_match
from qiuqiu.cli.arena.seats import DEALER, THRESHOLD_DEALER, Entrant, entrant
from qiuqiu.protocol import TableOptions


def play(dealer: str, field: list[Entrant], hands: int) -> RotationResult:
    """The dealer and ``field`` at one table, ``hands`` hands of rotated deals."""
    seats = len(field) + 1
    return rotation_match(
        [entrant(dealer), *field],
        deals=hands // seats,
        options=TableOptions(seats=seats),
        buy_in=500,
        seed=SEED,
        house=lambda: random.Random(SEED),
    )


def measure(opponent: str, dealer: str, seats: int, hands: int) -> RotationResult:
    copy = entrant(OPPONENTS[opponent])
    return play(
        dealer, [Entrant(f"{copy.name}#{i + 1}", copy.spec) for i in range(seats - 1)], hands
    )


MIXED = ("SizedByStrength", "tile_ranker", "always_call", "PolarBluffer", "MinRaiser")
"""A mixed table's opponents, in the order seats are added: the bot that beat the old
policy heads-up, the two example bots, a bluffer and a raiser."""


def mixed(dealer: str, seats: int, hands: int) -> RotationResult:
    return play(dealer, [entrant(OPPONENTS[name]) for name in MIXED[: seats - 1]], hands)


def mixed_rows(dealer: str, result: RotationResult) -> list[dict[str, float | int | str]]:
    """One row a contestant of a mixed table: its own chips a hand."""
    return [
        {
            "opponent": name,
            "dealer": dealer,
            "seats": len(result.names),
            "hands": result.hands,
            "chips_a_hand": round(result.mean(name), 3),
            "interval95": round(result.half_width(name), 3),
            "milli_antes_a_hand": round(1000 * result.mean(name) / result.ante, 1),
            "wins_at_2_sigma": result.mean(name) - 2 * result.half_width(name) / 1.96 > 0,
            "hands_a_second": round(result.rate),
        }
        for name in result.names
    ]


def row(opponent: str, dealer: str, result: RotationResult) -> dict[str, float | int | str]:
    copies = [n for n in result.names if n != dealer]
    per_deal = [sum(result.scores[n][d] for n in copies) / len(copies) for d in range(result.deals)]
    mean = sum(per_deal) / len(per_deal)
    interval = half_width(per_deal)
    return {
        "opponent": opponent,
        "dealer": dealer,
        "seats": len(result.names),
        "hands": result.hands,
        "chips_a_hand": round(mean, 3),
        "interval95": round(interval, 3),
        "milli_antes_a_hand": round(1000 * mean / result.ante, 1),
        "dealer_chips_a_hand": round(result.mean(dealer), 3),
        "dealer_interval95": round(result.half_width(dealer), 3),
        "wins_at_2_sigma": mean - 2 * interval / 1.96 > 0,
        "illegal": sum(result.answers.illegal.values()),
        "hands_a_second": round(result.rate),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.multiway",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seats", type=int, default=3, choices=range(3, 7))
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--only", choices=sorted(OPPONENTS), action="append")
    parser.add_argument("--mixed", action="store_true", help="one table of different bots")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    rows = []
    if args.mixed:
        for dealer in (DEALER, THRESHOLD_DEALER):
            result = mixed(dealer, args.seats, args.hands)
            rows += mixed_rows(dealer, result)
            print(result.summary(), flush=True)
    else:
        for opponent in args.only or list(OPPONENTS):
            for dealer in (DEALER, THRESHOLD_DEALER):
                result = measure(opponent, dealer, args.seats, args.hands)
                rows.append(row(opponent, dealer, result))
                print(result.summary(), flush=True)
    print()
    print(results_grid(rows, "chips/hand" if args.mixed else "a copy's chips/hand"))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
