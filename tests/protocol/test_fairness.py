"""The fair deal: the test vectors hold, every tampering is caught, the deck is uniform."""

from __future__ import annotations

import hashlib
import hmac
import json
import random
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qiuqiu.engine import ALL_TILES
from qiuqiu.protocol import DealTampered
from qiuqiu.protocol import fairness as f
from qiuqiu.protocol.common import Opening

VECTORS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "data" / "fairness-vectors.json").read_text()
)["cases"]


def seeds_of(case: dict[str, Any]) -> dict[int, str]:
    return {entry["seat"]: entry["client_seed"] for entry in case["client_seeds"]}


@pytest.mark.parametrize("case", VECTORS, ids=lambda case: case["table_id"])
def test_the_vectors_hold_at_every_step(case: dict[str, Any]) -> None:
    seeds = seeds_of(case)
    assert f.seed_commitment(case["table_seed"]) == case["seed_commitment"]
    seed = f.hand_seed(case["table_seed"], case["table_id"], case["hand_id"])
    assert seed == case["hand_seed"]
    assert f.deal_key(seed, seeds).hex() == case["deal_key"]
    assert f.Stream(bytes.fromhex(case["deal_key"])).take(64).hex() == case["stream_first_64_bytes"]
    deck = f.derive_deck(seed, seeds)
    assert list(deck.tiles) == case["deck"]
    assert list(deck.salts) == case["salts"]
    assert list(deck.leaves) == case["leaves"]
    assert deck.commitment == case["commitment"]
    positions = f.dealt_positions(tuple(seeds), case["button"])
    assert {str(k): list(v) for k, v in positions.items()} == case["dealt_positions"]


def test_the_first_vector_spelled_out_with_hashlib_alone() -> None:
    # What PROTOCOL.md tells another language to do, byte by byte.
    case = VECTORS[0]
    table_seed = bytes.fromhex(case["table_seed"])
    assert hashlib.sha256(table_seed).hexdigest() == case["seed_commitment"]
    message = b"t1\x00" + (1).to_bytes(8, "big")
    hand_seed = hmac.new(table_seed, message, hashlib.sha256).digest()
    assert hand_seed.hex() == case["hand_seed"]
    key = hmac.new(hand_seed, b"\x00\x00\x01\x00", hashlib.sha256).digest()
    assert key.hex() == case["deal_key"]
    block = hmac.new(key, bytes(8), hashlib.sha256).digest()
    assert case["salts"][0] == block[:16].hex()
    leaf = hashlib.sha256(b"\x00" + block[:16] + case["deck"][0].encode()).hexdigest()
    assert leaf == case["leaves"][0]
    leaves = b"".join(bytes.fromhex(x) for x in case["leaves"])
    assert hashlib.sha256(leaves).hexdigest() == case["commitment"]


# -- every tampering is caught ------------------------------------------------------

TABLE_SEED = "5f" * 32
SEEDS = {0: "ann-seed", 1: "", 3: "c0ffee"}
BUTTON = 3


def honest(hand_id: int = 1, seeds: dict[int, str] = SEEDS) -> tuple[f.SealedDeck, f.HandSeen]:
    """A hand as seat 0 sees it with seat 3 shown down: its own four openings and seat 3's."""
    deck = f.derive_deck(f.hand_seed(TABLE_SEED, "t1", hand_id), seeds)
    where = f.dealt_positions(tuple(seeds), BUTTON)
    seen = f.HandSeen(
        table_id="t1",
        hand_id=hand_id,
        button=BUTTON,
        commitment=deck.commitment,
        leaves=deck.leaves,
        client_seeds=seeds,
        openings={seat: [deck.opening(p) for p in where[seat]] for seat in (0, 3)},
    )
    return deck, seen


def with_opening(seen: f.HandSeen, seat: int, index: int, **change: Any) -> f.HandSeen:
    openings = {s: list(o) for s, o in seen.openings.items()}
    openings[seat][index] = openings[seat][index].model_copy(update=change)
    return f.HandSeen(**{**_fields(seen), "openings": openings})


def _fields(seen: f.HandSeen) -> dict[str, Any]:
    return {name: getattr(seen, name) for name in f.HandSeen.__dataclass_fields__}


class Crafted(f.Stream):
    """A stream of chosen bytes, to make the shuffle refuse draws where it will."""

    def __init__(self, data: bytes) -> None:
        super().__init__(b"")
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        self.at += n
        return self.data[self.at - n : self.at]


def shuffled_as_written(source: f.Stream) -> list[str]:
    """The shuffle as PROTOCOL.md words it, one draw at a time."""
    tiles = [str(t) for t in ALL_TILES]
    for i in range(len(tiles) - 1, 0, -1):
        n = i + 1
        while (u := int.from_bytes(source.take(4), "big")) >= 2**32 - 2**32 % n:
            pass
        j = u % n
        tiles[i], tiles[j] = tiles[j], tiles[i]
    return tiles


@given(
    draws=st.lists(
        st.one_of(st.integers(0, 2**32 - 1), st.just(2**32 - 1)), min_size=27 * 3, max_size=27 * 3
    )
)
def test_the_shuffle_reads_on_after_a_refused_draw_as_the_protocol_says(draws: list[int]) -> None:
    # 2**32 - 1 is refused by every step but those of 2, 4, 8 and 16 positions.
    data = b"".join(d.to_bytes(4, "big") for d in draws)
    assert f.shuffled(Crafted(data)) == shuffled_as_written(Crafted(data))


def test_stream_blocks_are_hmac_sha256_of_the_counter() -> None:
    key = bytes(range(32))
    blocks = b"".join(
        hmac.new(key, counter.to_bytes(8, "big"), hashlib.sha256).digest() for counter in range(5)
    )
    stream = f.Stream(key)
    assert stream.take(7) + stream.take(100) + stream.take(53) == blocks[:160]
    long_key = bytes(range(100))  # longer than SHA-256's block: hashed first, as HMAC does
    assert f.Stream(long_key).take(32) == hmac.new(long_key, bytes(8), hashlib.sha256).digest()


def test_every_seating_gets_its_own_positions_however_often_it_is_asked() -> None:
    seatings = [
        (seats, button)
        for n in range(2, 7)
        for seats in combinations(range(6), n)
        for button in seats
    ]

    def spelled_out(seats: tuple[int, ...], button: int) -> dict[int, tuple[int, ...]]:
        order = sorted(seats, key=lambda s: (s <= button, s))
        n = len(order)
        return {seat: (3 * i, 3 * i + 1, 3 * i + 2, 3 * n + i) for i, seat in enumerate(order)}

    for seatings_in_order in (seatings, seatings[::-1]):
        for seats, button in seatings_in_order:
            assert f.dealt_positions(seats, button) == spelled_out(seats, button)
    # Each answer is the caller's to change.
    f.dealt_positions((0, 1), 1).clear()
    assert f.dealt_positions((0, 1), 1) == {0: (0, 1, 2, 6), 1: (3, 4, 5, 7)}


def test_sealing_from_the_salts_bytes_makes_the_same_deck() -> None:
    deck, _ = honest()
    salts = [bytes.fromhex(salt) for salt in deck.salts]
    assert f.seal_salted(deck.tiles, salts) == f.seal(deck.tiles, deck.salts) == deck


def test_an_honest_hand_verifies_live_and_after_the_reveal() -> None:
    _, seen = honest()
    assert f.verify_hand(seen, my_seat=0, my_seeds=("ann-seed",)) == 8
    f.verify_reveal(seen, TABLE_SEED, f.seed_commitment(TABLE_SEED))


def test_a_dealer_bot_off_the_button_or_with_a_seed_is_caught() -> None:
    """The bot is the button and adds the empty seed. A seed listed for it is one the
    server chose knowing the players', though the deck rebuilds from it; a bot off the
    button was given the positions of a seat the server chose."""
    _, seen = honest(seeds={**SEEDS, BUTTON: ""})
    assert f.verify_hand(seen, bot_seat=BUTTON) == 8
    with pytest.raises(DealTampered, match="is not the button"):
        f.verify_hand(seen, bot_seat=1)
    _, seeded = honest()
    with pytest.raises(DealTampered, match="lists a seed"):
        f.verify_hand(seeded, bot_seat=BUTTON)
    f.verify_reveal(seeded, TABLE_SEED, f.seed_commitment(TABLE_SEED))


def test_a_hand_kept_without_its_leaves_is_held_to_its_commitment_at_the_reveal() -> None:
    deck, seen = honest()
    kept = f.HandSeen(**{**_fields(seen), "leaves": (), "openings": {}})
    f.verify_reveal(kept, TABLE_SEED, f.seed_commitment(TABLE_SEED))
    chosen = f.seal(tuple(reversed(deck.tiles)), deck.salts)
    stacked = f.HandSeen(**{**_fields(kept), "commitment": chosen.commitment})
    with pytest.raises(DealTampered, match="do not make this deck"):
        f.verify_reveal(stacked, TABLE_SEED, f.seed_commitment(TABLE_SEED))


@given(seat=st.sampled_from([0, 3]), index=st.integers(0, 3), tile=st.sampled_from(ALL_TILES))
def test_any_other_tile_at_a_position_is_caught(seat: int, index: int, tile: Any) -> None:
    _, seen = honest()
    opening = seen.openings[seat][index]
    if str(tile) == opening.tile:
        return
    with pytest.raises(DealTampered, match="does not open"):
        f.verify_hand(with_opening(seen, seat, index, tile=str(tile)))


@given(index=st.integers(0, 3), position=st.integers(0, 27))
def test_a_tile_opened_at_another_position_is_caught(index: int, position: int) -> None:
    _, seen = honest()
    if seen.openings[0][index].position == position:
        return
    with pytest.raises(DealTampered):
        f.verify_hand(with_opening(seen, 0, index, position=position))


@given(index=st.integers(0, 3), bit=st.integers(0, 127))
def test_any_flipped_bit_of_a_salt_is_caught(index: int, bit: int) -> None:
    _, seen = honest()
    salt = int(seen.openings[0][index].salt, 16) ^ (1 << bit)
    with pytest.raises(DealTampered, match="does not open"):
        f.verify_hand(with_opening(seen, 0, index, salt=f"{salt:032x}"))


@given(position=st.integers(0, 27), bit=st.integers(0, 255))
def test_a_changed_leaf_is_caught_by_the_commitment(position: int, bit: int) -> None:
    _, seen = honest()
    leaves = list(seen.leaves)
    leaves[position] = f"{int(leaves[position], 16) ^ (1 << bit):064x}"
    with pytest.raises(DealTampered, match="commitment"):
        f.verify_hand(f.HandSeen(**{**_fields(seen), "leaves": tuple(leaves)}))


def _uneven(leaves: list[str]) -> list[str]:
    # One hex digit moved from the second leaf to the first: the same text, joined.
    return [leaves[0] + leaves[1][0], leaves[1][1:], *leaves[2:]]


@pytest.mark.parametrize(
    "change",
    [
        lambda leaves: leaves[:-1],
        lambda leaves: [*leaves, leaves[0]],
        lambda leaves: [leaves[0].upper(), *leaves[1:]],
        lambda leaves: [leaves[0] + "\n", *leaves[1:]],
        lambda leaves: [leaves[0][:-1], *leaves[1:]],
        lambda leaves: [leaves[0] + "0", *leaves[1:]],
        _uneven,
    ],
    ids=["27", "29", "uppercase", "newline", "short", "long", "uneven"],
)
def test_leaves_that_are_not_28_hashes_in_hex_are_refused(change: Any) -> None:
    _, seen = honest()
    leaves = tuple(change(list(seen.leaves)))
    with pytest.raises(DealTampered, match="did not commit to 28 positions"):
        f.verify_hand(f.HandSeen(**{**_fields(seen), "leaves": leaves}))


def test_a_tile_dealt_twice_is_caught() -> None:
    # A server that seals one tile at two positions, and opens both to two seats.
    deck, seen = honest()
    where = f.dealt_positions(tuple(SEEDS), BUTTON)
    tiles = list(deck.tiles)
    tiles[where[3][0]] = tiles[where[0][0]]
    forged = f.seal(tiles, deck.salts)
    openings = {seat: [forged.opening(p) for p in where[seat]] for seat in (0, 3)}
    twice = f.HandSeen(
        **{
            **_fields(seen),
            "commitment": forged.commitment,
            "leaves": forged.leaves,
            "openings": openings,
        }
    )
    with pytest.raises(DealTampered, match="dealt twice"):
        f.verify_hand(twice)


def test_a_seed_the_client_never_sent_is_caught() -> None:
    _, seen = honest()
    with pytest.raises(DealTampered, match="this client's seed"):
        f.verify_hand(seen, my_seat=0, my_seeds=("another",))


@given(
    seat=st.sampled_from(sorted(SEEDS)), seed=st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True)
)
@settings(max_examples=30)
def test_any_change_to_a_client_seed_is_caught_at_the_reveal(seat: int, seed: str) -> None:
    if SEEDS[seat] == seed:
        return
    _, seen = honest()
    listed = f.HandSeen(**{**_fields(seen), "client_seeds": {**SEEDS, seat: seed}})
    with pytest.raises(DealTampered, match="do not make this deck"):
        f.verify_reveal(listed, TABLE_SEED, f.seed_commitment(TABLE_SEED))


@given(bit=st.integers(0, 255))
@settings(max_examples=30)
def test_any_other_table_seed_is_caught_at_the_reveal(bit: int) -> None:
    _, seen = honest()
    other = f"{int(TABLE_SEED, 16) ^ (1 << bit):064x}"
    with pytest.raises(DealTampered, match="not the one committed"):
        f.verify_reveal(seen, other, f.seed_commitment(TABLE_SEED))
    # Even one committed to honestly does not make another table's decks.
    with pytest.raises(DealTampered, match="do not make this deck"):
        f.verify_reveal(seen, other, f.seed_commitment(other))


def test_a_deck_the_server_chose_passes_live_and_fails_at_the_reveal() -> None:
    deck, seen = honest()
    chosen = f.seal(tuple(reversed(deck.tiles)), deck.salts)
    where = f.dealt_positions(tuple(SEEDS), BUTTON)
    stacked = f.HandSeen(
        **{
            **_fields(seen),
            "commitment": chosen.commitment,
            "leaves": chosen.leaves,
            "openings": {s: [chosen.opening(p) for p in where[s]] for s in (0, 3)},
        }
    )
    assert f.verify_hand(stacked, my_seat=0, my_seeds=("ann-seed",)) == 8
    with pytest.raises(DealTampered, match="do not make this deck"):
        f.verify_reveal(stacked, TABLE_SEED, f.seed_commitment(TABLE_SEED))


def test_openings_of_a_seat_never_dealt_or_not_its_own_are_caught() -> None:
    deck, seen = honest()
    stranger = {**seen.openings, 2: [deck.opening(27)]}
    with pytest.raises(DealTampered, match="never dealt"):
        f.verify_hand(f.HandSeen(**{**_fields(seen), "openings": stranger}))
    undealt = {**seen.openings, 0: [deck.opening(27)]}
    with pytest.raises(DealTampered, match="not its own"):
        f.verify_hand(f.HandSeen(**{**_fields(seen), "openings": undealt}))


def test_hand_ids_tables_and_client_seeds_each_change_the_deck() -> None:
    base = f.derive_deck(f.hand_seed(TABLE_SEED, "t1", 1), SEEDS)
    assert f.derive_deck(f.hand_seed(TABLE_SEED, "t1", 2), SEEDS).tiles != base.tiles
    assert f.derive_deck(f.hand_seed(TABLE_SEED, "t2", 1), SEEDS).tiles != base.tiles
    other = {**SEEDS, 1: "x"}
    assert f.derive_deck(f.hand_seed(TABLE_SEED, "t1", 1), other).tiles != base.tiles


def test_client_seeds_outside_the_alphabet_are_refused() -> None:
    for bad in ("has space", "é", "x" * 65, "seed\n"):
        with pytest.raises(ValueError, match="a client seed is"):
            f.deal_key("00" * 32, {0: bad})
    assert f.valid_client_seed("A-z_09")
    assert not f.valid_client_seed("")
    assert not f.valid_client_seed("seed\n")


def test_a_seed_with_anything_after_its_64_hex_digits_is_refused() -> None:
    with pytest.raises(ValueError, match="a seed is 32 bytes"):
        f.hand_seed(TABLE_SEED + "\n", "t1", 1)
    _, seen = honest()
    with pytest.raises(DealTampered, match="not the one committed"):
        f.verify_reveal(seen, TABLE_SEED + "\n", f.seed_commitment(TABLE_SEED))


def test_an_opening_is_the_wire_model() -> None:
    deck, _ = honest()
    assert deck.opening(5) == Opening(position=5, tile=deck.tiles[5], salt=deck.salts[5])


# -- the deck is uniform ---------------------------------------------------------------

DECKS = 28_000
MEAN_LIMIT = 1.21
"""Each cell's chi-square over 28 counts (27 degrees of freedom) divided by 27 has mean 1
and spread 0.27; the mean of 28 of them spreads by 0.05: four spreads above is 1.21."""
MAX_LIMIT = 2.52
"""A single chi-square over 27 degrees of freedom above 68 (2.52 times 27) has a
chance near 1e-5."""


def chi_squares(decks: list[tuple[str, ...]]) -> tuple[list[float], list[float]]:
    """Each position's chi-square over the tiles, and each tile's over the positions, / 27."""
    counts = [Counter[str]() for _ in range(28)]
    for deck in decks:
        for position, tile in enumerate(deck):
            counts[position][tile] += 1
    expected = len(decks) / 28

    def cell(p: int, t: str) -> float:
        return (counts[p][t] - expected) ** 2 / expected

    tiles = [str(t) for t in ALL_TILES]
    per_position = [sum(cell(p, t) for t in tiles) / 27 for p in range(28)]
    per_tile = [sum(cell(p, t) for p in range(28)) / 27 for t in tiles]
    return per_position, per_tile


def uniform(decks: list[tuple[str, ...]]) -> bool:
    per_position, per_tile = chi_squares(decks)
    return all(
        sum(values) / 28 < MEAN_LIMIT and max(values) < MAX_LIMIT
        for values in (per_position, per_tile)
    )


def test_every_tile_is_equally_likely_at_every_position() -> None:
    rng = random.Random(2026)
    decks = [
        f.derive_deck(
            f.hand_seed(TABLE_SEED, "chi", hand_id), {0: f"{rng.getrandbits(64):x}", 1: ""}
        ).tiles
        for hand_id in range(1, DECKS + 1)
    ]
    assert uniform(decks)


def test_the_uniformity_check_catches_a_classic_biased_shuffle() -> None:
    # Swapping each position with any position (not one at or below it) is the
    # textbook biased shuffle: the check must see it, or it proves nothing.
    rng = random.Random(2026)
    decks = []
    for _ in range(DECKS):
        tiles = [str(t) for t in ALL_TILES]
        for i in range(28):
            j = rng.randrange(28)
            tiles[i], tiles[j] = tiles[j], tiles[i]
        decks.append(tuple(tiles))
    assert not uniform(decks)
