"""Solve the house's heads-up strategies: the shipped ones, or a table's of your own.

    uv run --group solver python -m solver                        # every shipped strategy
    uv run --group solver python -m solver --only 49              # one stack depth (antes behind)
    uv run --group solver python -m solver --rounds 2 --only 49   # and one game
    uv run --group solver python -m solver --out my-strategies \\
        --ante 5 --min-bet 10 --max-bet 200 --behind 40 --tie-rule split   # a table's own
    uv run --group solver python -m solver --out trial --rounds 2 \\
        --model calling_station=0.008 --iterations 400       # another restricted response
    uv run --group solver python -m solver --lean                 # only the lean strategies

The shipped strategies go into the server package and their convergence into
docs/dealer-bot/. With --out, one strategy is solved for the table
described by the other flags (its stack: --behind antes behind the ante)
and written, with its convergence, into that folder; a server started with
--strategies on that folder plays it at such tables. The two-round strategies
are restricted Nash responses to opponent models (RESTRICTED in solver/__main__.py);
--equilibrium solves without them, --model with others. Each two-round
game also gets a lean strategy (-lean files; LEAN in solver/__main__.py): a response
leaning hard on the same models, which the house plays only against an
opponent that has already lost it more than the lean strategy can lose
(qiuqiu.server.house.credit).

Deterministic: CFR+ samples nothing, so the same iterations give the same files
(no seed is needed; the package pins OpenBLAS's kernel where it can, since
another kernel or thread count sums in another order and moves a few weights by
a 255th). The convergence is the exploitability after each block of iterations,
measured by the exact best response; the CPU time of each solve is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from qiuqiu.engine import TieRule
from qiuqiu.server.house.book import SUFFIX, stakes_header, write
from qiuqiu.server.house.holdings import HOLDINGS
from qiuqiu.server.house.tree import Stakes, Tree
from solver.buckets import two_rounds
from solver.cfr import Game, Showdowns, Solver, card_incidence, check_chances
from solver.equity import equity_matrix
from solver.export import quantised, strategy_bytes
from solver.models import Model, calling_station, example_bot, straightforward

ROOT = Path(__file__).resolve().parent.parent
STRATEGIES = ROOT / "server/src/qiuqiu/server/house/strategies"
CONVERGENCE = ROOT / "docs/dealer-bot"

ANTE = 10
DEPTHS = (1, 2, 3, 5, 9, 19, 49, 99, 249, 999)
"""Chips behind after the ante, in antes."""
DEFAULT_DEPTH = 49
"""The default table's: a 500 buy-in."""
ITERATIONS = 1000
DEEP_ITERATIONS = {999: 3000}
"""The deepest stacks converge slowest (more chips to bluff with): they get more."""
SHIPPED: tuple[tuple[int, TieRule, tuple[int, ...]], ...] = (
    (1, "highest_tile", DEPTHS),
    (1, "split", (49,)),
    (2, "highest_tile", (1, 2, 3, 5, 19, 49, 99)),
    (2, "split", (49,)),
)
"""(betting rounds, tie rule, depths): each one solve and one file."""
RESTRICTED: dict[int, tuple[tuple[float, Model], ...]] = {
    1: (),
    2: ((0.002, calling_station), (0.006, example_bot)),
}
"""By betting rounds, the opponent models a strategy is a restricted Nash response to,
with the chance the solve gives each at the default depth (:mod:`solver.models`). One
round: none, an equilibrium, which already takes more from such bots than the old
policy did. Two rounds: a little of two bots the equilibrium did not punish enough, as
much as keeps the exploitability well under 50 milli-antes a hand (docs/dealer-bot.md
has the trade for other chances)."""


LEAN: dict[int, tuple[tuple[float, Model], ...]] = {
    1: (),
    2: ((0.1, calling_station), (0.3, example_bot)),
}
"""By betting rounds, the models a lean strategy responds to, with their chances: far
more than :data:`RESTRICTED`'s, so it takes most of what a best response to them would,
and is exploitable by 1 to 5 antes a hand, more with deeper stacks (its header says how
much exactly). One round: none, the equilibrium already takes more from the simple
bots than the old policy did."""
LEAN_ITERATIONS = 300
"""A lean strategy's exploitability is its models' price, not the solve's error: it is
flat after the first hundred iterations."""
LEAN_SUFFIX = "-lean"


def restricted_at(stakes: Stakes) -> tuple[tuple[float, Model], ...]:
    """The shipped models at these stakes: deeper than the default, the same chance
    costs more exploitability (the pots a mistake is punished in are bigger), so each
    chance falls in proportion to the depth."""
    scale = min(1.0, DEFAULT_DEPTH * stakes.ante / stakes.stack)
    return tuple((chance * scale, model) for chance, model in RESTRICTED[stakes.betting_rounds])


MODELS: dict[str, Model] = {m.__name__: m for m in (calling_station, example_bot, straightforward)}
"""Every opponent model, by name: a file's header says what its strategy wins from each."""


def showdowns(tie_rule: TieRule) -> Showdowns:
    equity, meets = equity_matrix(tie_rule)
    cards, pairs = card_incidence([[t.index for t in h] for h in HOLDINGS], 28)
    return Showdowns(equity, meets, cards, pairs, full_overlap=True)


def game(rounds: int, tie_rule: TieRule) -> tuple[Game, dict[str, object]]:
    """The game to solve, and what a strategy file's header must say of its buckets."""
    if rounds == 1:
        return showdowns(tie_rule), {}
    bucketed, buckets = two_rounds(tie_rule)
    header = {
        "holdings": buckets.holdings.tolist(),
        "hands": buckets.hands.tolist(),
        "hand_buckets": bucketed.hand_buckets,
    }
    return bucketed, {"buckets": header}


def name(stakes: Stakes, tie_rule: TieRule) -> str:
    """``r1-highesttile-a10-m10-d49``: rounds, tie rule, ante, min bet, antes behind;
    then ``-x`` and ``-r`` for a bet or raise limit."""
    s = stakes
    out = f"r{s.betting_rounds}-{tie_rule.replace('_', '')}-a{s.ante}-m{s.min_bet}"
    out += f"-d{s.stack // s.ante}"
    if s.max_bet is not None:
        out += f"-x{s.max_bet}"
    if s.max_raises is not None:
        out += f"-r{s.max_raises}"
    return out


def solve(
    stakes: Stakes,
    tie_rule: TieRule,
    played: tuple[Game, dict[str, object]],
    restricted: Sequence[tuple[float, Model]],
    iterations: int,
    block: int,
    out: tuple[Path, Path],
    *,
    lean: bool = False,
) -> None:
    """Solve and write the strategy into ``out[0]``, its convergence into ``out[1]``;
    ``lean`` marks it as a lean strategy (:data:`LEAN`) in its name and header."""
    label = name(stakes, tie_rule) + (LEAN_SUFFIX if lean else "")
    ante = stakes.ante
    solver = Solver(Tree(stakes), played[0], restricted)
    curve: list[dict[str, float]] = []
    started = time.process_time()
    while solver.iterations < iterations:
        solver.iterate(min(block, iterations - solver.iterations))
        e = solver.exploitability()
        curve.append({"iterations": solver.iterations, "milli_antes": 1000 * e / ante})
        print(f"{label}: {solver.iterations} iterations, {1000 * e / ante:.1f} mA/hand", flush=True)
    shipped = quantised(solver)
    e = (solver.best_response_value(0, shipped) + solver.best_response_value(1, shipped)) / 2
    header = {
        "stakes": stakes_header(stakes),
        "tie_rule": tie_rule,
        "iterations": solver.iterations,
        "exploitability_milli_antes": round(1000 * e / ante, 2),
        "best_response_vs_second_seat_milli_antes": round(
            1000 * solver.best_response_value(0, shipped) / ante, 2
        ),
        "value_first_seat_milli_antes": round(1000 * solver.value(shipped) / ante, 2),
        "restricted": {model.__name__: chance for chance, model in restricted},
        "lean": lean,
        "button_wins_from_milli_antes": {
            model.__name__: round(
                1000 * solver.value_against(1, solver.fixed(model), shipped) / ante, 2
            )
            for model in MODELS.values()
        },
    }
    strategies, convergence = out
    strategies.mkdir(parents=True, exist_ok=True)
    convergence.mkdir(parents=True, exist_ok=True)
    write(strategies / f"{label}{SUFFIX}", {**header, **played[1]}, strategy_bytes(solver, shipped))
    # The CPU time is printed, not written: the files are data that the same command
    # writes again byte for byte, and a solve's time differs from machine to machine.
    record = {**header, "curve": curve}
    (convergence / f"{label}.json").write_text(json.dumps(record, indent=1) + "\n")
    print(
        f"{label}: written, {header['exploitability_milli_antes']} mA/hand,"
        f" {time.process_time() - started:.0f} s of CPU",
        flush=True,
    )


def model_chance(text: str) -> tuple[float, Model]:
    """``calling_station=0.01``: a model and the chance the solve gives it."""
    name, _, chance = text.partition("=")
    if name not in MODELS:
        raise argparse.ArgumentTypeError(f"no model {name!r}: choose from {', '.join(MODELS)}")
    try:
        return float(chance), MODELS[name]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{chance!r} is not a chance, such as 0.01") from None


def count(text: str) -> int:
    """A number of iterations: at least one, since none solves nothing."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more (got {value})")
    return value


TABLE_FLAGS = ("ante", "min_bet", "max_bet", "max_raises", "behind")
"""What describes a table of one's own: without --out, the shipped stakes are solved."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m solver",
        description=__doc__,
        formatter_class=argparse.RawTextHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument(
        "--iterations", type=count, help=f"per solve ({ITERATIONS}; {DEEP_ITERATIONS} deeper)"
    )
    parser.add_argument(
        "--block", type=count, default=50, help="iterations between measurements (50)"
    )
    parser.add_argument("--only", type=int, help="solve only this depth (antes behind)")
    parser.add_argument("--rounds", type=int, choices=(1, 2), help="betting rounds")
    parser.add_argument("--tie-rule", choices=("highest_tile", "split"), help="tie rule")
    parser.add_argument(
        "--equilibrium",
        action="store_true",
        help="solve for an equilibrium, with no opponent models (two rounds have two)",
    )
    parser.add_argument(
        "--lean",
        action="store_true",
        help="solve only the lean strategies (those of the games that have them)",
    )
    parser.add_argument(
        "--model",
        type=model_chance,
        action="append",
        metavar="MODEL=CHANCE",
        help=f"respond to this model instead ({', '.join(MODELS)}); repeatable",
    )
    table = parser.add_argument_group("a table's own strategy (with --out)")
    table.add_argument("--out", type=Path, help="solve one table's strategy into this folder")
    table.add_argument("--ante", type=int, help=f"({ANTE})")
    table.add_argument("--min-bet", type=int, help="(the ante)")
    table.add_argument("--max-bet", type=int, help="most a bet or raise may add (no limit)")
    table.add_argument("--max-raises", type=int, help="raises a round (no limit)")
    table.add_argument("--behind", type=int, help=f"antes behind the ante ({DEFAULT_DEPTH})")
    args = parser.parse_args(argv)
    given = [
        f"--{name.replace('_', '-')}" for name in TABLE_FLAGS if getattr(args, name) is not None
    ]
    if args.out is None and given:
        # Else the shipped strategies would be solved at their own stakes and rewritten.
        parser.error(f"{', '.join(given)}: the stakes of a table of your own, solved with --out")
    if args.out is not None and args.only is not None:
        parser.error("--only picks among the shipped strategies; --out solves a table's own")
    if args.out is None and not any(
        args.only in (None, *depths)
        and args.rounds in (None, rounds)
        and args.tie_rule in (None, tie_rule)
        for rounds, tie_rule, depths in SHIPPED
    ):
        shipped = "; ".join(
            f"{rounds} round{'s' * (rounds > 1)}, {tie_rule}: {', '.join(map(str, depths))}"
            for rounds, tie_rule, depths in SHIPPED
        )
        parser.error(f"no shipped strategy is of that depth and game (antes behind: {shipped})")
    args.ante = ANTE if args.ante is None else args.ante
    args.behind = DEFAULT_DEPTH if args.behind is None else args.behind
    np.seterr(all="raise", under="ignore")
    if args.equilibrium and args.model:
        parser.error("--equilibrium solves with no models: give it or --model, not both")
    if args.lean and (args.equilibrium or args.model):
        parser.error("--lean solves with the lean models: not with --equilibrium or --model")
    if args.out is not None and (args.ante < 1 or args.behind < 1):
        parser.error("--ante and --behind must be at least 1")
    try:
        check_chances(args.model or ())
    except ValueError as exc:
        parser.error(str(exc))
    solve_all(args)
    return 0


def solve_all(args: argparse.Namespace) -> None:
    """The table's strategy with ``--out``, else the shipped ones asked for."""
    if args.out is not None:
        stakes = Stakes(
            ante=args.ante,
            min_bet=args.min_bet or args.ante,
            max_bet=args.max_bet,
            max_raises=args.max_raises,
            stack=args.behind * args.ante,
            betting_rounds=args.rounds or 1,
        )
        tie_rule: TieRule = args.tie_rule or "highest_tile"
        played = game(stakes.betting_rounds, tie_rule)
        out = (args.out, args.out)
        if not args.lean:
            restricted = () if args.equilibrium else args.model or restricted_at(stakes)
            iterations = args.iterations or ITERATIONS
            solve(stakes, tie_rule, played, restricted, iterations, args.block, out)
        _solve_lean(stakes, tie_rule, played, args, out)
        return
    for rounds, tie_rule, depths in SHIPPED:
        wanted = [d for d in depths if args.only in (None, d)]
        if not wanted or args.rounds not in (None, rounds) or args.tie_rule not in (None, tie_rule):
            continue
        played = game(rounds, tie_rule)
        for depth in wanted:
            stakes = Stakes(
                ante=ANTE,
                min_bet=ANTE,
                max_bet=None,
                max_raises=None,
                stack=depth * ANTE,
                betting_rounds=rounds,
            )
            out = (STRATEGIES, CONVERGENCE)
            if not args.lean:
                iterations = args.iterations or DEEP_ITERATIONS.get(depth, ITERATIONS)
                restricted = () if args.equilibrium else args.model or restricted_at(stakes)
                solve(stakes, tie_rule, played, restricted, iterations, args.block, out)
            _solve_lean(stakes, tie_rule, played, args, out)


def _solve_lean(
    stakes: Stakes,
    tie_rule: TieRule,
    played: tuple[Game, dict[str, object]],
    args: argparse.Namespace,
    out: tuple[Path, Path],
) -> None:
    """The lean strategy of these stakes, if their game has one and no other models or
    an equilibrium were asked for."""
    models = LEAN[stakes.betting_rounds]
    if not models or args.equilibrium or args.model:
        return
    iterations = args.iterations or LEAN_ITERATIONS
    solve(stakes, tie_rule, played, models, iterations, args.block, out, lean=True)


if __name__ == "__main__":
    sys.exit(main())
