"""One hand at engine speed: the engine's :class:`HandState`, and the wire messages a
server's table would send each seat, made by the server's own views.

The order and content of the messages follow the server's table: ``hand_started``
(with the deal's commitment), the antes and deals, ``turn_started`` to everyone
(with ``legal`` in the actor's copy only), each action's events, the pot at
``betting_round_ended``, and ``hand_ended`` with the stacks. Each seat's copy of
its own tiles, with their openings, is the only one that holds them. There is no
socket and no timer: a bot's answer is waited for however long it takes, and
an illegal answer is played as the server's time-out would play it (check,
else fold), and counted. Each answer is timed, so an answer a server would not
have waited for (one slower than ``turn_seconds``) is counted too.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from random import Random
from time import perf_counter

from qiuqiu import engine
from qiuqiu.cli.arena.seats import Player
from qiuqiu.cli.turns import Action, Bet, Call, Check, Fold, Raise, Split
from qiuqiu.engine import Cut, HandState, IllegalAction, Phase, TableRules, Tile, shuffled_deck
from qiuqiu.protocol import fairness
from qiuqiu.protocol import server as wire
from qiuqiu.server import views

CUT_DEADLINE = 0
"""No clock in the arena: every deadline on the wire is 0."""


@dataclass
class Outcome:
    """How one hand went: each seat's chips won (below zero: lost), and illegal answers."""

    net: dict[int, int]
    illegal: dict[int, int]
    first_illegal: dict[int, str] = field(default_factory=dict)
    """Each seat's first illegal answer of the hand, if it gave one, and why it was."""
    slowest: dict[int, float] = field(default_factory=dict)
    """Each seat's slowest answer of the hand, in seconds."""
    late: dict[int, int] = field(default_factory=dict)
    """Each seat's answers slower than the turn clock."""


def play_hand(
    *,
    table_id: str,
    hand_id: int,
    seq: int,
    rules: TableRules,
    players: Mapping[int, Player],
    stacks: Mapping[int, int],
    button: int,
    deck: Sequence[Tile],
    seed: str,
    turn_seconds: float = math.inf,
) -> tuple[Outcome, int]:
    """Play one hand to its end; returns the outcome and the table's last ``seq``. An
    answer slower than ``turn_seconds`` is played, and counted as late."""
    deck_text = tuple(t.text for t in deck)
    hand = HandState.start(rules, dict(stacks), button, deck)
    # A salt need only be unguessable from what the seats see: SHAKE-256 of the hand's
    # secret seed makes all 28 at once, where an HMAC stream takes 14 blocks.
    width = fairness.SALT_BYTES
    salted = hashlib.shake_256(bytes.fromhex(seed)).digest(width * len(deck))
    salts = [salted[i : i + width] for i in range(0, len(salted), width)]
    sealed = fairness.seal_salted(deck_text, salts)
    made = views.HandWire(table_id, hand_id, sealed, ((seat, "") for seat in sorted(stacks)))
    table = _Publisher(players, made, seq)
    table.publish(made.started(table.next_seq(), button, sorted(stacks.items())))
    outcome = Outcome({}, dict.fromkeys(players, 0))
    slowest, late = outcome.slowest, outcome.late
    table.events(hand.log[1:])
    while not hand.is_over:
        if hand.phase is Phase.CUTTING:
            seat = hand.pending_cuts[0]
            assert table.cutting is not None
            asked: wire.TurnStarted | wire.CuttingStarted = table.cutting
        else:
            seat = _actor(hand)
            turn = made.turn(hand, table.next_seq(), 0)
            table.publish(turn)
            mine = turn.for_seat(seat)
            assert isinstance(mine, wire.TurnStarted)
            asked = mine
        started = perf_counter()
        answer = players[seat].act(asked)
        took = perf_counter() - started
        if took > slowest.get(seat, 0.0):
            slowest[seat] = took
        if took > turn_seconds:
            late[seat] = late.get(seat, 0) + 1
        try:
            events = _apply(hand, seat, answer)
        except (IllegalAction, ValueError) as refused:
            outcome.illegal[seat] += 1
            outcome.first_illegal.setdefault(seat, f"{answer!r} in hand {hand_id} ({refused})")
            events = hand.time_out(seat)
        table.events(events)
    outcome.net = {seat: s.stack - stacks[seat] for seat, s in hand.seats.items()}
    return outcome, table.seq


def play_hands(
    count: int,
    *,
    table_id: str,
    rules: TableRules,
    players: Mapping[int, Player],
    stacks: Mapping[int, int],
    button: int,
    rng: Random,
) -> list[Outcome]:
    """Play ``count`` hands in a row at one table, each from ``stacks`` with the button
    on ``button`` and its deck and seed from ``rng``. The players are kept from hand to
    hand, so what a bot or the house remembers carries over, as at a server's table."""
    outcomes: list[Outcome] = []
    seq = 0
    for hand_id in range(1, count + 1):
        outcome, seq = play_hand(
            table_id=table_id,
            hand_id=hand_id,
            seq=seq,
            rules=rules,
            players=players,
            stacks=stacks,
            button=button,
            deck=shuffled_deck(rng),
            seed=rng.randbytes(32).hex(),
        )
        outcomes.append(outcome)
    return outcomes


def _actor(hand: HandState) -> int:
    assert hand.actor is not None
    return hand.actor


def _apply(hand: HandState, seat: int, answer: Action | Split) -> tuple[engine.Event, ...]:
    """Play ``answer`` for ``seat``. Raises :class:`IllegalAction` (or ``ValueError``, for
    a cut of tiles that are no tiles) where the rules forbid it."""
    match answer:
        case Check():
            return hand.check(seat)
        case Call():
            return hand.call(seat)
        case Fold():
            return hand.fold(seat)
        case Bet(amount=amount):
            return hand.bet(seat, amount)
        case Raise(to=to):
            return hand.raise_to(seat, to)
        case Split(first=(a, b), second=(c, d)):
            cut = Cut((Tile.parse(a), Tile.parse(b)), (Tile.parse(c), Tile.parse(d)))
            return hand.declare_cut(seat, cut)


class _Publisher:
    """Sends each event to every seat as the server's table does, one ``seq`` each, in
    the server's own words (:class:`qiuqiu.server.views.HandWire`)."""

    def __init__(self, players: Mapping[int, Player], made: views.HandWire, seq: int) -> None:
        self.players = players
        self.made = made
        self.seq = seq
        self.cutting: wire.CuttingStarted | None = None

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def publish(self, published: views.Publication) -> None:
        for number, player in self.players.items():
            player.deliver_frame(published.frame_for(number))

    def events(self, events: Sequence[engine.Event]) -> None:
        for event in events:
            published = self.made.event(event, self.next_seq(), deadline_ms=CUT_DEADLINE)
            if published is None:
                continue
            if published.public_frame.kind is wire.CuttingStarted:
                cutting = published.public
                assert isinstance(cutting, wire.CuttingStarted)
                self.cutting = cutting
            self.publish(published)
