"""Engine events and state, as one viewer may see them.

This module is where hidden information is kept hidden: every wire message a
client or the dealer bot gets about a hand is made here, for one ``viewer``
seat (``None`` for a spectator). A seat's tiles appear only in its own copy
until the showdown; the deck never appears before ``hand_ended``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from qiuqiu import engine
from qiuqiu.engine import Cut, HandState, Phase, Tile
from qiuqiu.protocol import ChipRange, CutView, LegalActions, SeatAmount, encode
from qiuqiu.protocol import server as wire

Viewer = int | None
"""The seat a message is made for; ``None`` is a spectator."""


def tiles_text(tiles: Iterable[Tile]) -> tuple[str, ...]:
    return tuple(str(tile) for tile in tiles)


def cut_view(cut: Cut) -> CutView:
    (a, b), (c, d) = cut.high_pair, cut.low_pair
    return CutView(pairs=((str(a), str(b)), (str(c), str(d))), values=cut.pairs)


def amounts(pairs: Iterable[tuple[int, int]]) -> tuple[SeatAmount, ...]:
    return tuple(SeatAmount(seat=seat, amount=amount) for seat, amount in pairs)


def legal_view(legal: engine.LegalActions) -> LegalActions | None:
    if not legal.any:
        return None
    return LegalActions(
        check=legal.check,
        fold=legal.fold,
        call=legal.call,
        bet=ChipRange(min=legal.bet.low, max=legal.bet.high) if legal.bet else None,
        raise_to=(
            ChipRange(min=legal.raise_to.low, max=legal.raise_to.high) if legal.raise_to else None
        ),
        declare_cut=legal.declare_cut,
    )


_PRIVATE = (engine.TilesDealt, engine.FourthTileDealt, engine.CutDeclared)
"""Events whose seat sees more in its own copy than anyone else sees in theirs."""


def sees_more(event: engine.Event, viewer: Viewer) -> bool:
    """Whether ``viewer``'s copy of ``event`` differs from everyone else's: a table
    makes that copy apart, and one shared copy for all the others (messages are
    frozen), since building pydantic models is much of what a hand costs."""
    return isinstance(event, _PRIVATE) and event.seat == viewer


def hand_event(
    event: engine.Event, viewer: Viewer, *, table_id: str, seq: int, hand_id: int
) -> wire.HandEvent | None:
    """``event`` as ``viewer`` sees it, or ``None`` for events the wire does not carry
    (``HandStarted`` holds the deck: the table sends its own ``hand_started``)."""
    own = sees_more(event, viewer)
    return _message(event, own, table_id=table_id, seq=seq, hand_id=hand_id)


def _message(
    event: engine.Event, own: bool, *, table_id: str, seq: int, hand_id: int
) -> wire.HandEvent | None:
    """``event`` as its own seat sees it (``own``) or as everyone else does."""
    ids: dict[str, Any] = {"table_id": table_id, "seq": seq, "hand_id": hand_id}
    match event:
        case engine.AnteTaken(seat, amount, all_in):
            return wire.AnteTaken(**ids, seat=seat, amount=amount, all_in=all_in)
        case engine.TilesDealt(seat, tiles):
            three = (str(tiles[0]), str(tiles[1]), str(tiles[2]))
            return wire.TilesDealt(**ids, seat=seat, tiles=three if own else None)
        case engine.BettingRoundStarted(round):
            return wire.BettingRoundStarted(**ids, round=round)
        case engine.TurnTimedOut(seat):
            return wire.TurnTimedOut(**ids, seat=seat)
        case engine.Checked(seat):
            return wire.Checked(**ids, seat=seat)
        case engine.BetPlaced(seat, amount, all_in):
            return wire.BetPlaced(**ids, seat=seat, amount=amount, all_in=all_in)
        case engine.Called(seat, amount, all_in):
            return wire.Called(**ids, seat=seat, amount=amount, all_in=all_in)
        case engine.Raised(seat, to, amount, all_in):
            return wire.Raised(**ids, seat=seat, to=to, amount=amount, all_in=all_in)
        case engine.Folded(seat):
            return wire.Folded(**ids, seat=seat)
        case engine.BetReturned(seat, amount):
            return wire.BetReturned(**ids, seat=seat, amount=amount)
        case engine.FourthTileDealt(seat, tile):
            return wire.FourthTileDealt(**ids, seat=seat, tile=str(tile) if own else None)
        case engine.CutDeclared(seat, cut):
            return wire.CutDeclared(**ids, seat=seat, cut=cut_view(cut) if own else None)
        case engine.Showdown(hands):
            faces = tuple(
                wire.ShownHand(
                    seat=hand.seat,
                    tiles=(
                        str(hand.tiles[0]),
                        str(hand.tiles[1]),
                        str(hand.tiles[2]),
                        str(hand.tiles[3]),
                    ),
                    cut=cut_view(hand.cut),
                    category=hand.category,
                )
                for hand in hands
            )
            return wire.Showdown(**ids, hands=faces)
        case engine.PotAwarded(amount, eligible, shares):
            return wire.PotAwarded(**ids, amount=amount, eligible=eligible, shares=amounts(shares))
        case _:
            # HandStarted, BettingRoundEnded, CuttingStarted, HandVoided and HandEnded
            # need what only the table knows (the commitment, the pot, deadlines, the
            # reason, the seed): the table makes those itself.
            return None


def seat_views(
    hand: HandState | None,
    seats: Iterable[wire.SeatView],
    viewer: Viewer,
) -> tuple[wire.SeatView, ...]:
    """Fill in each seat's part in the hand, hiding the tiles of every seat but ``viewer``'s."""
    if hand is None:
        return tuple(seats)
    in_hand = hand.seats
    shown = hand.phase is Phase.ENDED and any(isinstance(e, engine.Showdown) for e in hand.log)
    views = []
    for seat in seats:
        s = in_hand.get(seat.seat)
        if s is None:
            views.append(seat)
            continue
        visible = seat.seat == viewer or (shown and not s.folded)
        views.append(
            seat.model_copy(
                update={
                    "stack": s.stack,
                    "bet": s.round_bet,
                    "in_hand": True,
                    "folded": s.folded,
                    "all_in": s.all_in,
                    "tile_count": len(s.tiles),
                    "tiles": tiles_text(s.tiles) if visible else None,
                }
            )
        )
    return tuple(views)


def hand_view(
    hand: HandState, hand_id: int, commitment: str, deadline_ms: int | None
) -> wire.HandView:
    phase: Literal["betting", "cutting", "ended"] = (
        "cutting" if hand.phase is Phase.CUTTING else "ended" if hand.is_over else "betting"
    )
    return wire.HandView(
        hand_id=hand_id,
        button=hand.button,
        commitment=commitment,
        phase=phase,
        round=hand.round,
        pot=hand.pot,
        current_bet=hand.current_bet,
        actor=hand.actor if hand.phase is Phase.BETTING else None,
        deadline_ms=None if hand.is_over else deadline_ms,
    )


def seat_chips(hand: HandState) -> tuple[wire.SeatChips, ...]:
    """Every seat's chips in the hand: public, so the same for every viewer."""
    return tuple(
        wire.SeatChips(
            seat=s.seat, stack=s.stack, bet=s.round_bet, folded=s.folded, all_in=s.all_in
        )
        for s in hand.seats.values()
    )


def pot_change(event: engine.Event) -> int:
    """How ``event`` changes the chips in the middle: the pot as of each event, for
    ``betting_round_ended`` (the engine's pot is as of its last event)."""
    match event:
        case (
            engine.AnteTaken(amount=amount)
            | engine.BetPlaced(amount=amount)
            | engine.Called(amount=amount)
            | engine.Raised(amount=amount)
        ):
            return amount
        case engine.BetReturned(amount=amount) | engine.PotAwarded(amount=amount):
            return -amount
        case engine.HandVoided(refunds):
            return -sum(amount for _, amount in refunds)
    return 0


class SharedFrames:
    """Writes messages as frames, once for each run of deliveries of one message.

    A table sends one event object to every viewer who sees the same thing (see
    :func:`sees_more`), one viewer after another: remembering the last message is
    enough to write it once. Messages are frozen, and the one remembered is held,
    so no other object can come to have its identity."""

    __slots__ = ("_frame", "_message")

    def __init__(self) -> None:
        self._message: wire.Reply | None = None
        self._frame = ""

    def encode(self, message: wire.Reply) -> str:
        if message is not self._message:
            self._message, self._frame = message, encode(message)
        return self._frame
