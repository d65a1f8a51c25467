"""Commit-reveal: a client in any language must reach the same hash, and no other deal may."""

from __future__ import annotations

import hashlib

import pytest

from qiuqiu.engine import ALL_TILES, parse_tiles
from qiuqiu.protocol import commitment, verify_deal

SEED = "795b929e9a9a80fdea7b5bf55eb561a4216363698b529b4a97b750923ceb3ffd"
DECK = tuple(
    str(tile)
    for tile in parse_tiles(
        "4-1 2-1 3-3 1-0 6-3 6-2 2-2 6-5 6-0 5-1 4-4 2-0 6-4 4-3 "
        "4-0 4-2 6-6 6-1 3-0 3-1 5-2 3-2 5-0 0-0 5-4 1-1 5-3 5-5"
    )
)
COMMITMENT = "cd0022d8578ee8da4bb59f02ee2a893e17c1c6663fb499431860309b4a5cf2a9"
"""A real hand of the server (PROTOCOL.md's walkthrough): pinned, so the definition never moves."""


def test_the_commitment_of_a_real_hand_is_pinned() -> None:
    assert commitment(SEED, DECK) == COMMITMENT
    assert verify_deal(COMMITMENT, SEED, DECK)


def test_the_commitment_is_sha256_of_the_seed_bytes_then_the_tiles_joined_by_commas() -> None:
    # Spelled out byte by byte, as PROTOCOL.md tells other languages to compute it.
    deck = [str(tile) for tile in ALL_TILES]
    data = bytes(32) + b"0-0,1-0,1-1,2-0,2-1,2-2,3-0,3-1,3-2,3-3,4-0,4-1,4-2,4-3,4-4,5-0,5-1,5-2,"
    data += b"5-3,5-4,5-5,6-0,6-1,6-2,6-3,6-4,6-5,6-6"
    assert commitment("00" * 32, deck) == hashlib.sha256(data).hexdigest()


def test_swapping_two_tiles_of_the_deck_fails_the_check() -> None:
    swapped = list(DECK)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    assert not verify_deal(COMMITMENT, SEED, swapped)


@pytest.mark.parametrize("position", [0, 13, 27])
def test_any_other_tile_anywhere_fails_the_check(position: int) -> None:
    for tile in ALL_TILES:
        if str(tile) != DECK[position]:
            changed = [*DECK[:position], str(tile), *DECK[position + 1 :]]
            assert not verify_deal(COMMITMENT, SEED, changed)


def test_a_shorter_or_longer_deck_fails_the_check() -> None:
    assert not verify_deal(COMMITMENT, SEED, DECK[:-1])
    assert not verify_deal(COMMITMENT, SEED, [*DECK, "0-0"])


def test_a_changed_seed_fails_the_check() -> None:
    flipped = SEED[:-1] + ("e" if SEED[-1] != "e" else "f")
    assert not verify_deal(COMMITMENT, flipped, DECK)
    assert not verify_deal(COMMITMENT, "00" * 32, DECK)


@pytest.mark.parametrize("seed", ["not hex", "abc", "é" * 64])
def test_a_seed_that_is_not_hex_fails_the_check_without_raising(seed: str) -> None:
    assert not verify_deal(COMMITMENT, seed, DECK)


def test_a_deck_with_text_that_is_not_ascii_fails_the_check_without_raising() -> None:
    assert not verify_deal(COMMITMENT, SEED, ["6\u20131", *DECK[1:]])
