"""What one connection saw of each hand, checked as a client would (PROTOCOL.md, "Fairness").

A witness reads the frames one connection received, in order, and keeps for
every hand what ``hand_started`` committed to and every opening it was given
(its own tiles, from events or snapshots, and those shown down). From that it
can check each hand with :func:`~qiuqiu.protocol.fairness.verify_hand`, the
whole shuffle once the table's seed is known, and list every tile the
connection could have learnt.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from qiuqiu.protocol import fairness
from qiuqiu.protocol.common import Opening

TILE = re.compile(r"^[0-6]-[0-6]$")


@dataclass
class Hand:
    table_id: str
    hand_id: int
    started: dict[str, Any]
    openings: dict[int, dict[int, Opening]] = field(default_factory=dict)
    """By seat, by position."""
    shown: set[int] = field(default_factory=set)
    frames: list[dict[str, Any]] = field(default_factory=list)
    """Every frame about this hand, ``hand_started`` and snapshots included."""
    ended: bool = False

    def open(self, seat: int, openings: Iterable[dict[str, Any]]) -> None:
        for raw in openings:
            opening = Opening.model_validate(raw)
            self.openings.setdefault(seat, {})[opening.position] = opening

    def seen(self) -> fairness.HandSeen:
        started = self.started
        return fairness.HandSeen(
            table_id=self.table_id,
            hand_id=self.hand_id,
            button=started["button"],
            commitment=started["commitment"],
            leaves=tuple(started["leaves"]),
            client_seeds={s["seat"]: s["client_seed"] for s in started["client_seeds"]},
            openings={seat: list(by.values()) for seat, by in self.openings.items()},
        )

    def tiles_known(self) -> set[str]:
        """Every tile text anywhere in this hand's frames."""
        return {text for frame in self.frames for text in _strings(frame) if TILE.match(text)}

    def tiles_allowed(self, me: int | None) -> set[str]:
        """What a real table shows this viewer: its own tiles and those shown down."""
        seats = {*self.shown, *((me,) if me is not None else ())}
        return {o.tile for seat in seats for o in self.openings.get(seat, {}).values()}


def hands_seen(frames: Iterable[dict[str, Any]]) -> list[Hand]:
    """Every hand the connection saw start (from ``hand_started`` or a snapshot)."""
    hands: dict[tuple[str, int], Hand] = {}
    for frame in frames:
        kind = frame["type"]
        if kind == "hand_started":
            key = (frame["table_id"], frame["hand_id"])
            hands[key] = Hand(*key, started=frame)
        elif kind == "table_snapshot" and frame["table"].get("hand"):
            table, view = frame["table"], frame["table"]["hand"]
            key = (table["table_id"], view["hand_id"])
            hand = hands.setdefault(key, Hand(*key, started={**view, "type": "hand_started"}))
            for seat in table["seats"]:
                if seat.get("openings"):
                    hand.open(seat["seat"], seat["openings"])
            hand.frames.append(frame)
            continue
        found = hands.get((frame.get("table_id", ""), frame.get("hand_id", 0)))
        if found is None:
            continue
        hand = found
        hand.frames.append(frame)
        if kind == "tiles_dealt" and "openings" in frame:
            hand.open(frame["seat"], frame["openings"])
        elif kind == "fourth_tile_dealt" and "opening" in frame:
            hand.open(frame["seat"], [frame["opening"]])
        elif kind == "showdown":
            for shown in frame["hands"]:
                hand.shown.add(shown["seat"])
                hand.open(shown["seat"], shown["openings"])
        elif kind == "hand_ended":
            hand.ended = True
    return list(hands.values())


def table_seeds(frames: Iterable[dict[str, Any]]) -> dict[str, str]:
    """The seeds ``table_closed`` revealed, by table."""
    return {
        f["table_id"]: f["table_seed"]
        for f in frames
        if f["type"] == "table_closed" and f.get("table_seed")
    }


def seed_commitments(frames: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Each table's ``seed_commitment`` as this connection was first told it."""
    found: dict[str, str] = {}
    for frame in frames:
        tables = []
        if frame["type"] == "table_snapshot" or frame["type"] == "table_created":
            tables = [frame["table"]]
        elif frame["type"] == "table_list":
            tables = frame["tables"]
        for table in tables:
            if table.get("seed_commitment"):
                found.setdefault(table["table_id"], table["seed_commitment"])
    return found


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
