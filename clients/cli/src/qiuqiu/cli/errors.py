"""What can go wrong for a client, by whose fault."""

from __future__ import annotations

import traceback

from qiuqiu.protocol import ErrorCode


class ClientError(Exception):
    """The root of every error this package raises."""


class ConnectionLost(ClientError):
    """The network's fault: the server cannot be reached, or the connection dropped."""


class ServerRefused(ClientError):
    """The server said no (an ``error`` message): ``code`` for programs, ``message`` for people."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        # Said to people as the server's words alone: its snake_case code means
        # nothing to a player.
        super().__init__(message)
        self.code = code
        self.message = message


class CutShort(ClientError):
    """The session ended, but not by the person's choice: the server stopped (standing
    the seat up, or closing the table watched), or the connection was lost for good.
    Already said when raised."""


class BalanceTooLow(ClientError):
    """A buy-in past the account's balance, said before a table is opened for it: the
    server refuses it only at ``join_table``, once the table is open, and the table then
    waits, empty, in everyone's lobby for its grace period."""


class TokenNotSaved(ClientError):
    """The resume token of a new account could not be written to its file: without it
    the account could not be resumed, so nothing is played on it."""


class ShuffleNotRevealed(ClientError):
    """A table's full shuffle cannot be checked yet: its seed is revealed only when it closes."""


class BotFailed(ClientError):
    """The bot's fault: its own code raised ``error``, as the bot was loaded (``hand_id``
    is ``None``) or at a turn of hand ``hand_id``."""

    def __init__(
        self, name: str, error: Exception | SystemExit, hand_id: int | None = None
    ) -> None:
        where = "as it was loaded" if hand_id is None else f"in hand {hand_id}"
        super().__init__(f"{name} raised {type(error).__name__} {where}: {error}")
        self.name, self.error, self.hand_id = name, error, hand_id

    def bot_traceback(self) -> str:
        """The error's traceback from the bot's own code on, after a blank line: the
        frame that caught it and the import machinery's are not the bot writer's to
        read. Nothing when no line of the bot's raised (an answer that is no answer, a
        constructor called without the arguments it wants), as the message says it all."""
        trace = self.error.__traceback__
        trace = None if trace is None else trace.tb_next
        while trace is not None and trace.tb_frame.f_code.co_filename.startswith("<frozen "):
            trace = trace.tb_next
        if trace is None and not isinstance(self.error, SyntaxError):
            return ""
        return "\n\n" + "".join(traceback.format_exception(type(self.error), self.error, trace))
