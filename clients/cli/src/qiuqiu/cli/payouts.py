"""Who won what: a hand's payouts replayed with the engine, from what every seat saw.

The fair deal (:mod:`qiuqiu.cli.deals`) holds the server to the tiles it dealt;
this holds it to the chips it paid. Every seat sees the hand's stacks, button,
betting and, at a showdown, the hands shown (each with the cut it was judged
by), and that is all the payouts depend on: the tiles of a seat that folded
decide nothing. So :func:`verify_payouts` deals a deck that gives each shown
seat its shown tiles (any tiles to the rest), plays the same moves and cuts
through the engine the server runs, and compares the stacks the rules give
with the stacks the server's ``hand_ended`` says.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import ValidationError

from qiuqiu.engine import ALL_TILES, Cut, EngineError, HandState, Tile
from qiuqiu.engine.events import HandEnded, Showdown
from qiuqiu.engine.state import FIRST_TILES
from qiuqiu.protocol import DealTampered, TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import SeatAmount


class PaidWrong(DealTampered):
    """The server paid a hand otherwise than the rules pay it (or told a hand the
    rules do not allow): the tiles may all check, the chips do not."""


class Move(Protocol):
    """A betting action as :class:`qiuqiu.cli.game.Move` keeps it."""

    @property
    def seat(self) -> int: ...
    @property
    def action(self) -> str: ...
    @property
    def chips(self) -> int: ...
    @property
    def to(self) -> int: ...


def verify_payouts(
    table_id: str,
    hand_id: int,
    options: TableOptions,
    *,
    button: int,
    stacks_before: Mapping[int, int],
    moves: Sequence[Move],
    shown: Sequence[wire.ShownHand],
    ended: Iterable[SeatAmount],
) -> None:
    """Raise :class:`PaidWrong` unless the rules pay the hand as ``ended`` says.

    ``moves`` must be the hand's every betting action, from its start."""

    def tampered(reason: str) -> PaidWrong:
        return PaidWrong(table_id, hand_id, reason)

    try:
        rules = options.rules()
        tiles = {hand.seat: tuple(Tile.parse(t) for t in hand.tiles) for hand in shown}
        state = HandState.start(rules, stacks_before, button, _deck(stacks_before, button, tiles))
        for move in moves:
            _play(state, move)
        for seat in state.pending_cuts:
            cut = next((hand.cut for hand in shown if hand.seat == seat), None)
            if cut is None:
                raise tampered(f"seat {seat} was cutting, and no cut of its was shown")
            (a, b), (c, d) = cut.pairs
            state.declare_cut(
                seat, Cut((Tile.parse(a), Tile.parse(b)), (Tile.parse(c), Tile.parse(d)))
            )
    except (EngineError, ValueError) as error:  # a button or a tile that is none
        raise tampered(f"the hand as the server told it breaks the rules: {error}") from None
    # The deck dealt any tiles to a seat not shown: a hand still in must be shown, or
    # those tiles would be what it is judged by.
    for event in state.log:
        if isinstance(event, Showdown):
            for hand in event.hands:
                if hand.seat not in tiles:
                    raise tampered(f"seat {hand.seat} was still in, and the showdown hid its hand")
    last = state.log[-1]
    if not isinstance(last, HandEnded):
        raise tampered("the server ended the hand before its betting was over")
    paid = {entry.seat: entry.amount for entry in ended}
    due = dict(last.stacks)
    if paid != due:
        wrong = ", ".join(
            f"seat {seat} {paid.get(seat)} (due {due.get(seat)})"
            for seat in sorted(due.keys() | paid.keys())
            if paid.get(seat) != due.get(seat)
        )
        raise tampered(f"the pot was not paid as the rules say: {wrong}")


def _deck(
    stacks: Mapping[int, int], button: int, shown: Mapping[int, tuple[Tile, ...]]
) -> list[Tile]:
    """28 tiles in dealing order, with each shown seat's tiles at its positions: the
    first three of each seat in turn from the one after the button, then a fourth each."""
    seats = sorted(stacks)
    after = seats.index(button) + 1
    order = seats[after:] + seats[:after]
    known = {tile for tiles in shown.values() for tile in tiles}
    spare = iter([tile for tile in ALL_TILES if tile not in known])
    first: list[Tile] = []
    fourth: list[Tile] = []
    for seat in order:
        tiles = shown.get(seat, ())
        first.extend(tiles[:FIRST_TILES] or [next(spare) for _ in range(FIRST_TILES)])
        fourth.append(tiles[FIRST_TILES] if len(tiles) > FIRST_TILES else next(spare))
    return [*first, *fourth, *spare]


def _play(state: HandState, move: Move) -> None:
    match move.action:
        case "check":
            state.check(move.seat)
        case "fold":
            state.fold(move.seat)
        case "bet":
            state.bet(move.seat, move.chips)
        case "call":
            state.call(move.seat)
        case "raise":
            state.raise_to(move.seat, move.to)


@dataclass(frozen=True, slots=True)
class _Told:
    """A betting action as a hand's history tells it."""

    seat: int
    action: str
    chips: int = 0
    to: int = 0


_ACTIONS = {
    "checked": "check",
    "folded": "fold",
    "bet_placed": "bet",
    "called": "call",
    "raised": "raise",
}


def verify_history(options: TableOptions, played: wire.PlayedHand) -> None:
    """Raise :class:`PaidWrong` unless the rules pay ``played`` (a hand of
    ``list_hands``, which holds every event a spectator saw) as its history says."""
    if played.voided or not played.events:
        return
    started: wire.HandStarted | None = None
    ended: wire.HandEnded | None = None
    shown: tuple[wire.ShownHand, ...] = ()
    moves: list[_Told] = []
    try:
        for event in played.events:
            kind = event.get("type")
            if kind in _ACTIONS:
                moves.append(
                    _Told(event["seat"], _ACTIONS[kind], event.get("amount", 0), event.get("to", 0))
                )
            elif kind == "hand_started":
                started = wire.HandStarted.model_validate_json(json.dumps(event))
            elif kind == "showdown":
                shown = wire.Showdown.model_validate_json(json.dumps(event)).hands
            elif kind == "hand_ended":
                ended = wire.HandEnded.model_validate_json(json.dumps(event))
    except (KeyError, ValidationError):
        started = None
    if started is None or ended is None:
        raise PaidWrong(played.table_id, played.hand_id, "its history does not say how it was paid")
    verify_payouts(
        played.table_id,
        played.hand_id,
        options,
        button=started.button,
        stacks_before={entry.seat: entry.amount for entry in started.stacks},
        moves=moves,
        shown=shown,
        ended=ended.stacks,
    )
