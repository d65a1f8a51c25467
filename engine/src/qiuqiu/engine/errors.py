"""Errors of the engine, named by whose fault they are.

Everything the engine raises on purpose derives from :class:`EngineError`, so a
caller can catch the package's errors without catching its own bugs.
"""


class EngineError(Exception):
    """Root of every error the engine raises on purpose."""


class InvalidTiles(EngineError, ValueError):
    """The caller named tiles that do not exist or cannot be held together."""


class InvalidRules(EngineError, ValueError):
    """The caller asked for a table or a hand the rules do not allow."""


class IllegalAction(EngineError):
    """A seat tried something the rules forbid right now; nothing changed.

    ``code`` is a short stable identifier (``not_your_turn``, ``bet_too_small``,
    ...) for programs; the message is for people.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
