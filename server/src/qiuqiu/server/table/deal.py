"""A hand's deal, and a client's action as the engine takes it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from qiuqiu import engine
from qiuqiu.engine import Cut, Hand, HandState, Shuffler, Tile, rank
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import fairness
from qiuqiu.protocol.fairness import SealedDeck


class Random(Shuffler, Protocol):
    """Where the table's seed comes from: ``secrets.SystemRandom()`` when serving, a
    seeded ``random.Random`` in tests that need the same deals every run."""

    def getrandbits(self, k: int, /) -> int: ...

    def random(self) -> float: ...


hand_seed: Callable[[str, str, int], str]
derive_deck: Callable[[str, Mapping[int, str]], SealedDeck]
""":func:`fairness.hand_seed` and :func:`fairness.derive_deck` compiled (``_deal.c``), the
same bytes: a deal's 65 or so digests cost the interpreter more in calls than in hashing
(issue 18). The protocol's Python is the reference, the one clients verify with, and
tests/server/table/test_deal_native.py holds the C to it. ``uv sync`` builds the C where it
finds a C compiler and OpenSSL's headers; elsewhere these are the Python's themselves."""
try:
    from qiuqiu.server.table._deal import derive_deck, hand_seed
except ImportError:  # built without a C compiler or OpenSSL's headers: the deal is Python's
    hand_seed, derive_deck = fairness.hand_seed, fairness.derive_deck


def new_table_seed(rng: Random) -> str:
    return f"{rng.getrandbits(256):064x}"


def next_button(dealt: Iterable[int], bot_seat: int | None, last: int | None) -> int:
    """The button of a hand dealing in the seats ``dealt``: the dealer bot at its table,
    so the player acts first; else the next seat after the ``last`` hand's button, or
    at a table's first hand the highest, so that it opens with the lowest."""
    if bot_seat is not None:
        return bot_seat
    seats = sorted(dealt)
    if last is None:
        return seats[-1]
    return next((n for n in seats if n > last), seats[0])


@dataclass(frozen=True, slots=True)
class Deal:
    """A hand fixed before anyone acts: who is dealt in with what, each seat's client
    seed, and the deck sealed (PROTOCOL.md, "Fairness")."""

    hand_id: int
    button: int
    stacks: tuple[tuple[int, int], ...]
    client_seeds: tuple[tuple[int, str], ...]
    sealed: SealedDeck

    @classmethod
    def shuffle(
        cls,
        table_seed: str,
        table_id: str,
        hand_id: int,
        button: int,
        stacks: dict[int, int],
        client_seeds: dict[int, str],
    ) -> Deal:
        seed = hand_seed(table_seed, table_id, hand_id)
        seeds = {n: client_seeds.get(n, "") for n in stacks}
        return cls(
            hand_id,
            button,
            tuple(sorted(stacks.items())),
            tuple(sorted(seeds.items())),
            derive_deck(seed, seeds),
        )

    @property
    def deck(self) -> tuple[Tile, ...]:
        """The tiles as the engine deals them."""
        return tuple(map(Tile.parse, self.sealed.tiles))


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
