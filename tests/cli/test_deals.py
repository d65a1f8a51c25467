"""``TableDeals``: the full shuffle rebuilt from the revealed table seed, from the hands
this client kept and from ``list_hands``, with decks a server would really deal."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

import pytest

from qiuqiu.cli.deals import DealChecked, ShuffleVerified, TableDeals, fresh_seed, hand_seen
from qiuqiu.cli.game import TableState
from qiuqiu.engine import ALL_TILES
from qiuqiu.protocol import DealTampered, SeatAmount, fairness
from qiuqiu.protocol import server as wire
from tests.cli.game_helpers import (
    BOT,
    CLIENT_SEEDS,
    HAND,
    ME,
    SEALED,
    SEED_COMMITMENT,
    START,
    TABLE,
    TABLE_SEED,
    fresh,
    played,
    seat_seeds,
    whole_hand,
)


def kept_after(events: list[wire.TableEvent]) -> TableState:
    state = played(events)
    assert state.deals.tampered is None
    return state


def history(events: list[wire.TableEvent], table_seed: str | None = TABLE_SEED) -> wire.PlayedHand:
    """The hand as ``list_hands`` gives it: the events a spectator got, no own tiles."""
    spectator: list[dict[str, Any]] = []
    for event in events:
        if isinstance(event, wire.TilesDealt | wire.FourthTileDealt):
            event = type(event)(
                table_id=event.table_id, seq=event.seq, hand_id=event.hand_id, seat=event.seat
            )
        spectator.append(event.model_dump(mode="json", exclude_none=True))
    return wire.PlayedHand(
        table_id=TABLE,
        hand_id=HAND,
        voided=False,
        seats=(),
        events=tuple(spectator),
        table_seed=table_seed,
    )


def test_the_revealed_seed_rebuilds_every_kept_hand() -> None:
    state = kept_after(whole_hand())
    assert state.deals.reveal(TABLE_SEED) == ShuffleVerified(1)
    assert state.deals.shuffle == ShuffleVerified(1)
    assert state.deals.table_seed == TABLE_SEED
    assert not state.deals.kept
    # The same seed again (table_closed, then list_hands) counts each hand once.
    assert state.deals.reveal(TABLE_SEED, [history(whole_hand())]) == ShuffleVerified(1)


def test_a_kept_hand_holds_what_the_seed_rebuilds_and_not_the_openings_checked() -> None:
    state = kept_after(whole_hand())
    kept = state.deals.kept[HAND]
    # A client may keep thousands of hands: their openings and leaves were checked as each
    # ended, and the commitment stands for the leaves.
    assert kept.openings == {}
    assert kept.leaves == ()
    assert kept.commitment == SEALED.commitment


def test_a_seed_that_is_not_the_one_committed_to_is_caught() -> None:
    state = kept_after(whole_hand())
    with pytest.raises(DealTampered, match="not the one committed to"):
        state.deals.reveal(hashlib.sha256(b"another table").hexdigest())
    assert state.deals.tampered is not None
    assert state.deals.shuffle is None


def test_a_deck_made_without_the_listed_client_seeds_is_caught_only_at_the_reveal() -> None:
    ignored = fairness.derive_deck(fairness.hand_seed(TABLE_SEED, TABLE, HAND), {})
    state = kept_after(whole_hand(ignored, CLIENT_SEEDS))
    with pytest.raises(DealTampered, match="do not make this deck") as caught:
        state.deals.reveal(TABLE_SEED)
    assert caught.value.hand_id == HAND


def test_a_deck_of_the_servers_choosing_is_caught_only_at_the_reveal() -> None:
    salts = [secrets.token_hex(fairness.SALT_BYTES) for _ in ALL_TILES]
    chosen = fairness.seal([str(t) for t in ALL_TILES], salts)
    state = kept_after(whole_hand(chosen))
    with pytest.raises(DealTampered, match="do not make this deck"):
        state.deals.reveal(TABLE_SEED)


def test_the_history_of_a_table_left_is_rebuilt_and_its_showdown_checked() -> None:
    """A client that kept nothing (a new process) still checks what a spectator saw."""
    deals = TableDeals(TABLE, seed_commitment=SEED_COMMITMENT)
    assert deals.reveal(TABLE_SEED, [history(whole_hand())]) == ShuffleVerified(1)


def test_a_history_that_is_not_the_hand_this_client_was_dealt_is_caught() -> None:
    state = kept_after(whole_hand())
    seeds = {0: "", 1: ""}
    other = fairness.derive_deck(fairness.hand_seed(TABLE_SEED, TABLE, HAND), seeds)
    with pytest.raises(DealTampered, match="history is not the hand dealt"):
        state.deals.reveal(TABLE_SEED, [history(whole_hand(other, seeds))])


def test_a_history_rewritten_after_the_close_is_caught_too() -> None:
    state = kept_after(whole_hand())
    state.deals.reveal(TABLE_SEED)  # table_closed: the kept hands are let go
    seeds = {0: "", 1: ""}
    other = fairness.derive_deck(fairness.hand_seed(TABLE_SEED, TABLE, HAND), seeds)
    with pytest.raises(DealTampered, match="history is not the hand dealt"):
        state.deals.reveal(TABLE_SEED, [history(whole_hand(other, seeds))])


def test_a_history_with_another_seed_is_caught() -> None:
    state = kept_after(whole_hand())
    other = hashlib.sha256(b"two").hexdigest()
    with pytest.raises(DealTampered, match="two different seeds"):
        state.deals.reveal(TABLE_SEED, [history(whole_hand(), table_seed=other)])


def test_a_history_hand_voided_without_events_is_skipped() -> None:
    voided = wire.PlayedHand(table_id=TABLE, hand_id=2, voided=True, seats=(), events=())
    assert hand_seen(voided) is None


def test_a_client_that_made_the_deals_itself_keeps_and_checks_none() -> None:
    state = fresh()
    state.deals.checking = False
    tampered = whole_hand(seeds={0: "not-the-seed-dealt-with", 1: ""})
    played(tampered, state)
    assert state.hand is not None
    assert state.hand.deal_check is None
    assert state.deals.tampered is None
    assert not state.deals.kept
    assert not state.deals.checks


def test_the_seed_commitment_may_not_change_while_the_table_is_open() -> None:
    state = fresh()
    state.deals.committed(hashlib.sha256(b"a new table seed").hexdigest())
    assert state.deals.tampered is not None
    assert state.deals.tampered.reason == "the table's seed commitment changed while open"


def test_a_fresh_seed_is_32_random_bytes_in_hex_and_a_valid_client_seed() -> None:
    seeds = {fresh_seed() for _ in range(10)}
    assert len(seeds) == 10
    assert all(len(s) == 64 and fairness.valid_client_seed(s) for s in seeds)


# -- a seat whose seed this client does not know (resumed by a new process) ------------

OLD_SEED = "sent-by-the-process-before"
NEW_SEED = "sent-by-this-process"


def dealt_with(hand_id: int, my_seed: str) -> wire.HandStarted:
    """Hand ``hand_id`` as an honest server starts it with ``my_seed`` for this seat."""
    seeds = {ME: my_seed, BOT: ""}
    sealed = fairness.derive_deck(fairness.hand_seed(TABLE_SEED, TABLE, hand_id), seeds)
    return wire.HandStarted(
        table_id=TABLE,
        seq=hand_id * 20,
        hand_id=hand_id,
        button=BOT,
        stacks=tuple(SeatAmount(seat=seat, amount=stack) for seat, stack in START.items()),
        commitment=sealed.commitment,
        leaves=sealed.leaves,
        client_seeds=seat_seeds(seeds),
    )


def check(deals: TableDeals, hand_id: int, my_seed: str) -> DealChecked | DealTampered | None:
    deals.start_hand(dealt_with(hand_id, my_seed), ME)
    return deals.end_hand(hand_id)


def test_a_resumed_seat_takes_one_hand_dealt_without_its_new_seed_before_seed_set() -> None:
    """A server that never answers ``set_seed`` could list a seed of its own choosing in
    every hand: only the hand it was writing as the seed came may have another seed."""
    honest = fresh(my_seed=None).deals
    honest.sent_seed(NEW_SEED)
    assert isinstance(check(honest, 1, OLD_SEED), DealChecked)
    honest.seed_set(NEW_SEED)
    assert check(honest, 2, NEW_SEED) == DealChecked(tiles=0, own_seed=True)
    assert honest.tampered is None

    deals = fresh(my_seed=None).deals
    assert isinstance(check(deals, 1, OLD_SEED), DealChecked)  # before any set_seed
    deals.sent_seed(NEW_SEED)
    assert isinstance(check(deals, 2, OLD_SEED), DealChecked)
    failed = check(deals, 3, OLD_SEED)
    assert isinstance(failed, DealTampered)
    assert failed.hand_id == 3
    assert failed.reason == (
        "a second hand was dealt without the seed this client sent, "
        "which the server never confirmed"
    )
    assert deals.tampered == failed


def test_a_refused_set_seed_starts_the_count_again_with_the_next_one() -> None:
    """An honest server's refusal (``store_unavailable``, ``outcome_unknown``) or a
    connection lost leaves the old seed in the next hands; sent again, the seed may
    still miss the hand being written then, and no more."""
    deals = fresh(my_seed=None).deals
    deals.sent_seed(NEW_SEED)
    assert isinstance(check(deals, 1, OLD_SEED), DealChecked)
    deals.seed_unanswered()
    assert isinstance(check(deals, 2, OLD_SEED), DealChecked)
    deals.sent_seed(NEW_SEED)
    assert isinstance(check(deals, 3, OLD_SEED), DealChecked)
    # Sent again on the same connection: the first one's seed_set still comes.
    deals.sent_seed(NEW_SEED)
    assert isinstance(check(deals, 4, OLD_SEED), DealTampered)
