"""One table as this client sees it, kept up to date from server messages, without I/O.

The server sends a ``table_snapshot`` (the whole table) and then events, each
with the table's ``seq``. :meth:`TableState.apply` folds both into one mutable
picture that a terminal can draw and a bot can decide from. Its rules:

1. A snapshot replaces everything (:meth:`TableState.from_snapshot`).
2. An event applies only if its ``seq`` is exactly one past the last one seen.
   An older ``seq`` is a copy already applied (ignored); a newer one means
   something was missed, so :meth:`apply` answers :data:`Applied.GAP` and the
   caller asks for a snapshot. Events are not applied until it arrives.
   A ``hand_voided`` after a gap (the table's new host calling off the hand its
   dead server was playing, with a ``seq`` far ahead) marks that hand voided all
   the same: the player must hear of it, though the snapshot brings the stacks.
3. Nothing here is trusted to decide anything: the server is the authority,
   and the next ``turn_started`` or snapshot corrects any drift.
4. Except the deal: what the server committed to is checked against what it
   deals (:mod:`qiuqiu.cli.deals`), and each hand's check is on its
   :class:`HandInPlay` once it has ended.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import InitVar, dataclass, field
from enum import Enum
from typing import Any, Literal

from qiuqiu.cli.deals import DealCheck, TableDeals
from qiuqiu.cli.payouts import PaidWrong, verify_payouts
from qiuqiu.engine import Category
from qiuqiu.protocol import CutView, LegalActions, TableOptions, decode_server
from qiuqiu.protocol import server as wire


class Applied(Enum):
    APPLIED = "applied"
    IGNORED = "ignored"
    GAP = "gap"


@dataclass
class SeatState:
    seat: int
    name: str
    is_bot: bool
    stack: int
    connected: bool = True
    bet: int = 0
    in_hand: bool = False
    folded: bool = False
    all_in: bool = False
    tiles: tuple[str, ...] = ()
    """This client's own tiles, and everyone's once shown down."""
    cut: CutView | None = None
    category: Category | None = None

    def clear_hand(self) -> None:
        self.bet, self.in_hand, self.folded, self.all_in = 0, False, False, False
        self.tiles, self.cut, self.category = (), None, None


MoveKind = Literal["check", "bet", "call", "raise", "fold"]


@dataclass(frozen=True, slots=True)
class Move:
    """One betting action of a hand, as every seat at the table saw it."""

    seat: int
    action: MoveKind
    round: int
    chips: int
    """The chips the action put in (0 for a check or a fold)."""
    to: int
    """The seat's bet in this round once the action was taken."""
    all_in: bool
    timed_out: bool = False
    """The seat's time ran out, and this is the check or fold the server played for it."""


@dataclass
class HandInPlay:
    hand_id: int
    button: int
    commitment: str
    phase: str = "betting"
    round: int = 0
    pot: int = 0
    current_bet: int = 0
    actor: int | None = None
    to_call: int = 0
    deadline_ms: int | None = None
    cutting: tuple[int, ...] = ()
    """The seats still to cut their hands, while the hand's phase is ``cutting``."""
    deal_check: DealCheck | None = None
    """Set at ``hand_ended``: every tile this client saw checked against the commitment."""
    stacks_before: dict[int, int] = field(default_factory=dict)
    """Each seat's stack as the hand began."""
    voided: bool = False
    shown: tuple[wire.ShownHand, ...] = ()
    moves: list[Move] = field(default_factory=list)
    """The betting actions since the hand began, or since the snapshot that brought it."""
    betting_known: bool = False
    """Every move of the hand is in :attr:`moves`: this client saw it begin, or its
    snapshot carried the hand's events (a server older than them sends none). Only
    such a hand's payouts can be checked."""
    timed_out: int | None = None
    """The seat whose time has just run out: its next move is the server's."""
    topped_up: dict[int, int] = field(default_factory=dict)
    """The dealer bot's seat, with the chips it had as the hand before ended, when its
    stack in this hand's start is more: the server tops it up between hands, unsaid.
    Known only where this client saw that hand end (a snapshot shows the stack topped up)."""


@dataclass
class TableState:
    table_id: str
    options: TableOptions
    seq: int
    seats: dict[int, SeatState] = field(default_factory=dict)
    you: int | None = None
    hand: HandInPlay | None = None
    legal: LegalActions | None = None
    """What this client may do now; ``None`` when it is not its turn."""
    closed: bool = False
    deals_so_far: InitVar[TableDeals | None] = None
    deals: TableDeals = field(init=False)
    """What this client saw of the table's deals: kept from before, when a snapshot
    replaces the state, else new."""

    def __post_init__(self, deals_so_far: TableDeals | None) -> None:
        self.deals = TableDeals(self.table_id) if deals_so_far is None else deals_so_far

    @classmethod
    def from_snapshot(
        cls, snapshot: wire.TableSnapshot, deals: TableDeals | None = None
    ) -> TableState:
        """The table as ``snapshot`` shows it; ``deals`` are those kept of it so far."""
        view = snapshot.table
        state = cls(
            view.table_id,
            view.options,
            snapshot.seq,
            you=view.you,
            legal=view.legal,
            deals_so_far=deals,
        )
        state.deals.snapshot(view)
        for seat in view.seats:
            state.seats[seat.seat] = SeatState(
                seat=seat.seat,
                name=seat.name,
                is_bot=seat.is_bot,
                stack=seat.stack,
                connected=seat.connected,
                bet=seat.bet,
                in_hand=seat.in_hand,
                folded=seat.folded,
                all_in=seat.all_in,
                tiles=seat.tiles or (),
            )
        if view.hand is not None:
            hand = view.hand
            state.hand = HandInPlay(
                hand_id=hand.hand_id,
                button=hand.button,
                commitment=hand.commitment,
                phase=hand.phase,
                round=hand.round,
                pot=hand.pot,
                current_bet=hand.current_bet,
                actor=hand.actor,
                deadline_ms=hand.deadline_ms,
                stacks_before={entry.seat: entry.amount for entry in hand.stacks},
            )
            if hand.actor is not None and hand.actor in state.seats:
                state.hand.to_call = hand.current_bet - state.seats[hand.actor].bet
            if hand.events:
                state.hand.moves, state.hand.betting_known = _moves_so_far(state, hand), True
        return state

    @property
    def me(self) -> SeatState | None:
        return None if self.you is None else self.seats.get(self.you)

    def name(self, seat: int) -> str:
        """The seat's player by name, and by seat number too where another seat has
        the same name (the server lets players share one)."""
        found = self.seats.get(seat)
        if found is None:
            return f"seat {seat + 1}"
        return self.named(found.name, seat)

    def named(self, name: str, seat: int) -> str:
        """``name``, with ``seat``'s number when a seat other than ``seat`` holds a
        player of that name."""
        if any(other.name == name for other in self.seats.values() if other.seat != seat):
            return f"{name} (seat {seat + 1})"
        return name

    def apply(self, message: wire.TableEvent) -> Applied:
        if message.seq <= self.seq:
            return Applied.IGNORED
        if message.seq != self.seq + 1:
            hand = self.hand
            if isinstance(message, wire.HandVoided) and hand and hand.hand_id == message.hand_id:
                hand.voided = True
            return Applied.GAP
        self.seq = message.seq
        # A look-up by the message's class rather than a match: each case of a match
        # over pydantic models is an isinstance check through ABCMeta, and a hand
        # brings some twenty messages, most of them far down such a match.
        change = _APPLY.get(type(message))
        if change is not None:
            change(self, message)
        return Applied.APPLIED

    def _player_seated(self, event: wire.PlayerSeated) -> None:
        self.seats[event.seat] = SeatState(event.seat, event.name, event.is_bot, event.stack)

    def _player_left(self, event: wire.PlayerLeft) -> None:
        self.seats.pop(event.seat, None)
        if event.seat == self.you:
            self.you, self.legal = None, None

    def _connection(self, event: wire.PlayerDisconnected | wire.PlayerReconnected) -> None:
        if event.seat in self.seats:
            self.seats[event.seat].connected = isinstance(event, wire.PlayerReconnected)

    def _table_closed(self, event: wire.TableClosed) -> None:
        if event.table_seed is None:
            # Moved to another server, not closed: the seat is there, and the snapshot
            # after the reconnect (the server closes this connection for it) tells all.
            self.legal = None
            return
        self.closed, self.hand, self.legal = True, None, None

    def _hand_started(self, event: wire.HandStarted) -> None:
        seats, stacks = self.seats, event.stacks
        self.deals.start_hand(event, self.you)
        self.hand = HandInPlay(
            event.hand_id,
            event.button,
            event.commitment,
            stacks_before={entry.seat: entry.amount for entry in stacks},
            betting_known=True,
            topped_up={
                entry.seat: seats[entry.seat].stack
                for entry in stacks
                if entry.seat in seats
                and seats[entry.seat].is_bot
                and entry.amount > seats[entry.seat].stack
            },
        )
        self.legal = None
        for seat_state in seats.values():
            seat_state.clear_hand()
        for entry in stacks:
            if entry.seat in seats:
                seats[entry.seat].stack = entry.amount
                seats[entry.seat].in_hand = True

    def _ante_taken(self, event: wire.AnteTaken) -> None:
        self._put_in(event.seat, event.amount, event.all_in, into_bet=False)

    def _tiles_dealt(self, event: wire.TilesDealt) -> None:
        if event.tiles is not None:
            self.seats[event.seat].tiles = event.tiles
            self.deals.opened(event.seat, event.openings or (), event.tiles)

    def _fourth_tile_dealt(self, event: wire.FourthTileDealt) -> None:
        seat, tile = event.seat, event.tile
        if tile is not None:
            self.seats[seat].tiles = (*self.seats[seat].tiles, tile)
            self.deals.opened(seat, () if event.opening is None else (event.opening,), (tile,))

    def _betting_round_started(self, event: wire.BettingRoundStarted) -> None:
        if hand := self.hand:
            hand.round, hand.current_bet, hand.phase = event.round, 0, "betting"

    def _turn_started(self, event: wire.TurnStarted) -> None:
        hand, seats = self.hand, self.seats
        if not hand:
            return
        hand.actor, hand.to_call = event.seat, event.to_call
        hand.deadline_ms, hand.pot = event.deadline_ms, event.pot
        for chips in event.seats:
            if chips.seat in seats:
                s = seats[chips.seat]
                s.stack, s.bet, s.folded, s.all_in = (
                    chips.stack,
                    chips.bet,
                    chips.folded,
                    chips.all_in,
                )
        hand.current_bet = max((c.bet for c in event.seats), default=0)
        self.legal = event.legal if event.seat == self.you else None

    def _chips_put_in(self, event: wire.BetPlaced | wire.Called | wire.Raised) -> None:
        self._put_in(event.seat, event.amount, event.all_in, into_bet=True)
        self._moved(event.seat, _PUT_IN[type(event)], event.amount, event.all_in)

    def _folded(self, event: wire.Folded) -> None:
        self.seats[event.seat].folded = True
        self._turn_over()
        self._moved(event.seat, "fold")

    def _checked(self, event: wire.Checked) -> None:
        self._turn_over()
        self._moved(event.seat, "check")

    def _timed_out(self, event: wire.TurnTimedOut) -> None:
        # The check or fold the server played for the seat follows as an event of its own.
        if hand := self.hand:
            hand.timed_out = event.seat
        self._turn_over()

    def _bet_returned(self, event: wire.BetReturned) -> None:
        if hand := self.hand:
            s = self.seats[event.seat]
            s.stack += event.amount
            s.bet = max(0, s.bet - event.amount)
            s.all_in = False  # chips in front of it again: whatever it staked
            hand.pot -= event.amount

    def _betting_round_ended(self, event: wire.BettingRoundEnded) -> None:
        if hand := self.hand:
            hand.pot, hand.current_bet = event.pot, 0
            for seat_state in self.seats.values():
                seat_state.bet = 0
            self._turn_over()

    def _cutting_started(self, event: wire.CuttingStarted) -> None:
        if hand := self.hand:
            hand.phase, hand.cutting, hand.deadline_ms = "cutting", event.seats, event.deadline_ms
            if self.you in event.seats:
                self.legal = LegalActions(declare_cut=True)

    def _cut_declared(self, event: wire.CutDeclared) -> None:
        self.seats[event.seat].cut = event.cut
        if hand := self.hand:
            hand.cutting = tuple(seat for seat in hand.cutting if seat != event.seat)
        if event.seat == self.you:
            self.legal = None

    def _showdown(self, event: wire.Showdown) -> None:
        if hand := self.hand:
            hand.phase, hand.shown = "showdown", event.hands
            for shown_hand in event.hands:
                self.deals.opened(shown_hand.seat, shown_hand.openings, shown_hand.tiles)
                s = self.seats[shown_hand.seat]
                s.tiles, s.cut = shown_hand.tiles, shown_hand.cut
                s.category = shown_hand.category

    def _pot_awarded(self, event: wire.PotAwarded) -> None:
        if hand := self.hand:
            hand.pot -= event.amount
            for share in event.shares:
                self.seats[share.seat].stack += share.amount

    def _hand_voided(self, event: wire.HandVoided) -> None:
        if hand := self.hand:
            for refund in event.refunds:
                self.seats[refund.seat].stack += refund.amount
            hand.pot, hand.voided = 0, True

    def _hand_ended(self, event: wire.HandEnded) -> None:
        if hand := self.hand:
            seats = self.seats
            hand.phase, hand.actor, self.legal = "ended", None, None
            hand.deal_check = self.deals.end_hand(hand.hand_id, self._payout_check(hand, event))
            for entry in event.stacks:
                if entry.seat in seats:
                    seats[entry.seat].stack = entry.amount
                    seats[entry.seat].bet = 0

    def _payout_check(self, hand: HandInPlay, ended: wire.HandEnded) -> bool | PaidWrong:
        """Whether the hand was paid as the rules say (see :mod:`qiuqiu.cli.payouts`),
        or how it was not; ``False`` where this client did not see the whole hand, or
        made it itself (the arena: ``deals.checking``), and so could not check it."""
        if not hand.betting_known or hand.voided or not self.deals.checking:
            return False
        try:
            verify_payouts(
                self.table_id,
                hand.hand_id,
                self.options,
                button=hand.button,
                stacks_before=hand.stacks_before,
                moves=hand.moves,
                shown=hand.shown,
                ended=ended.stacks,
            )
        except PaidWrong as wrong:
            return wrong
        return True

    def net(self, seat: int) -> int | None:
        """What ``seat`` won (below zero: lost) in the hand so far, if its start is known."""
        if self.hand is None or seat not in self.hand.stacks_before or seat not in self.seats:
            return None
        return self.seats[seat].stack - self.hand.stacks_before[seat]

    def _put_in(self, seat: int, amount: int, all_in: bool, *, into_bet: bool) -> None:
        state = self.seats[seat]
        state.stack -= amount
        state.all_in = state.all_in or all_in
        if self.hand is None:
            return
        self.hand.pot += amount
        if into_bet:
            state.bet += amount
            self.hand.current_bet = max(self.hand.current_bet, state.bet)
            self._turn_over()

    def _moved(
        self,
        seat: int,
        action: MoveKind,
        chips: int = 0,
        all_in: bool = False,
    ) -> None:
        if (hand := self.hand) and seat in self.seats:
            timed_out = hand.timed_out == seat
            hand.timed_out = None
            bet = self.seats[seat].bet
            hand.moves.append(Move(seat, action, hand.round, chips, bet, all_in, timed_out))

    def _turn_over(self) -> None:
        if self.hand is not None:
            self.hand.actor, self.hand.to_call = None, 0
        self.legal = None


def _moves_so_far(table: TableState, hand: wire.HandView) -> list[Move]:
    """The hand's moves before ``table``'s snapshot, from the hand's events it carries,
    played again from the hand's start on a table of their own."""
    unchecked = TableDeals(table.table_id, checking=False)  # the live state checks the deal
    replay = TableState(table.table_id, table.options, 0, deals_so_far=unchecked)
    replay.seats = {s.seat: SeatState(s.seat, "", False, s.amount) for s in hand.stacks}
    for event in hand.events:
        message = decode_server(json.dumps(event))
        if isinstance(message, wire.TableEvent):
            replay.seq = message.seq - 1
            replay.apply(message)
    return replay.hand.moves if replay.hand is not None else []


_APPLY: dict[type[wire.TableEvent], Callable[[TableState, Any], None]] = {
    wire.PlayerSeated: TableState._player_seated,
    wire.PlayerLeft: TableState._player_left,
    wire.PlayerDisconnected: TableState._connection,
    wire.PlayerReconnected: TableState._connection,
    wire.TableClosed: TableState._table_closed,
    wire.HandStarted: TableState._hand_started,
    wire.AnteTaken: TableState._ante_taken,
    wire.TilesDealt: TableState._tiles_dealt,
    wire.FourthTileDealt: TableState._fourth_tile_dealt,
    wire.BettingRoundStarted: TableState._betting_round_started,
    wire.TurnStarted: TableState._turn_started,
    wire.BetPlaced: TableState._chips_put_in,
    wire.Called: TableState._chips_put_in,
    wire.Raised: TableState._chips_put_in,
    wire.Folded: TableState._folded,
    wire.Checked: TableState._checked,
    wire.TurnTimedOut: TableState._timed_out,
    wire.BetReturned: TableState._bet_returned,
    wire.BettingRoundEnded: TableState._betting_round_ended,
    wire.CuttingStarted: TableState._cutting_started,
    wire.CutDeclared: TableState._cut_declared,
    wire.Showdown: TableState._showdown,
    wire.PotAwarded: TableState._pot_awarded,
    wire.HandVoided: TableState._hand_voided,
    wire.HandEnded: TableState._hand_ended,
}
"""How each table event changes the state, by its class (every class the server sends)."""
_PUT_IN: dict[type[wire.TableEvent], Literal["bet", "call", "raise"]] = {
    wire.BetPlaced: "bet",
    wire.Called: "call",
    wire.Raised: "raise",
}
