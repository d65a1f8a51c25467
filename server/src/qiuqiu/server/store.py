"""Where the server keeps what must outlive a connection (DESIGN §4).

:class:`Store` is the whole contract; :class:`MemoryStore` keeps it in this
process (the default), :class:`~qiuqiu.server.redis_store.RedisStore` in Redis.
Chips move only through :meth:`Store.move_chips`, which changes one balance and
writes the table it moves to or from in one step, so a buy-in or a cash-out
never half-happens.

The house is an account like any other, except that its balance may go below
zero: new accounts are granted their chips from it and the dealer bot buys in
from it. So the sum of every balance, every stack at every table and every pot
is always zero, which is what the chip audits check.

A table has one writer at a time: the process holding its lease
(:meth:`Store.acquire_table`). Each lease carries a fencing token that every
write to the table checks, so a process that lost its lease (it stalled, and
another took the table over) cannot write the table again: it gets
:class:`~qiuqiu.server.errors.LeaseLost` and nothing changes. Nor can a process
whose lease ran out while nobody else took the table: a write needs the lease.

While a hand is played, the saved record keeps every stack as it was when the
hand began (with ``hand_open`` set): a server that dies mid-hand leaves the
table exactly as if the hand had been voided, every chip back where it was.
"""

from __future__ import annotations

import secrets
import time
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

from qiuqiu.protocol import TableOptions
from qiuqiu.server.errors import LeaseLost, Refused

HOUSE = "house"
"""The account the dealer bot plays for and new accounts are granted chips from."""

HISTORY_LENGTH = 100
"""Finished hands kept per table and per account."""


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


@dataclass(frozen=True, slots=True)
class TableRecord:
    """A table between hands: its options and who sits where with how much."""

    table_id: str
    options: TableOptions
    seats: tuple[SeatRecord, ...] = ()
    hand_id: int = 0
    """The last hand dealt here, so hand ids go on after a restart."""
    hand_open: bool = False
    """A hand was being played when this was saved; the stacks are from before it."""
    seq: int = 0
    created_by: str = ""

    def seat(self, number: int) -> SeatRecord | None:
        return next((s for s in self.seats if s.seat == number), None)

    def with_seat(self, record: SeatRecord) -> TableRecord:
        others = tuple(s for s in self.seats if s.seat != record.seat)
        return replace(self, seats=tuple(sorted((*others, record), key=lambda s: s.seat)))

    def without_seat(self, number: int) -> TableRecord:
        return replace(self, seats=tuple(s for s in self.seats if s.seat != number))


@dataclass(frozen=True, slots=True)
class HandRecord:
    """A finished hand: who sat where, the stacks before and after, and every
    event as a spectator saw it (the deck and seed are in the last one)."""

    table_id: str
    hand_id: int
    accounts: tuple[tuple[int, str], ...]
    stacks_before: tuple[tuple[int, int], ...]
    stacks_after: tuple[tuple[int, int], ...]
    events: tuple[str, ...]
    voided: bool = False

    @classmethod
    def voided_in(cls, table: TableRecord) -> HandRecord:
        """The hand in play at ``table`` when its server died: voided, so every stack
        stays as it was before it, and nobody saw more of it than the record says."""
        stacks = tuple((s.seat, s.stack) for s in table.seats)
        return cls(
            table_id=table.table_id,
            hand_id=table.hand_id,
            accounts=tuple((s.seat, s.account_id) for s in table.seats),
            stacks_before=stacks,
            stacks_after=stacks,
            events=(),
            voided=True,
        )

    def net(self, account_id: str) -> int:
        """What ``account_id`` won (or, below zero, lost) in this hand."""
        seats = [seat for seat, account in self.accounts if account == account_id]
        before, after = dict(self.stacks_before), dict(self.stacks_after)
        return sum(after[seat] - before[seat] for seat in seats)


class Store(Protocol):
    owner: str
    """This process, as the holder of the leases it takes."""

    async def acquire_table(self, table_id: str, seconds: float) -> bool:
        """Take the table's lease for ``seconds`` if nobody else holds it; ``True`` if
        this store holds it now. Taking it anew gives a new fencing token."""

    async def renew_tables(self, seconds: float) -> tuple[str, ...]:
        """Extend every lease this store holds by ``seconds``; return the tables whose
        lease it had lost (they are forgotten)."""

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

    async def move_chips(self, account_id: str, amount: int, table: TableRecord) -> Account:
        """Take ``amount`` chips from the balance (give them back if negative) and save
        ``table``, which holds them now, in one step. Raises :class:`Refused`
        (``insufficient_balance``, ``unknown_account``) and changes nothing if the
        balance is short or there is no such account. Only the house may go below zero."""

    async def save_table(self, table: TableRecord) -> None: ...

    async def seated_tables(self, account_id: str) -> tuple[str, ...]:
        """The tables where ``account_id`` has a seat, by id."""

    async def table(self, table_id: str) -> TableRecord | None: ...

    async def tables(self) -> tuple[TableRecord, ...]: ...

    async def drop_table(self, table_id: str) -> None:
        """Forget a closed table (its seats were cashed out first); its hands stay."""

    async def record_hand(self, hand: HandRecord, table: TableRecord | None = None) -> None:
        """Keep a finished hand and, in the same step, save ``table`` as it is after it."""

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
        """Return once the store answers; raise :class:`StoreUnavailable` if it cannot."""


@dataclass
class MemoryStore:
    """The whole store in this process's memory: fast, and gone when it stops."""

    owner: str = field(default_factory=lambda: secrets.token_hex(6))
    _accounts: dict[str, Account] = field(default_factory=dict)
    _tokens: dict[str, str] = field(default_factory=dict)
    _tables: dict[str, TableRecord] = field(default_factory=dict)
    _table_hands: defaultdict[str, deque[HandRecord]] = field(
        default_factory=lambda: defaultdict(lambda: deque(maxlen=HISTORY_LENGTH))
    )
    _account_hands: defaultdict[str, deque[HandRecord]] = field(
        default_factory=lambda: defaultdict(lambda: deque(maxlen=HISTORY_LENGTH))
    )

    _leases: dict[str, tuple[str, float]] = field(default_factory=dict)
    """Each leased table's holder (``owner:fence``) and when the lease runs out."""
    _fences: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    _holding: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._accounts.setdefault(HOUSE, Account(HOUSE, "House", 0))

    async def acquire_table(self, table_id: str, seconds: float) -> bool:
        holder = self._holder(table_id)
        if holder is not None and holder != self._holding.get(table_id):
            return False
        if holder is None:
            self._fences[table_id] += 1
            self._holding[table_id] = f"{self.owner}:{self._fences[table_id]}"
        self._leases[table_id] = (self._holding[table_id], time.monotonic() + seconds)
        return True

    async def renew_tables(self, seconds: float) -> tuple[str, ...]:
        lost = tuple(t for t in self._holding if self._holder(t) != self._holding[t])
        for table_id in lost:
            del self._holding[table_id]
        for table_id, holder in self._holding.items():
            self._leases[table_id] = (holder, time.monotonic() + seconds)
        return lost

    async def release_table(self, table_id: str) -> None:
        holder = self._holding.pop(table_id, None)
        if holder is not None and self._holder(table_id) == holder:
            del self._leases[table_id]

    async def orphaned_tables(self) -> tuple[str, ...]:
        return tuple(t for t in self._tables if self._holder(t) is None)

    async def table_host(self, table_id: str) -> str | None:
        holder = self._holder(table_id)
        return None if holder is None else holder.rsplit(":", 1)[0]

    def _holder(self, table_id: str) -> str | None:
        holder, until = self._leases.get(table_id, (None, 0.0))
        return holder if until > time.monotonic() else None

    def _guard(self, table_id: str) -> None:
        """Refuse a write to a table whose lease this store does not hold (now)."""
        mine = self._holding.get(table_id)
        if mine is None or self._holder(table_id) != mine:
            self._holding.pop(table_id, None)
            raise LeaseLost(table_id)

    async def create_account(
        self, account_id: str, name: str, token_hash: str, grant: int
    ) -> Account:
        if grant < 0:
            raise ValueError(f"a grant is never negative, not {grant}")
        if account_id in self._accounts or token_hash in self._tokens:
            raise Refused("account_exists", f"account {account_id} or its token exists")
        self._credit(HOUSE, -grant)
        account = self._accounts[account_id] = Account(account_id, name, grant)
        self._tokens[token_hash] = account_id
        return account

    async def account(self, account_id: str) -> Account | None:
        return self._accounts.get(account_id)

    async def account_for_token(self, token_hash: str) -> Account | None:
        account_id = self._tokens.get(token_hash)
        return None if account_id is None else self._accounts[account_id]

    async def move_chips(self, account_id: str, amount: int, table: TableRecord) -> Account:
        self._guard(table.table_id)
        account = self._accounts.get(account_id)
        if account is None:
            raise Refused("unknown_account", f"there is no account {account_id}")
        if account_id != HOUSE and account.balance < amount:
            raise Refused("insufficient_balance", f"you have {account.balance} chips, not {amount}")
        self._tables[table.table_id] = table
        return self._credit(account_id, -amount)

    async def save_table(self, table: TableRecord) -> None:
        self._guard(table.table_id)
        self._tables[table.table_id] = table

    async def seated_tables(self, account_id: str) -> tuple[str, ...]:
        return tuple(
            sorted(
                table_id
                for table_id, table in self._tables.items()
                if any(seat.account_id == account_id for seat in table.seats)
            )
        )

    async def table(self, table_id: str) -> TableRecord | None:
        return self._tables.get(table_id)

    async def tables(self) -> tuple[TableRecord, ...]:
        return tuple(self._tables.values())

    async def drop_table(self, table_id: str) -> None:
        self._guard(table_id)
        self._tables.pop(table_id, None)
        await self.release_table(table_id)

    async def record_hand(self, hand: HandRecord, table: TableRecord | None = None) -> None:
        if table is not None:
            await self.save_table(table)
        self._table_hands[hand.table_id].append(hand)
        for account_id in {account for _, account in hand.accounts}:
            self._account_hands[account_id].append(hand)

    async def table_hands(
        self, table_id: str, limit: int = HISTORY_LENGTH
    ) -> tuple[HandRecord, ...]:
        return _last(self._table_hands.get(table_id, ()), limit)

    async def account_hands(
        self, account_id: str, limit: int = HISTORY_LENGTH
    ) -> tuple[HandRecord, ...]:
        return _last(self._account_hands.get(account_id, ()), limit)

    async def balances(self) -> dict[str, int]:
        return {account_id: a.balance for account_id, a in self._accounts.items()}

    async def ping(self) -> None:
        return

    def _credit(self, account_id: str, amount: int) -> Account:
        account = self._accounts[account_id]
        updated = self._accounts[account_id] = replace(account, balance=account.balance + amount)
        return updated


def _last(hands: Iterable[HandRecord], limit: int) -> tuple[HandRecord, ...]:
    kept = tuple(hands)
    return kept[-limit:] if limit > 0 else ()
