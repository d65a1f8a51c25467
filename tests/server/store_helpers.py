"""What the store tests share: accounts, seats, and the commits a table makes.

Each commit helper builds the :class:`TableCommit` a table makes for one kind
of write (docs/ARCHITECTURE.md, "Commit points"): a buy-in moves the chips
onto the table with the record that seats them, a cash-out moves the whole
stack back with the record that no longer has the seat, a drop cashes every
seat out with no record at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from qiuqiu.protocol import TableOptions
from qiuqiu.server.accounts import token_hash
from qiuqiu.server.store import (
    HOUSE,
    Account,
    HandRecord,
    SeatRecord,
    Store,
    TableCommit,
    TableRecord,
)

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


def hand(
    table_id: str,
    hand_id: int,
    accounts: dict[int, str],
    won: dict[int, int] | None = None,
) -> HandRecord:
    """A finished hand at ``table_id`` with every seat in ``accounts`` starting on 500
    and ending on 500 plus what ``won`` says (nothing by default)."""
    won = won or {}
    return HandRecord(
        table_id=table_id,
        hand_id=hand_id,
        accounts=tuple(sorted(accounts.items())),
        stacks_before=tuple((n, 500) for n in sorted(accounts)),
        stacks_after=tuple((n, 500 + won.get(n, 0)) for n in sorted(accounts)),
        events=(f'{{"type": "hand_ended", "hand_id": {hand_id}}}',),
    )


def played(finished: HandRecord) -> TableCommit:
    """The commit that keeps ``finished``, with its table as a bare record after it."""
    after = TableRecord(finished.table_id, OPTIONS, hand_id=finished.hand_id)
    return TableCommit(finished.table_id, after, hand=finished)


def hand_ids(hands: Iterable[HandRecord]) -> list[tuple[str, int]]:
    return [(h.table_id, h.hand_id) for h in hands]


async def everything(
    store: Store, table_ids: Iterable[str], account_ids: Iterable[str]
) -> dict[str, Any]:
    """All a commit may change, as the protocol shows it: to compare before and after."""
    tables, accounts = sorted(table_ids), sorted({HOUSE, *account_ids})
    return {
        "balances": await store.balances(),
        "lobby": sorted((t.table_id, t) for t in await store.tables()),
        "table": {t: await store.table(t) for t in tables},
        "table hands": {t: await store.table_hands(t) for t in tables},
        "account hands": {a: await store.account_hands(a) for a in accounts},
        "seated": {a: await store.seated_tables(a) for a in accounts},
        "hosts": {t: await store.table_host(t) for t in tables},
        "orphans": await store.orphaned_tables(),
    }
