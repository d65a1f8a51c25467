"""The house's range-aware policy for three or more seats.

Whole hands through the engine check that it only ever answers legally, at
any table options; hand-built situations check that ranges narrow as the
module documents, that the equity's approximation stays close to the exact
heads-up chance, and that nothing but the seat's own view reaches a decision.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from itertools import combinations
from types import MappingProxyType

from hypothesis import given, settings
from hypothesis import strategies as st

from qiuqiu.cli.arena.seats import HousePlayer
from qiuqiu.cli.arena.table import play_hand
from qiuqiu.cli.bot import Action, Bet, Call, Check, Fold, Raise, Split
from qiuqiu.engine import ALL_TILES, LegalActions, TableRules, parse_tiles, shuffled_deck
from qiuqiu.engine import ChipRange as EngineRange
from qiuqiu.protocol import TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.server.frames import Frame
from qiuqiu.server.house import multiway, policy
from qiuqiu.server.house.holdings import HOLDINGS
from qiuqiu.server.house.record import Memo, Move, Situation
from qiuqiu.server.strategy import win_chance


class RandomPlayer:
    """Any legal action, at random sizes: the widest range of situations to meet."""

    def __init__(self, rng: random.Random) -> None:
        self.name = "random"
        self.rng = rng

    def sit(self, seats: dict[int, tuple[str, bool, int]]) -> None:
        pass

    def deliver_frame(self, frame: Frame) -> None:
        pass

    def act(self, turn: wire.TurnStarted | wire.CuttingStarted) -> Action | Split:
        assert isinstance(turn, wire.TurnStarted)
        assert turn.legal is not None
        legal, rng = turn.legal, self.rng
        choices: list[Action] = [Check()] if legal.check else [Call(), Fold()]
        if legal.bet is not None:
            choices.append(Bet(rng.randint(legal.bet.min, legal.bet.max)))
        if legal.raise_to is not None:
            choices.append(Raise(rng.randint(legal.raise_to.min, legal.raise_to.max)))
        return rng.choice(choices)


class Watched(HousePlayer):
    """The dealer bot, keeping every action it took."""

    taken: list[Action | Split]

    def act(self, turn: wire.TurnStarted | wire.CuttingStarted) -> Action | Split:
        action = super().act(turn)
        self.taken.append(action)
        return action


def house(seat: int, options: TableOptions, seed: int) -> Watched:
    player = Watched("dealer", seat, options, random.Random(seed), solved=True)
    player.taken = []
    return player


@settings(max_examples=60, deadline=None)
@given(
    seats=st.integers(3, 6),
    rounds=st.sampled_from([1, 2]),
    ante=st.sampled_from([0, 1, 10]),
    max_bet=st.sampled_from([None, 20, 100]),
    max_raises=st.sampled_from([None, 0, 1, 3]),
    tie_rule=st.sampled_from(["highest_tile", "split"]),
    stacks=st.lists(st.integers(1, 2_000), min_size=6, max_size=6),
    seed=st.integers(0, 2**32),
)
def test_it_only_ever_answers_legally(
    seats: int,
    rounds: int,
    ante: int,
    max_bet: int | None,
    max_raises: int | None,
    tie_rule: str,
    stacks: list[int],
    seed: int,
) -> None:
    options = TableOptions(
        seats=seats,
        ante=ante,
        min_bet=10,
        max_bet=max_bet,
        max_raises=max_raises,
        betting_rounds=rounds,
        tie_rule=tie_rule,  # type: ignore[arg-type]
    )
    rng = random.Random(seed)
    dealer_seat = rng.randrange(seats)
    for hand_id in range(1, 4):
        players = {
            s: house(s, options, seed) if s == dealer_seat else RandomPlayer(rng)
            for s in range(seats)
        }
        outcome, _ = play_hand(
            table_id="t",
            hand_id=hand_id,
            seq=0,
            rules=options.rules(),
            players=players,
            stacks={s: stacks[s] for s in range(seats)},
            button=rng.randrange(seats),
            deck=shuffled_deck(rng),
            seed=rng.randbytes(32).hex(),
        )
        assert outcome.illegal[dealer_seat] == 0
        assert sum(outcome.net.values()) == 0


def test_other_seats_tiles_never_change_what_it_does() -> None:
    """The same deal with every tile but the dealer's moved around among the other
    seats and the undealt ones: against players whose moves ignore their tiles,
    the dealer plays every hand the same way."""
    options = TableOptions(seats=4, betting_rounds=2)
    deck_rng = random.Random(7)
    kinds: set[str] = set()
    for hand_id in range(30):
        deck = list(shuffled_deck(deck_rng))
        played = []
        for shuffle in range(2):
            # Seat 3 is the button, so it is dealt deck[9:12] and, 4th, deck[15].
            dealer_tiles = {9, 10, 11, 15}
            others = [t for i, t in enumerate(deck) if i not in dealer_tiles]
            random.Random(shuffle).shuffle(others)
            moved = iter(others)
            this_deck = [t if i in dealer_tiles else next(moved) for i, t in enumerate(deck)]
            dealer = house(3, options, seed=hand_id)
            actions = random.Random(hand_id)
            players = {s: RandomPlayer(random.Random(actions.random())) for s in range(3)}
            play_hand(
                table_id="t",
                hand_id=hand_id + 1,
                seq=0,
                rules=options.rules(),
                players={**players, 3: dealer},
                stacks=dict.fromkeys(range(4), 500),
                button=3,
                deck=this_deck,
                seed=bytes(32).hex(),
            )
            played.append(dealer.taken)
        assert played[0] == played[1]
        kinds.update(type(a).__name__ for a in played[0])
    assert len(kinds) >= 3, kinds


def situation(
    tiles: str,
    moves: tuple[Move, ...] = (),
    seats: int = 3,
    rules: TableRules | None = None,
    folded: frozenset[int] = frozenset(),
) -> Situation:
    """Seat ``seats - 1`` (the button) to act with ``tiles``, after ``moves``."""
    stacks: Mapping[int, int] = MappingProxyType(dict.fromkeys(range(seats), 500))
    pot = 10 * seats + sum(m.added for m in moves)
    current = max((m.to for m in moves), default=0)
    legal = (
        LegalActions(check=True, bet=EngineRange(10, 490))
        if current == 0
        else LegalActions(fold=True, call=current, raise_to=EngineRange(2 * current, 490))
    )
    return Situation(
        seat=seats - 1,
        tiles=tuple(parse_tiles(tiles)),
        rules=rules or TableRules(),
        button=seats - 1,
        stacks=stacks,
        antes=MappingProxyType(dict.fromkeys(range(seats), 10)),
        moves=moves,
        complete=True,
        folded=folded,
        round=1 if len(parse_tiles(tiles)) == 3 else 2,
        pot=pot,
        legal=legal,
        memo=Memo(),
    )


def strength(weights: list[float]) -> float:
    """A range's mean bucket, 0 (weakest) to 1."""
    return sum(w * (b + 0.5) for b, w in enumerate(weights)) / len(weights)


MINE = "6-6 5-4 2-0"


def test_a_bet_is_read_as_strength_and_a_big_one_as_polar() -> None:
    uniform = multiway.ranges(situation(MINE))[0]
    checked = multiway.ranges(situation(MINE, (Move(0, "check", 1),)))[0]
    half = multiway.ranges(situation(MINE, (Move(0, "bet", 1, 15, 15),)))[0]
    pot = multiway.ranges(situation(MINE, (Move(0, "bet", 1, 30, 30),)))[0]
    shove = multiway.ranges(situation(MINE, (Move(0, "bet", 1, 490, 490, all_in=True),)))[0]
    assert strength(checked) < strength(uniform) < strength(pot) < strength(half)
    middle = len(uniform) // 2
    # A bigger bet empties the middle harder, toward both ends: strength and bluffs.
    assert half[middle] > pot[middle] > shove[middle]
    assert half[-1] < pot[-1] < shove[-1]
    assert shove[-1] > 10 * shove[middle]
    assert shove[0] > 10 * shove[middle]


def test_a_call_keeps_a_middle_band() -> None:
    moves = (Move(0, "bet", 1, 30, 30), Move(1, "call", 1, 30, 30))
    uniform = multiway.ranges(situation(MINE))[1]
    called = multiway.ranges(situation(MINE, moves))[1]
    assert called[0] < uniform[0] / 4
    assert called[-1] < max(called)
    assert strength(called) > strength(uniform)


def test_its_equity_falls_against_a_big_bet() -> None:
    checked, _ = multiway.equity(situation(MINE, (Move(0, "check", 1), Move(1, "check", 1))))
    bet, _ = multiway.equity(situation(MINE, (Move(0, "bet", 1, 60, 60),)))
    assert bet < checked


def test_card_removal_starts_the_ranges() -> None:
    """Each bucket's starting weight is its share of the holdings the bot does not
    block, exactly."""
    mine = parse_tiles(MINE)
    t = multiway.tables("highest_tile")
    counts = [0] * multiway.BUCKETS
    for h in HOLDINGS:
        if not set(h) & set(mine):
            counts[t.bucket3[sum(1 << x.index for x in h)]] += 1
    expected = [c / sum(counts) for c in counts]
    got = multiway.ranges(situation(MINE))[0]
    assert all(abs(a - b) < 1e-12 for a, b in zip(got, expected, strict=True))


def test_its_equity_against_uniform_ranges_is_close_to_the_exact_chance() -> None:
    for tiles in random.Random(3).sample(HOLDINGS, 200):
        text = " ".join(str(t) for t in tiles)
        heads_up, _ = multiway.equity(situation(text, seats=2))
        assert abs(heads_up - win_chance(tiles, 1)) < 0.02
        three, _ = multiway.equity(situation(text, seats=3))
        assert abs(three - win_chance(tiles, 2)) < 0.02


def test_four_tiles_read_the_second_rounds_ranges() -> None:
    rules = TableRules(betting_rounds=2)
    moves = (Move(0, "check", 1), Move(1, "check", 1), Move(2, "check", 1))
    strong = 0
    for tiles in random.Random(5).sample(list(combinations(ALL_TILES, 4)), 300):
        text = " ".join(str(t) for t in tiles)
        start = situation(text, moves, rules=rules)
        bet = situation(text, (*moves, Move(0, "bet", 2, 30, 30)), rules=rules)
        assert strength(multiway.ranges(bet)[0]) > strength(multiway.ranges(start)[0])
        if multiway.equity(start)[0] > 0.5:
            # A strong hand fears the bettor's value more than it gains from its bluffs.
            strong += 1
            assert multiway.equity(bet)[0] < multiway.equity(start)[0]
    assert strong > 10


def test_a_folded_seat_has_no_range() -> None:
    moves = (Move(0, "bet", 1, 30, 30), Move(1, "fold", 1))
    assert set(multiway.ranges(situation(MINE, moves, folded=frozenset({1})))) == {0}


def test_the_house_sends_three_seats_here_and_heads_up_elsewhere() -> None:
    for seats in (3, 5):
        for tiles in random.Random(seats).sample(HOLDINGS, 20):
            s = situation(" ".join(str(t) for t in tiles), seats=seats)
            assert policy.decide(s, random.Random(1)) == multiway.decide(s, random.Random(1))


def test_it_value_bets_strong_tiles_and_folds_weak_ones_to_a_big_bet() -> None:
    strong = situation("6-6 5-5 4-4", (Move(0, "check", 1), Move(1, "check", 1)))
    bets = [multiway.decide(strong, random.Random(i)).action for i in range(200)]
    assert 0.8 < bets.count("bet") / 200 < 1
    weak = situation("1-0 2-1 3-0", (Move(0, "bet", 1, 120, 120),))
    assert {multiway.decide(weak, random.Random(i)).action for i in range(50)} == {"fold"}


def test_the_tables_cover_every_holding_and_hand() -> None:
    t = multiway.tables("split")
    assert len(t.bucket3) == len(HOLDINGS)
    assert len(t.bucket4) == len(t.key)
    assert all(abs(sum(row) - 1) < 1e-9 for row in t.carry)
