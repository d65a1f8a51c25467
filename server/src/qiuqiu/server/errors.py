"""Errors of the server package, named by whose fault they are.

:class:`Refused` is a request the rules or the client's own state do not allow:
it becomes an ``error`` reply with its code, the connection stays open, and
nothing has changed.
"""

from __future__ import annotations

from qiuqiu.protocol import MAX_BALANCE, ErrorCode


class ServerError(Exception):
    """The root of every error this package raises."""


class Refused(ServerError):
    """The client asked for something it may not have (its fault, not ours), or for
    something the server cannot do just now; either way nothing changed."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def too_many_seats(limit: int) -> Refused:
    """The refusal of a seat to an account that sits at ``limit`` tables already."""
    return Refused(
        ErrorCode.TOO_MANY_TABLES,
        f"you sit at {limit} tables already, the most one account may: leave one first",
    )


def balance_limit(balance: int, tables: int) -> Refused:
    """The refusal of a commit that would leave a balance of ``balance`` chips past the
    most one holds, a place kept for 10^12 chips from each of ``tables`` (PROTOCOL.md,
    "Conventions")."""
    kept = f", with 10^12 kept free for each of the tables you would sit at ({tables})"
    return Refused(
        ErrorCode.BALANCE_LIMIT,
        f"your balance would be {balance:,} chips: more than an account holds"
        f" ({MAX_BALANCE:,}){kept if tables else ''}",
    )


class LeaseLost(ServerError):
    """This process no longer holds the table's lease (its own fault: it stalled or
    was cut off longer than the lease lasts). Another process may host the table
    now, so this one must stop writing it; nothing was written."""

    def __init__(self, table_id: str) -> None:
        super().__init__(f"the lease on table {table_id} is lost")
        self.table_id = table_id


class LeaseExpired(ServerError):
    """This process's lease on the table ran out in the store, and nobody has taken it
    since (its fencing token is still this process's): nothing was written. Renewing
    takes the lease back (:meth:`~qiuqiu.server.store.Store.renew_tables`), and the
    write can then be made; another process that took the table meanwhile makes the
    renewal say the lease is lost instead."""

    def __init__(self, table_id: str) -> None:
        super().__init__(f"the lease on table {table_id} ran out")
        self.table_id = table_id


class StoreUnavailable(ServerError):
    """The store (Redis) cannot be reached just now: the server's trouble, not the
    client's. ``unsent`` when the call never reached the store (it could not even
    connect), so that nothing happened; otherwise whether it happened is not known,
    and a table's commit is retried until the store answers (the same commit is
    never applied twice)."""

    def __init__(self, message: str, *, unsent: bool = False) -> None:
        super().__init__(message)
        self.unsent = unsent


class StoreRefused(ServerError):
    """The operator's fault: Redis answers, but refuses the store it was pointed at
    (a database number it does not have, say), or what answers is not Redis.
    Nothing started."""


class StrategiesUnreadable(ServerError):
    """The operator's fault: a file in the folder given with ``--strategies`` is not a
    strategy file the dealer bot can load. Nothing from that folder was loaded."""
