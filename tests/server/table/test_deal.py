"""Who has the button: the rule a client checks the server by (PROTOCOL.md, "Fairness")."""

from __future__ import annotations

from qiuqiu.server.table.deal import next_button


def test_the_dealer_bot_is_the_button_of_every_hand_at_its_table() -> None:
    assert next_button([0, 5], bot_seat=5, last=None) == 5
    assert next_button([0, 5], bot_seat=5, last=5) == 5


def test_a_tables_first_hand_opens_with_its_lowest_seat() -> None:
    assert next_button([1, 3, 4], bot_seat=None, last=None) == 4


def test_the_button_moves_to_the_next_seat_dealt_in_and_wraps_around() -> None:
    assert next_button([0, 2, 5], bot_seat=None, last=0) == 2
    assert next_button([0, 2, 5], bot_seat=None, last=3) == 5  # seat 3 left meanwhile
    assert next_button([0, 2, 5], bot_seat=None, last=5) == 0
