"""What one client may take of the server: messages at a rate, and time before it
says who it is (the gateway enforces each)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(slots=True)
class TokenBucket:
    """``rate`` messages a second on average, ``burst`` at once."""

    rate: float
    burst: int
    tokens: float = 0.0
    stamp: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.tokens = self.burst

    def refund(self) -> None:
        """Give back the token a message took (an action on the seat's own turn:
        an honest bot at full speed is not a flood)."""
        self.tokens = min(self.burst, self.tokens + 1)

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


def no_hello_within(seconds: float) -> str:
    return f"no hello within {seconds:g} seconds"
