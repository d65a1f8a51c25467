"""One hand at engine speed: the engine's :class:`HandState`, and the wire messages a
server's table would send each seat, made by the server's own views.

The order and content of the messages follow the server's table: ``hand_started``
(with the deal's commitment), the antes and deals, ``turn_started`` to everyone
(with ``legal`` in the actor's copy only), each action's events, the pot at
``betting_round_ended``, and ``hand_ended`` revealing the seed and deck. Each
seat's copy of its own tiles is the only one that holds them. There is no
socket, no clock and no timer: a bot answers at once, and an illegal answer is
played as the server's time-out would play it (check, else fold), and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qiuqiu import engine
from qiuqiu.cli.arena.seats import Player
from qiuqiu.cli.bot import Action, Bet, Call, Check, Fold, Raise, Split
from qiuqiu.engine import Cut, HandState, IllegalAction, Phase, TableRules, Tile
from qiuqiu.protocol import commitment
from qiuqiu.protocol import server as wire
from qiuqiu.server import views

CUT_DEADLINE = 0
"""No clock in the arena: every deadline on the wire is 0."""


@dataclass
class Outcome:
    """How one hand went: each seat's chips won (below zero: lost), and illegal answers."""

    net: dict[int, int]
    illegal: dict[int, int]


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
) -> tuple[Outcome, int]:
    """Play one hand to its end; returns the outcome and the table's last ``seq``."""
    deck_text = tuple(str(t) for t in deck)
    hand = HandState.start(rules, dict(stacks), button, deck)
    ids: dict[str, Any] = {"table_id": table_id, "hand_id": hand_id}
    table = _Publisher(players, ids, seq)
    table.send_all(
        wire.HandStarted(
            **ids,
            seq=table.next_seq(),
            button=button,
            stacks=views.amounts(sorted(stacks.items())),
            commitment=commitment(seed, deck_text),
        )
    )
    illegal = dict.fromkeys(players, 0)
    table.events(hand.log[1:], seed, deck_text)
    while not hand.is_over:
        if hand.phase is Phase.CUTTING:
            seat = hand.pending_cuts[0]
            answer = players[seat].act(table.cutting)
            events = _apply(hand, seat, answer)
        else:
            seat = _actor(hand)
            started = wire.TurnStarted(
                **ids,
                seq=table.next_seq(),
                seat=seat,
                to_call=hand.to_call(seat),
                deadline_ms=0,
                pot=hand.pot,
                seats=views.seat_chips(hand),
            )
            mine = started.model_copy(update={"legal": views.legal_view(hand.legal_actions(seat))})
            for number, player in players.items():
                player.deliver(mine if number == seat else started)
            answer = players[seat].act(mine)
            events = _apply(hand, seat, answer)
        if events is None:
            illegal[seat] += 1
            events = hand.time_out(seat)
        table.events(events, seed, deck_text)
    net = {seat: s.stack - stacks[seat] for seat, s in hand.seats.items()}
    return Outcome(net, illegal), table.seq


def _actor(hand: HandState) -> int:
    assert hand.actor is not None
    return hand.actor


def _apply(hand: HandState, seat: int, answer: Action | Split) -> tuple[engine.Event, ...] | None:
    try:
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
    except (IllegalAction, ValueError):
        return None
    return None


class _Publisher:
    """Sends each event to every seat as the server's table does, one ``seq`` each."""

    def __init__(self, players: Mapping[int, Player], ids: dict[str, Any], seq: int) -> None:
        self.players = players
        self.ids = ids
        self.seq = seq
        self.pot = 0
        self.cutting = wire.CuttingStarted(**ids, seq=0, seats=(), deadline_ms=CUT_DEADLINE)

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def send_all(self, message: wire.TableEvent) -> None:
        for player in self.players.values():
            player.deliver(message)

    def events(self, events: Sequence[engine.Event], seed: str, deck: tuple[str, ...]) -> None:
        ids = self.ids
        for event in events:
            self.pot += views.pot_change(event)
            match event:
                case engine.HandStarted():
                    continue
                case engine.BettingRoundEnded(round):
                    self.send_all(
                        wire.BettingRoundEnded(
                            **ids, seq=self.next_seq(), round=round, pot=self.pot
                        )
                    )
                case engine.CuttingStarted(seats):
                    self.cutting = wire.CuttingStarted(
                        **ids, seq=self.next_seq(), seats=seats, deadline_ms=CUT_DEADLINE
                    )
                    self.send_all(self.cutting)
                case engine.HandEnded(stacks):
                    self.send_all(
                        wire.HandEnded(
                            **ids,
                            seq=self.next_seq(),
                            stacks=views.amounts(stacks),
                            seed=seed,
                            deck=deck,
                        )
                    )
                case _:
                    seq = self.next_seq()
                    public = views.hand_event(event, None, seq=seq, **ids)
                    if public is None:
                        continue
                    for number, player in self.players.items():
                        own = views.sees_more(event, number)
                        message = views.hand_event(event, number, seq=seq, **ids) if own else public
                        if message is not None:
                            player.deliver(message)
