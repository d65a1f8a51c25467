"""What one dealer-bot decision costs: the solved strategy beside the old threshold policy.

Run from the repository root::

    uv run python -m bench.decision [--hands N] [--repeat R] [--rounds 2] [--json]

The situations are real: the arena plays ``--hands`` hands of
:class:`bench.exploiters.SizedByStrength` against the dealer and keeps every
:class:`~qiuqiu.server.house.record.Situation` the dealer decided from. Each
is then decided ``--repeat`` times by :func:`qiuqiu.server.house.policy.decide`
(translation, look-up, sampling) and by :func:`~qiuqiu.server.house.policy.threshold`
(the policy before the solved one: its win chance, then the thresholds), after one warm-up pass
so that both policies' caches are full, as they are on a server that has
played for a while. The solved policy draws from the server's own CSPRNG
(:mod:`qiuqiu.server.csprng`), as it does when serving. Each pass replays each
hand's situations in order with a fresh :class:`~qiuqiu.server.house.record.Memo`
(the house's notes on a hand), so every hand pays for its look-ups once, as on
the server. The floor is one ``rng.choices`` over five weights: the sampling
the solved policy cannot do without.

The ``--repeat`` passes are rounds of one pass of each, in turn, so a host whose
speed drifts slows all three alike; the figures are each one's median over the
rounds, and the ratio of the two policies is the median of each round's own.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import random
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from time import process_time
from typing import Literal

from bench.text_grid import grid
from qiuqiu.cli.arena.match import TABLE_ID
from qiuqiu.cli.arena.seats import HousePlayer, SdkPlayer, load_bot
from qiuqiu.cli.arena.table import play_hands
from qiuqiu.cli.bot import Action, Split
from qiuqiu.protocol import TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.server.csprng import BatchedSystemRandom
from qiuqiu.server.house import policy
from qiuqiu.server.house.record import Memo, Situation

EXPLOITERS = Path(__file__).resolve().parent / "exploiters.py"


class Recording(HousePlayer):
    def __init__(self, options: TableOptions, rng: random.Random) -> None:
        super().__init__("dealer", 1, options, rng, solved=True)
        self.seen: list[Situation] = []

    def act(self, turn: wire.TurnStarted | wire.CuttingStarted) -> Action | Split:
        if isinstance(turn, wire.TurnStarted):
            self.seen.append(self.record.situation(turn, self.options, tuple(self.record.tiles)))
        return super().act(turn)


def situations(hands: int, seed: int, rounds: Literal[1, 2] = 1) -> list[Situation]:
    options = TableOptions(betting_rounds=rounds)
    rng = random.Random(seed)
    house = Recording(options, rng)
    bot = SdkPlayer("bot", load_bot(f"{EXPLOITERS}:SizedByStrength"), TABLE_ID, options, 0)
    seats = {0: ("bot", False, 500), 1: ("dealer", True, 10_000)}
    house.sit(seats)
    bot.sit(seats)
    play_hands(
        hands,
        table_id=TABLE_ID,
        rules=options.rules(),
        players={0: bot, 1: house},
        stacks={0: 500, 1: 10_000},
        button=1,
        rng=rng,
    )
    return house.seen


def replayed(seen: Sequence[Situation]) -> list[Situation]:
    """``seen`` again, each hand with fresh notes."""
    fresh: dict[int, Memo] = {}
    return [dataclasses.replace(s, memo=fresh.setdefault(id(s.memo), Memo())) for s in seen]


def per_call(work: Callable[[Situation], object], situations: Sequence[Situation]) -> float:
    """CPU seconds per call of ``work``, once on each of ``situations``."""
    start = process_time()
    for situation in situations:
        work(situation)
    return (process_time() - start) / len(situations)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.decision",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--hands", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=15, help="rounds (%(default)s)")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--rounds", type=int, choices=(1, 2), default=1, help="betting rounds")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    policy.book()
    seen = situations(args.hands, args.seed, args.rounds)
    rng = BatchedSystemRandom()
    for s in seen:  # warm both policies' caches
        policy.decide(s, rng)
        policy.threshold(s)
    count = len(seen) * args.repeat
    fresh = [replayed(seen) for _ in range(args.repeat)]
    # The inputs out of the collector's sight, as the server freezes its start-up heap:
    # a full collection walking tens of thousands of situations would be timed otherwise.
    gc.collect()
    gc.freeze()
    weights = [51, 51, 51, 51, 51]
    options = range(5)
    rounds: dict[str, list[float]] = {"solved": [], "threshold": [], "floor": []}
    for replay in fresh:
        rounds["solved"].append(per_call(lambda s: policy.decide(s, rng), replay))
        rounds["threshold"].append(per_call(policy.threshold, seen))
        rounds["floor"].append(per_call(lambda _: rng.choices(options, weights=weights), seen))
    figures = {name: statistics.median(each) for name, each in rounds.items()}
    ratios = [s / t for s, t in zip(rounds["solved"], rounds["threshold"], strict=True)]
    ratio = statistics.median(ratios)
    if args.json:
        print(
            json.dumps(
                {
                    "decisions": count,
                    "rounds": args.repeat,
                    "us_per_decision": {k: round(v * 1e6, 2) for k, v in figures.items()},
                    "solved_over_threshold": round(ratio, 3),
                }
            )
        )
        return 0
    print(
        grid(
            ["policy", "decisions", "µs CPU each", "floor ratio"],
            [
                [name, f"{count:,}", f"{v * 1e6:.1f}", f"{v / figures['floor']:.1f}x"]
                for name, v in figures.items()
            ],
        )
    )
    print(
        f"solved / threshold: {ratio:.2f}x, the median of {args.repeat} rounds"
        f" ({min(ratios):.2f}x to {max(ratios):.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
