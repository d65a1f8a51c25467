"""What can go wrong for a client, by whose fault."""

from __future__ import annotations

import traceback


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


class BotFailed(ClientError):
    """The bot's fault: its own ``decide`` or ``cut`` raised ``error`` at a turn of hand
    ``hand_id`` (in the arena, which has no server to time the turn out)."""

    def __init__(self, name: str, hand_id: int, error: Exception) -> None:
        super().__init__(f"{name} raised {type(error).__name__} in hand {hand_id}: {error}")
        self.name, self.hand_id, self.error = name, hand_id, error

    def bot_traceback(self) -> str:
        """The error's traceback from the bot's own method on: the frames that called it
        are the arena's, which no bot writer needs to read."""
        trace = self.error.__traceback__
        own = trace.tb_next if trace is not None and trace.tb_next is not None else trace
        return "".join(traceback.format_exception(type(self.error), self.error, own))
