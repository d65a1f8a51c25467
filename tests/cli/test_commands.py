"""``read``: a typed prompt line into an action, or one line saying why not."""

from __future__ import annotations

import pytest

from qiuqiu.cli.bot import Bet, Call, Check, Fold, Raise, Split
from qiuqiu.cli.commands import HELP, Help, Nothing, Quit, Rebuy, Refusal, Seed, read
from qiuqiu.cli.game import HandInPlay, SeatState, TableState
from qiuqiu.engine import Hand, Tile, parse_tiles, rank
from qiuqiu.protocol import ChipRange, CutView, LegalActions, TableOptions

ME, BOT = 0, 1
MY_TILES = ("6-3", "2-1", "5-5", "4-0")
"""Best cut 5-5 6-3 | 4-0 2-1 (9-7); pairing 6-3 with 2-1 makes 4-2 instead."""
OPENING = LegalActions(check=True, bet=ChipRange(min=10, max=500))
FACING = LegalActions(fold=True, call=40, raise_to=ChipRange(min=100, max=540))
CUTTING = LegalActions(declare_cut=True)


def table(
    legal: LegalActions | None, *, tiles: tuple[str, ...] = MY_TILES[:3], hand: bool = True
) -> TableState:
    """This client at seat 0 against the dealer bot, ``legal`` what it may do now."""
    seats = {
        ME: SeatState(ME, "Ana", False, 500, in_hand=True, tiles=tiles),
        BOT: SeatState(BOT, "Dealer", True, 1000, in_hand=True),
    }
    in_play = HandInPlay(hand_id=1, button=BOT, commitment="00" * 32) if hand else None
    return TableState("t1", TableOptions(), seq=9, seats=seats, you=ME, hand=in_play, legal=legal)


def cutting() -> TableState:
    return table(CUTTING, tiles=MY_TILES)


def refused(line: str, state: TableState | None) -> str:
    """The reason ``line`` is refused (and fail if it is not)."""
    command = read(line, state)
    assert isinstance(command, Refusal), command
    assert "\n" not in command.reason
    return command.reason


# -- lines that are not actions ----------------------------------------------------------


@pytest.mark.parametrize("line", ["", "   ", "\t\n"])
def test_an_empty_line_is_nothing(line: str) -> None:
    assert read(line, table(OPENING)) == Nothing()


@pytest.mark.parametrize("line", ["help", "h", "?", "  HELP  "])
def test_help_asks_for_help_even_without_a_table(line: str) -> None:
    assert read(line, None) == Help()


@pytest.mark.parametrize("line", ["quit", "exit", "q", "Quit", "leave"])
def test_quit_quits_even_in_the_middle_of_a_turn(line: str) -> None:
    assert read(line, table(OPENING)) == Quit()


@pytest.mark.parametrize("line", ["quit now", "leave now", "LEAVE  NOW"])
def test_quit_now_asks_to_leave_without_playing_the_hand_out(line: str) -> None:
    assert read(line, table(OPENING)) == Quit(now=True)


def test_quit_with_anything_but_now_is_refused_rather_than_read_as_a_plain_quit() -> None:
    assert "quit now leaves a hand at once" in refused("quit soon", table(OPENING))


def test_an_unknown_verb_is_refused_with_a_pointer_to_help() -> None:
    reason = refused("dance 5", table(OPENING))
    assert "dance" in reason
    assert "help" in reason


# -- not now --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        pytest.param(None, "no hand is being played yet: wait for the deal", id="no-table"),
        pytest.param(table(None), "it is not your turn", id="not-my-turn"),
        pytest.param(
            table(OPENING, hand=False),
            "no hand is being played yet: wait for the deal",
            id="no-hand",
        ),
    ],
)
@pytest.mark.parametrize("line", ["check", "call", "fold", "bet 10", "raise 100", "split"])
def test_an_action_when_it_is_not_your_turn_is_refused(
    line: str, state: TableState | None, reason: str
) -> None:
    assert refused(line, state).startswith(reason)


def seat_of_mine(state: TableState, **changed: object) -> TableState:
    me = state.me
    assert me is not None
    for field, value in changed.items():
        setattr(me, field, value)
    return state


def cut_already() -> TableState:
    cut = CutView(pairs=(("5-5", "6-3"), ("4-0", "2-1")), values=(9, 7))
    state = seat_of_mine(table(None, tiles=MY_TILES), cut=cut)
    assert state.hand is not None
    state.hand.phase, state.hand.cutting = "cutting", (ME, BOT)
    return state


def bot_to_act(state: TableState) -> TableState:
    assert state.hand is not None
    state.hand.actor = BOT
    return state


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        pytest.param(
            bot_to_act(table(None)), "it is not your turn: Dealer is to act", id="bot-to-act"
        ),
        pytest.param(
            bot_to_act(seat_of_mine(table(None), folded=True)),
            "you have folded this hand: wait for the next",
            id="folded",
        ),
        pytest.param(
            bot_to_act(seat_of_mine(table(None), all_in=True)),
            "you are all in: nothing more to do",
            id="all-in",
        ),
        pytest.param(
            bot_to_act(seat_of_mine(table(None), in_hand=False)),
            "you are not in this hand: you are dealt in from the next",
            id="sat-down-mid-hand",
        ),
        pytest.param(cut_already(), "you have cut your hand: the showdown comes", id="cut"),
    ],
)
@pytest.mark.parametrize("line", ["check", "call", "fold", "bet 10", "raise 100", "split"])
def test_an_action_when_none_can_be_played_says_why_and_what_comes(
    line: str, state: TableState, reason: str
) -> None:
    assert refused(line, state).startswith(reason)


def test_check_is_refused_when_there_is_a_bet() -> None:
    reason = refused("check", table(FACING))
    assert "bet" in reason
    assert "call 40" in reason


def test_call_is_refused_when_there_is_nothing_to_call() -> None:
    reason = refused("call", table(OPENING))
    assert "nothing to call" in reason
    assert "check" in reason


def test_fold_is_refused_when_checking_is_free() -> None:
    assert "check" in refused("fold", table(OPENING))


def test_a_bet_is_refused_when_there_is_already_a_bet() -> None:
    assert "cannot bet" in refused("bet 100", table(FACING))


def test_a_raise_is_refused_when_there_is_nothing_to_raise() -> None:
    assert "cannot raise" in refused("raise 100", table(OPENING))


# -- amounts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "legal", "named"),
    [
        ("bet 5", OPENING, ("10", "500", "5")),
        ("bet 501", OPENING, ("10", "500", "501")),
        ("bet 0", OPENING, ("10", "500")),
        ("raise 99", FACING, ("100", "540", "99")),
        ("raise 541", FACING, ("100", "540", "541")),
    ],
)
def test_an_amount_out_of_range_is_refused_naming_the_range(
    line: str, legal: LegalActions, named: tuple[str, ...]
) -> None:
    reason = refused(line, table(legal))
    assert all(number in reason for number in named), reason


@pytest.mark.parametrize(
    ("line", "legal", "reason"),
    [
        # A stack of 50 where bets are from 60: all in is the only bet.
        ("bet 60", LegalActions(check=True, bet=ChipRange(min=50, max=50)), "bet can only be 50"),
        (
            "raise 90",
            LegalActions(fold=True, call=40, raise_to=ChipRange(min=80, max=80)),
            "raise can only be 80",
        ),
    ],
)
def test_an_amount_where_only_one_is_allowed_is_refused_naming_that_one(
    line: str, legal: LegalActions, reason: str
) -> None:
    assert refused(line, table(legal)).startswith(reason)


@pytest.mark.parametrize("line", ["bet", "bet ten", "bet -5", "bet 1.5", "bet 10 20", "bet 1e3"])
def test_a_bet_without_one_whole_amount_is_refused(line: str) -> None:
    assert "bet N" in refused(line, table(OPENING))


@pytest.mark.parametrize("line", ["bet ten", "bet -5", "bet 1.5", "bet 10 20", "bet 1e3"])
def test_an_amount_that_is_not_one_whole_number_is_said_to_be_one(line: str) -> None:
    # It was "say how much: bet N", to a player who had said how much.
    assert refused(line, table(OPENING)) == "an amount is one whole number of chips: bet N"


def test_a_bet_with_no_amount_asks_how_much() -> None:
    assert refused("bet", table(OPENING)) == "say how much: bet N"


@pytest.mark.parametrize("line", ["raise", "raise all", "raise 100 200"])
def test_a_raise_without_one_whole_amount_is_refused(line: str) -> None:
    assert "raise N" in refused(line, table(FACING))


@pytest.mark.parametrize(
    "amount",
    [
        pytest.param("²", id="superscript-two"),
        pytest.param("9" * 5000, id="more-digits-than-int-reads"),
    ],
)
def test_an_amount_that_only_looks_like_digits_is_refused_rather_than_raising(
    amount: str,
) -> None:
    refused(f"bet {amount}", table(OPENING))


@pytest.mark.parametrize(("line", "legal"), [("check 5", OPENING), ("call 40", FACING)])
def test_an_action_without_an_amount_refuses_one(line: str, legal: LegalActions) -> None:
    assert "takes no amount" in refused(line, table(legal))


# -- actions that are allowed -----------------------------------------------------------------


def test_check_when_nobody_has_bet_is_a_check() -> None:
    assert read("check", table(OPENING)) == Check()


def test_call_facing_a_bet_is_a_call() -> None:
    assert read("  CALL ", table(FACING)) == Call()


def test_fold_facing_a_bet_is_a_fold() -> None:
    assert read("fold", table(FACING)) == Fold()


@pytest.mark.parametrize("amount", [10, 250, 500])
def test_a_bet_in_range_is_a_bet_of_that_amount(amount: int) -> None:
    assert read(f"bet {amount}", table(OPENING)) == Bet(amount)


@pytest.mark.parametrize("to", [100, 540])
def test_a_raise_in_range_is_a_raise_to_that_total(to: int) -> None:
    assert read(f"raise {to}", table(FACING)) == Raise(to)


# -- cutting ----------------------------------------------------------------------------------


def test_split_alone_gives_the_best_cut() -> None:
    best = rank(Hand(parse_tiles(" ".join(MY_TILES)))).cut
    expected = Split(
        (str(best.high_pair[0]), str(best.high_pair[1])),
        (str(best.low_pair[0]), str(best.low_pair[1])),
    )
    assert read("split", cutting()) == expected
    assert {*expected.first} == {"5-5", "6-3"}


@pytest.mark.parametrize("line", ["split 6-3 2-1", "split 3-6 1-2", "split 2-1 6-3"])
def test_split_with_two_tiles_pairs_those_two(line: str) -> None:
    command = read(line, cutting())
    assert isinstance(command, Split)
    assert {frozenset(command.first), frozenset(command.second)} == {
        frozenset({"6-3", "2-1"}),
        frozenset({"5-5", "4-0"}),
    }


def test_split_with_two_tiles_puts_the_higher_pair_first() -> None:
    assert read("split 6-3 2-1", cutting()) == Split(("5-5", "4-0"), ("6-3", "2-1"))


def test_the_cut_split_makes_is_a_cut_of_the_hand() -> None:
    command = read("split 4-0 5-5", cutting())
    assert isinstance(command, Split)
    tiles = {Tile.parse(t) for t in (*command.first, *command.second)}
    assert tiles == set(parse_tiles(" ".join(MY_TILES)))


@pytest.mark.parametrize("line", ["split 6-6 2-1", "split 6-3", "split 6-3 2-1 5-5"])
def test_split_with_tiles_that_are_not_two_of_yours_is_refused(line: str) -> None:
    assert "6-3 2-1 5-5 4-0" in refused(line, cutting())


def test_split_with_the_same_tile_twice_is_refused() -> None:
    assert "different" in refused("split 6-3 3-6", cutting())


@pytest.mark.parametrize("line", ["split six three", "split 7-1 2-1", "split 63 21"])
def test_split_with_text_that_is_not_a_tile_is_refused(line: str) -> None:
    assert "6-3" in refused(line, cutting())


def test_split_when_not_cutting_is_refused() -> None:
    state = table(OPENING, tiles=MY_TILES)
    state.options = TableOptions(manual_split=True)
    assert "cannot cut" in refused("split", state)


def test_split_where_players_do_not_cut_says_the_table_cuts_for_them() -> None:
    # Not "now": at such a table no turn ever asks for a cut.
    reason = refused("split 6-3 2-1", table(OPENING, tiles=MY_TILES))
    assert reason.startswith("the best cut is made for you at this table"), reason
    assert "--split" in reason


def test_split_without_four_tiles_is_refused() -> None:
    assert "four tiles" in refused("split", table(CUTTING, tiles=MY_TILES[:3]))


@pytest.mark.parametrize("line", ["check", "bet 10", "fold"])
def test_betting_while_cutting_is_refused(line: str) -> None:
    reason = refused(line, cutting())
    assert "cut" in reason
    assert "split" in reason


def test_a_split_naming_a_tile_you_do_not_hold_says_which() -> None:
    state = table(CUTTING, tiles=MY_TILES)
    assert refused("split 6-3 6-6", state) == "6-6 is not your tile: yours are 6-3 2-1 5-5 4-0"


def test_rebuy_takes_an_optional_amount() -> None:
    assert read("rebuy", table(None)) == Rebuy()
    assert read("rebuy 300", table(None)) == Rebuy(300)
    assert "rebuy N" in refused("rebuy lots", table(None))


def test_a_rebuy_of_no_chips_is_refused_here_not_sent() -> None:
    # The request cannot carry 0: sent, it failed in the client and ended it.
    assert "rebuy N" in refused("rebuy 0", table(None))
    assert "rebuy N" in refused("rebuy 000", table(None))


def test_help_says_fold_is_refused_when_a_check_is_free() -> None:
    assert "refused when you may check for free" in dict(HELP.commands)["check, call, fold"]


@pytest.mark.parametrize(
    "line", ["seed My_Own-Seed42", "/seed My_Own-Seed42", "SEED My_Own-Seed42"]
)
def test_seed_keeps_the_seed_as_typed_even_outside_a_turn(line: str) -> None:
    assert read(line, table(None)) == Seed("My_Own-Seed42")
    assert read(line, None) == Seed("My_Own-Seed42")


def test_seed_alone_asks_which_seed_is_in_use() -> None:
    assert read("seed", table(None)) == Seed()


@pytest.mark.parametrize("line", ["seed two words", "seed bad!", "seed " + "x" * 65, "seed é"])
def test_a_seed_the_server_would_refuse_is_refused(line: str) -> None:
    assert refused(line, table(None)).startswith("a seed is 1 to 64 letters, digits, _ or -")


def test_help_lists_the_seed() -> None:
    assert "seed [TEXT]" in dict(HELP.commands)


# -- amounts as the client writes them -------------------------------------------------------

DEEP = LegalActions(check=True, bet=ChipRange(min=10, max=9_990))


def test_an_amount_typed_as_the_table_shows_it_is_read() -> None:
    # The prompt says "bet 10-9,990": "bet 1,500" was refused as no whole number.
    assert read("bet 1,500", table(DEEP)) == Bet(1_500)
    assert read("rebuy 1,000", None) == Rebuy(1_000)


@pytest.mark.parametrize("amount", ["1,5", "15,00", ",150", "1,,500"])
def test_commas_out_of_thousands_are_no_amount(amount: str) -> None:
    assert "bet N" in refused(f"bet {amount}", table(DEEP))


def test_a_bet_out_of_range_is_refused_in_amounts_written_as_the_table_writes_them() -> None:
    # It said "bet must be from 10 to 9990, not 20000" where the table showed 9,990.
    assert refused("bet 20000", table(DEEP)) == "bet must be from 10 to 9,990, not 20,000"
