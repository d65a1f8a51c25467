"""The store's records as JSON text, the same for every store that keeps text (Redis).

Written by hand rather than with ``dataclasses.asdict``, whose deep copies were
8% of the CPU of a hand on Redis. A record written before a field existed
reads with that field's default.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from qiuqiu.protocol import TableOptions
from qiuqiu.server.store import HandRecord, SeatRecord, TableRecord


def table_json(table: TableRecord) -> str:
    return json.dumps(
        {
            "table_id": table.table_id,
            "options": _options(table.options),
            "seats": [
                {
                    "seat": s.seat,
                    "account_id": s.account_id,
                    "name": s.name,
                    "stack": s.stack,
                    "is_bot": s.is_bot,
                    "client_seed": s.client_seed,
                    # Mostly 0, and every commit writes every seat: left out then.
                    **({"missed_since": s.missed_since} if s.missed_since else {}),
                }
                for s in table.seats
            ],
            "hand_id": table.hand_id,
            "hand_open": table.hand_open,
            **({"dealt": table.dealt} if table.dealt else {}),
            "seq": table.seq,
            "created_by": table.created_by,
            "table_seed": table.table_seed,
        }
    )


@lru_cache(maxsize=1024)
def _options(options: TableOptions) -> dict[str, Any]:
    """A table's options as JSON data: the same for the table's life, so made once."""
    return options.model_dump(mode="json")


def hand_json(hand: HandRecord) -> str:
    return json.dumps(
        {
            "table_id": hand.table_id,
            "hand_id": hand.hand_id,
            "accounts": hand.accounts,
            "stacks_before": hand.stacks_before,
            "stacks_after": hand.stacks_after,
            "events": hand.events,
            "voided": hand.voided,
            "names": hand.names,
        }
    )


def table_from_json(text: str) -> TableRecord:
    data = json.loads(text)
    return TableRecord(
        **{
            **data,
            "options": TableOptions.model_validate(data["options"]),
            "seats": tuple(SeatRecord(**seat) for seat in data["seats"]),
            "dealt": tuple(data.get("dealt", ())),
        }
    )


def hand_from_json(text: str) -> HandRecord:
    data = json.loads(text)
    return HandRecord(
        table_id=data["table_id"],
        hand_id=data["hand_id"],
        accounts=_pairs(data["accounts"]),
        stacks_before=_pairs(data["stacks_before"]),
        stacks_after=_pairs(data["stacks_after"]),
        events=tuple(data["events"]),
        voided=data["voided"],
        names=_pairs(data.get("names", ())),
    )


def _pairs(rows: list[list[Any]]) -> tuple[Any, ...]:
    # JSON has no tuples: a pair comes back as a list and must compare equal again.
    return tuple((first, second) for first, second in rows)
