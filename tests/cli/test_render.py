"""``render``: tiles as domino faces, the table, one line per event, the deal check."""

from __future__ import annotations

import io
import re
import unicodedata
from typing import Any

import pytest
from rich.console import Console, RenderableType
from rich.text import Text

from qiuqiu.cli import render
from qiuqiu.cli.deals import DealCheck, DealChecked
from qiuqiu.cli.errors import ServerRefused
from qiuqiu.cli.game import HandInPlay, SeatState, TableState
from qiuqiu.cli.payouts import PaidWrong
from qiuqiu.engine import ALL_TILES, Category, Hand, parse_tiles, rank
from qiuqiu.protocol import (
    ChipRange,
    CutView,
    DealTampered,
    ErrorCode,
    LegalActions,
    SeatAmount,
    TableOptions,
)
from qiuqiu.protocol import server as wire
from tests.cli.game_helpers import SEALED, TABLE_SEED, played, replaced, seat_seeds, whole_hand

ME, BOT = 0, 1
TAMPERED = DealTampered("t1", 3, "position 6 does not open to 6-6")


def table(
    *,
    tiles: tuple[str, ...] = (),
    actor: int | None = None,
    check: DealCheck | None = None,
    hand: bool = True,
) -> TableState:
    seats = {
        ME: SeatState(ME, "Ana", False, 490, in_hand=True, tiles=tiles, bet=50),
        BOT: SeatState(BOT, "Dealer", True, 990, in_hand=True, connected=False),
    }
    in_play = None
    if hand:
        in_play = HandInPlay(
            hand_id=3,
            button=BOT,
            commitment=SEALED.commitment,
            pot=70,
            actor=actor,
            to_call=50 if actor == BOT else 0,
            deadline_ms=20_000,
            deal_check=check,
        )
    return TableState("t1", TableOptions(), seq=4, seats=seats, you=ME, hand=in_play)


def text_of(renderable: RenderableType) -> str:
    console = Console(record=True, width=120, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def line(message: wire.AnyServerMessage, state: TableState) -> str:
    drawn = render.event(message, state, unicode=False)
    assert drawn is not None
    return drawn.plain


# -- tiles ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [str(t) for t in ALL_TILES])
def test_a_tile_in_unicode_is_its_domino_face_with_its_spots(text: str) -> None:
    high, low = (int(part) for part in text.split("-"))
    face, spots = render.tile(text, unicode=True).plain.split(" ")
    assert face == chr(0x1F031 + high * 7 + low)
    assert unicodedata.name(face) == f"DOMINO TILE HORIZONTAL-0{high}-0{low}"
    assert spots == text


def test_a_tile_in_ascii_is_bracketed() -> None:
    assert render.tile("6-1", unicode=False).plain == "[6|1]"


def test_tiles_are_drawn_in_the_order_given() -> None:
    assert render.tiles(("6-1", "0-0"), unicode=False).plain == "[6|1]  [0|0]"


@pytest.mark.parametrize(
    ("hand", "name"),
    [
        ("3-3 4-2 5-1 6-0", "Six Gods"),
        ("6-6 5-5 4-4 3-3", "Four Doubles"),
        ("6-6 6-5 6-4 5-5", "Pure Big"),
        ("0-0 1-0 2-0 3-0", "Pure Small"),
    ],
)
def test_a_special_hand_is_named(hand: str, name: str) -> None:
    assert rank(Hand(parse_tiles(hand))).category is not Category.NORMAL
    assert render.hand_value(hand.split(), unicode=False).plain.endswith(f"= {name}!")


def test_a_normal_hand_shows_its_best_cut_and_value() -> None:
    drawn = render.hand_value(["6-3", "2-1", "5-5", "4-0"], unicode=False).plain
    assert drawn == "[5|5]  [6|3] | [4|0]  [2|1]  = 9-7"


# -- what may be done --------------------------------------------------------------------------


def test_the_legal_actions_list_their_amounts() -> None:
    opening = LegalActions(check=True, bet=ChipRange(min=10, max=500))
    assert render.legal(opening) == "check · bet 10-500"


def test_facing_a_bet_lists_the_call_the_raise_range_and_fold() -> None:
    facing = LegalActions(fold=True, call=40, raise_to=ChipRange(min=100, max=540))
    assert render.legal(facing) == "call 40 · raise 100-540 · fold"


def test_a_range_of_one_amount_is_that_amount() -> None:
    assert render.legal(LegalActions(bet=ChipRange(min=25, max=25))) == "bet 25"


def test_cutting_lists_split() -> None:
    assert "split" in render.legal(LegalActions(declare_cut=True))


# -- events ----------------------------------------------------------------------------------


def test_own_bet_is_told_as_you() -> None:
    bet = wire.BetPlaced(table_id="t1", seq=5, hand_id=3, seat=ME, amount=50, all_in=False)
    assert line(bet, table()) == "You bet 50."


def test_another_seats_raise_names_the_seat_and_the_total() -> None:
    raised = wire.Raised(table_id="t1", seq=5, hand_id=3, seat=BOT, to=600, amount=600, all_in=True)
    assert line(raised, table()) == "Dealer raised to 600 (all in)."


def test_a_call_says_how_much() -> None:
    called = wire.Called(table_id="t1", seq=5, hand_id=3, seat=BOT, amount=40, all_in=False)
    assert line(called, table()) == "Dealer called 40."


def test_own_fold_is_told_as_you() -> None:
    folded = wire.Folded(table_id="t1", seq=5, hand_id=3, seat=ME)
    assert line(folded, table()) == "You folded."


def test_own_tiles_are_shown_when_dealt() -> None:
    dealt = wire.TilesDealt(table_id="t1", seq=5, hand_id=3, seat=ME, tiles=("6-1", "5-0", "2-2"))
    assert line(dealt, table()) == "You were dealt [6|1]  [5|0]  [2|2]."


def test_another_seats_hidden_tiles_make_no_line() -> None:
    dealt = wire.TilesDealt(table_id="t1", seq=5, hand_id=3, seat=BOT)
    assert render.event(dealt, table(), unicode=False) is None


def test_a_pot_award_names_the_winners_and_their_shares() -> None:
    shares = (SeatAmount(seat=ME, amount=600), SeatAmount(seat=BOT, amount=400))
    awarded = wire.PotAwarded(
        table_id="t1", seq=5, hand_id=3, amount=1000, eligible=(ME, BOT), shares=shares
    )
    assert line(awarded, table()) == "You (600) and Dealer (400) split the pot of 1,000."
    # Past the first word, "you" is written as any sentence writes it.
    shares = (SeatAmount(seat=BOT, amount=400), SeatAmount(seat=ME, amount=600))
    awarded = awarded.model_copy(update={"shares": shares})
    assert line(awarded, table()) == "Dealer (400) and you (600) split the pot of 1,000."


def test_chips_nobody_matched_go_back_to_you_in_lower_case() -> None:
    returned = wire.BetReturned(table_id="t1", seq=5, hand_id=3, seat=ME, amount=40)
    assert line(returned, table()) == "40 unmatched chips went back to you."


def test_a_player_leaving_is_named_from_the_message() -> None:
    left = wire.PlayerLeft(table_id="t1", seq=5, seat=2, name="Budi", cashed_out=120)
    assert line(left, table()) == "Budi left the table with 120 chips."


def test_a_disconnection_says_how_long_the_seat_is_kept() -> None:
    gone = wire.PlayerDisconnected(table_id="t1", seq=5, seat=BOT, grace_ms=30_000)
    assert line(gone, table()) == "Dealer lost the connection (30 s to come back)."


# -- the deal check ----------------------------------------------------------------------------


def test_a_failed_deal_check_is_loud_and_says_what_failed() -> None:
    verdict = render.verdict(table(check=TAMPERED))
    assert verdict.plain.startswith("!!! DEAL CHECK FAILED at table t1, hand 3: position 6")
    assert "Do not trust this server" in verdict.plain
    assert "red" in str(verdict.style)


def test_a_passed_deal_check_says_what_was_checked() -> None:
    verdict = render.verdict(table(check=DealChecked(tiles=8, own_seed=True)))
    assert verdict.plain == (
        "Deal verified: 8 tiles at their committed positions, your seed in the shuffle."
    )
    assert "green" in str(verdict.style)
    resumed = render.verdict(table(check=DealChecked(tiles=1, own_seed=False))).plain
    assert resumed == "Deal verified: 1 tile at their committed positions."
    paid = render.verdict(table(check=DealChecked(tiles=8, own_seed=True, paid=True))).plain
    assert paid.endswith("your seed in the shuffle, paid as the rules say.")


def test_a_hand_with_no_tile_shown_is_not_called_verified() -> None:
    # A spectator sees no tile of a hand won by a fold.
    unseen = render.verdict(table(check=DealChecked(tiles=0, own_seed=False, paid=True)))
    assert unseen.plain == (
        "No tile of this hand was shown to check against the deal's commitment: the whole"
        " deck is checked when the table closes and reveals its seed. It was paid as the"
        " rules say."
    )
    assert "green" not in str(unseen.style)


def test_a_failed_payout_check_is_loud_and_says_it_is_the_chips_not_the_deal() -> None:
    wrong = PaidWrong("t1", 3, "the pot was not paid as the rules say: seat 0 0 (due 1000)")
    verdict = render.verdict(table(check=wrong)).plain
    assert verdict.startswith("!!! PAYOUT CHECK FAILED at table t1, hand 3: the pot was not")
    assert "did not pay this hand as the rules do" in verdict
    assert "did not deal" not in verdict


def test_no_deal_check_before_the_hand_ends_says_nothing() -> None:
    assert render.verdict(table(check=None)).plain == ""


@pytest.mark.parametrize(("tampered", "word"), [(False, "Deal verified"), (True, "FAILED")])
def test_the_end_of_a_real_hand_prints_its_deal_check(tampered: bool, word: str) -> None:
    events = whole_hand()
    if tampered:
        swapped = SEALED.opening(0).model_copy(update={"tile": SEALED.tiles[27]})
        tiles = (SEALED.tiles[27], SEALED.tiles[1], SEALED.tiles[2])
        openings = (swapped, SEALED.opening(1), SEALED.opening(2))
        replaced(events, wire.TilesDealt, tiles=tiles, openings=openings)
    state = played(events)
    ended = events[-1]
    assert isinstance(ended, wire.HandEnded)
    assert word in line(ended, state)


def test_a_closed_table_says_its_shuffle_was_rebuilt_or_loudly_that_it_was_not() -> None:
    state = played(whole_hand())
    closed = wire.TableClosed(
        table_id=state.table_id, seq=20, reason="empty", table_seed=TABLE_SEED
    )
    state.deals.reveal(TABLE_SEED)
    assert line(closed, state).splitlines() == [
        "The table closed: empty.",
        f"Table {state.table_id}'s shuffle verified: 1 hand rebuilt from the revealed seed.",
    ]
    state.deals.tampered = DealTampered(state.table_id, None, "the revealed seed is not the one")
    assert "!!! DEAL CHECK FAILED at table t1: the revealed seed" in line(closed, state)


# -- the table --------------------------------------------------------------------------------


def test_the_table_shows_every_seat_with_its_stack_and_the_pot() -> None:
    drawn = text_of(render.table(table(actor=BOT), now_ms=10_000, unicode=False))
    assert "You" in drawn
    assert "stack 490" in drawn
    assert "bet 50" in drawn
    assert "Dealer (D) (away)" in drawn
    assert "stack 990" in drawn
    assert "Pot 70" in drawn
    assert "Dealer to act | 50 to call | 10 s left" in drawn
    assert drawn.isascii()
    assert "<- to act" in drawn


def test_without_turns_the_table_says_nobody_is_to_act_nor_a_clock() -> None:
    # While the connection was down, "Dealer to act | 10 s left" went on ticking.
    drawn = text_of(render.table(table(actor=BOT), now_ms=10_000, unicode=False, turns=False))
    assert "Pot 70" in drawn
    assert "stack 990" in drawn
    assert "to act" not in drawn
    assert "to call" not in drawn
    assert "s left" not in drawn


def test_a_table_with_no_seat_left_is_drawn() -> None:
    # A watcher's table once its last player left: the seats' widths were measured with
    # max() over no seat at all, and the live view died with a TypeError.
    state = table(hand=False)
    state.seats.clear()
    drawn = text_of(render.table(state, now_ms=0, unicode=False))
    assert "Waiting for 2 more players to sit down." in drawn, drawn


def test_a_closed_table_says_so_and_waits_for_nobody() -> None:
    # The live view's last picture of a watched table that closed said "Waiting for 2
    # more players to sit down." above the line saying it closed.
    state = table(hand=False)
    state.seats.clear()
    state.closed = True
    drawn = text_of(render.table(state, now_ms=0, unicode=False))
    assert "The table is closed." in drawn, drawn
    assert "Waiting for" not in drawn, drawn


def test_a_long_name_cut_short_keeps_its_button_and_away_marks() -> None:
    # At 60 columns the name was cut with its marks: "Bartholomew_Quinn…", no (D).
    state = table(actor=BOT)
    state.seats[BOT].name = "Bartholomew_Quinn_the_Third"
    console = Console(record=True, width=60, file=io.StringIO())
    console.print(render.table(state, now_ms=10_000, unicode=True))
    drawn = console.export_text()
    assert re.search(r"seat 2  Bartholomew\w*… \(D\) \(away\)  stack 990", drawn), drawn
    assert "stack 490" in drawn


def test_while_seats_cut_their_hands_the_table_says_who_is_still_to_cut() -> None:
    # It said "Pot 70 · 10 s left" alone: nobody was to act, and nothing said who cut.
    state = table()
    assert state.hand is not None
    state.hand.phase, state.hand.cutting = "cutting", (ME, BOT)
    drawn = text_of(render.table(state, now_ms=10_000, unicode=False))
    assert "Pot 70 | You and Dealer to cut | 10 s left" in drawn, drawn
    assert drawn.count("<- to cut") == 2, drawn
    state.apply(wire.CutDeclared(table_id="t1", seq=5, hand_id=3, seat=ME))
    drawn = text_of(render.table(state, now_ms=10_000, unicode=False))
    assert "Pot 70 | Dealer to cut | 10 s left" in drawn, drawn
    assert drawn.count("<- to cut") == 1, drawn


def test_a_hand_over_shows_no_pot_and_its_tiles_still() -> None:
    state = table(tiles=("6-3", "2-1", "5-5", "4-0"))
    assert state.hand is not None
    state.hand.phase, state.hand.pot, state.hand.deadline_ms = "ended", 0, None
    drawn = text_of(render.table(state, now_ms=0, unicode=True))
    assert "Pot" not in drawn
    assert "= 9-7" in drawn


def test_a_hand_over_says_so_and_no_seat_is_folded_or_all_in_between_hands() -> None:
    state = table()
    assert state.hand is not None
    state.seats[ME].all_in, state.seats[BOT].folded = True, True
    in_play = text_of(render.table(state, now_ms=0, unicode=False))
    assert "all in" in in_play
    assert "folded" in in_play
    assert "is over" not in in_play
    state.hand.phase = "ended"
    between = text_of(render.table(state, now_ms=0, unicode=False))
    assert "all in" not in between
    assert "folded" not in between
    assert "Hand #3 is over; the next is not dealt yet." in between


def test_seated_while_a_hand_is_played_the_table_says_you_are_dealt_in_from_the_next() -> None:
    # The table showed the hand going on with no tiles of yours and no word why; the
    # page said "You are dealt in from the next hand."
    state = table()
    state.seats[ME].in_hand = False
    drawn = text_of(render.table(state, now_ms=0, unicode=False))
    assert "You are dealt in from the next hand." in drawn, drawn
    assert state.hand is not None
    state.hand.phase = "ended"
    assert "dealt in from the next" not in text_of(render.table(state, now_ms=0, unicode=False))
    state.hand.phase = "betting"
    state.seats[ME].in_hand = True
    assert "dealt in from the next" not in text_of(render.table(state, now_ms=0, unicode=False))


def test_the_table_shows_own_four_tiles_with_their_best_cut() -> None:
    state = table(tiles=("6-3", "2-1", "5-5", "4-0"), actor=ME)
    drawn = text_of(render.table(state, now_ms=0, unicode=True))
    assert f"Your tiles: {chr(0x1F031 + 6 * 7 + 3)} 6-3" in drawn
    assert "Best cut:" in drawn
    assert "= 9-7" in drawn
    assert "◀ to act" in drawn


def test_a_table_between_hands_renders_without_a_pot() -> None:
    drawn = text_of(render.table(table(hand=False), now_ms=0, unicode=False))
    assert "stack 490" in drawn
    assert "Pot" not in drawn


def test_chip_amounts_are_written_with_thousands_apart_in_the_table_and_the_turn() -> None:
    # "stack 9990" and "bet 10-9990" in the table, where a message wrote "1,000".
    state = table(actor=BOT)
    assert state.hand is not None
    state.seats[BOT].stack, state.seats[BOT].bet, state.hand.pot = 9_990, 1_500, 12_345
    state.hand.to_call = 1_450
    drawn = text_of(render.table(state, now_ms=10_000, unicode=False))
    assert "stack 9,990" in drawn, drawn
    assert "bet 1,500" in drawn, drawn
    assert "Pot 12,345 | Dealer to act | 1,450 to call" in drawn, drawn
    legal = LegalActions(fold=True, call=1_450, raise_to=ChipRange(min=2_950, max=9_990))
    assert render.legal(legal, unicode=False) == "call 1,450 | raise 2,950-9,990 | fold"
    rules = TableOptions(ante=1_000, min_bet=1_000, max_bet=5_000, max_buy_in=50_000)
    assert "ante 1,000; bets from 1,000 to 5,000" in render.rules(rules).plain


AT: dict[str, Any] = {"table_id": "t1", "seq": 5, "hand_id": 3, "seat": BOT}


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (wire.BetPlaced(**AT, amount=1_000, all_in=False), "Dealer bet 1,000."),
        (wire.Called(**AT, amount=2_500, all_in=True), "Dealer called 2,500 (all in)."),
        (wire.Raised(**AT, to=10_000, amount=9_000, all_in=False), "Dealer raised to 10,000."),
        (wire.AnteTaken(**AT, amount=1_000, all_in=False), "Dealer put in the ante of 1,000."),
    ],
    ids=["bet", "call", "raise", "ante"],
)
def test_chip_amounts_in_event_lines_are_written_with_thousands_apart(
    message: wire.AnyServerMessage, said: str
) -> None:
    assert line(message, table()) == said


def test_an_event_line_is_rich_text() -> None:
    checked = wire.Checked(table_id="t1", seq=5, hand_id=3, seat=BOT)
    assert isinstance(render.event(checked, table(), unicode=True), Text)


def test_a_refusal_is_said_in_the_servers_words_without_its_code() -> None:
    # It was "Refused (not_your_turn): it is not your turn": a code for programs.
    refused = wire.Error(code=ErrorCode.NOT_YOUR_TURN, message="it is not your turn")
    assert line(refused, table()) == "Refused: it is not your turn"


def test_a_rebuy_out_of_the_tables_range_says_the_range_to_type_in() -> None:
    refused = ServerRefused(ErrorCode.INVALID_BUY_IN, "buy in with 100 to 10,000 chips, not 20,000")
    said = render.rebuy_refused(refused, 20_000, 30_000, TableOptions()).plain
    assert said == (
        "This table takes buy-ins of 100 to 10,000 chips: type rebuy N with N between them."
    )


# -- what each result means ------------------------------------------------------------------


def shown(seat: int, tiles: str) -> wire.ShownHand:
    ranked = rank(Hand(parse_tiles(tiles)))
    cut = ranked.cut
    pairs = (
        (str(cut.high_pair[0]), str(cut.high_pair[1])),
        (str(cut.low_pair[0]), str(cut.low_pair[1])),
    )
    a, b, c, d = (str(t) for t in parse_tiles(tiles))
    return wire.ShownHand(
        seat=seat,
        tiles=(a, b, c, d),
        cut=CutView(pairs=pairs, values=ranked.pairs),
        category=ranked.category,
        openings=tuple(SEALED.opening(p) for p in range(4)),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("mine", "theirs", "why"),
    [
        ("6-3 2-1 5-5 4-0", "6-2 1-1 5-0 4-1", "higher pair, 9 beats 7"),
        ("6-3 2-1 5-5 4-0", "6-2 1-1 5-3 4-3", "same higher pair (9), lower pair 7 beats 6"),
        (
            "6-6 4-3 2-1 1-0",
            "0-0 1-1 2-0 5-4",
            "equal hands (9-4), the highest tile decides: 6-6 beats 1-1",
        ),
        ("3-3 4-2 5-1 6-0", "6-3 2-1 5-5 4-0", "Six Gods beats any normal hand"),
    ],
)
def test_a_pot_says_why_it_was_won(mine: str, theirs: str, why: str) -> None:
    state = table()
    assert state.hand is not None
    state.hand.shown = (shown(ME, mine), shown(BOT, theirs))
    awarded = wire.PotAwarded(
        table_id="t1",
        seq=5,
        hand_id=3,
        amount=140,
        eligible=(ME, BOT),
        shares=(SeatAmount(seat=ME, amount=140),),
    )
    assert line(awarded, state).startswith(f"You win the pot of 140: {why}")


def test_a_showdown_keeps_its_tiles_in_one_column_clear_of_a_long_name() -> None:
    state = table()
    state.seats[BOT].name = "Ana"  # a shared name is told apart: "Ana (seat 2)"
    state.you = None  # watched: both seats by name
    drawn = render.showdown(
        (shown(ME, "6-3 2-1 5-5 4-0"), shown(BOT, "6-2 1-1 5-0 4-1")), state, unicode=False
    ).plain
    rows = drawn.splitlines()[1:]
    assert rows[0].startswith("  Ana (seat 1)  ["), drawn
    assert rows[1].startswith("  Ana (seat 2)  ["), drawn


@pytest.mark.parametrize("unicode", [True, False], ids=["unicode", "ascii"])
@pytest.mark.parametrize("special", ["6-6 5-5 4-4 3-3", "6-6 6-5 5-5 5-4"], ids=["4d", "big"])
def test_a_special_hand_at_the_showdown_keeps_its_line_at_60_columns(
    unicode: bool, special: str
) -> None:
    # "Ana (seat 2)" or a longer name pushed "= Pure Big!" past 60 columns, where the
    # terminal broke it in two ("= Pure" / "Big!").
    state = table()
    state.seats[ME].name = state.seats[BOT].name = "Bartholomew"
    state.you = None
    console = Console(record=True, width=60, file=io.StringIO())
    console.print(
        render.showdown((shown(ME, special), shown(BOT, "6-2 1-1 5-0 4-1")), state, unicode)
    )
    rows = console.export_text().splitlines()[1:]
    name = "Four Doubles!" if special.startswith("6-6 5-5") else "Pure Big!"
    assert rows[0] == "  Bartholomew (seat 1)", rows
    assert rows[1].startswith(" " * 16), rows
    assert rows[1].endswith(f"  = {name}"), rows
    assert rows[3].endswith("  = 7-3"), rows
    assert len(rows) == 4, rows


def test_a_pot_only_its_winner_could_win_is_said_to_go_back() -> None:
    # An ante of 600 over a stack of 500: the 100 nobody matched is a pot of its own.
    state = table()
    assert state.hand is not None
    state.hand.shown = (shown(ME, "6-1 4-2 3-1 2-1"), shown(BOT, "6-3 0-0 5-4 5-5"))
    awarded = wire.PotAwarded(
        table_id="t1",
        seq=5,
        hand_id=3,
        amount=100,
        eligible=(BOT,),
        shares=(SeatAmount(seat=BOT, amount=100),),
    )
    assert line(awarded, state) == "Dealer took 100 back: no one else could win it."
    # A pot every seat in it shares is split, not taken back.
    both = (SeatAmount(seat=ME, amount=50), SeatAmount(seat=BOT, amount=50))
    split = awarded.model_copy(update={"eligible": (ME, BOT), "shares": both})
    assert line(split, state).startswith("You (50) and Dealer (50) split the pot of 100")


def test_a_hand_ends_with_what_it_meant_for_you_and_a_voided_one_is_not_called_verified() -> None:
    ended = wire.HandEnded(table_id="t1", seq=6, hand_id=3, stacks=())
    state = table(check=DealChecked(tiles=4, own_seed=True))
    assert state.hand is not None
    state.hand.stacks_before = {ME: 500, BOT: 1000}
    assert line(ended, state).splitlines() == [
        "For you: -10 net this hand.",
        "Deal verified: 4 tiles at their committed positions, your seed in the shuffle.",
    ]
    state.hand.voided = True
    assert line(ended, state) == ""


def test_betting_round_ends_and_cuts_are_named_plainly() -> None:
    over = wire.BettingRoundEnded(table_id="t1", seq=5, hand_id=3, round=1, pot=40)
    assert line(over, table()) == "Betting round 1 is over; the pot is 40."
    mine = wire.CutDeclared(
        table_id="t1",
        seq=5,
        hand_id=3,
        seat=ME,
        cut=CutView(pairs=(("6-3", "5-5"), ("2-1", "4-0")), values=(9, 7)),
    )
    assert line(mine, table()) == "You cut your hand: 9-7."
    theirs = wire.CutDeclared(table_id="t1", seq=5, hand_id=3, seat=BOT)
    assert line(theirs, table()) == "Dealer cut their hand."


def test_a_hand_started_in_ascii_is_ascii() -> None:
    started = wire.HandStarted(
        table_id="t1",
        seq=1,
        hand_id=3,
        button=BOT,
        stacks=(),
        commitment=SEALED.commitment,
        leaves=SEALED.leaves,
        client_seeds=seat_seeds(),
    )
    drawn = line(started, table())
    assert drawn.isascii()
    assert "-- Hand #3 --" in drawn


def test_ascii_only_keeps_the_styles_where_their_words_are() -> None:
    line = Text.assemble(("Zoë", "bold"), " may: call 40 · fold", ("…", "dim"), ("王", "red"))
    said = render.ascii_only(line)
    assert said.plain == "Zoe may: call 40 | fold...?"
    assert [(said.plain[s.start : s.end], s.style) for s in said.spans] == [
        ("Zoe", "bold"),
        ("...", "dim"),
        ("?", "red"),
    ]


def test_the_rules_of_a_default_table_and_of_one_with_every_option_set() -> None:
    assert render.rules(TableOptions()).plain == (
        "Rules here: ante 10; bets from 10, no limit; 1 betting round, before the fourth "
        "tile; equal hands: the highest tile wins; 30 s a turn."
    )
    options = TableOptions(
        ante=5, min_bet=20, max_bet=100, max_raises=1, betting_rounds=2, manual_split=True
    )
    assert render.rules(options).plain == (
        "Rules here: ante 5; bets from 20 to 100, 1 raise a round; 2 betting rounds, before "
        "and after the fourth tile; you cut your own hand at the showdown (split); equal "
        "hands: the highest tile wins; 30 s a turn."
    )


def test_a_shuffle_with_no_hand_to_rebuild_is_not_called_verified() -> None:
    # A watcher of a table that dealt no hand was told "0 hands rebuilt", a check
    # that checked nothing.
    assert render.shuffle("t1", 0).plain == (
        "Table t1's seed is revealed; there was no hand to rebuild from it."
    )
    assert render.shuffle("t1", 2).plain == (
        "Table t1's shuffle verified: 2 hands rebuilt from the revealed seed."
    )
