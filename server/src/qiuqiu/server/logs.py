"""Logs an operator can search: one JSON object a line, with the table and hand.

A table logs through :class:`TableLog`, which adds ``table`` and ``hand`` to
every record, so "what happened at table t1a2b3c4 in hand 17" is one filter
away. Any other ``extra`` a call passes is kept as a field too.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import MutableMapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from qiuqiu.server.store import HandRecord

START = "qiuqiu.server.start"
"""The logger of the two lines a start writes (where the server listens, what the garbage
collector does), at every ``--log-level``: with ``--port 0`` nothing else tells the port."""

STANDARD_FIELDS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}
"""What every ``LogRecord`` has; anything else on a record came from ``extra``."""


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(
            (key, value) for key, value in vars(record).items() if key not in STANDARD_FIELDS
        )
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def configure(level: str, form: str) -> None:
    """Send every log record to stderr at ``level`` or above, as ``json`` or ``text``."""
    handler = logging.StreamHandler(sys.stderr)
    if form == "json":
        handler.setFormatter(JsonLines())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    logging.getLogger(START).setLevel(logging.INFO)
    # websockets logs every connection at INFO: at scale that drowns what matters.
    logging.getLogger("websockets").setLevel(max(logging.getLevelName(level), logging.WARNING))


class AtTable(Protocol):
    table_id: str
    hand_id: int


class TableLog(logging.LoggerAdapter[logging.Logger]):
    """A logger that names the table and its current hand in every record."""

    def __init__(self, logger: logging.Logger, table: AtTable) -> None:
        super().__init__(logger)
        self.table = table

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        extra = {"table": self.table.table_id, "hand": self.table.hand_id}
        kwargs["extra"] = {**extra, **kwargs.get("extra", {})}
        return f"table {self.table.table_id}: {msg}", kwargs


def hand_result(hand: HandRecord) -> str:
    """A hand's end in a log line: each seat's chips won or lost, or "voided"."""
    if hand.voided:
        return "voided"
    before = dict(hand.stacks_before)
    return ", ".join(f"seat {seat} {after - before[seat]:+d}" for seat, after in hand.stacks_after)


def hand_fields(hand: HandRecord) -> dict[str, Any]:
    """A hand's end as fields of its log record: voided, the winning seats and the chips
    they won from the others (not the pot: their own chips in it come back to them)."""
    before = dict(hand.stacks_before)
    net = {seat: after - before[seat] for seat, after in hand.stacks_after}
    return {
        "voided": hand.voided,
        "won": sum(-n for n in net.values() if n < 0),
        "winners": [seat for seat, n in net.items() if n > 0],
    }
