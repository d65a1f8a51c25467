"""What the house has won from the player in front of it beyond what it was sure of:
what it may risk leaning on that player's mistakes.

This is safe opponent exploitation in the way of "risk what you've won"
(Ganzfried and Sandholm, "Safe Opponent Exploitation", 2015). Heads-up on the
button, the house's strategy is sure of ``guaranteed`` chips a hand against any
player at all: the exact best response against it says so, in its file's
header. Whatever the house wins beyond that, the player gave away, but for
luck. (A hand off the button counts against the button's figure too, which is
more than the house is sure of there: it can only make the credit smaller.)
A *lean* strategy (``-lean`` files; ``solver/__main__.py``, ``LEAN``) takes far
more from a calling station or a bot that bets its "strong" tiles, but against
a player who knew it, it would lose ``risk`` chips a hand more than the base
strategy. So the house plays it for a whole hand only when the credit covers
that risk::

    credit = the sum, over the hands the house played from a solved strategy,
             of (its result - guaranteed)
    lean when  credit - Z * spread  >=  risk,  after at least MIN_HANDS hands

The credit holds luck as well as gifts: a run of good tiles is no gift, and a
player who could tell when the house leans might win back what luck had lent
it. So the luck the credit may carry is taken off first: ``spread`` is the
standard deviation of a sum of that many results, from their own spread as
measured. Then a lean hand can at worst give back what the player gave away,
and over a session the house expects at least ``guaranteed`` a hand, as the
base strategy alone would; the one way to get more from it is luck running
``Z`` standard deviations ahead of the gifts when it leans, and even then only
what that luck put in.

A new player at the table starts a new credit: one player's gifts are never
risked against another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z = 3.0
"""Standard deviations of luck taken off the credit before it is risked."""
MIN_HANDS = 100
"""Hands before the spread of the results is trusted, and so before any lean hand."""


@dataclass(slots=True)
class Credit:
    """The house's credit with one player (see the module docstring)."""

    hands: int = 0
    total: float = 0.0
    """The sum of ``result - guaranteed`` over the hands counted."""
    _mean: float = 0.0
    _squares: float = 0.0
    """The sum of squared distances from the mean (Welford's update)."""

    def add(self, gain: float) -> None:
        """Count a hand the house played from a solved strategy: its result less what
        that strategy was sure of."""
        self.hands += 1
        self.total += gain
        delta = gain - self._mean
        self._mean += delta / self.hands
        self._squares += delta * (gain - self._mean)

    def covers(self, risk: float) -> bool:
        """Whether a hand that may lose ``risk`` chips more than the base strategy is
        paid for by what the player has given away."""
        if self.hands < MIN_HANDS:
            return False
        spread = math.sqrt(self._squares / (self.hands - 1) * self.hands)
        return self.total - Z * spread >= risk
