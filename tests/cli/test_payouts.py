"""Every client holds the server to the chips it pays: a hand replayed with the engine
from what the seat saw must end with the stacks ``hand_ended`` says."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable

import pytest

from qiuqiu.cli.bot import Action, Bet, Bot, Call, Check, Fold, Raise, Split, Turn, play
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.deals import DealChecked, TableDeals
from qiuqiu.cli.game import TableState
from qiuqiu.cli.payouts import PaidWrong, verify_history
from qiuqiu.protocol import DealTampered, TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import SeatAmount
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.conftest import CONFIG
from tests.cli.game_helpers import (
    BOT,
    ME,
    MY_TILES,
    SEALED,
    SEED_COMMITMENT,
    TABLE,
    TABLE_SEED,
    TOTAL,
    WHERE,
    fresh,
    hand_view,
    seat_view,
    snapshot,
    whole_hand,
    winner,
)
from tests.cli.test_deals import history

Edit = Callable[[wire.TableEvent], wire.TableEvent]


def played(edit: Edit = lambda event: event, state: TableState | None = None) -> TableState:
    """The fixture's hand (this client all in against the bot, a showdown for 1,000)
    applied to ``state`` with each event passed through ``edit`` first."""
    state = fresh() if state is None else state
    for event in whole_hand():
        state.apply(edit(event))
    return state


def paid_to(seat: int) -> Edit:
    """The showdown's pot paid to ``seat``, and the hand's end saying so."""

    def edit(event: wire.TableEvent) -> wire.TableEvent:
        if isinstance(event, wire.PotAwarded):
            return event.model_copy(update={"shares": (SeatAmount(seat=seat, amount=1000),)})
        if isinstance(event, wire.HandEnded):
            after = {ME: 0, BOT: 500}
            after[seat] += 1000
            stacks = tuple(SeatAmount(seat=s, amount=a) for s, a in after.items())
            return event.model_copy(update={"stacks": stacks})
        return event

    return edit


def check_of(state: TableState) -> object:
    assert state.hand is not None
    return state.hand.deal_check


def test_a_hand_paid_as_the_rules_say_passes() -> None:
    state = played()
    check = check_of(state)
    assert isinstance(check, DealChecked)
    assert check.paid
    assert state.deals.tampered is None
    assert sum(s.stack for s in state.seats.values()) == TOTAL


def test_a_pot_paid_to_the_hand_that_lost_is_caught() -> None:
    loser = ME if winner() == BOT else BOT
    state = played(paid_to(loser))
    check = check_of(state)
    assert isinstance(check, PaidWrong)
    assert "the pot was not paid as the rules say" in check.reason
    assert f"seat {loser} 1000" in check.reason or f"seat {loser} 1500" in check.reason
    assert state.deals.tampered is check


def test_a_bet_not_given_back_is_caught_though_every_chip_is_accounted_for() -> None:
    """The bot's unmatched 110 paid to the other seat: the stacks still sum to what the
    table holds, so only the rules can tell."""

    def skim(event: wire.TableEvent) -> wire.TableEvent:
        if isinstance(event, wire.HandEnded):
            after = {ME: 110, BOT: 500 - 110}
            after[winner()] += 1000
            stacks = tuple(SeatAmount(seat=s, amount=a) for s, a in after.items())
            return event.model_copy(update={"stacks": stacks})
        return event

    check = check_of(played(skim))
    assert isinstance(check, DealTampered)
    assert "not paid as the rules say" in check.reason


def test_a_hand_still_in_that_the_showdown_hides_is_caught() -> None:
    """A hand left out of the showdown would be judged by whatever tiles the check's own
    deck gives it; here those win as the hidden ones did, so only the showdown can tell."""

    def hidden(event: wire.TableEvent) -> wire.TableEvent:
        if isinstance(event, wire.Showdown):
            hands = tuple(hand for hand in event.hands if hand.seat != winner())
            return event.model_copy(update={"hands": hands})
        return event

    check = check_of(played(hidden))
    assert isinstance(check, PaidWrong)
    assert f"seat {winner()} was still in, and the showdown hid its hand" in check.reason


def test_a_raise_the_rules_do_not_allow_is_caught() -> None:
    def small(event: wire.TableEvent) -> wire.TableEvent:
        if isinstance(event, wire.Raised):  # a raise to 60 over a bet of 50: too small
            return event.model_copy(update={"to": 60, "amount": 60})
        return event

    check = check_of(played(small))
    assert isinstance(check, DealTampered)
    assert "breaks the rules" in check.reason


def test_a_button_at_no_seat_of_the_hand_is_caught_not_raised() -> None:
    with pytest.raises(PaidWrong, match="breaks the rules"):
        verify_history(
            TableOptions(),
            paid_history(
                lambda event: (
                    event.model_copy(update={"button": 5})
                    if isinstance(event, wire.HandStarted)
                    else event
                )
            ),
        )


def test_a_hand_seen_from_a_snapshot_is_not_held_to_moves_it_did_not_see() -> None:
    """Back mid-hand, the client does not know the betting before its snapshot: no
    payout check, however the hand was paid."""
    events = whole_hand()
    mine = tuple(SEALED.opening(p) for p in WHERE[ME][:3])
    seats = (
        seat_view(ME, 490, in_hand=True, tile_count=3, tiles=MY_TILES[:3], openings=mine),
        seat_view(BOT, 990, in_hand=True, tile_count=3),
    )
    state = TableState.from_snapshot(
        snapshot(6, seats=seats, hand=hand_view(pot=20, current_bet=0))
    )
    loser = ME if winner() == BOT else BOT
    for event in events[6:]:
        state.apply(paid_to(loser)(event))
    check = check_of(state)
    assert isinstance(check, DealChecked)
    assert not check.paid


@pytest.mark.parametrize("seat", [ME, BOT])
def test_the_winner_is_paid_whatever_seat_it_sits_in(seat: int) -> None:
    state = played(paid_to(seat))
    assert (state.deals.tampered is None) == (seat == winner())


# -- the history of a table --------------------------------------------------------------


def paid_history(edit: Edit = lambda event: event) -> wire.PlayedHand:
    return history([edit(event) for event in whole_hand()])


def test_a_hand_of_the_history_is_paid_again_by_the_rules() -> None:
    verify_history(TableOptions(), paid_history())
    loser = ME if winner() == BOT else BOT
    with pytest.raises(PaidWrong, match="not paid as the rules say"):
        verify_history(TableOptions(), paid_history(paid_to(loser)))


def test_a_history_that_does_not_say_how_the_hand_ended_fails() -> None:
    cut_short = history(whole_hand()[:-1])
    with pytest.raises(PaidWrong, match="does not say how it was paid"):
        verify_history(TableOptions(), cut_short)


def test_the_shuffle_of_a_closed_table_is_checked_with_its_payouts() -> None:
    """A client that saw the table (its snapshot says its options) checks the history's
    payouts as it rebuilds the decks; one that never saw them checks only the decks."""
    loser = ME if winner() == BOT else BOT
    seen = fresh()
    with pytest.raises(PaidWrong):
        seen.deals.reveal(TABLE_SEED, [paid_history(paid_to(loser))])
    assert isinstance(seen.deals.tampered, PaidWrong)
    unseen = TableDeals(TABLE, seed_commitment=SEED_COMMITMENT)
    assert unseen.reveal(TABLE_SEED, [paid_history(paid_to(loser))]).hands == 1


# -- real hands, paid by a real server -----------------------------------------------------


class Wild(Bot):
    """Any legal action at random, now and then all in; at a table where players cut,
    any of the three cuts: the hands a payout check must not call wrong, side pots
    and split pots among them."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def decide(self, turn: Turn) -> Action:
        legal, rng = turn.legal, self.rng
        choices: list[Action] = []
        if legal.check:
            choices.append(Check())
        if legal.call is not None:
            choices.append(Call())
        if legal.fold and rng.random() < 0.3:
            choices.append(Fold())
        shove = rng.random() < 0.15
        if legal.bet is not None:
            low, high = legal.bet.min, legal.bet.max
            choices.append(Bet(high if shove else min(high, low * rng.randint(1, 10))))
        if legal.raise_to is not None:
            low, high = legal.raise_to.min, legal.raise_to.max
            choices.append(Raise(high if shove else min(high, low + rng.randint(0, 100))))
        return rng.choice(choices)

    def cut(self, turn: Turn) -> Split:
        a, b, c, d = (str(tile) for tile in turn.tiles)
        first, second = self.rng.choice((((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))))
        return Split(first, second)


RICH = CONFIG.model_copy(update={"starting_balance": 10_000})
HANDS = 30
STACKS = (200, 600, 1500, 3000)


@pytest.mark.parametrize("config", [RICH])
@pytest.mark.parametrize(
    "options",
    [
        TableOptions(seats=4, dealer_bot=False, min_players=2),
        TableOptions(
            seats=4,
            dealer_bot=False,
            min_players=2,
            betting_rounds=2,
            manual_split=True,
            tie_rule="split",
        ),
    ],
    ids=["one-round", "two-rounds-cut-split-ties"],
)
async def test_wild_hands_at_a_real_table_are_all_paid_as_the_rules_say(
    server: QiuQiuServer, options: TableOptions
) -> None:
    """Four players at random, of four stack sizes: every hand a player saw whole is
    checked, and none is called wrongly paid."""
    async with contextlib.AsyncExitStack() as stack:
        conns = [
            await stack.enter_async_context(await Connection.open(server.url, name=f"P{n}"))
            for n in range(len(STACKS))
        ]
        table, _ = await conns[0].open_table(options, buy_in=STACKS[0])
        for conn, chips in zip(conns[1:], STACKS[1:], strict=True):
            await conn.join_table(table.table_id, buy_in=chips)
        plays = [
            asyncio.create_task(play(Wild(n), conn, table.table_id)) for n, conn in enumerate(conns)
        ]
        try:
            # Until the table has played its hands, or all but one player went bust.
            async with asyncio.timeout(60):
                while (
                    len(await server.store.table_hands(table.table_id)) < HANDS
                    and sum(not p.done() for p in plays) > 1
                ):
                    await asyncio.sleep(0.05)
        finally:
            for task in plays:
                task.cancel()
        for task in plays:
            with contextlib.suppress(asyncio.CancelledError):
                await task  # a PaidWrong, or any failure, raises here
        checks = [
            check for conn in conns for check in conn.deals_of(table.table_id).checks.values()
        ]
    assert all(isinstance(check, DealChecked) for check in checks), checks
    # A hand under way as a player sat down was seen from a snapshot: not checked.
    paid = sum(isinstance(check, DealChecked) and check.paid for check in checks)
    hands = await server.store.table_hands(table.table_id)
    assert paid >= 2 * (len(hands) - 1)
    pots = [sum('"pot_awarded"' in frame for frame in hand.events) for hand in hands]
    assert max(pots) >= 2, "a side pot"
