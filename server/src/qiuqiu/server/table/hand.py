"""A hand's flow through the engine, the middle of the table's state machine.

Once a hand's start is written (:mod:`.ledger`), this deals it, publishes what
the engine does (holding back what the action that ends it caused, its showdown
and payouts, until its end is written), starts each turn with its timer, and
plays at once for the seats that are leaving: check if they can, else fold; at
a cutting phase, their best cut. None of that is a time-out, as nobody waited.
"""

from __future__ import annotations

from functools import partial

from qiuqiu import engine
from qiuqiu.engine import HandState, Phase
from qiuqiu.protocol import ErrorCode
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol.common import MessageId
from qiuqiu.server.errors import Refused
from qiuqiu.server.table.audience import NEXT_HAND, TURN, Disarm, TablePhase
from qiuqiu.server.table.deal import cut_for
from qiuqiu.server.table.ledger import Ledger
from qiuqiu.server.table.reasons import IN_DOUBT, UNAVAILABLE
from qiuqiu.server.table.seats import Viewer
from qiuqiu.server.views import HandWire, Publication

ACTION_FACTS = (
    engine.TurnTimedOut,
    engine.Checked,
    engine.BetPlaced,
    engine.Called,
    engine.Raised,
    engine.Folded,
    engine.CutDeclared,
)
"""The engine's events that say what a seat did (or what its clock did for it)."""
CUTTING = -1
"""The log length in the turn timer's key during a cutting phase, which has one deadline."""


class HandFlow(Ledger):
    _turn_key: tuple[int, int] | None = None
    _turn_waits = False
    """The turn's clock is stopped until the store is back (see :meth:`_arm_turn`)."""

    @property
    def playing(self) -> bool:
        return self.state is TablePhase.PLAYING

    def _refuse_stale(self, action: cmd.TableAction, viewer: Viewer | None) -> None:
        """Refuse ``action``, for a hand not in play. On the hand whose end is being
        written, ``viewer`` is told so once that end is: told now, the refusal would
        tell of an end nobody has seen yet (rule 2)."""
        playing = f" (hand {self.hand_id} is)" if self.playing else ""
        stale = Refused(
            ErrorCode.STALE_HAND,
            f"hand {action.hand_id} is not in play at table {self.table_id}{playing}",
        )
        settling = self.state is TablePhase.SETTLING and action.hand_id == self.hand_id
        if viewer is None or not settling:
            raise stale
        error = self._error(action.id, stale.code, stale.message)
        told = partial(self._deliver, viewer, error)
        self._when_settled(told, moved=told)

    def _hand_started(self) -> None:
        deal = self.deal
        assert deal is not None
        self.hand_id = deal.hand_id
        if self._closing is not None:
            return  # nobody saw it: the close writes it voided
        self.hand = HandState.start(self.rules, dict(deal.stacks), deal.button, deal.deck)
        self._wire = HandWire(self.table_id, deal.hand_id, deal.sealed, deal.client_seeds)
        self._dealt = {n: self.seats[n].account_id for n, _ in deal.stacks}
        self._frames = []
        self.state = TablePhase.PLAYING
        started = self._wire.started(self._next_seq(), deal.button, deal.stacks)
        self._record(started)
        self._publish(started)
        self._after(self.hand.log[1:])

    def _after(
        self,
        events: tuple[engine.Event, ...],
        *,
        actor: int | None = None,
        ref: MessageId | None = None,
        reason: str = "",
    ) -> None:
        """Publish what the engine did (held, if it ended the hand: rule 2), then play
        for the seats that are leaving, or start the next turn."""
        hand, wire_ = self.hand, self._wire
        assert hand is not None
        assert wire_ is not None
        while True:
            # The action that ends the hand is told at once, as every action before it
            # was; what it caused waits for the hand's end to be written.
            telling = True
            for event in events:
                telling = telling and isinstance(event, ACTION_FACTS)
                if isinstance(event, engine.CuttingStarted):
                    self._deadline_ms = self._deadline()
                published = wire_.event(
                    event,
                    self._next_seq(),
                    actor=actor,
                    ref=ref,
                    deadline_ms=self._deadline_ms,
                    reason=reason,
                )
                if published is not None:
                    self._record(published)
                    if hand.is_over and not telling:
                        self._held.append(published)
                    else:
                        self._publish(published)
            if hand.is_over:
                self._timers.append(Disarm(TURN))
                self._turn_key = None
                if self.state is TablePhase.PLAYING:
                    self.state = TablePhase.SETTLING
                return
            forced = self._leavers_move(hand)
            if not forced:
                if events:
                    self._start_turn(hand, wire_)
                return
            events, actor, ref = forced, None, None

    def _leavers_move(self, hand: HandState) -> tuple[engine.Event, ...]:
        """What the seats that are leaving do, now that it is their turn: check if they
        can, else fold; at a cutting phase, their best cut (no time-out: nobody waited)."""
        if hand.phase is Phase.CUTTING:
            return tuple(
                e
                for n in hand.pending_cuts
                if self.seats[n].leaving and not self.seats[n].plays_out
                for e in hand.declare_cut(n, cut_for(hand, n))
            )
        actor = hand.actor
        if actor is None or not self.seats[actor].leaving or self.seats[actor].plays_out:
            return ()
        return hand.check(actor) if hand.can_check(actor) else hand.fold(actor)

    def _start_turn(self, hand: HandState, wire_: HandWire) -> None:
        if hand.phase is Phase.CUTTING:
            # One deadline for the whole cutting phase: a declared cut does not reset it.
            if self._turn_key != (self.hand_id, CUTTING):
                self._turn_key = (self.hand_id, CUTTING)
                self._arm_turn()
            return
        if hand.actor is None:
            return
        self._deadline_ms = self._deadline()
        published = wire_.turn(hand, self._next_seq(), self._deadline_ms)
        self._record(published)
        self._publish(published)
        self._turn_key = (self.hand_id, len(hand.log))
        self._arm_turn()

    def _arm_turn(self) -> None:
        # A player connected to another process reaches the table only through the
        # store's messages between processes: while it is away, no turn runs out, so
        # nobody is folded by an outage they could not play through.
        if self.store_up and self.sure:
            self._arm(TURN, self.options.turn_seconds)
        else:
            self._turn_waits = True

    def store_changed(self, up: bool) -> None:
        """The store went away, or answers again."""
        self.store_up = up
        if up:
            self._turn_again()
            self._schedule_hand()
        else:
            self._stop_turn_clock()

    def lease_certain(self, sure: bool) -> None:
        """Whether this process is sure it still holds the table's lease (rule 6 in
        :mod:`.core`)."""
        if sure is self.sure:
            return
        self.sure = sure
        if sure:
            self._settled()
            self._turn_again()
        else:
            self._stop_turn_clock()

    def _verify_open(self) -> None:
        if self._closing is not None or self.state in (TablePhase.CLOSING, TablePhase.CLOSED):
            raise Refused(ErrorCode.TABLE_CLOSED, f"table {self.table_id} is closing")

    def _verify_store(self) -> None:
        if not self.store_up:
            raise Refused(ErrorCode.STORE_UNAVAILABLE, UNAVAILABLE)

    def _verify_sure(self) -> None:
        if not self.sure:
            raise Refused(ErrorCode.STORE_UNAVAILABLE, IN_DOUBT)

    def _stop_turn_clock(self) -> None:
        """The store went away, or the lease is in doubt: the turn in play waits."""
        if self.playing and self._turn_key is not None:
            self._timers.append(Disarm(TURN))
            self._turn_waits = True

    def _turn_again(self) -> None:
        """The store is back: the turn that waited starts again, with its whole time and
        a new ``turn_started`` (at a cutting phase, a new deadline alone), once the
        lease is certain too."""
        if not self._turn_waits or not (self.store_up and self.sure):
            return
        self._turn_waits = False
        hand, wire_ = self.hand, self._wire
        if hand is None or wire_ is None or not self.playing or hand.is_over:
            return
        self._turn_key = None
        self._start_turn(hand, wire_)

    def _record(self, published: Publication) -> None:
        self._frames.append(published.public_frame.text)

    def _time_out(self) -> None:
        hand = self.hand
        # A lease in doubt as the timer fired (found by this very input) has just made
        # the turn wait.
        if hand is None or not self.playing or self._turn_key is None or not self.sure:
            return
        if self._turn_key == (self.hand_id, CUTTING) and hand.phase is Phase.CUTTING:
            events = tuple(e for n in hand.pending_cuts for e in hand.time_out(n))
        elif self._turn_key == (self.hand_id, len(hand.log)) and hand.actor is not None:
            events = hand.time_out(hand.actor)
        else:
            return
        self._after(events)

    def _schedule_hand(self) -> None:
        if self.state is TablePhase.WAITING and self._closing is None and self._ready():
            self._arm(NEXT_HAND, self.timings.hand_pause if self.hand is not None else 0.0)

    def _deadline(self) -> int:
        return int((self._clock() + self.options.turn_seconds) * 1000)
