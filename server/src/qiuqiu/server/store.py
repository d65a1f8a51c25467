"""Where the server keeps what must outlive a connection (docs/ARCHITECTURE.md, "Storage").

:class:`Store` is the whole contract;
:class:`~qiuqiu.server.memory_store.MemoryStore` keeps it in this process (the
default), :class:`~qiuqiu.server.redis_store.RedisStore` in Redis.

A table is written only by :meth:`Store.commit`, one atomic step that saves the
table's record (or drops it), moves chips between balances and the table,
keeps a finished hand and updates the per-account seat index, all or nothing.
A hand costs two commits: a small one when it starts (``hand_open`` set, every
stack as before it) and one when it ends (the hand, every stack, every
cash-out, the dealer bot's top-up). A server that dies between the two leaves
a table that its next host reopens with that hand voided: every chip back
where it was before it.

A commit carries an id, so a commit retried after an answer was lost (Redis
applied it, then the connection dropped) is recognised and not applied twice.

The house is an account like any other, except that its balance may go below
zero: new accounts are granted their chips from it and the dealer bot buys in
from it. So the sum of every balance and every stack in every table record is
always zero, at every moment, which is what the chip audits check.

A table has one writer at a time: the process holding its lease
(:meth:`Store.acquire_table`). Each lease carries a fencing token that every
commit checks, so a process that lost its lease (it stalled, and another took
the table over) cannot write the table again: it gets
:class:`~qiuqiu.server.errors.LeaseLost` and nothing changes. Nor can a process
whose lease ran out while nobody else took the table, until it renews it: it gets
:class:`~qiuqiu.server.errors.LeaseExpired`, and keeps the lease for the renewal to
take back.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Container, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from qiuqiu.protocol import MAX_BALANCE, MAX_CHIPS, TableOptions
from qiuqiu.server.errors import balance_limit

if TYPE_CHECKING:
    from qiuqiu.server.bus import Bus

HOUSE = "house"
"""The account the dealer bot plays for and new accounts are granted chips from."""

HISTORY_LENGTH = 100
"""Finished hands kept per table and per account."""

CLAIMS_KEPT = 4
"""Connections of an account kept, the newest's included: a claim whose answer was lost
(Redis too slow, a connection cut) leaves one that never served, and the live one
before it must still reach the next claim, whatever the client retries in between."""


@dataclass(frozen=True, slots=True)
class Account:
    account_id: str
    name: str
    balance: int


@dataclass(frozen=True, slots=True)
class SeatRecord:
    seat: int
    account_id: str
    name: str
    stack: int
    is_bot: bool = False
    client_seed: str = ""
    """What the seat puts into each shuffle (PROTOCOL.md, "Fairness"); kept so that a
    table adopted by another process deals with it too."""
    missed_since: int = 0
    """The first hand whose end the seat's player, away, has not been told yet (0:
    none): a table adopted by another process tells it them all when it comes back."""


@dataclass(frozen=True, slots=True)
class TableRecord:
    """A table between hands: its options and who sits where with how much."""

    table_id: str
    options: TableOptions
    seats: tuple[SeatRecord, ...] = ()
    hand_id: int = 0
    """The last hand dealt here, so hand ids go on after a restart."""
    hand_open: bool = False
    """Hand ``hand_id`` was in play when this was saved; the stacks are from before it."""
    dealt: tuple[int, ...] = ()
    """The seats dealt into that hand, while it is open: one may sit down during it.
    Empty in a record written before they were kept, whose every seat then counts."""
    seq: int = 0
    """No event of this table was sent with a higher ``seq``: the next host counts on from it."""
    created_by: str = ""
    table_seed: str = ""
    """The secret every deck of the table derives from; empty in a record written
    before protocol 2 (the next host draws one)."""

    def seat(self, number: int) -> SeatRecord | None:
        return next((s for s in self.seats if s.seat == number), None)

    def hands_to_tell(self) -> int:
        """How many of the table's last hands a process adopting it reads to tell its
        players how they ended: back to the first one a seat's player missed while away,
        and at least the last."""
        missed = [s.missed_since for s in self.seats if s.missed_since]
        return min(HISTORY_LENGTH, max(1, self.hand_id - min(missed, default=self.hand_id) + 1))


@dataclass(frozen=True, slots=True)
class HandRecord:
    """A finished hand: who sat where, the stacks before and after, and every
    event as a spectator saw it."""

    table_id: str
    hand_id: int
    accounts: tuple[tuple[int, str], ...]
    stacks_before: tuple[tuple[int, int], ...]
    stacks_after: tuple[tuple[int, int], ...]
    events: tuple[str, ...]
    voided: bool = False
    names: tuple[tuple[int, str], ...] = ()
    """Each seat's player's name in the hand, as the table showed it: none in a hand
    recorded before names were kept."""
    table_seed: str = ""
    """Set by the store when the hand is read, once its table has closed and its seed
    is revealed; never part of the hand as written."""

    @classmethod
    def voided_in(cls, table: TableRecord) -> HandRecord:
        """The hand in play at ``table`` when its server died: voided, so every stack
        stays as it was before it, and nobody saw more of it than the record says."""
        seats = [s for s in table.seats if not table.dealt or s.seat in table.dealt]
        stacks = tuple((s.seat, s.stack) for s in seats)
        return cls(
            table_id=table.table_id,
            hand_id=table.hand_id,
            accounts=tuple((s.seat, s.account_id) for s in seats),
            stacks_before=stacks,
            stacks_after=stacks,
            events=(),
            voided=True,
            names=tuple((s.seat, s.name) for s in seats),
        )

    def net(self, account_id: str) -> int:
        """What ``account_id`` won (or, below zero, lost) in this hand."""
        seats = [seat for seat, account in self.accounts if account == account_id]
        before, after = dict(self.stacks_before), dict(self.stacks_after)
        return sum(after[seat] - before[seat] for seat in seats)


_PROCESS_TAG = secrets.token_hex(8)
_COMMITS = itertools.count()
"""A commit's id is this process's random tag and a count: as unique as a random id
each, without asking the system for randomness at each of a hand's two commits."""


@dataclass(frozen=True, slots=True)
class TableCommit:
    """One atomic write of a table: everything it says happens, or nothing does."""

    table_id: str
    table: TableRecord | None
    """The table as it is after the commit; ``None`` drops it from the lobby."""
    moves: tuple[tuple[str, int], ...] = ()
    """``(account, chips)``: chips onto the table from the account's balance (a buy-in,
    the house topping the bot up), or off it when negative (a cash-out)."""
    hand: HandRecord | None = None
    """A finished hand to keep, in the table's and each of its accounts' histories."""
    revealed_seed: str = ""
    """With ``table`` ``None``: the closed table's seed, kept for its hands' readers."""
    seat_limit: int = 0
    """The most tables an account seated by this commit may sit at, this one counted
    (0: no limit): checked with the balance, in the same step, so that no number of
    buy-ins at once, on however many processes, seats an account past it."""
    commit_id: str = field(default_factory=lambda: f"{_PROCESS_TAG}{next(_COMMITS):x}")
    """How a retried commit is known (one a store has already made is not made again)."""


class Store(Protocol):
    owner: str
    """This process, as the holder of the leases it takes."""

    @property
    def where(self) -> str:
        """Where the state is kept, for the log (never a password)."""

    async def acquire_table(self, table_id: str, seconds: float, *, new: bool = False) -> bool:
        """Take the table's lease for ``seconds`` if nobody else holds it; ``True`` if
        this store holds it now. Taking it anew gives a new fencing token. ``new``: the
        id is for a new table, and refused if a table had it before (whose hands and
        seed the store keeps under it)."""

    async def renew_tables(self, seconds: float) -> tuple[str, ...]:
        """Extend every lease this store holds by ``seconds``, taking back one that ran
        out if nobody took it since; return the tables whose lease another process
        took (they are forgotten)."""

    def holds(self, table_id: str) -> bool:
        """Whether this process is sure it still holds the table's lease: it took or
        renewed it less than the lease's length ago, counted from when it asked (the
        store counts from later). One stopped, or cut off from the store, for longer
        may have lost the table to another process without knowing it yet."""

    async def release_table(self, table_id: str) -> None:
        """Give the lease up (if this store holds it)."""

    async def orphaned_tables(self) -> tuple[str, ...]:
        """The tables in the lobby whose lease nobody holds: their host has gone."""

    async def table_host(self, table_id: str) -> str | None:
        """The ``owner`` of the store that holds the table's lease, if any does."""

    async def create_account(
        self, account_id: str, name: str, token_hash: str, grant: int
    ) -> Account:
        """Open an account with ``grant`` chips from the house. Raises :class:`Refused`
        (``account_exists``) and changes nothing if the id or the token hash is taken."""

    async def account(self, account_id: str) -> Account | None: ...

    async def account_for_token(self, token_hash: str) -> Account | None: ...

    async def claim_connection(self, account_id: str, holder: str) -> tuple[tuple[str, ...], int]:
        """Make ``holder`` the account's one connection; return the last few that claimed
        it before, oldest first, for their processes to close, and the claim's number.
        The store orders the claims, numbering each one up from the last, so of two at
        once every process agrees on the last; and a claim whose answer was lost is kept
        with those before it, so the next one closes them all."""

    async def commit(self, commit: TableCommit) -> dict[str, int]:
        """Write ``commit`` in one step and return the balance of each account it moved
        chips for. Raises :class:`Refused` (``insufficient_balance``,
        ``unknown_account``, ``too_many_tables``, ``balance_limit``) and changes nothing
        if a balance is short, an account missing (only the house may go below zero),
        one it seats sits at ``seat_limit`` other tables already, or a balance would
        leave too little room under :data:`MAX_BALANCE` (:func:`verify_room`);
        :class:`LeaseLost` if this store does not hold the table's lease, and
        :class:`LeaseExpired` if it ran out with nobody taking it since (a renewal takes
        it back). The same commit again is not applied twice."""

    async def seated_tables(self, account_id: str) -> tuple[str, ...]:
        """The tables where ``account_id`` has a seat, by id: kept by the commits that
        move its chips, as a seat is taken and given up only with chips. The house,
        which seats the dealer bot, has none."""

    async def table(self, table_id: str) -> TableRecord | None: ...

    async def tables(self, skip: Container[str] = ()) -> tuple[TableRecord, ...]:
        """Every table in the lobby but those in ``skip`` (a process's own, which it
        knows better than their records), none of which is read."""

    async def table_hands(
        self, table_id: str, limit: int = HISTORY_LENGTH
    ) -> tuple[HandRecord, ...]:
        """The last ``limit`` finished hands of a table, oldest first."""

    async def account_hands(
        self, account_id: str, limit: int = HISTORY_LENGTH
    ) -> tuple[HandRecord, ...]:
        """The last ``limit`` finished hands ``account_id`` sat in, oldest first."""

    async def balances(self) -> dict[str, int]:
        """Every balance, the house's included, all at one moment: for audits."""

    async def ping(self) -> None:
        """Return once the store takes a write; raise :class:`StoreUnavailable` if it
        cannot."""

    def bus(self) -> Bus | None:
        """How this process reaches the others sharing the store; ``None`` when no other
        process can share it (the store lives in this one)."""


def verify_room(balance: int, owed: int, other_tables: int) -> None:
    """Refuse a commit that leaves an account (not the house) ``balance`` chips, having
    taken ``owed`` from it (below zero: paid it), when the account sits at
    ``other_tables`` tables besides the commit's. No balance passes :data:`MAX_BALANCE`;
    and a buy-in must leave room under it for 10^12 chips (every chip one table holds)
    from each table the account sits at, so that no cash-out is ever refused for it."""
    if owed > 0 and balance + (other_tables + 1) * MAX_CHIPS > MAX_BALANCE:
        raise balance_limit(balance, other_tables + 1)
    if balance > MAX_BALANCE:
        raise balance_limit(balance, 0)


def with_seeds(hands: Iterable[HandRecord], revealed: dict[str, str]) -> tuple[HandRecord, ...]:
    """``hands``, each with its table's seed if the table has closed."""
    return tuple(
        replace(h, table_seed=revealed[h.table_id]) if h.table_id in revealed else h for h in hands
    )
