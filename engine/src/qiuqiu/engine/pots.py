"""Pots: cutting what was put in into a main pot and side pots, and sharing each out.

Each distinct all-in level closes a pot: everyone pays into it up to that
level, and only the seats still in that paid it in full can win it. Folded
chips stay in the pots they reached.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pot:
    amount: int
    eligible: tuple[int, ...]


def side_pots(
    contributed: Mapping[int, int], live: Set[int], order: Sequence[int]
) -> tuple[Pot, ...]:
    """The pots, main first. ``order`` is the seats left of the button, clockwise;
    adjacent pots with the same eligible seats are merged."""
    levels = sorted({contributed[seat] for seat in live if contributed[seat] > 0})
    pots: list[Pot] = []
    in_pots = 0  # chips in the pots so far
    for level in levels:
        up_to_level = sum(min(paid, level) for paid in contributed.values())
        amount = up_to_level - in_pots
        eligible = tuple(s for s in order if s in live and contributed[s] >= level)
        if pots and pots[-1].eligible == eligible:
            pots[-1] = Pot(pots[-1].amount + amount, eligible)
        else:
            pots.append(Pot(amount, eligible))
        in_pots = up_to_level
    # The uncalled part of a bet is returned before pots are cut, so some
    # seat still in always paid the most and every chip lands in a pot.
    assert in_pots == sum(contributed.values()), "a folded seat paid more than any seat still in"
    return tuple(pots)


def share(amount: int, winners: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Split ``amount`` evenly; the odd chips go to the first winner, who is the
    first left of the button because ``winners`` is in that order."""
    each, odd = divmod(amount, len(winners))
    return tuple((seat, each + (odd if i == 0 else 0)) for i, seat in enumerate(winners))
