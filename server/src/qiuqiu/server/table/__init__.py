"""A table: its state machine without I/O (:mod:`.core`, built on :mod:`.hand`,
:mod:`.ledger` and :mod:`.audience`) and the asyncio runner that carries it out
(:mod:`.runner`)."""

from qiuqiu.server.table.audience import TablePhase, TableTimings
from qiuqiu.server.table.core import BOT_NAME, TableCore
from qiuqiu.server.table.deal import Random
from qiuqiu.server.table.reasons import MOVED, UNAVAILABLE
from qiuqiu.server.table.runner import Table
from qiuqiu.server.table.seats import Seat, Viewer, verify_buy_in

__all__ = [
    "BOT_NAME",
    "MOVED",
    "UNAVAILABLE",
    "Random",
    "Seat",
    "Table",
    "TableCore",
    "TablePhase",
    "TableTimings",
    "Viewer",
    "verify_buy_in",
]
