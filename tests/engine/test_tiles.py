import copy
import pickle
import random

import pytest

from qiuqiu.engine import (
    ALL_TILES,
    Hand,
    InvalidTiles,
    Tile,
    parse_hand,
    parse_tiles,
    shuffled_deck,
)


def test_there_are_28_tiles_each_pair_of_spots_once() -> None:
    assert len(ALL_TILES) == 28
    assert {(t.high, t.low) for t in ALL_TILES} == {(a, b) for a in range(7) for b in range(a + 1)}


@pytest.mark.parametrize("text", ["6-1", "1-6", " 6-1 "])
def test_a_tile_reads_in_either_order_and_prints_high_end_first(text: str) -> None:
    tile = Tile.parse(text)
    assert str(tile) == "6-1"
    assert (tile.high, tile.low, tile.spots) == (6, 1, 7)


def test_parsing_gives_the_one_object_for_each_domino() -> None:
    assert Tile.parse("3-5") is Tile.parse("5-3")


@pytest.mark.parametrize("text", ["7-1", "6-", "-1", "61", "a-b", "6-1-0", "", "6--1", "+6-1"])
def test_an_unknown_tile_is_refused_with_a_clear_error(text: str) -> None:
    with pytest.raises(InvalidTiles, match="unknown tile"):
        Tile.parse(text)


def test_a_duplicate_tile_is_refused_even_written_the_other_way_round() -> None:
    with pytest.raises(InvalidTiles, match="6-1 appears twice"):
        parse_tiles("6-1 5-0 1-6")


@pytest.mark.parametrize("text", ["6-1 5-0 4-4", "6-1 5-0 4-4 3-3 2-2", ""])
def test_a_hand_holds_exactly_four_tiles(text: str) -> None:
    with pytest.raises(InvalidTiles, match="exactly 4 tiles"):
        parse_hand(text)


def test_a_hand_lists_its_tiles_strongest_first_and_compares_by_content() -> None:
    hand = parse_hand("3-1, 6-6, 5-0, 5-2")
    assert str(hand) == "6-6 5-2 5-0 3-1"
    assert hand == parse_hand("5-2 3-1 5-0 6-6")
    assert hand.spots == 4 + 12 + 5 + 7


def test_tile_strength_puts_doubles_first_then_spots_then_the_higher_end() -> None:
    ordered = sorted(ALL_TILES, key=lambda t: t.strength, reverse=True)
    assert [str(t) for t in ordered[:8]] == ["6-6", "5-5", "4-4", "3-3", "2-2", "1-1", "0-0", "6-5"]
    assert ordered.index(Tile.parse("6-2")) < ordered.index(Tile.parse("5-3"))
    assert len({t.strength for t in ALL_TILES}) == 28


def test_copies_and_pickles_of_a_tile_are_the_same_tile() -> None:
    tile = Tile.parse("4-2")
    assert copy.deepcopy(tile) is tile
    assert pickle.loads(pickle.dumps(tile)) is tile
    hand = parse_hand("4-2 6-6 0-0 1-0")
    assert pickle.loads(pickle.dumps(hand)) == hand


def test_a_shuffled_deck_is_a_permutation_drawn_from_the_given_rng() -> None:
    deck = shuffled_deck(random.Random(7))
    assert sorted(t.index for t in deck) == list(range(28))
    assert deck == shuffled_deck(random.Random(7))
    assert deck != shuffled_deck(random.Random(8))


def test_hands_are_hashable_and_equal_hands_collide() -> None:
    assert len({parse_hand("6-6 5-5 4-4 3-3"), Hand(parse_tiles("3-3 4-4 5-5 6-6"))}) == 1
