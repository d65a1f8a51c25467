"""Accounts, and who is connected as whom.

A resume token is 32 random bytes, given to the client once; the store keeps
only its sha256, so a leaked store does not let anyone in. One account has one
live session: a second ``hello`` with the same token takes the account over
and the older connection is closed (on whichever process it is).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from qiuqiu.protocol import ErrorCode
from qiuqiu.server.errors import Refused, StoreUnavailable
from qiuqiu.server.health import StoreHealth
from qiuqiu.server.store import Account, Store
from qiuqiu.server.table import BOT_NAME, Viewer
from qiuqiu.server.table.writer import RETRY_MAX, RETRY_MIN

T = TypeVar("T")


class Connection(Viewer, Protocol):
    claim: int
    """The number of its claim on its account's connection (see Store.claim_connection)."""

    def close(self, code: int, reason: str) -> None:
        """Close the connection with a close frame; returns at once."""


TAKEN_OVER, TAKEN_OVER_REASON = 4000, "the account connected again elsewhere"
"""How an account's connection closes when a newer one takes its place: an account
has one connection at a time, on whichever process."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Accounts:
    store: Store
    health: StoreHealth
    starting_balance: int = 1_000
    sessions: dict[str, Connection] = field(default_factory=dict)
    """Each account's one connection to this process."""
    _arrivals: dict[str, tuple[asyncio.Lock, int]] = field(default_factory=dict, init=False)
    """Each account's hellos under way here: the lock they take turns at, and how many."""

    @staticmethod
    def verify_name(name: str) -> None:
        """Refuse a name no account may have: checked before anything is counted, so a
        name refused is said as such whatever else would refuse the hello."""
        if name.casefold() == BOT_NAME.casefold():
            raise Refused(
                ErrorCode.RESERVED_NAME, f"{name!r} is the dealer bot's name: choose another"
            )

    async def open_account(self, name: str) -> tuple[Account, str]:
        """A new account, under a name :meth:`verify_name` let through, with the starting
        balance; and its resume token.

        A write whose answer was lost may have made the account, with its chips, and only
        this hello holds its token: so it is not refused as if nothing changed, but
        written again until the store answers, a refusal that it exists being that
        earlier write, found by its token."""
        token = secrets.token_urlsafe(32)
        account_id, hashed = f"a{secrets.token_hex(6)}", token_hash(token)

        async def write() -> Account:
            try:
                return await self.store.create_account(
                    account_id, name, hashed, self.starting_balance
                )
            except Refused:
                made = await self.store.account_for_token(hashed)
                if made is None or made.account_id != account_id:
                    raise
                return made

        try:
            account = await write()
        except StoreUnavailable as error:
            if error.unsent:
                raise
            self.health.failed(error)
            await asyncio.sleep(RETRY_MIN)
            account = await self.until_answered(write)
        return account, token

    async def until_answered(self, work: Callable[[], Awaitable[T]]) -> T:
        """``work()``, tried again with a growing pause for as long as the store does not
        answer: for what may not be refused as if nothing changed, something having
        changed already (a new account made, whose token only its hello holds)."""
        delay = RETRY_MIN
        while True:
            try:
                return await work()
            except StoreUnavailable as error:
                self.health.failed(error)
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)

    async def resume_account(self, token: str) -> Account:
        account = await self.store.account_for_token(token_hash(token))
        if account is None:
            raise Refused(
                ErrorCode.UNKNOWN_TOKEN, "no account has this token: say hello with a name"
            )
        return account

    @contextlib.asynccontextmanager
    async def arriving(self, account_id: str) -> AsyncIterator[None]:
        """One hello of an account at a time in this process, from its claim on the
        account's connection in the store to its seats moved: each then closes the
        connection it took over, here or on another process, in the order the store
        took the claims, so the last to claim is the one left open."""
        lock, waiting = self._arrivals.get(account_id, (asyncio.Lock(), 0))
        self._arrivals[account_id] = lock, waiting + 1
        try:
            async with lock:
                yield
        finally:
            lock, waiting = self._arrivals[account_id]
            if waiting == 1:
                del self._arrivals[account_id]
            else:
                self._arrivals[account_id] = lock, waiting - 1

    def attach(self, account_id: str, connection: Connection) -> None:
        """Make ``connection`` the account's one session, closing the one before it."""
        previous = self.sessions.get(account_id)
        self.sessions[account_id] = connection
        if previous is not None and previous is not connection:
            previous.close(TAKEN_OVER, TAKEN_OVER_REASON)

    def detach(self, account_id: str, connection: Connection) -> bool:
        """Forget ``connection``; False when a newer one has already taken its place."""
        if self.sessions.get(account_id) is connection:
            del self.sessions[account_id]
            return True
        return False
