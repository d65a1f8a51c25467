"""The hand state machine: one hand of QiuQiu from the antes to the last pot.

Rules this module enforces (README, "The rules as the engine plays them"):

1. Every seat antes (a short stack antes all it has and is all-in), then gets
   three tiles. Seat ``i`` in acting order is dealt ``deck[3i:3i+3]`` and, if it
   is still in after the first betting round, ``deck[3n+i]`` as its 4th tile,
   so nothing a player does can change which tiles anyone gets.
2. Acting order starts with the first seat left of the button (seat numbers
   ascending, wrapping around). A betting round is opened only when at least
   two seats still in have chips behind.
3. Until someone bets, a seat may ``check`` or ``bet``; after a bet it may
   ``fold``, ``call`` or ``raise_to``. A bet adds at least ``min_bet``; a raise
   adds at least ``min_bet`` and at least the last full bet or raise, and at
   most ``max_bet``; less is allowed only as an all-in. An all-in bet or
   raise short of a full one does not reopen the betting to a seat that has
   already acted (it may call or fold), unless what it faces adds up to a full
   raise. No more than ``max_raises`` raises per round, short all-ins
   included. Nobody raises when no opponent could answer.
4. A round closes when every seat still in with chips has acted and matched
   the bet. The part of the highest bet that nobody matched goes back to it.
5. If all but one seat fold, that seat takes every pot and no tile is shown.
   Otherwise the 4th tile follows the first round, the second round (if
   ``betting_rounds == 2``) follows the 4th tile, then, under
   ``manual_split``, every seat still in declares a cut, and the showdown
   pays the main pot and each side pot to the best hand among the seats that
   paid into it. Equal hands under ``tie_rule="split"`` share a pot; the odd
   chips go to the first winner left of the button.

Every public action comes as ``verify_x`` (raises :class:`IllegalAction`),
``can_x`` (a bool) and ``x`` (applies it and returns the events it caused).
All changes of state go through :meth:`HandState._apply`, one event at a time,
so replaying a hand's log rebuilds exactly the same state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from copy import copy
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from qiuqiu.engine.errors import IllegalAction, InvalidRules
from qiuqiu.engine.events import (
    AnteTaken,
    BetPlaced,
    BetReturned,
    BettingRoundEnded,
    BettingRoundStarted,
    Called,
    Checked,
    CutDeclared,
    CuttingStarted,
    Event,
    Folded,
    FourthTileDealt,
    HandEnded,
    HandStarted,
    HandVoided,
    PotAwarded,
    Raised,
    Showdown,
    ShownHand,
    TilesDealt,
    TurnTimedOut,
)
from qiuqiu.engine.pots import share, side_pots
from qiuqiu.engine.ranking import Cut, Rank, compare_ranks, rank, rank_dealt, rank_with_cut
from qiuqiu.engine.rules import MAX_SEATS, MIN_SEATS, TableRules
from qiuqiu.engine.tiles import ALL_TILES, Hand, Tile

FIRST_TILES = 3
_EVERY_TILE = frozenset(ALL_TILES)


class Phase(StrEnum):
    DEALING = "dealing"
    BETTING = "betting"
    CUTTING = "cutting"
    ENDED = "ended"


@dataclass(slots=True)
class SeatState:
    """One seat in one hand. ``round_bet`` is what it put in this betting round,
    ``contributed`` what it put in this hand (antes included, returns excluded).

    The state changes its own records in place (it is the hot path); what
    :attr:`HandState.seats` hands out are copies, so changing one changes nothing.
    """

    seat: int
    stack: int
    round_bet: int = 0
    contributed: int = 0
    folded: bool = False
    acted: bool = False
    tiles: tuple[Tile, ...] = ()
    cut: Cut | None = None

    def __copy__(self) -> SeatState:
        # copy.copy's generic path (__reduce_ex__) costs six times this, and
        # HandState.seats copies every seat each time it is read. Every field is
        # named: a new one must be added here (a test compares a copy field by field).
        return SeatState(
            self.seat,
            self.stack,
            self.round_bet,
            self.contributed,
            self.folded,
            self.acted,
            self.tiles,
            self.cut,
        )

    @property
    def all_in(self) -> bool:
        return self.stack == 0 and not self.folded

    @property
    def can_bet(self) -> bool:
        """Still in, with chips behind."""
        return self.stack > 0 and not self.folded


@dataclass(frozen=True, slots=True)
class ChipRange:
    """Every whole amount from ``min`` to ``max`` is allowed (the wire's ``ChipRange``
    names them alike)."""

    min: int
    max: int


@dataclass(frozen=True, slots=True)
class LegalActions:
    """What one seat may do now. ``call`` is the chips a call adds; ``bet`` is the
    range of a bet; ``raise_to`` the range of the round total a raise reaches."""

    check: bool = False
    fold: bool = False
    call: int | None = None
    bet: ChipRange | None = None
    raise_to: ChipRange | None = None
    declare_cut: bool = False

    @property
    def any(self) -> bool:
        return self != NO_ACTIONS


NO_ACTIONS = LegalActions()


@dataclass(eq=True)
class HandState:
    """The state of one hand. Make one with :meth:`start` or :meth:`replay`."""

    rules: TableRules
    button: int
    order: tuple[int, ...]
    _deck: tuple[Tile, ...]
    _seats: dict[int, SeatState]
    phase: Phase = Phase.DEALING
    round: int = 0
    actor: int | None = None
    current_bet: int = 0
    _full_raise: int = 0
    _raises: int = 0
    _paid_out: int = 0
    _pending_cuts: tuple[int, ...] = ()
    _live: tuple[int, ...] = ()
    """Seats still in, in acting order: kept as seats fold, since nearly every step
    of the hand asks."""
    _log: list[Event] = field(default_factory=list)

    # -- making a hand ---------------------------------------------------------

    @classmethod
    def start(
        cls,
        rules: TableRules,
        stacks: Mapping[int, int],
        button: int,
        deck: Sequence[Tile],
    ) -> HandState:
        """Ante, deal and open the first betting round; the events so far are in :attr:`log`.

        ``stacks`` maps seat numbers (clockwise in ascending order) to chips;
        ``button`` is one of those seats; ``deck`` is all 28 tiles in the order
        to deal them (see :func:`shuffled_deck`).
        """
        _check_table(stacks, button, deck)
        state = cls._from(HandStarted(rules, tuple(sorted(stacks.items())), button, tuple(deck)))
        if rules.ante:
            for seat in state.order:
                amount = min(rules.ante, state._seats[seat].stack)
                state._emit(AnteTaken(seat, amount, amount == state._seats[seat].stack))
        for i, seat in enumerate(state.order):
            first = state._deck[FIRST_TILES * i : FIRST_TILES * (i + 1)]
            state._emit(TilesDealt(seat, (first[0], first[1], first[2])))
        state._advance()
        return state

    @classmethod
    def replay(cls, log: Sequence[Event]) -> HandState:
        """Rebuild a hand from its event log (which must open with :class:`HandStarted`)."""
        if not log or not isinstance(log[0], HandStarted):
            raise InvalidRules("a hand's log opens with HandStarted")
        state = cls._from(log[0])
        for event in log[1:]:
            state._emit(event)
        return state

    @classmethod
    def _from(cls, started: HandStarted) -> HandState:
        seats = sorted(seat for seat, _ in started.stacks)
        after_button = seats.index(started.button) + 1
        order = tuple(seats[after_button:] + seats[:after_button])
        return cls(
            rules=started.rules,
            button=started.button,
            order=order,
            _deck=started.deck,
            _seats={seat: SeatState(seat, stack) for seat, stack in started.stacks},
            _live=order,
            _log=[started],
        )

    # -- reading the state -----------------------------------------------------

    @property
    def log(self) -> tuple[Event, ...]:
        """Every event of the hand so far: its history, and its record once it ends."""
        return tuple(self._log)

    @property
    def starting_stacks(self) -> tuple[tuple[int, int], ...]:
        """Every dealt seat's chips as the hand began, before the ante, by seat."""
        started = self._log[0]
        assert isinstance(started, HandStarted)  # _from opens every log with it
        return started.stacks

    @property
    def seats(self) -> Mapping[int, SeatState]:
        """A copy of every seat's record, by seat number."""
        return MappingProxyType({seat: copy(s) for seat, s in self._seats.items()})

    @property
    def pot(self) -> int:
        """Chips in the middle: put in and not yet paid out."""
        return sum(s.contributed for s in self._seats.values()) - self._paid_out

    @property
    def pending_cuts(self) -> tuple[int, ...]:
        """Seats that still have to declare a cut (``manual_split`` only)."""
        return self._pending_cuts

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.ENDED

    def to_call(self, seat: int) -> int:
        """Chips ``seat`` must add to stay in (capped at its stack)."""
        s = self._seat(seat)
        return min(self.current_bet - s.round_bet, s.stack)

    def legal_actions(self, seat: int) -> LegalActions:
        if self.phase is Phase.CUTTING:
            return LegalActions(declare_cut=seat in self._pending_cuts)
        if self.phase is not Phase.BETTING or seat != self.actor:
            return NO_ACTIONS
        # Nobody bets into a bet, and nobody raises none: said before asking, since a
        # refusal raised and caught costs more than the rest of the answer.
        if not self.current_bet:
            return LegalActions(check=True, bet=self._bet_range(seat))
        facing = self._seats[seat].round_bet < self.current_bet
        return LegalActions(
            check=not facing,
            fold=facing,
            call=self.to_call(seat) if facing else None,
            raise_to=_or_none(self._raise_range, seat),
        )

    # -- actions ---------------------------------------------------------------

    def verify_check(self, seat: int) -> None:
        self._verify_turn(seat)
        if self._seat(seat).round_bet < self.current_bet:
            raise IllegalAction(
                "cannot_check",
                f"there are {self.to_call(seat):,} chips to call: call, raise or fold",
            )

    def can_check(self, seat: int) -> bool:
        return _can(self.verify_check, seat)

    def check(self, seat: int) -> tuple[Event, ...]:
        self.verify_check(seat)
        return self._act(Checked(seat))

    def verify_bet(self, seat: int, amount: int) -> None:
        self._verify_turn(seat)
        _verify_chips(amount)
        allowed = self._bet_range(seat)
        _verify_in_range(amount, allowed, self._seat(seat).stack, "bet")

    def can_bet(self, seat: int, amount: int) -> bool:
        return _can(self.verify_bet, seat, amount)

    def bet(self, seat: int, amount: int) -> tuple[Event, ...]:
        self.verify_bet(seat, amount)
        return self._act(BetPlaced(seat, amount, amount == self._seat(seat).stack))

    def verify_call(self, seat: int) -> None:
        self._verify_turn(seat)
        if self._seat(seat).round_bet >= self.current_bet:
            raise IllegalAction("nothing_to_call", "nobody has bet: check or bet")

    def can_call(self, seat: int) -> bool:
        return _can(self.verify_call, seat)

    def call(self, seat: int) -> tuple[Event, ...]:
        self.verify_call(seat)
        amount = self.to_call(seat)
        return self._act(Called(seat, amount, amount == self._seat(seat).stack))

    def verify_raise_to(self, seat: int, to: int) -> None:
        self._verify_turn(seat)
        _verify_chips(to)
        allowed = self._raise_range(seat)
        s = self._seat(seat)
        _verify_in_range(to, allowed, s.round_bet + s.stack, "raise")

    def can_raise_to(self, seat: int, to: int) -> bool:
        return _can(self.verify_raise_to, seat, to)

    def raise_to(self, seat: int, to: int) -> tuple[Event, ...]:
        self.verify_raise_to(seat, to)
        s = self._seat(seat)
        amount = to - s.round_bet
        return self._act(Raised(seat, to, amount, amount == s.stack))

    def verify_fold(self, seat: int) -> None:
        self._verify_turn(seat)
        if self._seat(seat).round_bet >= self.current_bet:
            raise IllegalAction("cannot_fold", "nobody has bet: check instead of folding")

    def can_fold(self, seat: int) -> bool:
        return _can(self.verify_fold, seat)

    def fold(self, seat: int) -> tuple[Event, ...]:
        self.verify_fold(seat)
        return self._act(Folded(seat))

    def verify_declare_cut(self, seat: int, cut: Cut) -> None:
        self._seat(seat)
        if self.phase is not Phase.CUTTING:
            raise IllegalAction("not_cutting", "cuts are declared only at showdown")
        if seat not in self._pending_cuts:
            raise IllegalAction(
                "cut_not_expected", f"seat {seat} has no cut to declare in this hand now"
            )
        hand = Hand(self._seat(seat).tiles)
        if not cut.is_cut_of(hand):
            # By its tiles alone: the cut's pair values, "(7-3)", read as one more tile.
            tiles = "{} {} | {} {}".format(*cut.tiles)
            raise IllegalAction("invalid_cut", f"the cut {tiles} is not your hand {hand}")

    def can_declare_cut(self, seat: int, cut: Cut) -> bool:
        return _can(self.verify_declare_cut, seat, cut)

    def declare_cut(self, seat: int, cut: Cut) -> tuple[Event, ...]:
        """Declare how ``seat`` cuts its hand; binding, and scored as declared."""
        self.verify_declare_cut(seat, cut)
        return self._act(CutDeclared(seat, cut))

    def verify_time_out(self, seat: int) -> None:
        self._seat(seat)
        if self.phase is Phase.CUTTING:
            if seat not in self._pending_cuts:
                raise IllegalAction("not_your_turn", f"seat {seat} owes no cut")
            return
        self._verify_turn(seat)

    def can_time_out(self, seat: int) -> bool:
        return _can(self.verify_time_out, seat)

    def time_out(self, seat: int) -> tuple[Event, ...]:
        """The seat's time ran out: it checks if it can, otherwise folds; at a
        ``manual_split`` showdown it is given its best cut."""
        self.verify_time_out(seat)
        if self.phase is Phase.CUTTING:
            best = rank(Hand(self._seat(seat).tiles)).cut
            return self._act(TurnTimedOut(seat), CutDeclared(seat, best))
        done = Checked(seat) if self.can_check(seat) else Folded(seat)
        return self._act(TurnTimedOut(seat), done)

    def verify_void(self) -> None:
        if self.phase is Phase.ENDED:
            raise IllegalAction("hand_over", "the hand is already over")

    def can_void(self) -> bool:
        return _can(self.verify_void)

    def void(self) -> tuple[Event, ...]:
        """Call the hand off and give every chip back to whoever put it in."""
        self.verify_void()
        refunds = tuple(
            (seat, self._seats[seat].contributed)
            for seat in self.order
            if self._seats[seat].contributed
        )
        self._emit(HandVoided(refunds))
        self._emit(self._ended())
        return self.log[-2:]

    # -- checks ----------------------------------------------------------------

    def _verify_turn(self, seat: int) -> None:
        self._seat(seat)
        if self.phase is not Phase.BETTING:
            raise IllegalAction("no_betting_round", f"no betting round is open ({self.phase})")
        if seat != self.actor:
            raise IllegalAction("not_your_turn", f"it is seat {self.actor}'s turn, not {seat}'s")

    def _bet_range(self, seat: int) -> ChipRange:
        if self.current_bet:
            raise IllegalAction(
                "cannot_bet", f"there is already a bet of {self.current_bet:,}: call, raise or fold"
            )
        stack = self._seat(seat).stack
        high = stack if self.rules.max_bet is None else min(stack, self.rules.max_bet)
        return ChipRange(min(self.rules.min_bet, stack), high)

    def _raise_range(self, seat: int) -> ChipRange:
        s = self._seat(seat)
        if not self.current_bet:
            raise IllegalAction("cannot_raise", "nobody has bet yet: bet instead")
        allowed = self.rules.max_raises
        if allowed is not None and self._raises >= allowed:
            raises = "no raise" if allowed == 0 else f"only {allowed} raise{'s' * (allowed > 1)}"
            raise IllegalAction("raise_limit", f"this round allows {raises}: call or fold")
        min_raise = self._min_raise
        if s.acted and self.current_bet - s.round_bet < min_raise:
            raise IllegalAction(
                "betting_not_reopened",
                "a raise short of a full raise does not reopen the betting: call or fold",
            )
        if not any(o.can_bet for o in self._seats.values() if o.seat != seat):
            raise IllegalAction(
                "no_one_to_raise", "every other seat is all-in or out: call or fold"
            )
        all_in_to = s.round_bet + s.stack
        if all_in_to <= self.current_bet:
            raise IllegalAction("not_enough_chips", "you cannot cover more than a call")
        cap = all_in_to if self.rules.max_bet is None else self.current_bet + self.rules.max_bet
        return ChipRange(min(self.current_bet + min_raise, all_in_to), min(all_in_to, cap))

    @property
    def _min_raise(self) -> int:
        return max(self.rules.min_bet, self._full_raise)

    # -- applying events -------------------------------------------------------

    def _act(self, *events: Event) -> tuple[Event, ...]:
        mark = len(self._log)
        for event in events:
            self._emit(event)
        self._advance()
        return tuple(self._log[mark:])

    def _emit(self, event: Event) -> None:
        self._apply(event)
        self._log.append(event)

    def _apply(self, event: Event) -> None:
        match event:
            case AnteTaken(seat, amount):
                self._put_in(seat, amount, round_bet=False)
            case TilesDealt(seat, tiles):
                self._seats[seat].tiles = tiles
            case BettingRoundStarted(number):
                self.phase, self.round = Phase.BETTING, number
                self.current_bet = self._full_raise = self._raises = 0
                for s in self._seats.values():
                    s.round_bet, s.acted = 0, False
                self.actor = self._next_actor(after=self.button)
            case Checked(seat):
                self._seats[seat].acted = True
                self.actor = self._next_actor(after=seat)
            case Folded(seat):
                s = self._seats[seat]
                s.acted = s.folded = True
                self._live = tuple(n for n in self._live if n != seat)
                self.actor = self._next_actor(after=seat)
            case BetPlaced(seat, amount) | Called(seat, amount):
                self._put_in(seat, amount)
                if isinstance(event, BetPlaced):
                    self.current_bet = amount
                    self._full_raise = amount if amount >= self.rules.min_bet else 0
                self.actor = self._next_actor(after=seat)
            case Raised(seat, to, amount):
                if to - self.current_bet >= self._min_raise:
                    self._full_raise = to - self.current_bet
                self._raises += 1
                self.current_bet = to
                self._put_in(seat, amount)
                self.actor = self._next_actor(after=seat)
            case BetReturned(seat, amount):
                s = self._seats[seat]
                s.stack += amount
                s.round_bet -= amount
                s.contributed -= amount
            case BettingRoundEnded():
                self.phase, self.actor = Phase.DEALING, None
            case FourthTileDealt(seat, tile):
                self._seats[seat].tiles += (tile,)
            case CuttingStarted(seats):
                self.phase, self._pending_cuts = Phase.CUTTING, seats
            case CutDeclared(seat, cut):
                self._seats[seat].cut = cut
                self._pending_cuts = tuple(s for s in self._pending_cuts if s != seat)
            case PotAwarded(shares=shares) | HandVoided(refunds=shares):
                for seat, amount in shares:
                    self._seats[seat].stack += amount
                    self._paid_out += amount
            case HandEnded():
                self.phase, self.actor, self._pending_cuts = Phase.ENDED, None, ()
            case HandStarted() | TurnTimedOut() | Showdown():
                pass

    def _put_in(self, seat: int, amount: int, *, round_bet: bool = True) -> None:
        s = self._seats[seat]
        s.stack -= amount
        s.contributed += amount
        if round_bet:
            s.round_bet += amount
            s.acted = True

    def _next_actor(self, after: int) -> int | None:
        """The next seat clockwise after ``after`` that still has to act this round."""
        if len(self._live) < 2:
            return None
        start = self.order.index(after) + 1
        for seat in self.order[start:] + self.order[:start]:
            s = self._seats[seat]
            if s.can_bet and (not s.acted or s.round_bet < self.current_bet):
                return seat
        return None

    # -- what happens by itself ------------------------------------------------

    def _advance(self) -> None:
        """Emit whatever follows without anyone deciding, until a seat must act."""
        while True:
            if self.phase is Phase.ENDED:
                return
            if self.phase is Phase.BETTING:
                if self.actor is not None:
                    return
                self._close_round()
            elif self.phase is Phase.CUTTING:
                if self._pending_cuts:
                    return
                self._show_down()
            else:
                self._deal_on()

    def _close_round(self) -> None:
        bets = sorted(self._seats.values(), key=lambda s: s.round_bet, reverse=True)
        unmatched = bets[0].round_bet - bets[1].round_bet
        if unmatched:
            self._emit(BetReturned(bets[0].seat, unmatched))
        self._emit(BettingRoundEnded(self.round))

    def _deal_on(self) -> None:
        """Between rounds: the walk-over, the next round, the 4th tile, or the showdown."""
        live = self._live
        if len(live) == 1:
            if pot := self.pot:
                self._emit(PotAwarded(pot, (live[0],), ((live[0], pot),)))
            self._emit(self._ended())
            return
        if len(self._seats[live[0]].tiles) == FIRST_TILES:
            if self.round == 0 and self._round_can_open():
                self._emit(BettingRoundStarted(1))
                return
            fourth = FIRST_TILES * len(self.order)
            for i, seat in enumerate(self.order):
                if seat in live:
                    self._emit(FourthTileDealt(seat, self._deck[fourth + i]))
            return
        if self.rules.betting_rounds == 2 and self.round < 2 and self._round_can_open():
            self._emit(BettingRoundStarted(2))
        elif self.rules.manual_split:
            self._emit(CuttingStarted(live))
        else:
            self._show_down()

    def _round_can_open(self) -> bool:
        """Rule 2: at least two seats still in have chips behind."""
        return sum(1 for seat in self._live if self._seats[seat].can_bet) >= 2

    def _show_down(self) -> None:
        ranks = {seat: self._showdown_rank(seat) for seat in self._live}
        self._emit(
            Showdown(
                tuple(
                    ShownHand(seat, r.hand.tiles, r.cut, r.category, r.pairs)
                    for seat, r in ranks.items()
                )
            )
        )
        contributed = {s.seat: s.contributed for s in self._seats.values()}
        for pot in side_pots(contributed, ranks.keys(), self.order):
            winners = [pot.eligible[0]]
            for seat in pot.eligible[1:]:
                verdict = compare_ranks(ranks[seat], ranks[winners[0]], self.rules.tie_rule)
                if verdict > 0:
                    winners = [seat]
                elif verdict == 0:
                    winners.append(seat)
            self._emit(PotAwarded(pot.amount, pot.eligible, share(pot.amount, winners)))
        self._emit(self._ended())

    def _showdown_rank(self, seat: int) -> Rank:
        s = self._seats[seat]
        if s.cut is not None:  # declared under manual_split
            return rank_with_cut(Hand(s.tiles), s.cut)
        return rank_dealt(s.tiles)

    def _ended(self) -> HandEnded:
        return HandEnded(tuple((seat, self._seats[seat].stack) for seat in sorted(self._seats)))

    # -- small helpers ---------------------------------------------------------

    def _seat(self, seat: int) -> SeatState:
        try:
            return self._seats[seat]
        except KeyError:
            raise IllegalAction("unknown_seat", f"seat {seat} is not in this hand") from None


def _check_table(stacks: Mapping[int, int], button: int, deck: Sequence[Tile]) -> None:
    if not MIN_SEATS <= len(stacks) <= MAX_SEATS:
        raise InvalidRules(f"a hand needs {MIN_SEATS} to {MAX_SEATS} seats, not {len(stacks)}")
    for seat, stack in stacks.items():
        if isinstance(seat, bool) or not isinstance(seat, int) or seat < 0:
            raise InvalidRules(f"seats are numbered 0 and up, not {seat!r}")
        if isinstance(stack, bool) or not isinstance(stack, int) or stack <= 0:
            raise InvalidRules(f"seat {seat} needs a positive whole stack, not {stack!r}")
    if isinstance(button, bool) or button not in stacks:
        raise InvalidRules(f"the button {button!r} is not one of the seats")
    if len(deck) != len(ALL_TILES) or set(deck) != _EVERY_TILE:
        raise InvalidRules("the deck must hold each of the 28 tiles exactly once")


def _verify_chips(amount: object) -> None:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise IllegalAction(
            "invalid_amount", f"an amount is a positive whole number, not {amount!r}"
        )


def _verify_in_range(amount: int, allowed: ChipRange, all_in: int, what: str) -> None:
    # Over both the table's limit and the stack, the limit is what to name: the stack
    # is not the most the seat may put in then.
    if amount > allowed.max and allowed.max < all_in:
        raise IllegalAction(
            f"{what}_too_large", f"the largest {what} is {allowed.max:,}, not {amount:,}"
        )
    if amount > all_in:
        raise IllegalAction(
            "not_enough_chips", f"you can {what} to at most {all_in:,} (all in), not {amount:,}"
        )
    if amount < allowed.min:
        raise IllegalAction(
            f"{what}_too_small", f"the smallest {what} is {allowed.min:,}, not {amount:,}"
        )


def _can(verify: Callable[..., None], *args: object) -> bool:
    try:
        verify(*args)
    except IllegalAction:
        return False
    return True


def _or_none(compute: Callable[[int], ChipRange], seat: int) -> ChipRange | None:
    try:
        return compute(seat)
    except IllegalAction:
        return None
