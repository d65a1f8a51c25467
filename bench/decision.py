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
hand's situations (and turns) in order with a fresh
:class:`~qiuqiu.server.house.record.Memo` (the house's notes on a hand), so every
hand pays for its look-ups once, as on the server. The floor is one
``rng.choices`` over five weights: the sampling the solved policy cannot do without.

Each policy is also measured **from the turn message**, as each bot decides on
the server: the solved policy's bot first makes its
:class:`~qiuqiu.server.house.record.Situation` from its record of the hand and
the ``turn_started`` (:meth:`~qiuqiu.server.house.record.SeenHand.situation`);
the threshold policy's bot, as it was before the solved strategies, counted the
opponents in the turn's seats, looked up its win chance and made the engine's
legal actions from the turn's (:func:`threshold_from_turn`).

The solved policy is the compiled one (``house/_native.c``) where ``uv sync`` built
it, else the same decisions in Python; the report says which ran.

The ``--repeat`` passes are rounds of one pass of each, in turn, so a host whose
speed drifts slows all alike; the figures are each one's median over the
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
from typing import Any, Literal

from bench import plain
from bench.text_grid import grid
from qiuqiu import engine
from qiuqiu.cli.arena.match import TABLE_ID
from qiuqiu.cli.arena.seats import HousePlayer, SdkPlayer, load_bot
from qiuqiu.cli.arena.table import play_hands
from qiuqiu.cli.bot import Action, Split
from qiuqiu.engine import Tile
from qiuqiu.protocol import ChipRange, LegalActions, TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.server.csprng import BatchedSystemRandom
from qiuqiu.server.house import native, policy
from qiuqiu.server.house.record import Memo, Random, SeenHand, Situation
from qiuqiu.server.strategy import Decision, win_chance
from qiuqiu.server.strategy import decide as threshold_decide

EXPLOITERS = Path(__file__).resolve().parent / "exploiters.py"


@dataclasses.dataclass(frozen=True)
class HouseTurn:
    """A turn of the house as its bot got it: its record of the hand then, the message
    and its tiles."""

    record: SeenHand
    message: wire.TurnStarted
    tiles: tuple[Tile, ...]
    options: TableOptions


class Recording(HousePlayer):
    def __init__(self, options: TableOptions, rng: random.Random) -> None:
        super().__init__("dealer", 1, options, rng, solved=True)
        self.seen: list[Situation] = []
        self.turns: list[HouseTurn] = []

    def act(self, turn: wire.TurnStarted | wire.CuttingStarted) -> Action | Split:
        if isinstance(turn, wire.TurnStarted):
            tiles = tuple(self.record.tiles)
            self.seen.append(self.record.situation(turn, self.options, tiles))
            self.turns.append(HouseTurn(_copied(self.record), turn, tiles, self.options))
        return super().act(turn)


def _copied(record: SeenHand) -> SeenHand:
    """The record as it is now: it goes on changing as the hand is played."""
    copy = dataclasses.replace(record)
    copy.bets, copy.tiles = dict(record.bets), list(record.tiles)
    return copy


def solved_from_turn(turn: HouseTurn, rng: Random) -> Decision:
    return policy.decide(turn.record.situation(turn.message, turn.options, turn.tiles), rng)


def threshold_from_turn(turn: HouseTurn) -> Decision:
    """The threshold policy's bot at its turn, before the solved strategies (279c3e5^,
    ``DealerBot._bet``), but for the action message both bots make alike. It made the
    engine's legal actions from the turn's, which the policies no longer need."""
    message, legal = turn.message, turn.message.legal
    assert legal is not None
    seat = turn.record.seat
    opponents = sum(1 for s in message.seats if not s.folded and s.seat != seat)
    chance = win_chance(turn.tiles, max(opponents, 1), turn.options.tie_rule)
    return threshold_decide(chance, pot=message.pot, to_call=legal.call or 0, legal=_engine(legal))


def _engine(legal: LegalActions) -> engine.LegalActions:
    """The threshold bot's copy of a turn's legal actions (279c3e5^, ``_engine_legal``)."""

    def chips(r: ChipRange | None) -> engine.ChipRange | None:
        return None if r is None else engine.ChipRange(r.min, r.max)

    return engine.LegalActions(
        check=legal.check,
        fold=legal.fold,
        call=legal.call,
        bet=chips(legal.bet),
        raise_to=chips(legal.raise_to),
        declare_cut=legal.declare_cut,
    )


def recorded(hands: int, seed: int, rounds: Literal[1, 2] = 1) -> Recording:
    """The house of ``hands`` hands played against :class:`bench.exploiters.SizedByStrength`,
    with every situation and turn it decided at."""
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
    return house


def new_notes(turns: Sequence[HouseTurn]) -> None:
    """Each hand's turns with new notes, one between them, as a hand's record has."""
    fresh: dict[int, Memo] = {}
    for turn in turns:
        turn.record.memo = fresh.setdefault(id(turn.record.memo), Memo())


def replayed(seen: Sequence[Situation]) -> list[Situation]:
    """``seen`` again, each hand with fresh notes."""
    fresh: dict[int, Memo] = {}
    return [dataclasses.replace(s, memo=fresh.setdefault(id(s.memo), Memo())) for s in seen]


def per_call(work: Callable[[Any], object], inputs: Sequence[Any]) -> float:
    """CPU seconds per call of ``work``, once on each of ``inputs``."""
    start = process_time()
    for each in inputs:
        work(each)
    return (process_time() - start) / len(inputs)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.decision",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--hands", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=15, help="rounds (%(default)s)")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--rounds", type=int, choices=(1, 2), default=1, help="betting rounds")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    policy.book()
    house = recorded(args.hands, args.seed, args.rounds)
    seen, turns = house.seen, house.turns
    rng = BatchedSystemRandom()
    for s, turn in zip(seen, turns, strict=True):  # warm both policies' caches
        policy.decide(s, rng)
        policy.threshold(s)
        solved_from_turn(turn, rng)
    count = len(seen) * args.repeat
    fresh = [replayed(seen) for _ in range(args.repeat)]
    # The inputs out of the collector's sight, as the server freezes its start-up heap:
    # a full collection walking tens of thousands of situations would be timed otherwise.
    gc.collect()
    gc.freeze()
    weights = [51, 51, 51, 51, 51]
    options = range(5)
    rounds: dict[str, list[float]] = {}
    for replay in fresh:
        new_notes(turns)
        passes: list[tuple[str, Callable[[Any], object], Sequence[Any]]] = [
            ("solved", lambda s: policy.decide(s, rng), replay),
            ("threshold", policy.threshold, seen),
            ("floor", lambda _: rng.choices(options, weights=weights), seen),
            ("solved, from the turn", lambda t: solved_from_turn(t, rng), turns),
            ("threshold, from the turn", threshold_from_turn, turns),
        ]
        for name, decide, inputs in passes:
            rounds.setdefault(name, []).append(per_call(decide, inputs))
    figures = {name: statistics.median(each) for name, each in rounds.items()}
    ratios = {
        kind: sorted(
            s / t for s, t in zip(rounds[f"solved{kind}"], rounds[f"threshold{kind}"], strict=True)
        )
        for kind in ("", ", from the turn")
    }
    compiled = native.decide is not None
    if args.json:
        print(
            json.dumps(
                {
                    "compiled": compiled,
                    "decisions": count,
                    "rounds": args.repeat,
                    "us_per_decision": {k: round(v * 1e6, 2) for k, v in figures.items()},
                    "solved_over_threshold": round(statistics.median(ratios[""]), 3),
                    "from_the_turn": round(statistics.median(ratios[", from the turn"]), 3),
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
        "the solved decision ran compiled (house/_native.c)"
        if compiled
        else "the solved decision ran in Python: no C compiler when the server was installed"
    )
    for kind, each in ratios.items():
        print(
            f"solved / threshold{kind}: {statistics.median(each):.2f}x, the median of"
            f" {args.repeat} rounds ({each[0]:.2f}x to {each[-1]:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
