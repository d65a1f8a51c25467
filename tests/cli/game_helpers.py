"""One table's hand as an honest server deals and tells it, for the tests of ``TableState``
and what reads it (test_game.py, test_deals.py, test_render.py, test_payouts.py, ...)."""

from __future__ import annotations

import hashlib
from typing import TypedDict

from qiuqiu.cli.game import Applied, TableState
from qiuqiu.engine import Hand, compare, parse_tiles, rank
from qiuqiu.protocol import (
    ChipRange,
    CutView,
    LegalActions,
    SeatAmount,
    TableOptions,
    fairness,
)
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import SeatSeed

TABLE = "t1"
HAND = 1
ME, BOT = 0, 1
START = {ME: 500, BOT: 1000}
"""Stacks as the hand starts: seat 0 (this client) is short, so its call is all in."""
TOTAL = sum(START.values())
TABLE_SEED = hashlib.sha256(b"qiuqiu").hexdigest()
SEED_COMMITMENT = fairness.seed_commitment(TABLE_SEED)
MY_SEED = "ana-picked-this-1"
CLIENT_SEEDS = {ME: MY_SEED, BOT: ""}
"""What the server lists as each seat's seed: the dealer bot's is always empty."""
SEALED = fairness.derive_deck(fairness.hand_seed(TABLE_SEED, TABLE, HAND), CLIENT_SEEDS)
"""The deck an honest server deals hand 1 with, as the server itself would make it."""
DECK = SEALED.tiles
COMMITMENT = SEALED.commitment
WHERE = fairness.dealt_positions((ME, BOT), BOT)
"""With the bot on the button this client is dealt first: positions 0, 1, 2 and 6."""
MY_TILES = tuple(DECK[p] for p in WHERE[ME])
BOT_TILES = tuple(DECK[p] for p in WHERE[BOT])
OPENING = LegalActions(check=True, bet=ChipRange(min=10, max=490))
FACING = LegalActions(fold=True, call=440)
"""Facing a raise to 600 with 440 behind: call all in, or fold."""


class At(TypedDict):
    table_id: str
    seq: int


class HandAt(At):
    hand_id: int


def at(seq: int) -> At:
    return {"table_id": TABLE, "seq": seq}


def hand_at(seq: int) -> HandAt:
    return {"table_id": TABLE, "seq": seq, "hand_id": HAND}


def seat_view(seat: int, stack: int, **fields: object) -> wire.SeatView:
    name, is_bot = ("Ana", False) if seat == ME else ("Dealer", True)
    return wire.SeatView.model_validate(
        {"seat": seat, "name": name, "is_bot": is_bot, "connected": True, "stack": stack, **fields}
    )


def snapshot(
    seq: int = 0,
    *,
    seats: tuple[wire.SeatView, ...] | None = None,
    hand: wire.HandView | None = None,
    legal: LegalActions | None = None,
) -> wire.TableSnapshot:
    if seats is None:
        seats = (seat_view(ME, START[ME]), seat_view(BOT, START[BOT]))
    view = wire.TableView(
        table_id=TABLE,
        options=TableOptions(),
        seed_commitment=SEED_COMMITMENT,
        seats=seats,
        hand=hand,
        you=ME,
        legal=legal,
    )
    return wire.TableSnapshot(seq=seq, table=view)


def fresh(my_seed: str | None = MY_SEED) -> TableState:
    """Two seats, no hand yet, as of event 0; this client sat down with ``my_seed``."""
    state = TableState.from_snapshot(snapshot())
    if my_seed is not None:
        state.deals.joined_with(my_seed)
    return state


def seat_seeds(seeds: dict[int, str] = CLIENT_SEEDS) -> tuple[SeatSeed, ...]:
    return tuple(SeatSeed(seat=seat, client_seed=seed) for seat, seed in sorted(seeds.items()))


def hand_view(sealed: fairness.SealedDeck = SEALED, **fields: object) -> wire.HandView:
    """The hand in play as a snapshot shows it: in the first betting round, unless
    ``fields`` say otherwise."""
    base: dict[str, object] = {
        "hand_id": HAND,
        "button": BOT,
        "stacks": tuple(SeatAmount(seat=seat, amount=stack) for seat, stack in START.items()),
        "commitment": sealed.commitment,
        "leaves": sealed.leaves,
        "client_seeds": seat_seeds(),
        "phase": "betting",
        "round": 1,
    }
    return wire.HandView.model_validate(base | fields)


def chips(seat: int, stack: int, bet: int, *, all_in: bool = False) -> wire.SeatChips:
    return wire.SeatChips(seat=seat, stack=stack, bet=bet, all_in=all_in)


def shown(seat: int, sealed: fairness.SealedDeck = SEALED) -> wire.ShownHand:
    """``seat``'s four tiles shown down, with the openings of their positions."""
    a, b, c, d = (sealed.opening(p) for p in WHERE[seat])
    tiles = (a.tile, b.tile, c.tile, d.tile)
    ranked = rank(Hand(parse_tiles(" ".join(tiles))))
    high, low = ranked.cut.high_pair, ranked.cut.low_pair
    cut = CutView(
        pairs=((str(high[0]), str(high[1])), (str(low[0]), str(low[1]))), values=ranked.pairs
    )
    return wire.ShownHand(
        seat=seat, tiles=tiles, cut=cut, category=ranked.category, openings=(a, b, c, d)
    )


def winner(sealed: fairness.SealedDeck = SEALED) -> int:
    """Who wins the showdown of a hand dealt from ``sealed`` (none of this file's decks
    splits it)."""
    mine, bots = (Hand(parse_tiles(" ".join(shown(s, sealed).tiles))) for s in (ME, BOT))
    verdict = compare(mine, bots)
    assert verdict != 0
    return ME if verdict > 0 else BOT


def whole_hand(
    sealed: fairness.SealedDeck = SEALED, seeds: dict[int, str] = CLIENT_SEEDS
) -> list[wire.TableEvent]:
    """One hand as this client's copy of the events shows it, from seq 1, dealt from
    ``sealed`` with ``seeds`` listed as the seats' client seeds.

    Both ante 10; this client bets 50, the bot raises to 600, this client calls
    all in for 440 more and the bot's unmatched 110 goes back; showdown for 1000.
    """
    stacks = tuple(SeatAmount(seat=s, amount=a) for s, a in START.items())
    won = winner(sealed)
    after = {ME: 0, BOT: 500}
    after[won] += 1000
    first, second, third, fourth = (sealed.opening(p) for p in WHERE[ME])
    return [
        wire.HandStarted(
            **hand_at(1),
            button=BOT,
            stacks=stacks,
            commitment=sealed.commitment,
            leaves=sealed.leaves,
            client_seeds=seat_seeds(seeds),
        ),
        wire.AnteTaken(**hand_at(2), seat=ME, amount=10, all_in=False),
        wire.AnteTaken(**hand_at(3), seat=BOT, amount=10, all_in=False),
        wire.TilesDealt(
            **hand_at(4),
            seat=ME,
            tiles=(first.tile, second.tile, third.tile),
            openings=(first, second, third),
        ),
        wire.TilesDealt(**hand_at(5), seat=BOT),
        wire.BettingRoundStarted(**hand_at(6), round=1),
        wire.TurnStarted(
            **hand_at(7),
            seat=ME,
            to_call=0,
            deadline_ms=1_000,
            pot=20,
            seats=(chips(ME, 490, 0), chips(BOT, 990, 0)),
            legal=OPENING,
        ),
        wire.BetPlaced(**hand_at(8), seat=ME, amount=50, all_in=False),
        wire.TurnStarted(
            **hand_at(9),
            seat=BOT,
            to_call=50,
            deadline_ms=2_000,
            pot=70,
            seats=(chips(ME, 440, 50), chips(BOT, 990, 0)),
        ),
        wire.Raised(**hand_at(10), seat=BOT, to=600, amount=600, all_in=False),
        wire.TurnStarted(
            **hand_at(11),
            seat=ME,
            to_call=550,
            deadline_ms=3_000,
            pot=670,
            seats=(chips(ME, 440, 50), chips(BOT, 390, 600)),
            legal=FACING,
        ),
        wire.Called(**hand_at(12), seat=ME, amount=440, all_in=True),
        wire.BetReturned(**hand_at(13), seat=BOT, amount=110),
        wire.BettingRoundEnded(**hand_at(14), round=1, pot=1000),
        wire.FourthTileDealt(**hand_at(15), seat=ME, tile=fourth.tile, opening=fourth),
        wire.FourthTileDealt(**hand_at(16), seat=BOT),
        wire.Showdown(**hand_at(17), hands=(shown(ME, sealed), shown(BOT, sealed))),
        wire.PotAwarded(
            **hand_at(18),
            amount=1000,
            eligible=(ME, BOT),
            shares=(SeatAmount(seat=won, amount=1000),),
        ),
        wire.HandEnded(
            **hand_at(19),
            stacks=tuple(SeatAmount(seat=s, amount=a) for s, a in after.items()),
        ),
    ]


def played_to(kind: type[wire.TableEvent], nth: int = 1) -> TableState:
    """A fresh table with the hand applied up to and including the ``nth`` ``kind`` event."""
    state = fresh()
    seen = 0
    for message in whole_hand():
        assert state.apply(message) is Applied.APPLIED
        if isinstance(message, kind):
            seen += 1
            if seen == nth:
                return state
    raise AssertionError(f"no {kind.__name__} number {nth} in the hand")


def chips_on_table(state: TableState) -> int:
    pot = state.hand.pot if state.hand is not None else 0
    return sum(s.stack for s in state.seats.values()) + pot


def event_at(seq: int) -> wire.TableEvent:
    """A harmless event (a reconnection) with the given ``seq``."""
    return wire.PlayerReconnected(**at(seq), seat=BOT)


def played(events: list[wire.TableEvent], state: TableState | None = None) -> TableState:
    state = fresh() if state is None else state
    for message in events:
        assert state.apply(message) is Applied.APPLIED, message
    return state


def replaced(events: list[wire.TableEvent], kind: type[wire.TableEvent], **fields: object) -> None:
    """Change the first ``kind`` event of ``events`` in place."""
    at_index = next(i for i, e in enumerate(events) if isinstance(e, kind))
    events[at_index] = events[at_index].model_copy(update=fields)
