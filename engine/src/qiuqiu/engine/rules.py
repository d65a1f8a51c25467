"""The table options a hand is played under (README, "The rules as the engine plays them")."""

from __future__ import annotations

from dataclasses import dataclass

from qiuqiu.engine.errors import InvalidRules
from qiuqiu.engine.ranking import TIE_RULES, TieRule

MIN_SEATS = 2
MAX_SEATS = 6


@dataclass(frozen=True, slots=True)
class TableRules:
    """Stakes and variants, checked once when made.

    - ``ante``: what every seat puts in before the deal (a shorter stack antes all it has).
    - ``min_bet``: the smallest opening bet, and the smallest raise increment
      (a raise must also add at least as much as the last full bet or raise).
    - ``max_bet``: the most one bet or raise may add on top of the current bet;
      ``None`` for no limit.
    - ``max_raises``: raises allowed per betting round after the opening bet;
      ``None`` for no limit.
    - ``betting_rounds``: 1 (one round, then the 4th tile) or 2 (a second round
      after the 4th tile).
    - ``tie_rule``: how equal normal hands are settled.
    - ``manual_split``: players declare their own cut at showdown.

    Less than a minimum is always allowed as an all-in.
    """

    ante: int = 10
    min_bet: int = 10
    max_bet: int | None = None
    max_raises: int | None = None
    betting_rounds: int = 1
    tie_rule: TieRule = "highest_tile"
    manual_split: bool = False

    def __post_init__(self) -> None:
        _require_int("ante", self.ante, minimum=0)
        _require_int("min_bet", self.min_bet, minimum=1)
        if self.max_bet is not None:
            _require_int("max_bet", self.max_bet, minimum=self.min_bet)
        if self.max_raises is not None:
            _require_int("max_raises", self.max_raises, minimum=0)
        _require_int("betting_rounds", self.betting_rounds, minimum=1)
        if self.betting_rounds > 2:
            raise InvalidRules(f"betting_rounds must be 1 or 2, not {self.betting_rounds!r}")
        if self.tie_rule not in TIE_RULES:
            raise InvalidRules(f"tie_rule must be one of {TIE_RULES}, not {self.tie_rule!r}")
        if not isinstance(self.manual_split, bool):
            raise InvalidRules(f"manual_split must be true or false, not {self.manual_split!r}")


def _require_int(name: str, value: object, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRules(f"{name} must be a whole number of chips, not {value!r}")
    if value < minimum:
        raise InvalidRules(f"{name} must be at least {minimum}, not {value}")
