"""The store in this process's memory (:class:`~qiuqiu.server.store.Store`'s contract):
fast, and gone when the process stops. Its leases are kept as Redis keeps them, so
the contract tests hold it to the same rules."""

from __future__ import annotations

import secrets
import time
from collections import defaultdict, deque
from collections.abc import Container, Iterable
from dataclasses import dataclass, field, replace

from qiuqiu.protocol import MAX_BALANCE, ErrorCode
from qiuqiu.server.bus import Bus
from qiuqiu.server.errors import LeaseExpired, LeaseLost, Refused, too_many_seats
from qiuqiu.server.store import (
    CLAIMS_KEPT,
    HISTORY_LENGTH,
    HOUSE,
    Account,
    HandRecord,
    TableCommit,
    TableRecord,
    verify_room,
    with_seeds,
)


@dataclass
class MemoryStore:
    """The whole store in this process's memory: fast, and gone when it stops."""

    owner: str = field(default_factory=lambda: secrets.token_hex(6))
    _accounts: dict[str, Account] = field(default_factory=dict)
    _tokens: dict[str, str] = field(default_factory=dict)
    _tables: dict[str, TableRecord] = field(default_factory=dict)
    _seats: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """The tables where each account has a seat, kept as Redis's ``seats:`` index is:
    a buy-in reads them, and reading every table for it slows each with their number."""
    _table_hands: defaultdict[str, deque[HandRecord]] = field(
        default_factory=lambda: defaultdict(lambda: deque(maxlen=HISTORY_LENGTH))
    )
    _account_hands: defaultdict[str, deque[HandRecord]] = field(
        default_factory=lambda: defaultdict(lambda: deque(maxlen=HISTORY_LENGTH))
    )
    _connections: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _claims: int = 0
    """The number of the last claim on an account's connection."""
    _commits: dict[str, str] = field(default_factory=dict)
    """The id of each table's last commit, so a retried one is recognised."""
    _revealed: dict[str, str] = field(default_factory=dict)
    """Each closed table's seed."""

    _leases: dict[str, tuple[str, float]] = field(default_factory=dict)
    """Each leased table's holder (``owner:fence``) and when the lease runs out."""
    _fences: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    _holding: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._accounts.setdefault(HOUSE, Account(HOUSE, "House", 0))

    def bus(self) -> Bus | None:
        return None

    @property
    def where(self) -> str:
        return "in memory, gone when the process stops"

    async def acquire_table(self, table_id: str, seconds: float, *, new: bool = False) -> bool:
        if new and self._fences.get(table_id, 0):
            return False
        holder = self._holder(table_id)
        if holder is not None and holder != self._holding.get(table_id):
            return False
        if holder is None:
            self._fences[table_id] += 1
            self._holding[table_id] = f"{self.owner}:{self._fences[table_id]}"
        self._leases[table_id] = (self._holding[table_id], time.monotonic() + seconds)
        return True

    async def renew_tables(self, seconds: float) -> tuple[str, ...]:
        lost = tuple(t for t, mine in self._holding.items() if not self._still_mine(t, mine))
        for table_id in lost:
            del self._holding[table_id]
        for table_id, holder in self._holding.items():
            self._leases[table_id] = (holder, time.monotonic() + seconds)
        return lost

    def _still_mine(self, table_id: str, mine: str) -> bool:
        """Held, or run out with nobody taking it since (the fence is still ours)."""
        holder = self._holder(table_id)
        if holder is None:
            return mine == f"{self.owner}:{self._fences[table_id]}"
        return holder == mine

    def holds(self, table_id: str) -> bool:
        # Every "process" sharing this store shares this one's clock and loop: none
        # can be stopped while another adopts its tables.
        return True

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

    async def create_account(
        self, account_id: str, name: str, token_hash: str, grant: int
    ) -> Account:
        if not 0 <= grant <= MAX_BALANCE:
            raise ValueError(f"a grant is from 0 to {MAX_BALANCE}, not {grant}")
        if account_id in self._accounts or token_hash in self._tokens:
            raise Refused(ErrorCode.ACCOUNT_EXISTS, f"account {account_id} or its token exists")
        self._credit(HOUSE, -grant)
        account = self._accounts[account_id] = Account(account_id, name, grant)
        self._tokens[token_hash] = account_id
        return account

    async def account(self, account_id: str) -> Account | None:
        return self._accounts.get(account_id)

    async def account_for_token(self, token_hash: str) -> Account | None:
        account_id = self._tokens.get(token_hash)
        return None if account_id is None else self._accounts[account_id]

    async def claim_connection(self, account_id: str, holder: str) -> tuple[tuple[str, ...], int]:
        before = self._connections.get(account_id, ())
        self._connections[account_id] = (*before, holder)[-CLAIMS_KEPT:]
        self._claims += 1
        return before, self._claims

    async def commit(self, commit: TableCommit) -> dict[str, int]:
        table_id = commit.table_id
        if self._commits.get(table_id) == commit.commit_id:
            return {a: self._accounts[a].balance for a, _ in commit.moves}
        mine = self._holding.get(table_id)
        if mine is not None and self._holder(table_id) is None and self._still_mine(table_id, mine):
            raise LeaseExpired(table_id)
        if mine is None or self._holder(table_id) != mine:
            self._holding.pop(table_id, None)
            raise LeaseLost(table_id)
        owed: dict[str, int] = {}
        for account_id, amount in commit.moves:
            account = self._accounts.get(account_id)
            if account is None:
                raise Refused(ErrorCode.UNKNOWN_ACCOUNT, f"there is no account {account_id}")
            owed[account_id] = owed.get(account_id, 0) + amount
            if account_id != HOUSE and account.balance < owed[account_id]:
                raise Refused(
                    ErrorCode.INSUFFICIENT_BALANCE,
                    f"your balance is {account.balance:,} chips, "
                    f"not enough for {owed[account_id]:,}",
                )
            if commit.seat_limit and commit.table is not None:
                sits = any(s.account_id == account_id for s in commit.table.seats)
                others = set(await self.seated_tables(account_id)) - {table_id}
                if sits and account_id != HOUSE and len(others) >= commit.seat_limit:
                    raise too_many_seats(commit.seat_limit)
        for account_id, amount in owed.items():
            if account_id == HOUSE:
                continue
            elsewhere = 0  # counted for a buy-in alone: every table is read for it
            if amount > 0:
                elsewhere = len(set(await self.seated_tables(account_id)) - {table_id})
            verify_room(self._accounts[account_id].balance - amount, amount, elsewhere)
        for account_id, amount in commit.moves:
            self._credit(account_id, -amount)
        self._index_seats(table_id, self._tables.get(table_id), commit.table)
        if commit.table is None:
            self._tables.pop(table_id, None)
            self._leases.pop(table_id, None)
            self._holding.pop(table_id, None)
            if commit.revealed_seed:
                self._revealed[table_id] = commit.revealed_seed
        else:
            self._tables[table_id] = commit.table
        if commit.hand is not None:
            self._table_hands[table_id].append(commit.hand)
            for account_id in {account for _, account in commit.hand.accounts}:
                self._account_hands[account_id].append(commit.hand)
        self._commits[table_id] = commit.commit_id
        return {a: self._accounts[a].balance for a, _ in commit.moves}

    def _index_seats(
        self, table_id: str, before: TableRecord | None, after: TableRecord | None
    ) -> None:
        had = {s.account_id for s in before.seats} if before is not None else set()
        has = {s.account_id for s in after.seats} if after is not None else set()
        for account_id in had - has:
            seated = self._seats[account_id]
            seated.discard(table_id)
            if not seated:
                del self._seats[account_id]
        for account_id in has - had - {HOUSE}:
            self._seats[account_id].add(table_id)

    async def seated_tables(self, account_id: str) -> tuple[str, ...]:
        return tuple(sorted(self._seats.get(account_id, ())))

    async def table(self, table_id: str) -> TableRecord | None:
        return self._tables.get(table_id)

    async def tables(self, skip: Container[str] = ()) -> tuple[TableRecord, ...]:
        return tuple(t for table_id, t in self._tables.items() if table_id not in skip)

    async def table_hands(
        self, table_id: str, limit: int = HISTORY_LENGTH
    ) -> tuple[HandRecord, ...]:
        return self._with_seeds(_last(self._table_hands.get(table_id, ()), limit))

    async def account_hands(
        self, account_id: str, limit: int = HISTORY_LENGTH
    ) -> tuple[HandRecord, ...]:
        return self._with_seeds(_last(self._account_hands.get(account_id, ()), limit))

    def _with_seeds(self, hands: tuple[HandRecord, ...]) -> tuple[HandRecord, ...]:
        return with_seeds(hands, self._revealed)

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
