"""A :class:`TableCore` with the runner's part played by hand, for the tests of
``core.py``: each feeds it inputs, reads what it asks for (messages, timers, the next
write) and says how the write went, as the runner would."""

from __future__ import annotations

import random
from typing import Any

from qiuqiu.protocol import TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.store import HOUSE
from qiuqiu.server.table import TableCore, TablePhase, TableTimings
from qiuqiu.server.table.audience import NEXT_HAND, Arm, Timer
from qiuqiu.server.table.ledger import Write, WriteKind

NOW = 1_800_000_000.0


class Watcher:
    """A viewer that keeps what it is sent."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.got: list[wire.Reply] = []

    def deliver(self, message: wire.Reply) -> None:
        self.got.append(message)

    def types(self) -> list[str]:
        return [str(m.model_dump()["type"]) for m in self.got]

    def take(self) -> list[str]:
        types, self.got = self.types(), []
        return types

    def __repr__(self) -> str:
        return self.name


class Harness:
    """A core with the runner's part played by hand."""

    def __init__(self, **options: Any) -> None:
        self.core = TableCore(
            "t1",
            TableOptions(**options),
            random.Random(7),
            lambda: NOW,
            TableTimings(hand_pause=0, grace=30, bot_delay=0),
        )
        self.timers: dict[Timer, float] = {}
        self.balances = {
            HOUSE: -3000,
            "ann": 1000,
            "bob": 1000,
            "cat": 1000,
        }  # granted by the house

    def outputs(self) -> None:
        deliveries, timers = self.core.take_outputs()
        for viewer, frame in deliveries:
            viewer.deliver(frame.message)
        for change in timers:
            if isinstance(change, Arm):
                self.timers[change.timer] = change.seconds
            else:
                self.timers.pop(change.timer, None)

    def do(self, work: Any, *args: Any, **kwargs: Any) -> None:
        work(*args, **kwargs)
        self.outputs()

    def write(self, kind: WriteKind | None = None) -> Write:
        """Take the next write and make it, as the store would."""
        write = self.core.next_write()
        assert write is not None, "a write was expected"
        if kind is not None:
            assert write.kind is kind, write
        self.written(write)
        return write

    def written(self, write: Write) -> None:
        for account, amount in write.commit.moves:
            self.balances[account] -= amount
        moved = {account: self.balances[account] for account, _ in write.commit.moves}
        self.do(self.core.written, write, moved)

    def fire(self, timer: Timer) -> None:
        assert timer in self.timers, f"{timer} is not armed"
        del self.timers[timer]
        self.do(self.core.fire, timer)


def opened(**options: Any) -> Harness:
    h = Harness(**options)
    h.do(h.core.open, Watcher("bot") if h.core.options.dealer_bot else None)
    h.write(WriteKind.OPEN)
    return h


def seated(h: Harness, account: str, viewer: Watcher, chips: int = 300) -> None:
    h.do(h.core.sit, account, account.title(), viewer, chips, None, f"{account}-sits")
    h.write(WriteKind.BUY_IN)


def duel(**options: Any) -> tuple[Harness, Watcher, Watcher]:
    """Ann and Bob at a table without the bot, the first hand dealt."""
    h = opened(dealer_bot=False, **options)
    ann, bob = Watcher("ann"), Watcher("bob")
    seated(h, "ann", ann)
    seated(h, "bob", bob)
    h.fire(NEXT_HAND)
    h.write(WriteKind.HAND_START)
    return h, ann, bob


def action(kind: type[cmd.TableAction], h: Harness, **fields: Any) -> cmd.TableAction:
    return kind(table_id="t1", hand_id=h.core.hand_id, **fields)


def actor(h: Harness) -> str:
    hand = h.core.hand
    assert hand is not None
    assert hand.actor is not None
    return h.core.seats[hand.actor].account_id


def state(h: Harness) -> TablePhase:
    """Read afresh each time (mypy would take one read for the next)."""
    return h.core.state


def chips(h: Harness) -> int:
    """Every balance and every stack the table's record would hold: always zero."""
    return sum(h.balances.values()) + sum(s.stack for s in h.core.seats.values())
