"""Engine benchmark: hands compared and whole hands played per second, each beside a floor.

Run from the repository root::

    uv run python -m bench.engine [--compares N] [--hands N] [--seed S] [--json]

Two figures, each measured beside a floor that does only the unavoidable part
of the same work, in the same run and with the same counts, so the ratio says
what the engine adds and survives a change of machine:

- ``compare``: :func:`qiuqiu.engine.compare` over N random pairs of disjoint
  hands (drawn before the clock starts); its floor is two bare dict look-ups
  per pair in a table of the same size (BENCHMARKS.md: comparing two hands is a
  table look-up).
- ``hand``: complete hands, 2 to 6 seats under a few table rules, each dealt
  from a seeded shuffle and played with random legal actions until it ends;
  the floor shuffles a 28-tile list with the same kind of RNG, once a hand.
  The random player's choices are part of the measured time.

``random`` is fine here: the benchmark, not the engine, draws the decks.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from time import perf_counter

from bench import plain
from bench.text_grid import grid
from qiuqiu.engine import (
    ALL_TILES,
    Hand,
    HandState,
    Phase,
    TableRules,
    Tile,
    all_ranks,
    compare,
    cuts,
)

DEFAULT_COMPARES = 1_000_000
DEFAULT_HANDS = 20_000
DEFAULT_SEED = 20_475

# The tables the random hands are played at, in turn.
RULES = (
    TableRules(),
    TableRules(betting_rounds=2),
    TableRules(manual_split=True),
    TableRules(tie_rule="split", max_bet=100, max_raises=2),
)

Setup = tuple[TableRules, dict[int, int], int]


@dataclass(frozen=True, slots=True)
class Figure:
    """``count`` operations took ``seconds``; the floor did as many in ``floor_seconds``."""

    name: str
    unit: str
    count: int
    seconds: float
    floor_seconds: float

    @property
    def rate(self) -> float:
        return self.count / max(self.seconds, 1e-9)

    @property
    def floor_rate(self) -> float:
        return self.count / max(self.floor_seconds, 1e-9)

    @property
    def ratio(self) -> float:
        """How many times longer the engine takes than the floor."""
        return self.floor_rate / self.rate

    def as_dict(self) -> dict[str, float | int | str]:
        return {
            "unit": self.unit,
            "count": self.count,
            "seconds": self.seconds,
            "floor_seconds": self.floor_seconds,
            "rate": self.rate,
            "floor_rate": self.floor_rate,
            "ratio": self.ratio,
        }


# -- comparing hands -----------------------------------------------------------


def disjoint_pairs(rng: random.Random, count: int) -> list[tuple[Hand, Hand]]:
    """``count`` pairs of hands that share no tile, uniformly drawn."""
    hands = [r.hand for r in all_ranks()]
    pairs: list[tuple[Hand, Hand]] = []
    while len(pairs) < count:
        draws = 2 * (count - len(pairs)) + 8  # about half the pairs drawn share a tile
        firsts, seconds = rng.choices(hands, k=draws), rng.choices(hands, k=draws)
        pairs += ((a, b) for a, b in zip(firsts, seconds, strict=True) if not a.mask & b.mask)
    return pairs[:count]


def bench_compares(count: int, seed: int) -> Figure:
    pairs = disjoint_pairs(random.Random(seed), count)
    keys = [(a.mask, b.mask) for a, b in pairs]
    table = {r.hand.mask: r for r in all_ranks()}
    cmp = compare

    start = perf_counter()
    for a, b in pairs:
        cmp(a, b)
    seconds = perf_counter() - start

    start = perf_counter()
    for x, y in keys:
        table[x]
        table[y]
    floor_seconds = perf_counter() - start

    return Figure("compare", "compares", count, seconds, floor_seconds)


# -- playing hands -------------------------------------------------------------


def setups(rng: random.Random, count: int) -> list[Setup]:
    """Tables to play at: rules, 2 to 6 seats with random stacks, and a button."""
    tables: list[Setup] = []
    for i in range(count):
        seats = sorted(rng.sample(range(6), rng.randint(2, 6)))
        stacks = {seat: rng.randint(5, 1_000) for seat in seats}
        tables.append((RULES[i % len(RULES)], stacks, rng.choice(seats)))
    return tables


def play_out(state: HandState, rng: random.Random) -> int:
    """Play random legal actions until the hand ends; the number of actions taken."""
    actions = 0
    while not state.is_over:
        actions += 1
        if state.phase is Phase.CUTTING:
            cutter = state.pending_cuts[0]
            if rng.random() < 0.25:
                state.time_out(cutter)
            else:
                state.declare_cut(cutter, rng.choice(cuts(Hand(state.seats[cutter].tiles))))
            continue
        seat = state.actor
        assert seat is not None, "a betting round with nobody to act"
        legal = state.legal_actions(seat)
        roll = rng.random()
        if roll < 0.03:
            state.time_out(seat)
        elif legal.raise_to is not None and roll < 0.15:
            state.raise_to(seat, rng.randint(legal.raise_to.min, legal.raise_to.max))
        elif legal.bet is not None and roll < 0.35:
            state.bet(seat, rng.randint(legal.bet.min, legal.bet.max))
        elif legal.fold and roll < 0.45:
            state.fold(seat)
        elif legal.check:
            state.check(seat)
        else:
            state.call(seat)
    return actions


def bench_hands(count: int, seed: int) -> tuple[Figure, int]:
    tables = setups(random.Random(seed), count)
    tiles = list(ALL_TILES)

    rng = random.Random(seed)
    actions = 0
    start = perf_counter()
    for rules, stacks, button in tables:
        deck: list[Tile] = tiles.copy()
        rng.shuffle(deck)
        actions += play_out(HandState.start(rules, stacks, button, deck), rng)
    seconds = perf_counter() - start

    rng = random.Random(seed)
    start = perf_counter()
    for _ in tables:
        deck = tiles.copy()
        rng.shuffle(deck)
    floor_seconds = perf_counter() - start

    return Figure("hand", "hands", count, seconds, floor_seconds), actions


# -- reporting -----------------------------------------------------------------


def table(figures: Sequence[Figure], floors: Sequence[str]) -> str:
    header = ("figure", "count", "engine /s", "floor /s", "floor/engine")
    rows = [
        (f.name, f"{f.count:,}", f"{f.rate:,.0f}", f"{f.floor_rate:,.0f}", f"{f.ratio:,.1f}x")
        for f in figures
    ]
    return "\n".join([grid(header, rows), "", *floors])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.engine",
        description=plain(__doc__, first_paragraph=True),
    )
    parser.add_argument(
        "--compares", type=int, default=DEFAULT_COMPARES, help="hand pairs to compare"
    )
    parser.add_argument("--hands", type=int, default=DEFAULT_HANDS, help="hands to play")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the random.Random")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    if args.compares < 1 or args.hands < 1:
        parser.error("--compares and --hands must be at least 1")

    compares = bench_compares(args.compares, args.seed)
    hands, actions = bench_hands(args.hands, args.seed)

    if args.json:
        report = {
            "seed": args.seed,
            "compare": compares.as_dict(),
            "hand": {**hands.as_dict(), "actions": actions},
        }
        print(json.dumps(report))
        return 0
    print(f"qiuqiu.engine benchmark, seed {args.seed}, Python {sys.version.split()[0]}")
    print()
    floors = [
        "compare: qiuqiu.engine.compare on pre-drawn disjoint hands;"
        " floor: two bare dict look-ups per pair",
        f"hand: a whole hand of random legal actions ({actions / hands.count:.1f} a hand, "
        "2-6 seats); floor: shuffling a 28-tile list",
    ]
    print(table([compares, hands], floors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
