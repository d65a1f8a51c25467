"""Played hands as ``list_hands`` answers them: a table's or an account's history,
read from the store, each hand as a spectator may see it."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from qiuqiu.protocol import ErrorCode, encode
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId
from qiuqiu.server import frames
from qiuqiu.server.errors import Refused
from qiuqiu.server.frames import Frame
from qiuqiu.server.lobby import Lobby
from qiuqiu.server.store import HandRecord


async def hand_list(
    lobby: Lobby, ref: MessageId | None, account_id: str, table_id: str | None, limit: int
) -> Frame:
    """The last ``limit`` hands of ``table_id``, or of the account where it is None."""
    store = lobby.store
    if table_id is None:
        hands = await store.account_hands(account_id, limit)
    else:
        hands = await store.table_hands(table_id, limit)
        known = hands or table_id in lobby.tables or await store.table(table_id)
        if not known:
            raise Refused(ErrorCode.UNKNOWN_TABLE, f"there is no table {table_id}")
    return frames.hand_list(map(played_text, hands), ref)


def played_text(hand: HandRecord) -> str:
    """:func:`played` as JSON text, its events the texts recorded: reading and writing
    again every event of a hundred hands held the event loop some 50 ms at each
    ``list_hands``, so a few clients asking in a loop slowed every table of the server."""
    if any('"deck"' in frame for frame in hand.events):
        return encode(played(hand))  # recorded before protocol 2: made private first
    # A name is escaped in JSON, so this text appears once, as the field itself.
    return encode(played(replace(hand, events=()))).replace(
        '"events":[]', ",".join(hand.events).join(('"events":[', "]")), 1
    )


def played(hand: HandRecord) -> wire.PlayedHand:
    after, names = dict(hand.stacks_after), dict(hand.names)
    return wire.PlayedHand(
        table_id=hand.table_id,
        hand_id=hand.hand_id,
        voided=hand.voided,
        seats=tuple(
            wire.SeatResult(
                seat=seat,
                account_id=account,
                name=names.get(seat),
                before=before,
                after=after[seat],
            )
            for (seat, account), (_, before) in zip(hand.accounts, hand.stacks_before, strict=True)
        ),
        events=tuple(_private(json.loads(frame)) for frame in hand.events),
        table_seed=hand.table_seed or None,
    )


def _private(event: dict[str, Any]) -> dict[str, Any]:
    """A recorded event as a spectator may see it: a hand recorded before protocol 2
    ended with its seed and whole deck, which show every folded hand."""
    if event.get("type") == "hand_ended" and "deck" in event:
        return {k: v for k, v in event.items() if k not in ("seed", "deck")}
    return event
