"""A hand's deal, and a client's action as the engine takes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from qiuqiu import engine
from qiuqiu.engine import Cut, Hand, HandState, Shuffler, Tile, rank
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import commitment


class Random(Shuffler, Protocol):
    """Where decks and seeds come from: ``secrets.SystemRandom()`` when serving, a
    seeded ``random.Random`` in tests that need the same deals every run."""

    def getrandbits(self, k: int, /) -> int: ...

    def random(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Deal:
    """A hand fixed before anyone acts: who is dealt in with what, and the deck."""

    hand_id: int
    button: int
    stacks: tuple[tuple[int, int], ...]
    deck: tuple[Tile, ...]
    seed: str
    commitment: str

    @classmethod
    def shuffle(cls, rng: Random, hand_id: int, button: int, stacks: dict[int, int]) -> Deal:
        seed = f"{rng.getrandbits(256):064x}"
        deck = tuple(engine.shuffled_deck(rng))
        return cls(
            hand_id, button, tuple(sorted(stacks.items())), deck, seed, commitment(seed, text(deck))
        )

    @property
    def text(self) -> tuple[str, ...]:
        return text(self.deck)


def text(tiles: tuple[Tile, ...]) -> tuple[str, ...]:
    return tuple(str(tile) for tile in tiles)


def engine_action(hand: HandState, seat: int, action: cmd.TableAction) -> tuple[engine.Event, ...]:
    """Apply a client's ``action`` for ``seat``; raises :class:`IllegalAction` unchanged."""
    match action:
        case cmd.Check():
            return hand.check(seat)
        case cmd.Bet(amount=amount):
            return hand.bet(seat, amount)
        case cmd.Call():
            return hand.call(seat)
        case cmd.Raise(to=to):
            return hand.raise_to(seat, to)
        case cmd.Fold():
            return hand.fold(seat)
        case cmd.DeclareCut(pairs=((a, b), (c, d))):
            cut = Cut((Tile.parse(a), Tile.parse(b)), (Tile.parse(c), Tile.parse(d)))
            return hand.declare_cut(seat, cut)
    raise AssertionError(f"unhandled action {action!r}")


def cut_for(hand: HandState, seat: int) -> Cut:
    """The best cut of ``seat``'s four tiles."""
    return rank(Hand(hand.seats[seat].tiles)).cut
