"""A server made to cheat, for the tests that prove every client catches it.

Each context manager makes every table dealt in this process, while it is
active, cheat one way (PROTOCOL.md, "Fairness", the threat model):

- :func:`swapped_tile`: the deck is committed honestly, but a seat is dealt
  another tile than the one committed at its position (the one at position 27,
  which no table of up to six seats deals). Caught at the hand's end by the
  check of the seat's own tiles, and of the tiles shown down.
- :func:`ignored_client_seeds`: the deck is derived as if nobody had sent a
  seed, while ``hand_started`` lists the seeds the players sent. Every opening
  checks; caught once the table's seed is revealed.
- :func:`chosen_deck`: the server deals a deck of its choosing (every tile in
  canonical order, so the first seat holds ``0-0 1-0 1-1``), sealed with salts
  of its own. Every opening checks; caught once the table's seed is revealed.
- :func:`chosen_bot_seed`: at a dealer bot table, the bot's seat lists a seed the
  server ground, knowing the table's seed and the player's, until the bot holds
  6-6. Every opening checks and every deck rebuilds from the seeds listed: caught
  only by a client that holds the bot to the empty seed.
- :func:`chosen_button`: the server gives the button to whichever seat makes the
  last seat's hand (the dealer bot's, at its table) the best, so that it is
  dealt the positions it likes. The deck is the honest one, and every opening
  checks: caught only by a client that holds the bot to the button, and the
  button of a table of players to the next seat dealt in.
- :func:`skipped_hand`: at a dealer bot table, the server deals the next hand's deck
  instead, numbered as the next hand, whenever it gives the bot the better cut. The
  deck is the honest one for its number, and every opening checks: caught only by
  a client that holds the hands it sees to consecutive numbers.
- :func:`phantom_seat`: ``hand_started`` lists, besides the seats dealt in, a seat
  nobody sits at with a seed the server ground until the dealer bot holds 6-6,
  and each seat is dealt, and opened, the positions the deal order gives it with
  that seat counted in. Every opening checks and every deck rebuilds from the
  seeds listed: caught only by a client that holds the seeds listed to the seats
  of ``stacks``.
- :func:`recommitted`: once a player's seed is in, the server draws the table's seed
  again (as one grinding it for a deck it likes would) and shows its new
  ``seed_commitment`` from then on. Every hand is made from the new seed, which it
  reveals: caught only by a client that holds the server to the commitment it
  saw before sending its seed. With ``unlisted``, the lobby lists the table with
  no ``seed_commitment`` (as it does a table from before protocol 2), so that a
  player who joins from it sees none before its seed goes out.
  With ``first``, those tiles lead the deck: a test deals the hands it needs.
- :func:`house_takes_the_pot`: the deal is honest, every tile checks, but at a
  showdown the dealer bot takes every pot it was in, won or lost, and its
  records and its ``hand_ended`` say so; every chip is still accounted for.
  Caught only by a client that pays the hand again by the rules.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from typing import Any
from unittest import mock

from qiuqiu import engine
from qiuqiu.engine import ALL_TILES, Hand, Tile, rank
from qiuqiu.protocol import fairness
from qiuqiu.protocol.server import TableSummary
from qiuqiu.server.table.core import TableCore
from qiuqiu.server.table.deal import Deal
from qiuqiu.server.table.hand import HandFlow

HONEST = Deal.shuffle
UNDEALT = 27


@contextmanager
def swapped_tile() -> Iterator[None]:
    def dealt(deal: Deal) -> tuple[Tile, ...]:
        tiles = [Tile.parse(tile) for tile in deal.sealed.tiles]
        tiles[0], tiles[UNDEALT] = tiles[UNDEALT], tiles[0]
        return tuple(tiles)

    with mock.patch.object(Deal, "deck", property(dealt)):
        yield


Cheat = Callable[[Deal, str, str], Deal]
"""How a cheating server deals: from the honest deal, the table's seed and its id."""


def _dealing(cheat: Cheat) -> AbstractContextManager[Any]:
    def shuffle(
        cls: type[Deal],
        table_seed: str,
        table_id: str,
        hand_id: int,
        button: int,
        stacks: dict[int, int],
        client_seeds: dict[int, str],
    ) -> Deal:
        honest = HONEST(table_seed, table_id, hand_id, button, stacks, client_seeds)
        return cheat(honest, table_seed, table_id)

    return mock.patch.object(Deal, "shuffle", classmethod(shuffle))


@contextmanager
def ignored_client_seeds() -> Iterator[None]:
    def cheat(honest: Deal, table_seed: str, table_id: str) -> Deal:
        hand_seed = fairness.hand_seed(table_seed, table_id, honest.hand_id)
        unseeded = {seat: "" for seat, _ in honest.stacks}
        return replace(honest, sealed=fairness.derive_deck(hand_seed, unseeded))

    with _dealing(cheat):
        yield


@contextmanager
def chosen_deck(first: Sequence[str] = ()) -> Iterator[None]:
    leading = [Tile.parse(tile) for tile in first]
    tiles = [str(t) for t in [*leading, *(t for t in ALL_TILES if t not in leading)]]

    def cheat(honest: Deal, table_seed: str, table_id: str) -> Deal:
        salts = [secrets.token_hex(fairness.SALT_BYTES) for _ in ALL_TILES]
        return replace(honest, sealed=fairness.seal(tiles, salts))

    with _dealing(cheat):
        yield


@contextmanager
def recommitted(unlisted: bool = False) -> Iterator[None]:
    honest, listed = TableCore.sit, TableCore.summary

    def sit(table: TableCore, *args: Any, **kwargs: Any) -> None:
        honest(table, *args, **kwargs)
        if table.hand is None:
            table.table_seed = secrets.token_hex(32)

    def summary(table: TableCore) -> TableSummary:
        return listed(table).model_copy(update={"seed_commitment": None})

    with mock.patch.object(TableCore, "sit", sit):
        if not unlisted:
            yield
            return
        with mock.patch.object(TableCore, "summary", summary):
            yield


@contextmanager
def chosen_bot_seed() -> Iterator[None]:
    def cheat(honest: Deal, table_seed: str, table_id: str) -> Deal:
        bot = max(seat for seat, _ in honest.stacks)
        held = fairness.dealt_positions([seat for seat, _ in honest.stacks], honest.button)[bot]
        seeds = dict(honest.client_seeds)
        hand_seed = fairness.hand_seed(table_seed, table_id, honest.hand_id)
        for tries in itertools.count():
            seeds[bot] = f"g{tries}"
            sealed = fairness.derive_deck(hand_seed, seeds)
            if "6-6" in (sealed.tiles[p] for p in held):
                return replace(honest, client_seeds=tuple(sorted(seeds.items())), sealed=sealed)
        raise AssertionError("unreachable")

    with _dealing(cheat):
        yield


def _listed_positions(deal: Deal) -> dict[int, tuple[int, ...]]:
    return fairness.dealt_positions([seat for seat, _ in deal.client_seeds], deal.button)


@contextmanager
def phantom_seat() -> Iterator[None]:
    def cheat(honest: Deal, table_seed: str, table_id: str) -> Deal:
        seats = [seat for seat, _ in honest.stacks]
        phantom, bot = max(seats) + 1, max(seats)
        hand_seed = fairness.hand_seed(table_seed, table_id, honest.hand_id)
        for tries in itertools.count():
            seeds = {**dict(honest.client_seeds), phantom: f"g{tries}"}
            listed = replace(honest, client_seeds=tuple(sorted(seeds.items())))
            sealed = fairness.derive_deck(hand_seed, seeds)
            if "6-6" in (sealed.tiles[p] for p in _listed_positions(listed)[bot]):
                return replace(listed, sealed=sealed)
        raise AssertionError("unreachable")

    def dealt(deal: Deal) -> tuple[Tile, ...]:
        # The engine deals by the seats of stacks: each gets the tiles at its listed positions.
        listed = _listed_positions(deal)
        engine = fairness.dealt_positions([seat for seat, _ in deal.stacks], deal.button)
        tiles: list[str | None] = [None] * len(deal.sealed.tiles)
        for seat, positions in engine.items():
            for at, p in zip(positions, listed[seat], strict=True):
                tiles[at] = deal.sealed.tiles[p]
        rest = iter(t for t in deal.sealed.tiles if t not in tiles)
        return tuple(Tile.parse(t if t is not None else next(rest)) for t in tiles)

    with _dealing(cheat), mock.patch.object(Deal, "deck", property(dealt)):
        yield


def _bots_hand(deal: Deal) -> tuple[int, int]:
    """How good the hand the dealer bot (the last seat) gets from ``deal`` is."""
    seats = [seat for seat, _ in deal.stacks]
    held = fairness.dealt_positions(seats, deal.button)[max(seats)]
    ranked = rank(Hand(tuple(Tile.parse(deal.sealed.tiles[p]) for p in held)))
    return ranked.strength, ranked.tiebreak


@contextmanager
def chosen_button() -> Iterator[None]:
    def cheat(honest: Deal, table_seed: str, table_id: str) -> Deal:
        seats = [seat for seat, _ in honest.stacks]
        return max((replace(honest, button=seat) for seat in seats), key=_bots_hand)

    with _dealing(cheat):
        yield


@contextmanager
def skipped_hand() -> Iterator[None]:
    def cheat(honest: Deal, table_seed: str, table_id: str) -> Deal:
        stacks, seeds = dict(honest.stacks), dict(honest.client_seeds)
        args = (table_seed, table_id, honest.hand_id + 1, honest.button, stacks, seeds)
        return max((honest, HONEST(*args)), key=_bots_hand)

    with _dealing(cheat):
        yield


@contextmanager
def house_takes_the_pot() -> Iterator[None]:
    honest = HandFlow._after

    def after(flow: HandFlow, events: tuple[engine.Event, ...], **told: Any) -> None:
        bot, hand = flow.bot_seat, flow.hand
        if bot is not None and hand is not None and isinstance(hand.log[-1], engine.HandEnded):
            taken = _to_the_bot(bot, hand.log)
            # The server's own record of the hand (its end commit reads the log) agrees.
            hand._log[len(hand.log) - len(taken) :] = taken
            events = (*events[: len(events) - len(taken)], *taken)
        honest(flow, events, **told)

    with mock.patch.object(HandFlow, "_after", after):
        yield


def _to_the_bot(bot: int, log: Sequence[engine.Event]) -> list[engine.Event]:
    """The log's pots and its end from the showdown on, every pot the bot was in its own."""
    start = max(
        i for i, e in enumerate(log) if not isinstance(e, engine.PotAwarded | engine.HandEnded)
    )
    tail, moved = list(log[start + 1 :]), dict[int, int]()
    for i, event in enumerate(tail):
        if isinstance(event, engine.PotAwarded) and bot in event.eligible:
            for seat, amount in event.shares:
                moved[seat] = moved.get(seat, 0) - amount
            moved[bot] = moved.get(bot, 0) + event.amount
            tail[i] = replace(event, shares=((bot, event.amount),))
        elif isinstance(event, engine.HandEnded):
            tail[i] = engine.HandEnded(
                tuple((seat, stack + moved.get(seat, 0)) for seat, stack in event.stacks)
            )
    return tail
