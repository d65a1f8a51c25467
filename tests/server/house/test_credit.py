"""The house's credit with a player: what it may risk leaning on that player's mistakes.

The arithmetic is checked against the standard library; simulated sessions
check that luck alone is rarely risked and gifts are; whole hands through the
engine check that the record counts each hand the house played from a solved
strategy, and only those, and that the house leans only on the button and
only with its credit.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from qiuqiu.cli.arena.seats import HousePlayer, SdkPlayer, load_bot
from qiuqiu.cli.arena.table import play_hands
from qiuqiu.protocol import TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.server.house.credit import MIN_HANDS, Credit, Z
from qiuqiu.server.house.record import SeenHand

EXAMPLES = Path(__file__).parents[3] / "clients" / "examples"
RISK = 25.0


def test_the_spread_is_measured_from_the_results() -> None:
    rng = random.Random(1)
    gains = [rng.gauss(3, 40) for _ in range(500)]
    credit = Credit()
    for gain in gains:
        credit.add(gain)
    assert credit.total == pytest.approx(sum(gains))
    spread = statistics.stdev(gains) * len(gains) ** 0.5
    assert credit.covers(sum(gains) - Z * spread - 1e-6)
    assert not credit.covers(sum(gains) - Z * spread + 1e-6)


def test_nothing_is_risked_before_the_spread_is_measured() -> None:
    credit = Credit()
    for hand in range(MIN_HANDS - 1):
        credit.add(1000 + hand % 2)
    assert not credit.covers(RISK)
    credit.add(1000)
    assert credit.covers(RISK)


def sessions_that_lean(mean: float, sessions: int = 200, hands: int = 3000) -> float:
    """The share of simulated sessions whose credit ever covers :data:`RISK`, each hand
    a result of ``mean`` chips above what the house was sure of, spread as a
    two-round hand's are."""
    rng = random.Random(7)
    leaned = 0
    for _ in range(sessions):
        credit = Credit()
        for _ in range(hands):
            credit.add(rng.gauss(mean, 60))
            if credit.covers(RISK):
                leaned += 1
                break
    return leaned / sessions


def test_luck_alone_is_rarely_risked_and_gifts_are() -> None:
    assert sessions_that_lean(0.0) < 0.1
    assert sessions_that_lean(5.0) > 0.9


@dataclass
class Counting(SeenHand):
    """A record that also keeps, for each hand, the house's result, what its base
    strategy was sure of (``None`` where it played none) and whether it leaned."""

    options: TableOptions = field(default_factory=lambda: TableOptions(betting_rounds=2))
    results: list[tuple[int, float | None, bool]] = field(default_factory=list)

    def observe(self, message: wire.Reply) -> None:
        if type(message) is wire.HandEnded:
            end = next(s.amount for s in message.stacks if s.seat == self.seat)
            solved, base = self.memo.solved, self.memo.base
            sure = None if base is None else base.guaranteed(self.options.ante)
            leaned = solved is not None and solved.is_lean
            self.results.append((end - self.stacks[self.seat], sure, leaned))
        super().observe(message)


def play(hands: int, bot: str, credit: Credit | None = None, button: int = 1) -> Counting:
    """``hands`` two-round hands of ``bot`` against the dealer (seat 1, on the button
    unless ``button`` says otherwise); the dealer's record."""
    options = TableOptions(betting_rounds=2)
    rng = random.Random(3)
    house = HousePlayer("dealer", 1, options, rng, solved=True)
    record = house.record = Counting(1)
    if credit is not None:
        record.credit = credit
    player = SdkPlayer("bot", load_bot(str(EXAMPLES / bot)), "t", options, 0)
    seats = {0: ("bot", False, 500), 1: ("dealer", True, 10_000)}
    house.sit(seats)
    player.sit(seats)
    play_hands(
        hands,
        table_id="t",
        rules=options.rules(),
        players={0: player, 1: house},
        stacks={0: 500, 1: 10_000},
        button=button,
        rng=rng,
    )
    return record


def test_the_credit_counts_each_hand_played_from_a_solved_strategy() -> None:
    record = play(300, "always_call.py")
    counted = [(result, sure) for result, sure, _ in record.results if sure is not None]
    # The always-caller never folds first, so the house plays every hand.
    assert len(counted) == 300
    assert record.credit.hands == 300
    assert record.credit.total == pytest.approx(sum(r - sure for r, sure in counted))
    assert not any(leaned for _, _, leaned in record.results)


def rich() -> Credit:
    credit = Credit()
    for _ in range(MIN_HANDS):
        credit.add(10_000)
    return credit


def test_the_house_leans_with_credit_on_the_button_and_only_then() -> None:
    record = play(40, "tile_ranker.py", rich())
    played = [leaned for _, sure, leaned in record.results if sure is not None]
    assert played
    assert all(played)
    # Off the button: the lean strategy's risk is measured on it, so never elsewhere.
    record = play(40, "tile_ranker.py", rich(), button=0)
    assert any(sure is not None for _, sure, _ in record.results)
    assert not any(leaned for _, _, leaned in record.results)
    poor = Credit()
    for _ in range(MIN_HANDS):
        poor.add(0)
    record = play(40, "tile_ranker.py", poor)
    assert not any(leaned for _, _, leaned in record.results)


def test_a_new_player_starts_a_new_credit() -> None:
    record = play(120, "always_call.py")
    assert record.credit.hands == 120
    record.observe(
        wire.PlayerSeated(table_id="t", seq=10**6, seat=0, name="next", is_bot=False, stack=500)
    )
    assert record.credit.hands == 0
    assert record.credit.total == 0
