"""Deals a test can foresee: a server in the test's process that gives every new table a
known seed, and the hands that seed deals with the players' client seeds (PROTOCOL.md,
"Fairness"), as anyone can work them out once a table's seed is revealed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from unittest import mock

from qiuqiu.engine import Hand, Tile
from qiuqiu.protocol import fairness

KNOWN_TABLE_SEED = "5eed" * 16


@contextmanager
def known_table_seed() -> Iterator[str]:
    """Every table opened meanwhile by the server in this process has
    ``KNOWN_TABLE_SEED``; the players' client seeds still enter every shuffle."""
    hook = "qiuqiu.server.table.audience.new_table_seed"
    with mock.patch(hook, return_value=KNOWN_TABLE_SEED):
        yield KNOWN_TABLE_SEED


def first_hands(table_id: str, seat_0_seed: str) -> tuple[Hand, Hand]:
    """Seat 0's and seat 1's hands in hand 1 of ``table_id``, opened under
    :func:`known_table_seed`, with two seats, seat 1 the button sending no seed (a table
    without the bot, or the dealer bot's, whose seat is the button of every hand)."""
    deck = fairness.derive_deck(
        fairness.hand_seed(KNOWN_TABLE_SEED, table_id, 1), {0: seat_0_seed, 1: ""}
    ).tiles
    where = fairness.dealt_positions((0, 1), button=1)
    first, second = (Hand(tuple(Tile.parse(deck[p]) for p in where[s])) for s in (0, 1))
    return first, second


def client_seed_dealing(table_id: str, wanted: Callable[[Hand, Hand], bool]) -> str:
    """A client seed for seat 0 such that hand 1 of ``table_id`` (as :func:`first_hands`
    has it) deals ``wanted(seat 0's hand, seat 1's hand)``."""
    for n in range(100_000):
        mine = f"seed-{n}"
        if wanted(*first_hands(table_id, mine)):
            return mine
    raise AssertionError("no client seed deals such a hand")


def three_seat_seed(table_id: str, wanted: Callable[[Hand, Hand, Hand], bool]) -> str:
    """A client seed for seat 0 such that hand 1 of a three-seat ``table_id`` opened
    under :func:`known_table_seed` (seat 2 the button, seats 1 and 2 sending no seed)
    deals ``wanted(seat 0's hand, seat 1's, seat 2's)``."""
    where = fairness.dealt_positions((0, 1, 2), button=2)
    hand_seed = fairness.hand_seed(KNOWN_TABLE_SEED, table_id, 1)
    for n in range(100_000):
        deck = fairness.derive_deck(hand_seed, {0: f"seed-{n}", 1: "", 2: ""}).tiles
        if wanted(*(Hand(tuple(Tile.parse(deck[p]) for p in where[s])) for s in (0, 1, 2))):
            return f"seed-{n}"
    raise AssertionError("no client seed deals such a hand")
