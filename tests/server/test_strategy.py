"""The dealer bot's strategy: exact win chances, a policy that stays legal, and a bot that wins.

Win chances are checked against a brute force built on :func:`compare` alone.
The bot is then played through the engine against a player who always calls,
seeing only what its seat may see; the engine refuses any illegal action, so
those hands also show that every decision can be played.
"""

import random
from collections.abc import Sequence
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qiuqiu.engine import (
    ALL_TILES,
    TIE_RULES,
    ChipRange,
    Hand,
    HandState,
    InvalidRules,
    InvalidTiles,
    LegalActions,
    TableRules,
    TieRule,
    Tile,
    all_ranks,
    compare,
    parse_tiles,
    shuffled_deck,
)
from qiuqiu.server.strategy import STRONG, VERY_STRONG, Decision, decide, win_chance

HANDS = {r.hand.mask: r.hand for r in all_ranks()}


def brute_force_chance(tiles: Sequence[Tile], tie_rule: TieRule) -> float:
    """Heads-up chance by comparing every 4th tile against every opponent hand."""
    unseen = [t for t in ALL_TILES if t not in tiles]
    fourths = [()] if len(tiles) == 4 else [(t,) for t in unseen]
    points = games = 0
    for fourth in fourths:
        own = HANDS[sum(1 << t.index for t in (*tiles, *fourth))]
        rest = [t for t in unseen if t not in fourth]
        for other in combinations(rest, 4):
            # 2 points for a win, 1 for a split, out of 2 a game.
            points += 1 + compare(own, HANDS[sum(1 << t.index for t in other)], tie_rule)
            games += 2
    return points / games


def dealt(n: int) -> st.SearchStrategy[tuple[Tile, ...]]:
    return st.permutations(ALL_TILES).map(lambda deck: tuple(deck[:n]))


some_tiles = st.sampled_from((3, 4)).flatmap(dealt)


# -- win_chance ----------------------------------------------------------------


@pytest.mark.parametrize("tie_rule", TIE_RULES)
@pytest.mark.parametrize(
    "text", ["6-6 5-5 4-1", "2-0 3-1 5-4", "4-1 4-0 6-1 5-3", "1-0 2-0 6-2 3-0", "6-5 2-1 0-0 4-3"]
)
def test_the_heads_up_chance_is_exactly_the_brute_force_one(text: str, tie_rule: TieRule) -> None:
    tiles = parse_tiles(text)
    assert win_chance(tiles, 1, tie_rule) == brute_force_chance(tiles, tie_rule)


@pytest.mark.parametrize("tie_rule", TIE_RULES)
def test_an_average_four_tile_hand_wins_half_the_time(tie_rule: TieRule) -> None:
    # Over every pair of disjoint hands, one side's win is the other's loss.
    chances = [win_chance(r.hand.tiles, 1, tie_rule) for r in all_ranks()]
    assert sum(chances) / len(chances) == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize("tie_rule", TIE_RULES)
@pytest.mark.parametrize("opponents", [1, 3, 5])
def test_six_gods_always_wins(tie_rule: TieRule, opponents: int) -> None:
    assert win_chance(parse_tiles("3-3 4-2 5-1 6-0"), opponents, tie_rule) == 1.0


# No deadline: the first win_chance of a tie rule builds its index (about 0.1 s).
@settings(deadline=None)
@given(dealt(3), st.sampled_from(TIE_RULES))
def test_three_tiles_are_worth_the_mean_of_their_completions(
    tiles: tuple[Tile, ...], tie_rule: TieRule
) -> None:
    completions = [win_chance((*tiles, t), 1, tie_rule) for t in ALL_TILES if t not in tiles]
    mean = sum(completions) / len(completions)
    assert win_chance(tiles, 1, tie_rule) == pytest.approx(mean, rel=1e-12)


# No deadline: the first win_chance of a tie rule builds its index (about 0.1 s).
@settings(deadline=None)
@given(some_tiles, st.integers(1, 4), st.sampled_from(TIE_RULES))
def test_chances_lie_in_0_1_and_fall_with_more_opponents(
    tiles: tuple[Tile, ...], opponents: int, tie_rule: TieRule
) -> None:
    fewer = win_chance(tiles, opponents, tie_rule)
    more = win_chance(tiles, opponents + 1, tie_rule)
    assert 0.0 <= more <= fewer <= 1.0
    if 0.0 < fewer < 1.0:
        assert more < fewer


@pytest.mark.parametrize("opponents", [2, 4])
def test_the_multiway_estimate_is_close_to_a_simulation(opponents: int) -> None:
    # Raising the 3-tile heads-up chance itself to the power would give 0.22 and
    # 0.05 here: the bot's one 4th tile plays against every opponent.
    tiles = parse_tiles("6-6 5-5 4-1")
    unseen = [t for t in ALL_TILES if t not in tiles]
    rng = random.Random(7)
    deals = 10_000
    wins = 0
    for _ in range(deals):
        drawn = rng.sample(unseen, 1 + 4 * opponents)
        own = Hand((*tiles, drawn[0]))
        others = (Hand(drawn[1 + 4 * i : 5 + 4 * i]) for i in range(opponents))
        wins += all(compare(own, other) > 0 for other in others)
    assert win_chance(tiles, opponents) == pytest.approx(wins / deals, abs=0.02)


def test_a_hand_of_the_wrong_size_or_with_a_repeated_tile_is_refused() -> None:
    for tiles in (parse_tiles("6-6 5-5"), parse_tiles("6-6 5-5 4-4 3-3 2-2"), 3 * [ALL_TILES[0]]):
        with pytest.raises(InvalidTiles):
            win_chance(tiles, 1)


def test_no_opponent_or_an_unknown_tie_rule_is_refused() -> None:
    tiles = parse_tiles("6-6 5-5 4-1")
    with pytest.raises(ValueError, match="opponent"):
        win_chance(tiles, 0)
    with pytest.raises(InvalidRules):
        win_chance(tiles, 1, "coin_flip")  # type: ignore[arg-type]


# -- decide --------------------------------------------------------------------

UNOPENED = LegalActions(check=True, bet=ChipRange(10, 500))
FACING = LegalActions(fold=True, call=20, raise_to=ChipRange(40, 500))


def test_a_strong_hand_bets_half_the_pot_when_it_can_check() -> None:
    assert decide(0.7, pot=60, to_call=0, legal=UNOPENED) == Decision("bet", 30)


def test_a_very_strong_hand_bets_the_whole_pot() -> None:
    assert decide(0.9, pot=60, to_call=0, legal=UNOPENED) == Decision("bet", 60)


def test_a_hand_no_better_than_the_bar_checks() -> None:
    assert decide(STRONG, pot=60, to_call=0, legal=UNOPENED) == Decision("check")
    strong_but_cannot_bet = LegalActions(check=True)
    assert decide(0.9, pot=60, to_call=0, legal=strong_but_cannot_bet) == Decision("check")


def test_a_bet_is_clamped_into_the_legal_range() -> None:
    assert decide(0.7, pot=4, to_call=0, legal=UNOPENED) == Decision("bet", 10)
    assert decide(0.9, pot=5_000, to_call=0, legal=UNOPENED) == Decision("bet", 500)


def test_a_very_strong_hand_raises_by_the_pot_over_the_smallest_raise() -> None:
    assert decide(0.9, pot=60, to_call=20, legal=FACING) == Decision("raise", 100)
    assert decide(0.9, pot=5_000, to_call=20, legal=FACING) == Decision("raise", 500)


def test_a_very_strong_hand_that_may_not_raise_calls() -> None:
    no_raise = LegalActions(fold=True, call=20)
    assert decide(0.9, pot=60, to_call=20, legal=no_raise) == Decision("call")


def test_a_bet_is_called_only_when_the_chance_beats_the_pot_odds() -> None:
    # 20 to call into 60 is 20 / 80 = 0.25.
    assert decide(0.26, pot=60, to_call=20, legal=FACING) == Decision("call")
    assert decide(0.25, pot=60, to_call=20, legal=FACING) == Decision("fold")
    assert decide(VERY_STRONG, pot=60, to_call=20, legal=FACING) == Decision("call")


def test_the_bot_refuses_to_decide_when_it_may_not_bet() -> None:
    with pytest.raises(ValueError, match="not its turn"):
        decide(0.5, pot=60, to_call=0, legal=LegalActions())


chip_ranges = st.builds(
    lambda low, extra: ChipRange(low, low + extra), st.integers(1, 1_000), st.integers(0, 1_000)
)
# The two shapes HandState.legal_actions gives the seat to act in a betting round.
unopened = st.builds(lambda bet: LegalActions(check=True, bet=bet), st.none() | chip_ranges)
facing = st.builds(
    lambda call, raise_to: LegalActions(fold=True, call=call, raise_to=raise_to),
    st.integers(1, 1_000),
    st.none() | chip_ranges,
)


@given(st.floats(0.0, 1.0), st.integers(0, 10_000), unopened | facing)
def test_every_decision_is_legal_and_deterministic(
    chance: float, pot: int, legal: LegalActions
) -> None:
    to_call = legal.call or 0
    decision = decide(chance, pot=pot, to_call=to_call, legal=legal)
    assert decision == decide(chance, pot=pot, to_call=to_call, legal=legal)
    match decision:
        case Decision("check", None):
            assert legal.check
        case Decision("call", None):
            assert legal.call is not None
        case Decision("fold", None):
            assert legal.fold
        case Decision("bet", int(amount)):
            assert legal.bet is not None
            assert legal.bet.min <= amount <= legal.bet.max
        case Decision("raise", int(to)):
            assert legal.raise_to is not None
            assert legal.raise_to.min <= to <= legal.raise_to.max
        case _:
            pytest.fail(f"not a well-formed decision: {decision}")


# -- the bot at the table --------------------------------------------------------

BOT, CALLER = 0, 1
STACK = 1_000
HANDS_PLAYED = 4_000


def bot_acts(state: HandState) -> None:
    """The bot's turn, from its own tiles and the public numbers only."""
    tiles = state.seats[BOT].tiles
    opponents = sum(1 for s in state.seats.values() if s.seat != BOT and not s.folded)
    chance = win_chance(tiles, opponents, state.rules.tie_rule)
    legal = state.legal_actions(BOT)
    match decide(chance, pot=state.pot, to_call=state.to_call(BOT), legal=legal):
        case Decision("check"):
            state.check(BOT)
        case Decision("call"):
            state.call(BOT)
        case Decision("fold"):
            state.fold(BOT)
        case Decision("bet", int(amount)):
            state.bet(BOT, amount)
        case Decision("raise", int(to)):
            state.raise_to(BOT, to)
        case decision:
            pytest.fail(f"not a playable decision: {decision}")


def bot_net_chips(rules: TableRules, seed: int) -> int:
    """What the bot wins over HANDS_PLAYED hands, fresh stacks each hand, button alternating."""
    rng = random.Random(seed)
    net = 0
    for number in range(HANDS_PLAYED):
        deck = shuffled_deck(rng)
        state = HandState.start(rules, {BOT: STACK, CALLER: STACK}, button=number % 2, deck=deck)
        while not state.is_over:
            if state.actor == BOT:
                bot_acts(state)
            elif state.can_call(CALLER):
                state.call(CALLER)
            else:
                state.check(CALLER)
        net += state.seats[BOT].stack - STACK
    return net


@pytest.mark.parametrize("betting_rounds", [1, 2])
def test_the_bot_beats_a_player_who_always_calls(betting_rounds: int) -> None:
    rules = TableRules(betting_rounds=betting_rounds)
    net = bot_net_chips(rules, seed=2024)
    # Antes even out over many hands: the edge is the bot's bets with good
    # hands, which must clear 5% of all the antes paid (seed 2024: 4,730 chips
    # in one round, 29,830 in two, against a bar of 2,000).
    assert net > 0.05 * rules.ante * HANDS_PLAYED
