"""What the store tests share: accounts, seats, and the commits a table makes.

Each commit helper builds the :class:`TableCommit` a table makes for one kind
of write (docs/ARCHITECTURE.md, "Commit points"): a buy-in moves the chips
onto the table with the record that seats them, a cash-out moves the whole
stack back with the record that no longer has the seat, a drop cashes every
seat out with no record at all.
"""

from __future__ import annotations

from dataclasses import replace

from qiuqiu.protocol import TableOptions
from qiuqiu.server.lobby import token_hash
from qiuqiu.server.store import HOUSE, Account, SeatRecord, Store, TableCommit, TableRecord

GRANT = 1_000
OPTIONS = TableOptions(seats=3, dealer_bot=False)


async def open_account(store: Store, account_id: str = "ann", grant: int = GRANT) -> Account:
    return await store.create_account(account_id, account_id.title(), token_hash(account_id), grant)


async def balance(store: Store, account_id: str) -> int:
    account = await store.account(account_id)
    assert account is not None, account_id
    return account.balance


def seat(number: int, account_id: str, stack: int) -> SeatRecord:
    return SeatRecord(number, account_id, account_id.title(), stack, is_bot=account_id == HOUSE)


def with_seat(table: TableRecord, record: SeatRecord) -> TableRecord:
    """``table`` with ``record`` in its seat, in place of whoever sat there."""
    others = tuple(s for s in table.seats if s.seat != record.seat)
    return replace(table, seats=tuple(sorted((*others, record), key=lambda s: s.seat)))


def without_seat(table: TableRecord, number: int) -> TableRecord:
    return replace(table, seats=tuple(s for s in table.seats if s.seat != number))


def seated(table_id: str, account_id: str, stack: int) -> TableRecord:
    """A table with ``account_id`` alone on seat 0."""
    return with_seat(TableRecord(table_id, OPTIONS), seat(0, account_id, stack))


def saved(table: TableRecord) -> TableCommit:
    """The table's record, and nothing else."""
    return TableCommit(table.table_id, table)


def buy_in(table: TableRecord, sitting: SeatRecord) -> TableCommit:
    """``sitting`` sits down at ``table``, its stack taken from its account's balance."""
    return TableCommit(
        table.table_id, with_seat(table, sitting), ((sitting.account_id, sitting.stack),)
    )


def cash_out(table: TableRecord, number: int) -> TableCommit:
    """Seat ``number`` leaves ``table``, its whole stack paid back to its balance."""
    leaving = table.seat(number)
    assert leaving is not None, number
    return TableCommit(
        table.table_id, without_seat(table, number), ((leaving.account_id, -leaving.stack),)
    )


def dropped(table: TableRecord) -> TableCommit:
    """``table`` closes: every seat cashed out and the table gone from the lobby."""
    return TableCommit(table.table_id, None, tuple((s.account_id, -s.stack) for s in table.seats))


async def chip_audit(store: Store) -> int:
    """Every balance plus every stack in every table record: zero as long as no chip
    is made or lost (see store.py)."""
    balances = await store.balances()
    return sum(balances.values()) + sum(s.stack for t in await store.tables() for s in t.seats)
