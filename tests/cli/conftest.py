"""A real server on a free port for the client to play against, and the real ``qiuqiu``."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Literal

import pytest

from qiuqiu.cli.arena.seats import load_bot
from qiuqiu.cli.bot import HandResult, Move, Turn
from qiuqiu.protocol import server as wire
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer

QIUQIU = Path(sys.executable).with_name("qiuqiu")
"""The ``qiuqiu`` command as ``uv sync`` installed it."""

CONFIG = ServerConfig(port=0, hand_pause=0.05, bot_delay=0.0, grace=5.0, rate=1e6, burst=10**6)
"""Quick, but with a pause between hands, so a client that asks to leave when a hand
ends is gone before the next one is dealt."""


@pytest.fixture
def config() -> ServerConfig:
    return CONFIG


@asynccontextmanager
async def piped(*argv: str | Path) -> AsyncIterator[asyncio.subprocess.Process]:
    """``argv`` running with its output piped, killed on the way out if a test that
    stops it (Ctrl-C) failed before it ended."""
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where ``qiuqiu`` keeps its tokens in this test (never the user's own folder)."""
    folder = tmp_path / "config"
    monkeypatch.setenv("QIUQIU_CONFIG_DIR", str(folder))
    return folder


SLOW_BOT = """
# A bot slower than its table's turn clock, writing each turn's clock beside its file.
import time
from pathlib import Path

from qiuqiu.cli.bot import Action, Bot, Call, Check, Turn


class Slow(Bot):
    def decide(self, turn: Turn) -> Action:
        with Path(__file__).with_suffix(".answers").open("a") as answers:
            answers.write(f"{turn.options.turn_seconds}\\n")
        time.sleep(2 * turn.options.turn_seconds)
        return Check() if turn.legal.check else Call()
"""


def cut_the_network(server: QiuQiuServer) -> None:
    """Drop every connection of ``server`` from its side, as a broken network would:
    no closing handshake."""
    for connection in server._server.connections if server._server else ():
        connection.transport.abort()


def bot_module(spec: str) -> ModuleType:
    """The module the arena loaded a bot file into, to read what its bots recorded."""
    return sys.modules[type(load_bot(spec)).__module__]


def hands_seen_by_a_spectator(
    messages: Iterable[object],
) -> list[tuple[int, tuple[Move, ...], dict[int, int], dict[int, tuple[str, ...]]]]:
    """Each hand among a spectator's ``messages`` (those of every seat alike), in order:
    its id, its betting actions worked out from the events here, independently of
    the client's table state, each seat's net, and the tiles shown down."""
    hands = []
    moves: list[Move] = []
    bets: dict[int, int] = {}
    before: dict[int, int] = {}
    shown: dict[int, tuple[str, ...]] = {}
    betting_round = 0
    timed_out = None
    for message in messages:
        match message:
            case wire.HandStarted(stacks=stacks):
                moves, bets, shown, betting_round = [], {}, {}, 0
                before = {entry.seat: entry.amount for entry in stacks}
            case wire.BettingRoundStarted(round=number):
                betting_round, bets = number, {}
            case wire.TurnTimedOut(seat=seat):
                timed_out = seat
            case wire.Checked(seat=seat) | wire.Folded(seat=seat):
                action: Literal["check", "fold"] = (
                    "check" if isinstance(message, wire.Checked) else "fold"
                )
                bet = bets.get(seat, 0)
                moves.append(Move(seat, action, betting_round, 0, bet, False, timed_out == seat))
                timed_out = None
            case (
                wire.BetPlaced(seat=seat, amount=chips, all_in=all_in)
                | wire.Called(seat=seat, amount=chips, all_in=all_in)
            ):
                bets[seat] = bets.get(seat, 0) + chips
                name: Literal["bet", "call"] = (
                    "bet" if isinstance(message, wire.BetPlaced) else "call"
                )
                moves.append(Move(seat, name, betting_round, chips, bets[seat], all_in))
            case wire.Raised(seat=seat, to=to, amount=chips, all_in=all_in):
                bets[seat] = to
                moves.append(Move(seat, "raise", betting_round, chips, to, all_in))
            case wire.Showdown(hands=shown_hands):
                shown = {h.seat: h.tiles for h in shown_hands}
            case wire.HandEnded(hand_id=hand_id, stacks=stacks):
                net = {e.seat: e.amount - before[e.seat] for e in stacks if e.seat in before}
                hands.append((hand_id, tuple(moves), net, shown))
    return hands


def check_told_as_a_spectator_saw_it(
    told: Sequence[Turn | HandResult], messages: Iterable[object]
) -> None:
    """``told``, the turns and results a bot was given in order, against the hands a
    spectator saw: each result's history, nets and tiles shown are the spectator's,
    and each turn's history is the hand's so far, the bot's own move coming next."""
    seen = hands_seen_by_a_spectator(messages)
    assert sum(isinstance(item, HandResult) for item in told) == len(seen)
    spectators = iter(seen)
    turns: list[Turn] = []
    for item in told:
        if isinstance(item, Turn):
            turns.append(item)
            continue
        hand_id, moves, net, shown = next(spectators)
        assert (item.hand_id, item.history, dict(item.net)) == (hand_id, moves, net)
        assert {seat: tuple(map(str, tiles)) for seat, tiles in item.shown.items()} == shown
        for turn in turns:
            assert turn.hand_id == hand_id
            assert moves[: len(turn.history)] == turn.history
            assert moves[len(turn.history)].seat == turn.seat
        turns = []
