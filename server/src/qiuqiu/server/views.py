"""Engine events and state, as one viewer may see them.

This module is where hidden information is kept hidden, and the one place
where engine events become wire messages: every message a client or the
dealer bot gets about a hand is made here (:class:`HandWire`), for every
audience at once. A seat's tiles, and the openings that prove where each lay
in the sealed deck, appear only in its own copy until the showdown, which opens
the hands shown and no other: a folded hand and the undealt tiles stay sealed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, cast

from qiuqiu import engine
from qiuqiu.engine import Cut, HandState, Phase, Tile
from qiuqiu.protocol import LegalActions
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import CutView, MessageId, Opening, SeatAmount, SeatSeed
from qiuqiu.protocol.fairness import SealedDeck
from qiuqiu.server.frames import BOOL, Frame, amounts_text, free_text, ints_text, plain_strings

Audience = int | None
"""The seat a message is made for; ``None`` is a spectator."""


def tiles_text(tiles: Iterable[Tile]) -> tuple[str, ...]:
    return tuple(str(tile) for tile in tiles)


_PRIVATE = frozenset((engine.TilesDealt, engine.FourthTileDealt, engine.CutDeclared))
"""Events whose seat sees more in its own copy than anyone else sees in theirs."""
_Private = engine.TilesDealt | engine.FourthTileDealt | engine.CutDeclared


@dataclass(frozen=True, slots=True)
class Publication:
    """One table event: the frame every viewer gets, and the seats that get their own
    (their tiles, or the ``ref`` of the action that caused it). Each is written once
    and the same text goes to every connection of its audience."""

    public_frame: Frame
    own_frames: Mapping[int, Frame] = field(default_factory=dict)

    @classmethod
    def of(cls, message: wire.TableEvent) -> Publication:
        """An event everyone sees alike, made as a model (not one a hand repeats)."""
        return cls(Frame.of(message))

    def frame_for(self, seat: Audience) -> Frame:
        return self.public_frame if seat is None else self.own_frames.get(seat, self.public_frame)

    # What readers of models (the arena's players) take, made from the frames.

    @property
    def public(self) -> wire.TableEvent:
        return _event(self.public_frame)

    def for_seat(self, seat: Audience) -> wire.TableEvent:
        public = self.public_frame
        # frame_for's choice, said again: the arena asks for every message for every seat.
        return _event(public if seat is None else self.own_frames.get(seat, public))


def _event(frame: Frame) -> wire.TableEvent:
    # The frame knows it carries a table event: no isinstance of a pydantic model
    # (a slow one) for every message every seat reads.
    assert frame.event
    return cast(wire.TableEvent, frame.message)


class HandWire:
    """Every wire message about one hand is written here, for every audience at once,
    straight to its JSON text (:mod:`qiuqiu.server.frames` says why).

    ``pot`` follows the events as they are translated: ``betting_round_ended``
    carries the pot as of itself, while the engine's pot is as of its last event."""

    __slots__ = ("_head", "_position", "_seeds", "hand_id", "pot", "sealed", "table_id")

    def __init__(
        self,
        table_id: str,
        hand_id: int,
        sealed: SealedDeck,
        client_seeds: Iterable[tuple[int, str]],
    ) -> None:
        self.table_id, self.hand_id, self.sealed = table_id, hand_id, sealed
        # A table id and a client seed are letters, digits, _ and -: nothing to escape.
        self._head = f'"table_id":"{table_id}","hand_id":{hand_id},"seq":'
        self._position = {tile: p for p, tile in enumerate(sealed.tiles)}
        self._seeds = tuple(client_seeds)
        self.pot = 0

    @property
    def client_seeds(self) -> tuple[SeatSeed, ...]:
        """As a snapshot shows them: made only for one, since ``started`` writes text."""
        return tuple(SeatSeed(seat=n, client_seed=s) for n, s in self._seeds)

    def openings(self, tiles: Iterable[Tile]) -> tuple[Opening, ...]:
        """Where ``tiles`` lay in the sealed deck, opened."""
        return tuple(self.sealed.opening(self._position[tile.text]) for tile in tiles)

    def openings_text(self, tiles: Iterable[Tile]) -> str:
        return ",".join(map(self.opening_text, tiles)).join("[]")

    def opening_text(self, tile: Tile) -> str:
        sealed, p = self.sealed, self._position[tile.text]
        return f'{{"position":{p},"tile":"{sealed.tiles[p]}","salt":"{sealed.salts[p]}"}}'

    def _frame(
        self, kind: type[wire.HandEvent], seq: int, body: str, own_seat: int | None = None
    ) -> Frame:
        text = f"{_type_field(kind)}{self._head}{seq}{body}}}"
        return Frame(text, kind, self.table_id, seq, own_seat=own_seat)

    def started(self, seq: int, button: int, stacks: Iterable[tuple[int, int]]) -> Publication:
        sealed = self.sealed
        seeds = ",".join(f'{{"seat":{n},"client_seed":"{s}"}}' for n, s in self._seeds)
        body = (
            f',"button":{button},"stacks":{amounts_text(stacks)}'
            f',"commitment":"{sealed.commitment}","leaves":{plain_strings(sealed.leaves)}'
            f',"client_seeds":[{seeds}]'
        )
        return Publication(self._frame(wire.HandStarted, seq, body))

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
        write = _WRITERS.get(type(event))
        if write is None:
            return None
        self.pot += pot_change(event)
        kind, body = write(self, event, False, deadline_ms, reason)
        public = self._frame(kind, seq, body)
        own: dict[int, Frame] = {}
        if type(event) in _PRIVATE:
            seat = cast(_Private, event).seat
            own[seat] = self._frame(
                kind, seq, write(self, event, True, deadline_ms, reason)[1], seat
            )
        if actor is not None and ref is not None:
            own[actor] = own.get(actor, public).with_ref(ref, actor)
        return Publication(public, own)

    def turn(self, hand: HandState, seq: int, deadline_ms: int) -> Publication:
        actor = hand.actor
        assert actor is not None
        seats = ",".join(
            f'{{"seat":{s.seat},"stack":{s.stack},"bet":{s.round_bet},'
            f'"folded":{BOOL[s.folded]},"all_in":{BOOL[s.all_in]}}}'
            for s in hand.seats.values()
        )
        body = (
            f',"seat":{actor},"to_call":{hand.to_call(actor)},"deadline_ms":{deadline_ms}'
            f',"pot":{hand.pot},"seats":[{seats}]'
        )
        public = self._frame(wire.TurnStarted, seq, body)
        legal = legal_text(hand.legal_actions(actor))
        own = {} if legal is None else {actor: public.with_field("legal", legal, actor)}
        return Publication(public, own)


# -- each event's body, by the event's class -------------------------------------------
# A look-up by class, not a match: each case of a match is an isinstance check, and a
# hand's events go through here for every one of them. A writer gives the message's
# class and its fields after ``seq``, as its own seat sees them (``own``) or as everyone
# else does (only the events in _PRIVATE differ), given the deadline and the reason that
# ``cutting_started`` and ``hand_voided`` carry.

Body = tuple[type[wire.HandEvent], str]
Writer = Callable[[HandWire, Any, bool, int | None, str], Body]


def _seat_amount(kind: type[wire.HandEvent]) -> Writer:
    return lambda w, e, *_: (
        kind,
        f',"seat":{e.seat},"amount":{e.amount},"all_in":{BOOL[e.all_in]}',
    )


def _seat_only(kind: type[wire.HandEvent]) -> Writer:
    return lambda w, e, *_: (kind, f',"seat":{e.seat}')


def _tiles_dealt(w: HandWire, e: engine.TilesDealt, own: bool, *_: object) -> Body:
    if not own:
        return wire.TilesDealt, f',"seat":{e.seat}'
    tiles, openings = plain_strings(e.tiles), w.openings_text(e.tiles)
    return wire.TilesDealt, f',"seat":{e.seat},"tiles":{tiles},"openings":{openings}'


def _fourth_tile(w: HandWire, e: engine.FourthTileDealt, own: bool, *_: object) -> Body:
    if not own:
        return wire.FourthTileDealt, f',"seat":{e.seat}'
    opening = w.opening_text(e.tile)
    return wire.FourthTileDealt, f',"seat":{e.seat},"tile":"{e.tile}","opening":{opening}'


def _cut_declared(w: HandWire, e: engine.CutDeclared, own: bool, *_: object) -> Body:
    body = f',"seat":{e.seat},"cut":{cut_text(e.cut)}' if own else f',"seat":{e.seat}'
    return wire.CutDeclared, body


def _showdown(w: HandWire, e: engine.Showdown, *_: object) -> Body:
    faces = ",".join(
        f'{{"seat":{hand.seat},"tiles":{plain_strings(hand.tiles)}'
        f',"cut":{cut_text(hand.cut)},"category":"{hand.category}"'
        f',"openings":{w.openings_text(hand.tiles)}}}'
        for hand in e.hands
    )
    return wire.Showdown, f',"hands":[{faces}]'


def _pot_awarded(w: HandWire, e: engine.PotAwarded, *_: object) -> Body:
    eligible, shares = ints_text(e.eligible), amounts_text(e.shares)
    return wire.PotAwarded, f',"amount":{e.amount},"eligible":{eligible},"shares":{shares}'


_WRITERS: dict[type[engine.Event], Writer] = {
    engine.AnteTaken: _seat_amount(wire.AnteTaken),
    engine.TilesDealt: _tiles_dealt,
    engine.BettingRoundStarted: lambda w, e, *_: (wire.BettingRoundStarted, f',"round":{e.round}'),
    engine.BettingRoundEnded: lambda w, e, *_: (
        wire.BettingRoundEnded,
        f',"round":{e.round},"pot":{w.pot}',
    ),
    engine.TurnTimedOut: _seat_only(wire.TurnTimedOut),
    engine.Checked: _seat_only(wire.Checked),
    engine.BetPlaced: _seat_amount(wire.BetPlaced),
    engine.Called: _seat_amount(wire.Called),
    engine.Raised: lambda w, e, *_: (
        wire.Raised,
        f',"seat":{e.seat},"to":{e.to},"amount":{e.amount},"all_in":{BOOL[e.all_in]}',
    ),
    engine.Folded: _seat_only(wire.Folded),
    engine.BetReturned: lambda w, e, *_: (
        wire.BetReturned,
        f',"seat":{e.seat},"amount":{e.amount}',
    ),
    engine.FourthTileDealt: _fourth_tile,
    engine.CuttingStarted: lambda w, e, own, deadline_ms, _: (
        wire.CuttingStarted,
        f',"seats":{ints_text(e.seats)},"deadline_ms":{deadline_ms or 0}',
    ),
    engine.CutDeclared: _cut_declared,
    engine.Showdown: _showdown,
    engine.PotAwarded: _pot_awarded,
    engine.HandVoided: lambda w, e, own, _, reason: (
        wire.HandVoided,
        f',"reason":{free_text(reason)},"refunds":{amounts_text(e.refunds)}',
    ),
    engine.HandEnded: lambda w, e, *_: (wire.HandEnded, f',"stacks":{amounts_text(e.stacks)}'),
}
"""Every event the wire carries; ``HandStarted`` is announced by :meth:`HandWire.started`."""


@cache
def _type_field(kind: type[wire.HandEvent]) -> str:
    """A message's opening brace and ``type``: pydantic is slow to say a model's fields."""
    return f'{{"type":"{kind.model_fields["type"].default}",'


def cut_view(cut: Cut) -> CutView:
    """:func:`cut_text`'s model, read back from it: one translation of a cut."""
    return CutView.model_validate_json(cut_text(cut))


def cut_text(cut: Cut) -> str:
    (a, b), (c, d) = cut.high_pair, cut.low_pair
    high, low = cut.pairs
    return f'{{"pairs":[["{a}","{b}"],["{c}","{d}"]],"values":[{high},{low}]}}'


def legal_text(legal: engine.LegalActions) -> str | None:
    """What a seat may do, as JSON; ``None`` when it may do nothing."""
    if not legal.any:
        return None
    call = "" if legal.call is None else f',"call":{legal.call}'
    bet = "" if legal.bet is None else f',"bet":{{"min":{legal.bet.min},"max":{legal.bet.max}}}'
    raise_to = legal.raise_to
    raised = (
        "" if raise_to is None else f',"raise_to":{{"min":{raise_to.min},"max":{raise_to.max}}}'
    )
    return (
        f'{{"check":{BOOL[legal.check]},"fold":{BOOL[legal.fold]}{call}{bet}{raised}'
        f',"declare_cut":{BOOL[legal.declare_cut]}}}'
    )


def legal_view(legal: engine.LegalActions) -> LegalActions | None:
    """The same, as the model a snapshot holds."""
    text = legal_text(legal)
    return None if text is None else LegalActions.model_validate_json(text)


def seat_views(
    hand: HandState | None,
    made: HandWire | None,
    seats: Iterable[wire.SeatView],
    viewer: Audience,
    dealt: Container[int],
) -> tuple[wire.SeatView, ...]:
    """Fill in each seat's part in the hand, hiding the tiles (and their openings) of
    every seat but ``viewer``'s until they are shown down. Only the seats ``dealt``
    (held by the player dealt in there) have a part: another seat's number may be the
    same, but its player was not in the hand."""
    if hand is None or made is None:
        return tuple(seats)
    in_hand = hand.seats
    shown = hand.phase is Phase.ENDED and any(isinstance(e, engine.Showdown) for e in hand.log)
    views = []
    for seat in seats:
        s = in_hand.get(seat.seat) if seat.seat in dealt else None
        if s is None:
            views.append(seat)
            continue
        visible = seat.seat == viewer or (shown and not s.folded)
        # Once the hand is over its chips are the seats' again, and a seat's may have
        # changed since (a buy-in after going bust, the dealer bot's top-up).
        over = hand.is_over
        views.append(
            seat.model_copy(
                update={
                    "stack": seat.stack if over else s.stack,
                    "bet": 0 if over else s.round_bet,
                    "in_hand": True,
                    "folded": s.folded,
                    "all_in": s.all_in,
                    "tile_count": len(s.tiles),
                    "tiles": tiles_text(s.tiles) if visible else None,
                    "openings": made.openings(s.tiles) if visible else None,
                    "cut": cut_view(s.cut) if visible and s.cut is not None else None,
                }
            )
        )
    return tuple(views)


def hand_view(
    hand: HandState, made: HandWire, deadline_ms: int | None, frames: Sequence[str]
) -> wire.HandView:
    """The hand as a snapshot shows it; ``frames`` are its events as a spectator got them."""
    phase: Literal["betting", "cutting", "ended"] = (
        "cutting" if hand.phase is Phase.CUTTING else "ended" if hand.is_over else "betting"
    )
    return wire.HandView(
        hand_id=made.hand_id,
        button=hand.button,
        stacks=tuple(SeatAmount(seat=s, amount=a) for s, a in hand.starting_stacks),
        commitment=made.sealed.commitment,
        leaves=made.sealed.leaves,
        client_seeds=made.client_seeds,
        phase=phase,
        round=hand.round,
        pot=hand.pot,
        current_bet=0 if hand.is_over else hand.current_bet,
        actor=hand.actor if hand.phase is Phase.BETTING else None,
        deadline_ms=None if hand.is_over else deadline_ms,
        events=tuple(json.loads(frame) for frame in frames),
    )


def pot_change(event: engine.Event) -> int:
    """How ``event`` changes the chips in the middle: the pot as of each event, for
    ``betting_round_ended`` (the engine's pot is as of its last event)."""
    kind = type(event)
    if kind in _INTO_POT:
        return cast(_IntoPot, event).amount
    if kind in _OUT_OF_POT:
        return -cast(_OutOfPot, event).amount
    if kind is engine.HandVoided:
        return -sum(amount for _, amount in cast(engine.HandVoided, event).refunds)
    return 0


_IntoPot = engine.AnteTaken | engine.BetPlaced | engine.Called | engine.Raised
_OutOfPot = engine.BetReturned | engine.PotAwarded
_INTO_POT = frozenset((engine.AnteTaken, engine.BetPlaced, engine.Called, engine.Raised))
_OUT_OF_POT = frozenset((engine.BetReturned, engine.PotAwarded))
