"""Engine events and state, as one viewer may see them.

This module is where hidden information is kept hidden, and the one place
where engine events become wire messages: every message a client or the
dealer bot gets about a hand is made here (:class:`HandWire`), for every
audience at once. A seat's tiles, and the openings that prove where each lay
in the sealed deck, appear only in its own copy until the showdown, which opens
the hands shown and no other: a folded hand and the undealt tiles stay sealed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from qiuqiu import engine
from qiuqiu.engine import Cut, HandState, Phase, Tile
from qiuqiu.protocol import ChipRange, CutView, LegalActions, SeatAmount, encode
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId, Opening, SeatSeed
from qiuqiu.protocol.fairness import SealedDeck

Audience = int | None
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


@dataclass(frozen=True, slots=True)
class Publication:
    """One table event: the copy every viewer gets, and the seats that get their own
    (their tiles, or the ``ref`` of the action that caused it). Messages are frozen,
    so one shared copy serves every other viewer: building pydantic models is much
    of what a hand costs."""

    public: wire.TableEvent
    own: Mapping[int, wire.TableEvent] = field(default_factory=dict)

    def for_seat(self, seat: Audience) -> wire.TableEvent:
        return self.public if seat is None else self.own.get(seat, self.public)


class HandWire:
    """Every wire message about one hand is made here, for every audience at once.

    ``pot`` follows the events as they are translated: ``betting_round_ended``
    carries the pot as of itself, while the engine's pot is as of its last event."""

    __slots__ = ("_ids", "_position", "client_seeds", "hand_id", "pot", "sealed", "table_id")

    def __init__(
        self,
        table_id: str,
        hand_id: int,
        sealed: SealedDeck,
        client_seeds: Iterable[tuple[int, str]],
    ) -> None:
        self.table_id, self.hand_id, self.sealed = table_id, hand_id, sealed
        self._ids: dict[str, Any] = {"table_id": table_id, "hand_id": hand_id}
        self._position = {tile: p for p, tile in enumerate(sealed.tiles)}
        self.client_seeds = tuple(SeatSeed(seat=n, client_seed=s) for n, s in client_seeds)
        self.pot = 0

    def openings(self, tiles: Iterable[Tile]) -> tuple[Opening, ...]:
        """Where ``tiles`` lay in the sealed deck, opened."""
        return tuple(self.sealed.opening(self._position[str(tile)]) for tile in tiles)

    def started(self, seq: int, button: int, stacks: Iterable[tuple[int, int]]) -> Publication:
        return Publication(
            wire.HandStarted(
                **self._ids,
                seq=seq,
                button=button,
                stacks=amounts(stacks),
                commitment=self.sealed.commitment,
                leaves=self.sealed.leaves,
                client_seeds=self.client_seeds,
            )
        )

    def event(
        self,
        event: engine.Event,
        seq: int,
        *,
        actor: Audience = None,
        ref: MessageId | None = None,
        deadline_ms: int | None = None,
        reason: str = "",
    ) -> Publication | None:
        """``event`` for every audience, or ``None`` for an event the wire does not
        carry (``HandStarted`` holds the deck: :meth:`started` announces the hand)."""
        self.pot += pot_change(event)
        ids: dict[str, Any] = {**self._ids, "seq": seq}
        public: wire.TableEvent | None
        match event:
            case engine.HandStarted():
                return None
            case engine.BettingRoundEnded(round):
                public = wire.BettingRoundEnded(**ids, round=round, pot=self.pot)
            case engine.CuttingStarted(seats):
                public = wire.CuttingStarted(**ids, seats=seats, deadline_ms=deadline_ms or 0)
            case engine.HandVoided(refunds):
                public = wire.HandVoided(**ids, reason=reason, refunds=amounts(refunds))
            case engine.HandEnded(stacks):
                public = wire.HandEnded(**ids, stacks=amounts(stacks))
            case _:
                public = self._message(event, False, ids)
        assert public is not None
        own: dict[int, wire.TableEvent] = {}
        if isinstance(event, _PRIVATE):
            mine = self._message(event, True, ids)
            assert mine is not None
            own[event.seat] = mine
        if actor is not None and ref is not None:
            own[actor] = own.get(actor, public).model_copy(update={"ref": ref})
        return Publication(public, own)

    def turn(self, hand: HandState, seq: int, deadline_ms: int) -> Publication:
        actor = hand.actor
        assert actor is not None
        public = wire.TurnStarted(
            **self._ids,
            seq=seq,
            seat=actor,
            to_call=hand.to_call(actor),
            deadline_ms=deadline_ms,
            pot=hand.pot,
            seats=seat_chips(hand),
        )
        legal = legal_view(hand.legal_actions(actor))
        return Publication(public, {actor: public.model_copy(update={"legal": legal})})

    def _four(self, tiles: Iterable[Tile]) -> tuple[Opening, Opening, Opening, Opening]:
        a, b, c, d = self.openings(tiles)
        return a, b, c, d

    def _message(
        self, event: engine.Event, own: bool, ids: dict[str, Any]
    ) -> wire.TableEvent | None:
        """``event`` as its own seat sees it (``own``) or as everyone else does."""
        match event:
            case engine.AnteTaken(seat, amount, all_in):
                return wire.AnteTaken(**ids, seat=seat, amount=amount, all_in=all_in)
            case engine.TilesDealt(seat, tiles):
                if not own:
                    return wire.TilesDealt(**ids, seat=seat)
                a, b, c = self.openings(tiles)
                three = (str(tiles[0]), str(tiles[1]), str(tiles[2]))
                return wire.TilesDealt(**ids, seat=seat, tiles=three, openings=(a, b, c))
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
                if not own:
                    return wire.FourthTileDealt(**ids, seat=seat)
                (opening,) = self.openings((tile,))
                return wire.FourthTileDealt(**ids, seat=seat, tile=str(tile), opening=opening)
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
                        openings=self._four(hand.tiles),
                    )
                    for hand in hands
                )
                return wire.Showdown(**ids, hands=faces)
            case engine.PotAwarded(amount, eligible, shares):
                return wire.PotAwarded(
                    **ids, amount=amount, eligible=eligible, shares=amounts(shares)
                )
        return None


def seat_views(
    hand: HandState | None,
    made: HandWire | None,
    seats: Iterable[wire.SeatView],
    viewer: Audience,
) -> tuple[wire.SeatView, ...]:
    """Fill in each seat's part in the hand, hiding the tiles (and their openings) of
    every seat but ``viewer``'s until they are shown down."""
    if hand is None or made is None:
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
                    "openings": made.openings(s.tiles) if visible else None,
                }
            )
        )
    return tuple(views)


def hand_view(hand: HandState, made: HandWire, deadline_ms: int | None) -> wire.HandView:
    phase: Literal["betting", "cutting", "ended"] = (
        "cutting" if hand.phase is Phase.CUTTING else "ended" if hand.is_over else "betting"
    )
    return wire.HandView(
        hand_id=made.hand_id,
        button=hand.button,
        commitment=made.sealed.commitment,
        leaves=made.sealed.leaves,
        client_seeds=made.client_seeds,
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
    :class:`Publication`), one viewer after another: remembering the last message is
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
