"""What one seat has seen of the hand in play, kept from the wire messages it gets.

The dealer bot on the server and the dealer in the arena feed the same
messages to a :class:`SeenHand`; :meth:`SeenHand.situation` turns it and
a ``turn_started`` into the :class:`Situation` the house's policy decides from.
Nothing here can hold another seat's tiles: a seat's copy of ``tiles_dealt``
carries only its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, cast

from qiuqiu.engine import TableRules, Tile
from qiuqiu.protocol import LegalActions, TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.server.house.credit import Credit
from qiuqiu.server.strategy import Legal

if TYPE_CHECKING:
    from qiuqiu.server.house.book import Solved

MoveKind = Literal["check", "bet", "call", "raise", "fold"]


class Random(Protocol):
    """Where the house's mixed strategy draws from: the server's CSPRNG when serving."""

    def random(self) -> float: ...


class Move(NamedTuple):
    """One betting action: ``added`` is the chips it put in, ``to`` the seat's bet
    in the round after it. A tuple, so that the compiled decision reads its fields by
    place (:mod:`~qiuqiu.server.house.native`)."""

    seat: int
    kind: MoveKind
    round: int
    added: int = 0
    to: int = 0
    all_in: bool = False


@dataclass(slots=True)
class Memo:
    """The house's notes on one hand, kept by the seat's record so that every turn of
    the hand shares them; a new hand starts a new one."""

    draws: list[float] = field(default_factory=list)
    """Random numbers drawn to translate this hand's moves (see
    :mod:`qiuqiu.server.house.translation`), kept so that a move is translated the
    same way at each later turn of the hand."""
    solved: Solved | None = None
    """The strategy the house plays this hand, chosen at its first turn."""
    base: Solved | None = None
    """The solved strategy for the hand's stakes: its own, or the one it leans from."""


# Not frozen: a frozen dataclass costs several times as much to make, and the dealer
# bot makes one at every turn. Nothing changes one once made but its memo.
@dataclass(slots=True)
class Situation:
    """Everything the house decides from: what its seat may see, and no more."""

    seat: int
    tiles: tuple[Tile, ...]
    """The seat's own tiles in the order dealt: its 4th, once dealt, last."""
    rules: TableRules
    button: int
    stacks: Mapping[int, int]
    """Every seat's chips when the hand started, before the ante."""
    antes: Mapping[int, int]
    moves: tuple[Move, ...]
    complete: bool
    """Whether ``moves`` is the hand's whole history (the seat saw it begin)."""
    folded: frozenset[int]
    round: int
    """The betting round of the turn: 1, or 2 after the 4th tile at two-round tables."""
    pot: int
    legal: Legal
    memo: Memo
    credit: Credit = field(default_factory=Credit)
    """The house's credit with the player it meets heads-up."""

    @property
    def opponents(self) -> tuple[int, ...]:
        return tuple(s for s in sorted(self.stacks) if s != self.seat and s not in self.folded)

    def round_bets(self) -> dict[int, int]:
        """Each seat's chips in the round of the turn, from its moves in it."""
        return {m.seat: m.to for m in self.moves if m.round == self.round}


@dataclass
class SeenHand:
    """One seat's record of the hand in play (see the module docstring)."""

    seat: int
    hand_id: int = 0
    button: int = -1
    started: bool = False
    """Whether it saw the hand begin: a seat that joined mid-hand has no history."""
    # Replaced, never changed in place, so that each situation can share them.
    stacks: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))
    antes: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))
    moves: tuple[Move, ...] = ()
    folded: frozenset[int] = frozenset()
    tiles: list[Tile] = field(default_factory=list)
    round: int = 0
    bets: dict[int, int] = field(default_factory=dict)
    memo: Memo = field(default_factory=Memo)
    credit: Credit = field(default_factory=Credit)
    """Kept from hand to hand; a new credit when a seat is taken or given up."""
    _rules: tuple[TableOptions, TableRules] | None = None
    """The rules of the last options asked about: a table's stay the same, and making
    them again at every turn would check them again."""

    def observe(self, message: wire.Reply) -> None:
        # A look-up by the message's class, as the SDK's table state does: each case of
        # a match over pydantic models is an isinstance check through ABCMeta.
        if type(message) is wire.HandStarted:
            self._reset(message.hand_id)
            self.button, self.started = message.button, True
            self.stacks = MappingProxyType({s.seat: s.amount for s in message.stacks})
            return
        kind = type(message)
        if kind not in HAND_EVENTS:
            if kind in _NEW_COMPANY:
                self.credit = Credit()
            return
        hand_id = cast(wire.HandEvent, message).hand_id
        if hand_id != self.hand_id:
            # A hand it did not see begin (it was seated, or its table adopted, mid-hand).
            self._reset(hand_id)
        learn = _LEARN.get(kind)
        if learn is not None:
            learn(self, message)

    def _ante_taken(self, m: wire.AnteTaken) -> None:
        self.antes = MappingProxyType({**self.antes, m.seat: m.amount})

    def _tiles_dealt(self, m: wire.TilesDealt) -> None:
        if m.seat == self.seat and m.tiles:
            self.tiles = [Tile.parse(t) for t in m.tiles]

    def _fourth_tile_dealt(self, m: wire.FourthTileDealt) -> None:
        if m.seat == self.seat and m.tile:
            self.tiles.append(Tile.parse(m.tile))

    def _betting_round_started(self, m: wire.BettingRoundStarted) -> None:
        self.round, self.bets = m.round, {}

    def _checked(self, m: wire.Checked) -> None:
        self.moves += (Move(m.seat, "check", self.round, to=self.bets.get(m.seat, 0)),)

    def _folded(self, m: wire.Folded) -> None:
        self.folded |= {m.seat}
        self.moves += (Move(m.seat, "fold", self.round, to=self.bets.get(m.seat, 0)),)

    def _bet_placed(self, m: wire.BetPlaced) -> None:
        self._put(m.seat, "bet", m.amount, m.all_in)

    def _called(self, m: wire.Called) -> None:
        self._put(m.seat, "call", m.amount, m.all_in)

    def _raised(self, m: wire.Raised) -> None:
        self._put(m.seat, "raise", m.amount, m.all_in)

    def _hand_ended(self, m: wire.HandEnded) -> None:
        base, before = self.memo.base, self.stacks.get(self.seat)
        if base is None or before is None or self._rules is None:
            return  # it played no solved strategy this hand (or did not see it begin)
        guaranteed = base.guaranteed(self._rules[1].ante)
        if guaranteed is None:
            return
        for stack in m.stacks:
            if stack.seat == self.seat:
                self.credit.add(stack.amount - before - guaranteed)

    def _reset(self, hand_id: int) -> None:
        self.hand_id, self.button, self.started, self.round = hand_id, -1, False, 0
        self.stacks = self.antes = MappingProxyType({})
        self.bets, self.tiles, self.moves, self.memo = {}, [], (), Memo()
        self.folded = frozenset()

    def _put(self, seat: int, kind: MoveKind, amount: int, all_in: bool) -> None:
        self.bets[seat] = self.bets.get(seat, 0) + amount
        self.moves += (Move(seat, kind, self.round, amount, self.bets[seat], all_in),)

    def situation(
        self, turn: wire.TurnStarted, options: TableOptions, tiles: tuple[Tile, ...]
    ) -> Situation:
        """The situation at ``turn`` (which must be this seat's), with ``tiles`` as the
        seat's own tiles (the caller may have had them from a snapshot)."""
        # Positional: the dealer bot makes one at every turn.
        return Situation(
            self.seat,
            tiles,
            self._rules_of(options),
            self.button,
            self.stacks,
            self.antes,
            self.moves,
            self.started and turn.hand_id == self.hand_id,
            self.folded,
            self.round,
            turn.pot,
            turn.legal or NO_LEGAL,
            self.memo,
            self.credit,
        )

    def _rules_of(self, options: TableOptions) -> TableRules:
        if self._rules is None or self._rules[0] is not options:
            self._rules = (options, options.rules())
        return self._rules[1]


_LEARN: dict[type[wire.Reply], Callable[[SeenHand, Any], None]] = {
    wire.AnteTaken: SeenHand._ante_taken,
    wire.TilesDealt: SeenHand._tiles_dealt,
    wire.FourthTileDealt: SeenHand._fourth_tile_dealt,
    wire.BettingRoundStarted: SeenHand._betting_round_started,
    wire.Checked: SeenHand._checked,
    wire.Folded: SeenHand._folded,
    wire.BetPlaced: SeenHand._bet_placed,
    wire.Called: SeenHand._called,
    wire.Raised: SeenHand._raised,
    wire.HandEnded: SeenHand._hand_ended,
}
"""What each kind of the hand's events teaches the record; ``hand_started`` starts one."""
NO_LEGAL = LegalActions()
"""A turn's legal actions where it carries none (it is another seat's)."""
_NEW_COMPANY: frozenset[type[wire.Reply]] = frozenset({wire.PlayerSeated, wire.PlayerLeft})
"""Seats taken or given up: the house's credit was another player's."""
HAND_EVENTS: frozenset[type[wire.Reply]] = frozenset(
    kind
    for kind in vars(wire).values()
    if isinstance(kind, type) and issubclass(kind, wire.HandEvent)
)
"""The hand's events, to tell them by class (see :meth:`SeenHand.observe`)."""
OBSERVED: frozenset[type[wire.Reply]] = frozenset({wire.HandStarted, *_LEARN, *_NEW_COMPANY})
"""The messages a :class:`SeenHand` learns from: it may skip reading any other."""
