"""The ``qiuqiu arena`` command: duplicate matches between two or more contestants.

    uv run qiuqiu arena clients/examples/tile_ranker.py dealer --hands 100000

Two contestants play one duplicate match; three or more play every pair, and
the command prints a table of each one's chips a hand against each other.
With ``--seats N`` (3 to 6), N contestants (name a bot twice to seat two copies)
sit at one table and play each deal N times, rotated through the seats
(:mod:`qiuqiu.cli.arena.rotation`).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gc
import json
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path
from typing import Any, TextIO

from qiuqiu.cli.arena.match import Answers, MatchResult, duplicate_match, milli_antes
from qiuqiu.cli.arena.rotation import RotationResult, rotation_match
from qiuqiu.cli.arena.seats import Entrant, entrant, house_rng
from qiuqiu.cli.arguments import add_table_options, check_buy_in, table_options
from qiuqiu.protocol import TableOptions
from qiuqiu.server.collector import PYTHON_THRESHOLD, freeze_start_up_heap
from qiuqiu.server.errors import StrategiesUnreadable
from qiuqiu.server.strategy import prepare

DEFAULT_HANDS = 10_000


def add_arena(commands: Any) -> None:
    cmd = commands.add_parser(
        "arena",
        allow_abbrev=False,
        help="play bots against each other or the dealer bot, in this process",
        description="Duplicate matches at engine speed: each deal twice, the seats swapped "
        "(with --seats N, N contestants at one table, each deal N times, the seats rotated). "
        "A contestant is a bot file (path.py, or path.py:ClassName if it defines several), "
        "'dealer' (the server's dealer bot) or 'dealer:threshold' (its policy before the "
        "solved strategy).",
    )
    cmd.add_argument("contestants", nargs="+", metavar="BOT", help="two or more contestants")
    cmd.add_argument(
        "--hands",
        type=int,
        help=f"hands per match, every half or rotation counted: a whole number of deals "
        f"({DEFAULT_HANDS:,}, or the multiple of --seats just below it)",
    )
    cmd.add_argument("--buy-in", type=int, default=500, help="a bot's stack each hand (500)")
    cmd.add_argument("--seed", type=int, default=1, help="seeds the deals (%(default)s)")
    cmd.add_argument(
        "--house-seed", type=int, help="seed the dealer's RNG (default: the OS's CSPRNG)"
    )
    cmd.add_argument("--json", action="store_true", help="one JSON object per match")
    cmd.add_argument(
        "--per-deal",
        type=Path,
        metavar="CSV",
        help="write each contestant's chips a hand in every deal to this file "
        "(match,deal,name,chips), for figures of your own",
    )
    cmd.add_argument(
        "--strategies",
        type=Path,
        metavar="DIR",
        help="a folder of more solved strategies for the dealer (python -m solver --out), "
        "as qiuqiu-server --strategies loads them",
    )
    add_table_options(cmd, served=False)
    cmd.set_defaults(command_parser=cmd)


def run_arena(args: argparse.Namespace) -> int:
    if len(args.contestants) < 2:
        raise ValueError("the arena needs two contestants or more")
    options = table_options(args)
    check_buy_in(args.buy_in, options)
    if args.hands is None:
        args.hands = DEFAULT_HANDS - DEFAULT_HANDS % options.seats
    if options.seats == 2:
        if args.hands < 4:
            raise ValueError("--hands must be at least 4 (two duplicate deals)")
        _check_whole_deals(args.hands, 2, "duplicate deals, each played twice")
    entrants = _named([entrant(spec) for spec in args.contestants])
    if args.strategies is not None and not any(e.is_house for e in entrants):
        raise ValueError("--strategies is the dealer's: name 'dealer' among the contestants")
    if args.strategies is not None and not args.strategies.is_dir():
        raise ValueError(f"--strategies {args.strategies} is not a folder")
    if any(e.is_house for e in entrants):
        try:
            prepare(None if args.strategies is None else str(args.strategies))
        except StrategiesUnreadable as unreadable:
            raise ValueError(f"--strategies: {unreadable}") from None
    # What start-up made (modules, the dealer's tables) out of the collector's sight, as a
    # server freezes its own: full collections would walk it all through every match.
    freeze_start_up_heap(PYTHON_THRESHOLD)
    try:
        with _per_deal(args.per_deal) as deals_out:
            if options.seats != 2:
                return _run_rotation(args, options, entrants, deals_out)
            return _run_pairs(args, options, entrants, deals_out)
    finally:
        gc.unfreeze()  # a caller in the same process (a test) gets its collector back


class DealsOut:
    """Where each match's scores go, deal by deal, as it ends: a CSV file, or nowhere."""

    def __init__(self, file: TextIO | None) -> None:
        self.file = file
        if file is not None:
            csv.writer(file).writerow(("match", "deal", "name", "chips"))

    def write(self, match: str, scores: dict[str, list[float]]) -> None:
        """``scores``: each contestant's chips a hand in each deal, by name."""
        if self.file is None:
            return
        rows = csv.writer(self.file)
        for deal, chips in enumerate(zip(*scores.values(), strict=True), start=1):
            rows.writerows((match, deal, name, c) for name, c in zip(scores, chips, strict=True))
        self.file.flush()


@contextlib.contextmanager
def _per_deal(path: Path | None) -> Iterator[DealsOut]:
    if path is None:
        yield DealsOut(None)
        return
    try:
        file = path.open("w", newline="")
    except OSError as error:
        raise ValueError(f"cannot write --per-deal {path}: {error.strerror}") from None
    with file:
        yield DealsOut(file)


def _run_pairs(
    args: argparse.Namespace, options: TableOptions, entrants: list[Entrant], deals_out: DealsOut
) -> int:
    results: list[MatchResult] = []
    house_seed = args.house_seed
    for a, b in combinations(entrants, 2):
        result = duplicate_match(
            a,
            b,
            deals=args.hands // 2,
            options=options,
            buy_in=args.buy_in,
            seed=args.seed,
            house=lambda: house_rng(house_seed),
            turn_seconds=options.turn_seconds,
        )
        results.append(result)
        deals_out.write(
            f"{result.a} vs {result.b}",
            {result.a: result.scores, result.b: [0.0 - score for score in result.scores]},
        )
        if args.json:
            print(json.dumps(_as_dict(result)), flush=True)
        else:
            print(result.summary(), flush=True)
            _say_answers(result.answers, options.turn_seconds)
    if len(entrants) > 2 and not args.json:
        print()
        print(cross_table([e.name for e in entrants], results))
    return 0


def _run_rotation(
    args: argparse.Namespace, options: TableOptions, entrants: list[Entrant], deals_out: DealsOut
) -> int:
    if len(entrants) != options.seats:
        raise ValueError(
            f"--seats {options.seats} needs {options.seats} contestants, not {len(entrants)} "
            "(name a bot more than once to seat copies of it)"
        )
    if args.hands < 2 * options.seats:
        raise ValueError(f"--hands must be at least {2 * options.seats} (two rotated deals)")
    _check_whole_deals(args.hands, options.seats, f"deals, each played {options.seats} times")
    house_seed = args.house_seed
    result = rotation_match(
        entrants,
        deals=args.hands // options.seats,
        options=options,
        buy_in=args.buy_in,
        seed=args.seed,
        house=lambda: house_rng(house_seed),
        turn_seconds=options.turn_seconds,
    )
    deals_out.write(f"{options.seats} seats", result.scores)
    if args.json:
        print(json.dumps(_rotation_dict(result)), flush=True)
        return 0
    print(result.summary(), flush=True)
    _say_answers(result.answers, options.turn_seconds)
    return 0


def _say_answers(answers: Answers, turn_seconds: float) -> None:
    for name, count in answers.illegal.items():
        if count:
            print(
                f"  {name} answered {count:,} turns illegally (played as time-outs), "
                f"the first: {answers.first_illegal[name]}"
            )
    for name, count in answers.late.items():
        if count:
            print(
                f"  {name} took longer than the {turn_seconds:g} s turn clock {count:,} times "
                f"(the slowest: {answers.slowest[name]:.2f} s): a server checks or folds "
                "for it then, where the arena waited for its answer"
            )


def _check_whole_deals(hands: int, per_deal: int, what: str) -> None:
    """Refuse a count of hands that no number of whole deals makes: a bot writer who
    asks for N hands is told so, rather than given a match of fewer."""
    if hands % per_deal:
        fewer = hands - hands % per_deal
        raise ValueError(
            f"--hands {hands} is not a whole number of {what}: "
            f"ask for {fewer:,} or {fewer + per_deal:,}"
        )


def cross_table(names: list[str], results: list[MatchResult]) -> str:
    """Each row's chips a hand against each column, and its mean over the columns."""
    score: dict[tuple[str, str], float] = {}
    for r in results:
        # 0.0 - x, not -x: a match that cancels to the chip reads +0.00 from both sides.
        score[(r.a, r.b)], score[(r.b, r.a)] = r.mean, 0.0 - r.mean
    width = max(10, *(len(n) for n in names)) + 2
    lines = [
        "chips a hand".ljust(width) + "".join(n.rjust(width) for n in names) + "mean".rjust(width)
    ]
    for row in names:
        cells = [score.get((row, col)) for col in names]
        played = [c for c in cells if c is not None]
        line = row.ljust(width) + "".join(
            ("" if c is None else f"{c:+.2f}").rjust(width) for c in cells
        )
        lines.append(line + f"{sum(played) / len(played):+.2f}".rjust(width))
    return "\n".join(lines)


def _named(entrants: list[Entrant]) -> list[Entrant]:
    """The same bot entered twice plays itself under two names."""
    seen: dict[str, int] = {}
    named = []
    for e in entrants:
        seen[e.name] = seen.get(e.name, 0) + 1
        named.append(e if seen[e.name] == 1 else Entrant(f"{e.name}#{seen[e.name]}", e.spec))
    return named


def _rotation_dict(r: RotationResult) -> dict[str, Any]:
    return {
        "seats": len(r.names),
        "hands": r.hands,
        "contestants": [
            {
                "name": name,
                "chips_a_hand": round(r.mean(name), 4),
                "interval95": round(r.half_width(name), 4),
                "milli_antes_a_hand": milli_antes(r.mean(name), r.ante),
                **_answers_of(r.answers, name),
            }
            for name in r.names
        ],
        "hands_a_second": round(r.rate),
    }


def _as_dict(r: MatchResult) -> dict[str, Any]:
    return {
        "a": r.a,
        "b": r.b,
        "hands": r.hands,
        "chips_a_hand": round(r.mean, 4),
        "interval95": round(r.half_width, 4),
        "milli_antes_a_hand": milli_antes(r.mean, r.ante),
        "illegal": r.answers.illegal,
        "first_illegal": {name: r.answers.first_illegal.get(name) for name in r.answers.illegal},
        "slowest_answer_seconds": {
            name: round(r.answers.slowest.get(name, 0.0), 6) for name in r.answers.illegal
        },
        "late": r.answers.late,
        "hands_a_second": round(r.rate),
    }


def _answers_of(answers: Answers, name: str) -> dict[str, Any]:
    return {
        "illegal": answers.illegal[name],
        "first_illegal": answers.first_illegal.get(name),
        "slowest_answer_seconds": round(answers.slowest.get(name, 0.0), 6),
        "late": answers.late[name],
    }
