"""The soak's players: SDK bots on a connection that counts its drops and can be cut.

Every bot of :mod:`bench.soak` plays through the SDK (:func:`qiuqiu.cli.bot.play`
over :class:`qiuqiu.cli.connection.Connection`), as a real client would, so the
soak exercises the SDK's reconnect and resume along with the server.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from qiuqiu.cli.bot import Action, Bet, Bot, Call, Check, Fold, Raise, Summary, Turn
from qiuqiu.cli.connection import Closed, Connection, Disconnected, Notice, Reconnected


class Caller(Bot):
    """Checks when it can, calls when it must: every hand goes to a showdown."""

    def decide(self, turn: Turn) -> Action:
        return Check() if turn.legal.check else Call()


class Chancer(Bot):
    """Random legal actions from its own seeded dice: bets, raises and folds, so
    pots, side pots and walk-overs all happen."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def decide(self, turn: Turn) -> Action:
        legal, roll = turn.legal, self.rng.random()
        if legal.raise_to is not None and roll < 0.1:
            return Raise(self.rng.randint(legal.raise_to.min, legal.raise_to.max))
        if legal.bet is not None and roll < 0.3:
            return Bet(self.rng.randint(legal.bet.min, legal.bet.max))
        if legal.fold and roll < 0.4:
            return Fold()
        return Check() if legal.check else Call()


class SoakConnection(Connection):
    """The SDK's connection, counting the drops and comebacks its reader notices."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.drops = 0
        self.comebacks = 0
        self.gave_up = False

    async def messages(self) -> AsyncIterator[Notice]:
        async for message in super().messages():
            if isinstance(message, Disconnected):
                self.drops += 1
            elif isinstance(message, Reconnected):
                self.comebacks += 1
            elif isinstance(message, Closed):
                self.gave_up = not self._closing
            yield message

    @property
    def is_gone(self) -> bool:
        """The reader stopped without being asked to: reconnecting failed."""
        return self._reader is not None and self._reader.done() and not self._closing

    def abort(self) -> bool:
        """Drop the TCP connection without a closing handshake; ``False`` if there is
        none to drop (the connection is already down and reconnecting)."""
        # The SDK has no public way to lose its connection: that is the network's job.
        ws = self._ws
        if ws is None or ws.transport.is_closing():
            return False
        ws.transport.abort()
        return True


async def connect(url: str, *, name: str | None = None, token: str | None = None) -> SoakConnection:
    conn = await SoakConnection.open(url, name=name, token=token)
    assert isinstance(conn, SoakConnection)
    return conn


@dataclass(slots=True)
class Player:
    name: str
    bot: Bot
    conn: SoakConnection
    token: str
    account_id: str
    task: asyncio.Task[Summary] | None = None
