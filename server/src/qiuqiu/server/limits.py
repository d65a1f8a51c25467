"""What one client may take of the server: messages at a rate, connections and new
accounts from one address, and time before it says who it is (the gateway enforces
each)."""

from __future__ import annotations

import ipaddress
import time
from collections import Counter
from dataclasses import dataclass, field

from websockets.asyncio.server import ServerConnection


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

    def whole(self) -> bool:
        """Whether the bucket is full again: it may as well be made anew."""
        elapsed = time.monotonic() - self.stamp
        return self.tokens + elapsed * self.rate >= self.burst

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class AddressCounts:
    """Connections from each address (open ones, or ones in their handshake), at most
    ``cap`` each (0: no cap)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._open: Counter[str] = Counter()

    def admit(self, address: str) -> bool:
        """Count one more connection from ``address``, unless it holds the most already."""
        if self.cap and self._open[address] >= self.cap:
            return False
        self._open[address] += 1
        return True

    def release(self, address: str) -> None:
        """An admitted connection from ``address`` is gone."""
        self._open[address] -= 1
        if not self._open[address]:
            del self._open[address]


class AccountAllowance:
    """New accounts each address may open: ``per_hour`` at once, and ``per_hour`` more
    an hour (0: no cap). Accounts are kept for good, so a client opening them in a
    loop would fill the store."""

    KEPT = 4096
    """Addresses remembered before those whose allowance is whole again are dropped."""

    def __init__(self, per_hour: int) -> None:
        self.per_hour = per_hour
        self._buckets: dict[str, TokenBucket] = {}

    def take(self, address: str) -> bool:
        """Count one more account opened from ``address``, unless its allowance is spent."""
        if not self.per_hour:
            return True
        bucket = self._buckets.get(address)
        if bucket is None:
            if len(self._buckets) >= self.KEPT:
                self._forget_whole()
            bucket = self._buckets[address] = TokenBucket(self.per_hour / 3600, self.per_hour)
        return bucket.take()

    def give_back(self, address: str) -> None:
        """The account counted last for ``address`` was never opened (refused, or the
        store never reached): it does not count."""
        bucket = self._buckets.get(address)
        if bucket is not None:
            bucket.refund()

    def _forget_whole(self) -> None:
        for address, bucket in list(self._buckets.items()):
            if bucket.whole():
                del self._buckets[address]


def address_of(connection: ServerConnection) -> str:
    """Where the client connects from, as its caps count it: its IPv4 address, or the
    /64 network of its IPv6 one (a machine on IPv6 is given a whole /64, and could
    spread its connections over it). Without its port."""
    address = connection.remote_address
    if not isinstance(address, tuple):
        return "?"
    return network_of(str(address[0]))


def network_of(host: str) -> str:
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def too_many_from(cap: int) -> str:
    return f"too many connections from your address (at most {cap})"


def too_many_accounts_from(per_hour: int) -> str:
    return (
        f"too many new accounts from your address (at most {per_hour} an hour):"
        " say hello with your token"
    )


def no_hello_within(seconds: float) -> str:
    return f"no hello within {seconds:g} seconds"
