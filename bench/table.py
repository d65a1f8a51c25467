"""The table's own work, without sockets: duel hands through a table and its dealer bot,
beside the engine alone playing the same hands.

Run from the repository root::

    uv run python -m bench.table [--hands 20000] [--loop auto|asyncio|uvloop] [--json]

A :class:`qiuqiu.server.table.Table` on the in-memory store, at the default dealer-bot
table, with the dealer bot in its seat and one player that checks or calls at every
turn, as :mod:`bench.load`'s duel players do, through what a connection is to a table
(frames in, client messages out). So it costs everything a duel hand costs the server
but its connections: the engine, the views, the dealer bot, the ledger's two commits,
the audience, the runner's timers and writes. The figure is CPU time a hand.

The floor plays the same hands with the engine alone, in the same run: each dealt from
the same deck, with the same actions, checked to end with the same stacks. The ratio
says what the table adds to the rules; :mod:`bench.load`'s duel figure, beside it, is
the whole server, and the difference is what its connections cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import Sequence
from typing import Any

from bench import plain
from qiuqiu import engine
from qiuqiu.engine import HandState
from qiuqiu.protocol import TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.server import loops
from qiuqiu.server.dealer import DealerBot
from qiuqiu.server.frames import Frame
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.table import Table, TableTimings

TABLE_ID = "tbench"
PLAYER = "player"
BUY_IN = 10**9
"""A stack no hand empties, so every hand is dealt to the same two seats."""


class Player:
    """A viewer that checks or calls whenever its turn comes, reading the frames' JSON as
    a client does, and keeps each hand's engine log for the floor."""

    def __init__(self, table: Table, hands: int) -> None:
        self.table, self.hands = table, hands
        self.logs: list[tuple[engine.Event, ...]] = []
        self.done = asyncio.get_running_loop().create_future()

    def deliver(self, message: Any) -> None:
        self.deliver_frame(Frame.of(message))

    def deliver_frame(self, frame: Frame) -> None:
        # Only its own turns carry what it may do; a client bot reads no other.
        if '"legal"' in frame.text:
            turn = json.loads(frame.text)
            ids = {"table_id": turn["table_id"], "hand_id": turn["hand_id"]}
            action = cmd.Call(**ids) if "call" in turn["legal"] else cmd.Check(**ids)
            asyncio.get_running_loop().call_soon(self._act, action)
        elif '"hand_ended"' in frame.text:
            hand = self.table.hand
            assert hand is not None
            self.logs.append(hand.log)
            if len(self.logs) == self.hands and not self.done.done():
                self.done.set_result(None)

    def _act(self, action: cmd.TableAction) -> None:
        self.table.serve(PLAYER, "Player", self, action)


async def table_hands(hands: int) -> tuple[float, list[tuple[engine.Event, ...]]]:
    """CPU seconds of ``hands`` duel hands at a table, and each hand's engine log."""
    store = MemoryStore()
    await store.create_account(PLAYER, "Player", "token", BUY_IN)
    await store.acquire_table(TABLE_ID, 3600)
    options = TableOptions(max_buy_in=BUY_IN)
    table = Table(
        TABLE_ID,
        options,
        store,
        random.Random(1),
        TableTimings(hand_pause=0, grace=30, bot_delay=0),
        bot_factory=DealerBot,
    )
    await table.open()
    player = Player(table, hands + 1)
    table.serve(PLAYER, "Player", player, cmd.JoinTable(table_id=TABLE_ID, buy_in=BUY_IN))
    while not player.logs:  # the first hand, which warms every cache, is not measured
        await asyncio.sleep(0.01)
    started = time.process_time()
    await player.done
    seconds = time.process_time() - started
    measured = player.logs[1 : hands + 1]  # the table plays on until it closes
    await table.close()
    return seconds, measured


def engine_hands(logs: Sequence[tuple[engine.Event, ...]]) -> float:
    """CPU seconds of the engine alone playing the hands of ``logs`` again."""
    plays = [_plan(log) for log in logs]
    started = time.process_time()
    ends = [_play(*plan) for plan in plays]
    seconds = time.process_time() - started
    for log, end in zip(logs, ends, strict=True):
        if end != log[-1]:
            raise AssertionError(f"the engine ended a hand as {end}, the table as {log[-1]}")
    return seconds


Plan = tuple[engine.HandStarted, list[engine.Event]]


def _plan(log: tuple[engine.Event, ...]) -> Plan:
    started = log[0]
    assert isinstance(started, engine.HandStarted)
    actions = (engine.Checked, engine.Called, engine.BetPlaced, engine.Raised, engine.Folded)
    return started, [e for e in log if isinstance(e, actions)]


def _play(started: engine.HandStarted, actions: list[engine.Event]) -> engine.Event:
    hand = HandState.start(started.rules, dict(started.stacks), started.button, started.deck)
    for action in actions:
        match action:
            case engine.Checked(seat):
                hand.check(seat)
            case engine.Called(seat):
                hand.call(seat)
            case engine.BetPlaced(seat, amount):
                hand.bet(seat, amount)
            case engine.Raised(seat, to):
                hand.raise_to(seat, to)
            case engine.Folded(seat):
                hand.fold(seat)
    return hand.log[-1]


def measure(hands: int, loop: loops.LoopName) -> dict[str, Any]:
    seconds, logs = loops.run(table_hands(hands), loop)
    floor = engine_hands(logs)
    return {
        "hands": len(logs),
        "loop": loops.resolve(loop),
        "table_us_a_hand": seconds / len(logs) * 1e6,
        "engine_us_a_hand": floor / len(logs) * 1e6,
        "ratio": seconds / floor,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.table",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--hands", type=int, default=20_000, help="hands measured (20000)")
    parser.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.hands < 1:
        parser.error("--hands must be at least 1")
    result = measure(args.hands, args.loop)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{result['hands']:,} duel hands on {result['loop']}:"
            f" the table {result['table_us_a_hand']:.0f} µs of CPU a hand,"
            f" the engine alone {result['engine_us_a_hand']:.0f} µs"
            f" ({result['ratio']:.1f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
