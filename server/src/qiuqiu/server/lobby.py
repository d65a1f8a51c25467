"""The tables of this process: opening them, finding them, and who sits where.

This process hosts the tables it holds the lease of (:mod:`qiuqiu.server.leases`
keeps them and adopts the tables whose server died).
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

from qiuqiu.protocol import ErrorCode, TableOptions, encode
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId
from qiuqiu.protocol.fairness import seed_commitment
from qiuqiu.server.accounts import Accounts
from qiuqiu.server.dealer import DealerBot
from qiuqiu.server.errors import LeaseLost, Refused, too_many_seats
from qiuqiu.server.frames import Frame, table_list
from qiuqiu.server.health import StoreHealth
from qiuqiu.server.metrics import Metrics
from qiuqiu.server.store import Store, TableRecord, verify_room
from qiuqiu.server.table import MOVED, Random, Table, TableTimings

MAX_TABLES = 10_000
"""Tables one process hosts at most: past it ``create_table`` there is refused."""

EMPTY_TABLES_PER_ACCOUNT = 3
"""Tables one account may have open with nobody sitting at them: enough to set up a
game, too few to fill the lobby (a table closes when its last player leaves)."""


RESTART = 1012
"""How a player's connection closes when a table of theirs moved to another process:
their client reconnects, as after any restart, and finds the seat there."""

RESTARTING = "this server is restarting: connect again to play on"
"""Why a stopping server closes its connections (1012) while its tables stay in the
store: there every client plays on, at another process or the next start."""


def moving(table_id: str) -> str:
    return f"table {table_id} is moving to another server: its snapshot comes shortly"


def new_table_id() -> str:
    return f"t{secrets.token_hex(4)}"


CLOSED_KEPT = 1_024
"""Tables this process closed whose ids it keeps, to answer a message relayed to one."""

NEW_ID_TRIES = 8
"""Ids drawn for a new table before giving up: one a closed table had is drawn again
(one in 2^32 for each table the store remembers)."""


@dataclass
class Lobby:
    store: Store
    rng: Random
    accounts: Accounts
    timings: TableTimings = field(default_factory=TableTimings)
    lease: float = 5.0
    """Seconds a table's lease lasts; renewed three times as often."""
    seats_per_account: int = 8
    """The most tables one account may sit at at once, on every process (0: no limit)."""
    spectators_per_table: int = 50
    """The most spectators one table takes at once (0: no limit)."""
    watched_per_connection: int = 10
    """The most tables one connection watches at once, here or elsewhere (0: no limit)."""
    on_adopted: Callable[[str], None] | None = None
    """Told the id of each table this process adopts from a dead one."""
    metrics: Metrics = field(default_factory=Metrics)
    health: StoreHealth = field(default_factory=StoreHealth)
    tables: dict[str, Table] = field(default_factory=dict)
    adopting: set[str] = field(default_factory=set)
    """The tables this process is adopting: their lease is its own, and they are not in
    :attr:`tables` yet."""
    _seated: dict[str, dict[str, None]] = field(default_factory=dict, init=False)
    """The tables of this process where each account sits, in the order it sat down."""
    _sitting: dict[str, frozenset[str]] = field(default_factory=dict, init=False)
    """Who sits at each table of this process, as :attr:`_seated` has it."""
    _closed: dict[str, None] = field(default_factory=dict, init=False)
    """The last :data:`CLOSED_KEPT` tables this process closed, oldest first."""
    _listed_elsewhere: dict[str, tuple[TableRecord, str]] = field(default_factory=dict, init=False)
    """Each table other processes host as the last listing read it, with its summary
    as JSON text: made again only for a table whose record changed, as a table here
    keeps its own (making a thousand at each ``list_tables`` held the loop ~10 ms)."""

    def refusal(self, ref: MessageId | None, code: ErrorCode, message: str) -> wire.Error:
        """The ``error`` for a refused message, counted by its code."""
        error = wire.Error(ref=ref, code=code, message=message)
        self.count(error)
        return error

    def count(self, error: wire.Error) -> None:
        self.metrics.errors.labels(error.code).inc()

    async def create_table(self, options: TableOptions, created_by: str) -> Table:
        if len(self.tables) >= MAX_TABLES:
            raise Refused(
                ErrorCode.TOO_MANY_TABLES,
                f"this server holds {MAX_TABLES:,} tables, the most it may: join one that is open",
            )
        empty = await self._empty_tables(created_by)
        if empty >= EMPTY_TABLES_PER_ACCOUNT:
            raise Refused(
                ErrorCode.TOO_MANY_TABLES,
                f"you have {empty} tables open that nobody sits at: sit at one first",
            )
        table_id = new_table_id()
        try:
            for _ in range(NEW_ID_TRIES):
                if await self.store.acquire_table(table_id, self.lease, new=True):
                    break
                table_id = new_table_id()  # a closed table's: its hands are kept under it
            else:
                raise LeaseLost(table_id)  # a store that takes no new id: a bug
            table = self._table(table_id, options, created_by)
            self.tables[table_id] = table
            await table.open()
        except BaseException:
            self.tables.pop(table_id, None)
            await self._let_go(table_id)
            raise
        table.log.info("opened: %s", options.model_dump_json(exclude_none=True))
        return table

    async def _empty_tables(self, created_by: str) -> int:
        """The tables ``created_by`` opened that nobody sits at, on every process: a
        limit counted here alone would let an account open as many more on each."""
        here = [
            t
            for t in self.tables.values()
            if t.core.created_by == created_by
            and all(s.is_bot for s in t.seats.values())
            # One waiting for a rebuy closes by itself soon: a bust is no way to fill a lobby.
            and not t.core.awaiting_rebuy
        ]
        if len(here) >= EMPTY_TABLES_PER_ACCOUNT:
            return len(here)
        elsewhere = [
            r
            for r in await self.store.tables(skip=self.tables)
            if r.created_by == created_by
            and all(s.is_bot for s in r.seats)
            # A table with hands dealt and nobody at it waits for a rebuy, as above.
            and r.hand_id == 0
        ]
        return len(here) + len(elsewhere)

    def _table(self, table_id: str, options: TableOptions, created_by: str) -> Table:
        return Table(
            table_id,
            options,
            self.store,
            self.rng,
            self.timings,
            health=self.health,
            bot_factory=DealerBot,
            on_closed=self._forget,
            on_seats_changed=self._index_seats,
            on_hand_ended=self.metrics.hands.inc,
            on_error=self.count,
            created_by=created_by,
            seat_limit=self.seats_per_account,
            spectator_limit=self.spectators_per_table,
        )

    def recheck_leases(self) -> None:
        """A lease renewal has answered: each table that doubted its lease looks again."""
        for table in list(self.tables.values()):
            table.recheck_lease()

    async def adopt(self, table_id: str) -> None:
        """Host a table whose host died; a player who came back here before it did is
        seated again at once."""
        if table_id in self.tables:
            return
        self.adopting.add(table_id)
        try:
            await self._adopt(table_id)
        finally:
            self.adopting.discard(table_id)

    async def _adopt(self, table_id: str) -> None:
        try:
            if not await self.store.acquire_table(table_id, self.lease):
                return
            record = await self.store.table(table_id)
            hands = (
                ()
                if record is None
                else await self.store.table_hands(table_id, record.hands_to_tell())
            )
            # The reads may have taken longer than the lease (a stalled store), and another
            # process may host the table now: it is hosted here only if the lease still is.
            if not await self.store.acquire_table(table_id, self.lease):
                return
        except BaseException:
            await self._let_go(table_id)
            raise
        if record is None:  # closed meanwhile by whoever held it
            await self.store.release_table(table_id)
            return
        table = self._table(table_id, record.options, record.created_by)
        self.tables[table_id] = table
        table.adopt(record, hands)
        if self.on_adopted is not None:
            self.on_adopted(table_id)
        for seat in record.seats:
            session = self.accounts.sessions.get(seat.account_id)
            if session is not None:
                table.reconnect(seat.account_id, session, session.claim)

    async def _let_go(self, table_id: str) -> None:
        """Give up a lease taken for a table this process will not host (the store
        failed halfway): renewed, it would be kept for ever; forgotten, it runs out and
        the table (if it has a record) is adopted on a later round."""
        with contextlib.suppress(Exception):
            await self.store.release_table(table_id)

    def abandon(self, table_id: str) -> None:
        """Another process hosts ``table_id`` now: stop hosting it here."""
        table = self.tables.get(table_id)
        if table is not None:
            table.abandon()

    def _forget(self, table: Table) -> None:
        self.tables.pop(table.table_id, None)
        sitting = self._sitting.get(table.table_id, frozenset())
        self._index_seats(table, frozenset())
        if table.core.closing_reason is not None:
            if not table.handed_over:
                self._closed[table.table_id] = None
                if len(self._closed) > CLOSED_KEPT:
                    del self._closed[next(iter(self._closed))]
        else:
            # Lost to another process, seats and all, or left in the store as this one
            # stops. There a player connected here is away: dealt in, an ante taken
            # each hand, cashed out after the grace period, while their client, still
            # connected here, hears nothing. Only reconnecting reaches the seat. A table
            # left as this server stops has not moved yet, and may have nowhere to go.
            why = RESTARTING if table.handed_over else MOVED
            for account_id in sitting:
                session = self.accounts.sessions.get(account_id)
                if session is not None:
                    session.close(RESTART, why)

    async def verify_seats(self, account_id: str, table_id: str | None = None) -> None:
        """Refuse a seat at one more table (``table_id``, or a new one) to an account
        that sits at the most it may already. The store refuses the buy-in too, in the
        same step as it writes it: this saves a table made for nothing, and a round trip
        to another process."""
        if not self.seats_per_account:
            return
        seated = await self._seated_tables(account_id)
        seated.discard(table_id or "")
        if len(seated) >= self.seats_per_account:
            raise too_many_seats(self.seats_per_account)

    async def verify_balance(self, account_id: str, amount: int) -> None:
        """Refuse a buy-in of ``amount`` at a new table that the store would refuse for
        the balance: one short of it, or one too near the most a balance holds."""
        account = await self.store.account(account_id)
        balance = 0 if account is None else account.balance
        if balance < amount:
            raise Refused(
                ErrorCode.INSUFFICIENT_BALANCE,
                f"your balance is {balance:,} chips, not enough for {amount:,}",
            )
        verify_room(balance - amount, amount, len(await self._seated_tables(account_id)))

    async def _seated_tables(self, account_id: str) -> set[str]:
        return {*self._seated.get(account_id, ()), *await self.store.seated_tables(account_id)}

    def closed_here(self, table_id: str) -> bool:
        """Whether this process closed ``table_id`` lately: a message another process
        relays to it is then about a table that is no more, not one that moved."""
        return table_id in self._closed

    def table(self, table_id: str) -> Table:
        table = self.tables.get(table_id)
        if table is None and table_id in self.adopting:
            raise Refused(ErrorCode.TABLE_MOVING, moving(table_id))
        if table is None:
            raise Refused(ErrorCode.UNKNOWN_TABLE, f"there is no table {table_id}")
        return table

    def seated_at(self, account_id: str) -> list[Table]:
        """The tables of this process where ``account_id`` sits: a look-up, not a walk
        of every table, at each hello and each closed connection."""
        table_ids = self._seated.get(account_id, {})
        return [table for t in table_ids if (table := self.tables.get(t)) is not None]

    def _index_seats(self, table: Table, sitting: frozenset[str] | None = None) -> None:
        """Who sits at ``table`` changed (to ``sitting``, or as its seats say)."""
        table_id = table.table_id
        if sitting is None:
            sitting = frozenset(s.account_id for s in table.seats.values() if not s.is_bot)
        before = self._sitting.pop(table_id, frozenset())
        if sitting:
            self._sitting[table_id] = sitting
        for account_id in before - sitting:
            tables = self._seated[account_id]
            del tables[table_id]
            if not tables:
                del self._seated[account_id]
        for account_id in sitting - before:
            self._seated.setdefault(account_id, {})[table_id] = None

    async def listing(self, ref: MessageId | None) -> Frame:
        """Every table in the lobby as one ``table_list``, by id, so that every process
        lists them in the same order: this process's from the tables themselves, those
        other processes host from their records."""
        here = [(t.table_id, t.core.summary_text()) for t in self.tables.values() if not t.closed]
        records = await self.store.tables(skip=self.tables)
        listed, self._listed_elsewhere = self._listed_elsewhere, {}
        for record in records:
            seen = listed.get(record.table_id)
            text = seen[1] if seen is not None and seen[0] is record else encode(summary_of(record))
            self._listed_elsewhere[record.table_id] = (record, text)
        elsewhere = [(t, text) for t, (_, text) in self._listed_elsewhere.items()]
        return table_list((text for _, text in sorted([*here, *elsewhere])), ref)


def summary_of(record: TableRecord) -> wire.TableSummary:
    """A table hosted by another process, as the lobby lists it."""
    return wire.TableSummary(
        table_id=record.table_id,
        options=record.options,
        seed_commitment=seed_commitment(record.table_seed) if record.table_seed else None,
        seats=tuple(
            wire.SeatSummary(seat=s.seat, name=s.name, is_bot=s.is_bot, stack=s.stack)
            for s in record.seats
        ),
        free_seats=record.options.seats - len(record.seats),
        playing=record.hand_open,
    )
