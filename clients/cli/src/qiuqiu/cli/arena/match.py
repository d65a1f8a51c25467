"""Duplicate matches: every deal played twice, the two bots in each other's seats.

Deal ``k`` is a deck and a button. Between two bots, A sits in seat 0 and B in
seat 1 in the first half; in the second half they swap, so each bot gets the
other's tiles and the other's place in the betting order, and the luck of the
deal cancels. A deal's score for A is the mean of A's chips in its two halves;
the match reports the mean over deals with a 95% interval (Student's t times
the standard error of the deal scores, which are independent: 1.96 once the
deals are many, 12.7 for two), in chips and in antes.

Against the dealer, everything but the tiles is as a server seats it, in both
halves: the bot in seat 0, the dealer in seat 1 with the button (the player
acts first). Only the tiles change hands: the second half's deck is the
first's reordered so that each seat is dealt what the other was
(:func:`tiles_swapped`). Between two bots, or two dealers, the button
alternates with the deals and stays put within one.

Every hand starts from fresh stacks: a bot sits down with the buy-in, the
dealer with the table's ``max_buy_in``, as the server tops it up. Chips are
checked: in every half the seats' results sum to zero.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from random import Random

from qiuqiu.cli.arena.seats import Entrant, Player
from qiuqiu.cli.arena.table import Outcome, play_hand
from qiuqiu.engine import Tile, shuffled_deck
from qiuqiu.protocol import TableOptions
from qiuqiu.protocol.fairness import dealt_positions

Z95 = 1.96
T95 = (
    *(12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228),
    *(2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086),
    *(2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042),
)
"""Student's t for a two-sided 95% interval, by degrees of freedom from 1."""
TABLE_ID = "arena"


@dataclass
class Answers:
    """How each contestant answered over a match, by name."""

    illegal: dict[str, int]
    first_illegal: dict[str, str] = field(default_factory=dict)
    """Each contestant's first illegal answer, if it gave one, and why it was."""
    slowest: dict[str, float] = field(default_factory=dict)
    """Each contestant's slowest answer, in seconds."""
    late: dict[str, int] = field(default_factory=dict)
    """Answers slower than the turn clock, which a server would not have waited for."""

    @classmethod
    def of(cls, names: Sequence[str]) -> Answers:
        return cls(dict.fromkeys(names, 0), late=dict.fromkeys(names, 0))

    def add(self, outcome: Outcome, names: Mapping[int, str]) -> None:
        """Count one hand's answers, the seats being ``names``."""
        for seat, count in outcome.illegal.items():
            self.illegal[names[seat]] += count
        for seat, said in outcome.first_illegal.items():
            self.first_illegal.setdefault(names[seat], said)
        for seat, took in outcome.slowest.items():
            self.slowest[names[seat]] = max(took, self.slowest.get(names[seat], 0.0))
        for seat, count in outcome.late.items():
            self.late[names[seat]] += count


@dataclass
class MatchResult:
    """Bot A's results against bot B; ``scores`` are A's chips per deal (mean of the halves)."""

    a: str
    b: str
    ante: int
    answers: Answers
    scores: list[float] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def deals(self) -> int:
        return len(self.scores)

    @property
    def hands(self) -> int:
        return 2 * len(self.scores)

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0

    @property
    def half_width(self) -> float:
        """Half the 95% interval of :attr:`mean`."""
        return half_width(self.scores)

    @property
    def rate(self) -> float:
        return self.hands / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        return (
            f"{self.a} vs {self.b}: {self.mean:+.2f} ± {self.half_width:.2f} chips a hand"
            f"{in_antes(self.mean, self.half_width, self.ante)}, {self.hands:,} hands "
            f"({self.deals:,} deals twice), {self.rate:,.0f} hands/s"
        )


def in_antes(mean: float, half_width: float, ante: int) -> str:
    """`` (+363 ± 44 milli-antes)``; nothing at a table without an ante, where there
    is no such unit."""
    if not ante:
        return ""
    return f" ({1000 * mean / ante:+.0f} ± {1000 * half_width / ante:.0f} milli-antes)"


def milli_antes(chips: float, ante: int) -> float | None:
    """``chips`` in thousandths of the ante, or ``None`` at a table without one."""
    return round(1000 * chips / ante, 1) if ante else None


def half_width(scores: list[float]) -> float:
    """Half the 95% interval of the mean of independent ``scores``."""
    n = len(scores)
    if n < 2:
        return math.inf
    m = sum(scores) / n
    variance = sum((s - m) ** 2 for s in scores) / (n - 1)
    return t95(n - 1) * math.sqrt(variance / n)


def t95(df: int) -> float:
    """Student's t for a 95% interval with ``df`` degrees of freedom: from the table,
    then the normal's with its first two corrections (within 0.001 of t beyond 30)."""
    if df <= len(T95):
        return T95[df - 1]
    z = Z95
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def duplicate_match(
    a: Entrant,
    b: Entrant,
    *,
    deals: int,
    options: TableOptions,
    buy_in: int,
    seed: int,
    house: Callable[[], Random],
    check: Callable[[int, int, int], None] | None = None,
    turn_seconds: float = math.inf,
) -> MatchResult:
    """Play ``deals`` deals twice each; ``check(deal, half, chip_sum)`` sees each half's
    chips. An answer slower than ``turn_seconds`` is counted as late.

    The deals come from ``Random(seed)`` and do not depend on the bots, so two
    matches with one seed deal the same tiles.
    """
    rules = options.rules()
    deck_rng = Random(seed)
    result = MatchResult(a.name, b.name, options.ante, Answers.of((a.name, b.name)))
    dealer_match = a.is_house != b.is_house
    if dealer_match:  # the dealer in seat 1 with the button in both halves
        first = second = (b, a) if a.is_house else (a, b)
        a_seats = (1, 1) if a.is_house else (0, 0)
    else:
        first, second, a_seats = (a, b), (b, a), (0, 1)
    halves = [
        seat_all(first, options, house(), buy_in),
        seat_all(second, options, house(), buy_in),
    ]
    seq = [0, 0]
    started = time.perf_counter()
    for deal in range(deals):
        deck = shuffled_deck(deck_rng)
        seed_hex = deck_rng.randbytes(32).hex()
        chips_for_a = 0
        button = 1 if dealer_match else deal % 2
        for half, (players, stacks, names) in enumerate(halves):
            outcome, seq[half] = play_hand(
                table_id=TABLE_ID,
                hand_id=deal + 1,
                seq=seq[half],
                rules=rules,
                players=players,
                stacks=stacks,
                button=button,
                deck=tiles_swapped(deck, button) if half and dealer_match else deck,
                seed=seed_hex,
                turn_seconds=turn_seconds,
            )
            total = sum(outcome.net.values())
            if check is not None:
                check(deal, half, total)
            if total != 0:
                raise AssertionError(f"deal {deal}, half {half}: {total:+d} chips appeared")
            chips_for_a += outcome.net[a_seats[half]]
            result.answers.add(outcome, names)
        result.scores.append(chips_for_a / 2)
    result.seconds = time.perf_counter() - started
    return result


def tiles_swapped(deck: Sequence[Tile], button: int) -> Sequence[Tile]:
    """``deck`` reordered so that, heads-up with the button on seat ``button``, each seat
    is dealt the tiles the other seat is dealt from ``deck``."""
    dealt = dealt_positions((0, 1), button)
    out = list(deck)
    for seat in (0, 1):
        for position, source in zip(dealt[seat], dealt[1 - seat], strict=True):
            out[position] = deck[source]
    return out


def seat_all(
    by_seat: tuple[Entrant, ...], options: TableOptions, rng: Random, buy_in: int
) -> tuple[dict[int, Player], dict[int, int], dict[int, str]]:
    """Each contestant in the seat of its place in ``by_seat``, met by all the others."""
    # A server's table says it has the dealer bot only where the dealer bot sits: two
    # bots meet at a table opened with --no-bot.
    options = options.model_copy(update={"dealer_bot": any(who.is_house for who in by_seat)})
    players: dict[int, Player] = {}
    stacks: dict[int, int] = {}
    for seat, who in enumerate(by_seat):
        players[seat] = who.seat(TABLE_ID, options, seat, rng)
        stacks[seat] = options.max_buy_in if who.is_house else buy_in
    seats = {n: (who.name, who.is_house, stacks[n]) for n, who in enumerate(by_seat)}
    for player in players.values():
        player.sit(seats)
    return players, stacks, {n: who.name for n, who in enumerate(by_seat)}
