from collections import Counter
from itertools import combinations, pairwise

import pytest

from qiuqiu.engine import (
    ALL_TILES,
    Category,
    Cut,
    Hand,
    InvalidRules,
    InvalidTiles,
    Tile,
    all_ranks,
    compare,
    cut_with,
    cuts,
    pair_value,
    parse_hand,
    parse_tiles,
    rank,
    rank_with_cut,
)
from qiuqiu.engine.ranking import rank_dealt

ORDER = [
    Category.NORMAL,
    Category.PURE_SMALL,
    Category.PURE_BIG,
    Category.FOUR_DOUBLES,
    Category.SIX_GODS,
]


def test_every_one_of_the_20475_hands_is_ranked_once() -> None:
    ranks = all_ranks()
    assert len(ranks) == 20_475
    assert len({r.hand for r in ranks}) == 20_475


def test_the_categories_have_the_published_counts() -> None:
    counts = Counter(r.category for r in all_ranks())
    assert counts == {
        Category.SIX_GODS: 1,
        Category.FOUR_DOUBLES: 35,
        Category.PURE_BIG: 70,
        Category.PURE_SMALL: 70,
        Category.NORMAL: 20_299,
    }


def test_603_hands_make_nine_nine() -> None:
    assert sum(1 for r in all_ranks() if r.category == "normal" and r.pairs == (9, 9)) == 603


def test_no_hand_falls_in_two_special_classes() -> None:
    for r in all_ranks():
        hand = r.hand
        classes = [
            hand == parse_hand("3-3 4-2 5-1 6-0"),
            all(t.is_double for t in hand.tiles),
            hand.spots >= 39,
            hand.spots <= 9,
        ]
        assert sum(classes) <= 1, hand


def test_two_hands_from_one_deck_never_share_a_special_class() -> None:
    by_class: dict[Category, list[Hand]] = {}
    for r in all_ranks():
        if r.category != Category.NORMAL:
            by_class.setdefault(r.category, []).append(r.hand)
    for category, hands in by_class.items():
        for a, b in combinations(hands, 2):
            assert a.mask & b.mask, f"two disjoint {category} hands: {a} and {b}"


@pytest.mark.parametrize(
    ("pair", "value"),
    [("6-1 5-3", 5), ("3-1 4-1", 9), ("3-2 4-1", 0), ("6-6 5-5", 2), ("0-0 0-1", 1)],
)
def test_a_pair_is_worth_its_spots_mod_ten(pair: str, value: int) -> None:
    a, b = parse_tiles(pair)
    assert pair_value(a, b) == value


def test_the_seed_hand_makes_nine_nine_by_its_best_cut() -> None:
    r = rank(parse_hand("3-1 6-6 5-0 5-2"))
    assert r.category == "normal"
    assert r.pairs == (9, 9)
    assert {frozenset(map(str, r.cut.high_pair)), frozenset(map(str, r.cut.low_pair))} == {
        frozenset({"3-1", "5-0"}),
        frozenset({"6-6", "5-2"}),
    }
    assert str(r) == "9-9"


def test_the_best_cut_is_the_highest_of_the_three_cuts() -> None:
    for r in all_ranks()[::97]:
        assert r.pairs == max(c.pairs for c in cuts(r.hand))
        assert r.pairs[0] >= r.pairs[1]


@pytest.mark.parametrize(
    ("hand", "category"),
    [
        ("3-3 4-2 5-1 6-0", "six_gods"),
        ("6-6 5-5 4-4 3-3", "four_doubles"),
        ("0-0 1-1 2-2 3-3", "four_doubles"),
        ("6-6 6-5 6-4 5-5", "pure_big"),
        ("6-6 6-5 6-4 5-1", "pure_big"),
        ("6-6 6-5 6-4 5-0", "normal"),
        ("0-0 1-0 2-0 3-0", "pure_small"),
        ("0-0 1-0 2-0 4-2", "pure_small"),
        ("0-0 1-0 2-1 4-2", "normal"),
        ("3-3 4-2 5-1 5-0", "normal"),
    ],
)
def test_special_hands_are_recognised(hand: str, category: str) -> None:
    assert rank(parse_hand(hand)).category == category


def test_the_categories_rank_six_gods_then_four_doubles_then_pure_big_then_pure_small() -> None:
    examples = {
        Category.SIX_GODS: "3-3 4-2 5-1 6-0",
        Category.FOUR_DOUBLES: "0-0 1-1 2-2 3-3",
        Category.PURE_BIG: "6-6 6-5 6-4 5-5",
        Category.PURE_SMALL: "0-0 1-0 2-0 3-0",
        Category.NORMAL: "3-1 6-6 5-0 5-2",
    }
    for low, high in pairwise(ORDER):
        assert compare(parse_hand(examples[high]), parse_hand(examples[low])) == 1
        assert compare(parse_hand(examples[low]), parse_hand(examples[high])) == -1


def test_every_special_hand_beats_every_nine_nine() -> None:
    nines = [r.hand for r in all_ranks() if r.category == "normal" and r.pairs == (9, 9)]
    specials = [r.hand for r in all_ranks() if r.category != "normal"]
    for special in specials:
        for nine in nines[::50]:
            assert compare(special, nine) == 1


def test_normal_hands_compare_the_higher_pair_first_then_the_lower() -> None:
    nine_eight = parse_hand("4-0 6-5 2-2 6-2")
    nine_five = parse_hand("4-1 4-0 6-1 5-3")
    three_nil = parse_hand("6-6 6-5 5-5 0-0")
    assert rank(nine_eight).pairs == (9, 8)
    assert rank(nine_five).pairs == (9, 5)
    assert rank(three_nil).pairs == (3, 0)
    assert compare(nine_eight, nine_five) == 1
    assert compare(nine_five, three_nil) == 1
    assert compare(three_nil, nine_eight) == -1


def test_equal_pairs_go_to_the_highest_tile_by_default() -> None:
    a, b = parse_hand("4-1 4-0 6-1 5-3"), parse_hand("1-0 2-0 6-2 3-0")
    assert rank(a).pairs == rank(b).pairs == (9, 5)
    assert compare(b, a) == 1
    assert compare(a, b) == -1
    c, d = parse_hand("4-0 6-5 2-2 6-2"), parse_hand("2-1 4-4 5-5 5-1")
    assert rank(c).pairs == rank(d).pairs == (9, 8)
    assert compare(d, c) == 1


def test_equal_pairs_split_under_the_split_rule() -> None:
    a, b = parse_hand("4-1 4-0 6-1 5-3"), parse_hand("1-0 2-0 6-2 3-0")
    assert compare(a, b, tie_rule="split") == 0
    assert compare(b, a, tie_rule="split") == 0
    assert compare(parse_hand("3-1 6-6 5-0 5-2"), a, tie_rule="split") == 1


def test_an_unknown_tie_rule_is_refused_rather_than_guessed() -> None:
    a, b = parse_hand("4-1 4-0 6-1 5-3"), parse_hand("1-0 2-0 6-2 3-0")
    with pytest.raises(InvalidRules, match="tie_rule"):
        compare(a, b, tie_rule="splt")  # type: ignore[arg-type]


def test_highest_tile_decides_every_tie_between_disjoint_hands() -> None:
    by_pairs: dict[tuple[int, int], list[Hand]] = {}
    for r in all_ranks()[::7]:
        if r.category == "normal":
            by_pairs.setdefault(r.pairs, []).append(r.hand)
    checked = 0
    for hands in by_pairs.values():
        for a, b in combinations(hands[:40], 2):
            if a.mask & b.mask:
                continue
            assert compare(a, b) == -compare(b, a) != 0
            checked += 1
    assert checked > 10_000


def test_compare_is_a_total_order_consistent_with_rank() -> None:
    sample = [r.hand for r in all_ranks()[::211]]
    for a in sample:
        assert compare(a, a) == 0
        for b in sample:
            assert compare(a, b) == -compare(b, a)


def test_a_cut_pairs_the_two_named_tiles_and_lists_the_better_pair_first() -> None:
    hand = parse_hand("3-1 6-6 5-0 5-2")
    cut = cut_with(hand, Tile.parse("6-6"), Tile.parse("3-1"))
    assert cut.pairs == (6, 2)
    assert [str(t) for t in cut.high_pair] == ["6-6", "3-1"]
    assert str(cut) == "6-6 3-1 | 5-2 5-0 (6-2)"


def test_a_cut_must_use_two_different_tiles_of_the_hand() -> None:
    hand = parse_hand("3-1 6-6 5-0 5-2")
    with pytest.raises(InvalidTiles):
        cut_with(hand, Tile.parse("6-6"), Tile.parse("6-6"))
    with pytest.raises(InvalidTiles):
        cut_with(hand, Tile.parse("6-6"), Tile.parse("4-4"))


def test_a_declared_cut_is_scored_as_declared_but_keeps_a_special_category() -> None:
    hand = parse_hand("3-1 6-6 5-0 5-2")
    worse = cut_with(hand, Tile.parse("6-6"), Tile.parse("3-1"))
    assert rank_with_cut(hand, worse).pairs == (6, 2)
    gods = parse_hand("3-3 4-2 5-1 6-0")
    any_cut = cut_with(gods, Tile.parse("3-3"), Tile.parse("4-2"))
    assert rank_with_cut(gods, any_cut).category == "six_gods"
    with pytest.raises(InvalidTiles, match="not a cut of the hand"):
        rank_with_cut(gods, worse)
    three_three, four_two, five_one, _ = parse_tiles("3-3 4-2 5-1 6-0")
    twice = Cut((three_three, three_three), (four_two, five_one))
    with pytest.raises(InvalidTiles, match="not a cut of the hand"):
        rank_with_cut(gods, twice)


def test_special_hands_of_one_class_outside_a_deal_compare_by_highest_tile() -> None:
    a, b = parse_hand("6-6 5-5 4-4 3-3"), parse_hand("5-5 4-4 3-3 2-2")
    assert compare(a, b) == 1
    assert compare(a, b, tie_rule="split") == 0
    assert all(t in ALL_TILES for t in a.tiles)


def test_dealt_tiles_rank_in_any_order_as_their_hand_does() -> None:
    for r in all_ranks():
        tiles = r.hand.tiles
        assert rank_dealt(tiles) is r
        assert rank_dealt(tiles[::-1]) is r
        assert rank_dealt((tiles[2], tiles[0], tiles[3], tiles[1])) is r
