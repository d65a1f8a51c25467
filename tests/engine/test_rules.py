from typing import Any

import pytest

from qiuqiu.engine import InvalidRules, TableRules


@pytest.mark.parametrize(
    "options",
    [
        {"ante": -1},
        {"ante": 1.5},
        {"ante": True},
        {"min_bet": 0},
        {"min_bet": -10},
        {"min_bet": "10"},
        {"min_bet": 20, "max_bet": 19},
        {"max_bet": 0},
        {"max_bet": 50.0},
        {"max_raises": -1},
        {"max_raises": False},
        {"betting_rounds": 0},
        {"betting_rounds": 3},
        {"tie_rule": "coin_flip"},
        {"tie_rule": None},
        {"manual_split": "yes"},
        {"manual_split": 1},
    ],
)
def test_table_rules_refuse_impossible_options(options: dict[str, Any]) -> None:
    with pytest.raises(InvalidRules):
        TableRules(**options)


@pytest.mark.parametrize("rounds", [True, 2.0])
def test_table_rules_refuse_a_betting_rounds_that_is_not_a_whole_number(rounds: object) -> None:
    with pytest.raises(InvalidRules):
        TableRules(betting_rounds=rounds)  # type: ignore[arg-type]


def test_table_rules_accept_the_documented_options() -> None:
    rules = TableRules(
        ante=0,
        min_bet=1,
        max_bet=1,
        max_raises=0,
        betting_rounds=2,
        tie_rule="split",
        manual_split=True,
    )
    assert rules.max_bet == 1
    assert TableRules() == TableRules(ante=10, min_bet=10, tie_rule="highest_tile")
