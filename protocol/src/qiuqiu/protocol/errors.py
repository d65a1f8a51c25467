"""Why a message was refused. Every refusal has a stable ``code`` for programs and
a ``message`` for people; both travel in an ``error`` reply."""

from __future__ import annotations


class ProtocolError(Exception):
    """The root of every error this package raises."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class BadMessage(ProtocolError):
    """The peer sent something that is not a valid message: its fault, not ours."""
