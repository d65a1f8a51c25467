"""Matches of three to six seats: every deal played once per seat, the contestants rotated.

Deal ``k`` is a deck; the button stays on the last seat, so seat ``s`` acts
``s``-th and is dealt the same tiles in every rotation. In rotation ``r``
contestant ``i`` sits in seat ``(i + r) % n``, so over the ``n`` rotations every
contestant plays every seat, with its tiles and its place in the betting
order, and the luck of the deal cancels as it does heads-up. Unlike the server
(and the heads-up match), the house does not keep the button here: it rotates
like everyone, so its figures cover every position, not only the best one.

A deal's score for a contestant is its mean chips over the ``n`` rotations;
the match reports each one's mean over deals with a 95% interval. Every hand
starts from fresh stacks (the buy-in, the house's ``max_buy_in``), and chips
are checked: in every hand the seats' results sum to zero.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from random import Random

from qiuqiu.cli.arena.match import TABLE_ID, Answers, half_width, in_antes, seat_all
from qiuqiu.cli.arena.seats import Entrant
from qiuqiu.cli.arena.table import play_hand
from qiuqiu.engine import shuffled_deck
from qiuqiu.protocol import TableOptions


@dataclass
class RotationResult:
    """Each contestant's chips per deal (the mean of its rotations), by name."""

    names: list[str]
    ante: int
    answers: Answers
    scores: dict[str, list[float]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def deals(self) -> int:
        return len(self.scores[self.names[0]])

    @property
    def hands(self) -> int:
        return self.deals * len(self.names)

    def mean(self, name: str) -> float:
        scores = self.scores[name]
        return sum(scores) / len(scores) if scores else 0.0

    def half_width(self, name: str) -> float:
        """Half the 95% interval of :meth:`mean`."""
        return half_width(self.scores[name])

    @property
    def rate(self) -> float:
        return self.hands / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        lines = [
            f"{len(self.names)} seats: {self.hands:,} hands ({self.deals:,} deals, "
            f"{len(self.names)} rotations each), {self.rate:,.0f} hands/s"
        ]
        width = max(len(n) for n in self.names)
        for name in self.names:
            m, h = self.mean(name), self.half_width(name)
            lines.append(
                f"  {name.ljust(width)}  {m:+.2f} ± {h:.2f} chips a hand{in_antes(m, h, self.ante)}"
            )
        return "\n".join(lines)


def rotation_match(
    entrants: list[Entrant],
    *,
    deals: int,
    options: TableOptions,
    buy_in: int,
    seed: int,
    house: Callable[[], Random],
    check: Callable[[int, int, int], None] | None = None,
    turn_seconds: float = math.inf,
) -> RotationResult:
    """Play ``deals`` deals once per rotation; ``check(deal, rotation, chip_sum)`` sees
    each hand's chips. An answer slower than ``turn_seconds`` is counted as late.

    The deals come from ``Random(seed)`` and do not depend on the bots, so two
    matches with one seed deal the same tiles.
    """
    n = len(entrants)
    names = [e.name for e in entrants]
    if len(set(names)) != n:
        raise ValueError("each contestant of a match needs its own name")
    rules = options.rules()
    deck_rng = Random(seed)
    result = RotationResult(names, options.ante, Answers.of(names), {name: [] for name in names})
    rotations = [
        seat_all(tuple(entrants[(s - r) % n] for s in range(n)), options, house(), buy_in)
        for r in range(n)
    ]
    seq = [0] * n
    started = time.perf_counter()
    for deal in range(deals):
        deck = shuffled_deck(deck_rng)
        seed_hex = deck_rng.randbytes(32).hex()
        chips = dict.fromkeys(names, 0)
        for r, (players, stacks, by_seat) in enumerate(rotations):
            outcome, seq[r] = play_hand(
                table_id=TABLE_ID,
                hand_id=deal + 1,
                seq=seq[r],
                rules=rules,
                players=players,
                stacks=stacks,
                button=n - 1,
                deck=deck,
                seed=seed_hex,
                turn_seconds=turn_seconds,
            )
            total = sum(outcome.net.values())
            if check is not None:
                check(deal, r, total)
            if total != 0:
                raise AssertionError(f"deal {deal}, rotation {r}: {total:+d} chips appeared")
            for seat, net in outcome.net.items():
                chips[by_seat[seat]] += net
            result.answers.add(outcome, by_seat)
        for name in names:
            result.scores[name].append(chips[name] / n)
    result.seconds = time.perf_counter() - started
    return result
