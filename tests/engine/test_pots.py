import pytest

from qiuqiu.engine.pots import Pot, share, side_pots

ORDER = (1, 2, 3, 0)


def test_equal_contributions_make_one_pot_for_everyone_still_in() -> None:
    pots = side_pots({0: 50, 1: 50, 2: 50, 3: 50}, {0, 1, 2, 3}, ORDER)
    assert pots == (Pot(200, (1, 2, 3, 0)),)


def test_each_all_in_level_closes_a_pot_that_only_its_payers_can_win() -> None:
    pots = side_pots({0: 300, 1: 100, 2: 200, 3: 300}, {0, 1, 2, 3}, ORDER)
    assert pots == (
        Pot(400, (1, 2, 3, 0)),
        Pot(300, (2, 3, 0)),
        Pot(200, (3, 0)),
    )


def test_folded_chips_stay_in_the_pots_they_reached_without_making_the_folder_eligible() -> None:
    pots = side_pots({0: 300, 1: 100, 2: 150, 3: 300}, {0, 1, 3}, ORDER)
    assert pots == (
        Pot(400, (1, 3, 0)),
        Pot(450, (3, 0)),
    )
    assert sum(p.amount for p in pots) == 850


def test_a_folded_seat_that_paid_more_than_any_seat_still_in_is_a_bug() -> None:
    with pytest.raises(AssertionError):
        side_pots({0: 100, 1: 50}, {1}, (1, 0))


def test_a_pot_shared_by_two_gives_the_odd_chip_to_the_first_left_of_the_button() -> None:
    assert share(101, [2, 0]) == ((2, 51), (0, 50))


def test_all_odd_chips_go_to_the_first_winner() -> None:
    assert share(302, [3, 1, 2]) == ((3, 102), (1, 100), (2, 100))
    assert share(7, [1]) == ((1, 7),)
