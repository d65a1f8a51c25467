"""What can go wrong for a client, by whose fault."""

from __future__ import annotations


class ClientError(Exception):
    """The root of every error this package raises."""


class ConnectionLost(ClientError):
    """The network's fault: the server cannot be reached, or the connection dropped."""


class ServerRefused(ClientError):
    """The server said no (an ``error`` message): ``code`` for programs, ``message`` for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class ShuffleNotRevealed(ClientError):
    """A table's full shuffle cannot be checked yet: its seed is revealed only when it closes."""
