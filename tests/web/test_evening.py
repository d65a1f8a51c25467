"""A player's evening in the browser, at the table: the buttons always on screen, a bust
and a rebuy, and results that say why. The seats and the middle of the table, laid out
on every screen, are test_evening_felt.py; players' names (shared, right to left, long),
test_evening_names.py. The evening looked back on is test_evening_history.py;
interrupted (a server stopped or killed, a bust's wait, a seat away),
test_evening_interrupted.py.

Each test plays against the real server (and, where a table needs people, players
on plain WebSockets who check or call); what the page shows is compared with the
frames the server sent it. The screenshots in docs/screenshots/ come from here too.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from playwright.async_api import Page, ViewportSize, expect

from qiuqiu.engine import Hand, compare, parse_tiles, rank
from qiuqiu.server.gateway import QiuQiuServer
from tests.dealing import client_seed_dealing, known_table_seed
from tests.web.conftest import DESKTOP, PHONE, SCREENS, screenshot, shows_why_on_timeout
from tests.web.evening_helpers import (
    HAND_LIMIT,
    OpenPlayer,
    ann_at_a_table_without_the_bot,
    check_until,
    open_table_without_the_bot,
    seat_under_the_panel,
    signed,
    socket_player,
    use_seed,
)
from tests.web.test_browser import (
    CHECK_OR_CALL,
    MY_TURN,
    answer_turn,
    frames_of,
    my_tiles,
    no_sideways_scroll,
    open_table,
    play_hand,
    sign_in,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def buttons_on_screen(page: Page) -> list[dict[str, float]]:
    """The action buttons' boxes, as the window shows them now, without scrolling."""
    boxes: list[dict[str, float]] = await page.evaluate(
        """() => [...document.querySelectorAll('.actions.my-turn button')].map((b) => {
             const r = b.getBoundingClientRect();
             return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
                     height: innerHeight, width: innerWidth, scrolled: scrollY};
           })"""
    )
    return boxes


async def play_turns_checking_the_buttons(page: Page, hands: int, name: str) -> int:
    """Check or call through ``hands`` hands; before every click, every action button
    must be inside the window as it stands, and the panel must leave your own seat box
    in view. The number of turns seen."""
    turns = 0
    async with (
        shows_why_on_timeout(f"{name}: hand {hands} never verified", page),
        asyncio.timeout(HAND_LIMIT * hands),
    ):
        while await page.locator(f".result[data-hand='{hands}'] .verify.ok").count() == 0:
            button = page.locator(CHECK_OR_CALL).first
            if not await button.count():
                await asyncio.sleep(0.05)
                continue
            boxes = await buttons_on_screen(page)
            assert boxes, "a turn with no button"
            for box in boxes:
                assert box["scrolled"] == 0, box
                inside = box["top"] >= 0, box["bottom"] <= box["height"], box["left"] >= 0
                assert all(inside), (name, box)
                assert box["right"] <= box["width"], (name, box)
            assert await seat_under_the_panel(page) is None, name
            if turns == 0:
                await page.screenshot(path=screenshot(f"turn-{name}"))
            if await answer_turn(page, hands, script=True):
                turns += 1
            else:  # a later hand's turn: the hand looked for is over, its check to come
                await asyncio.sleep(0.05)
    return turns


async def test_the_action_buttons_are_on_screen_without_scrolling_on_every_turn(
    open_player: OpenPlayer,
) -> None:
    async def evening(name: str, screen: ViewportSize) -> int:
        player = await open_player(screen, phone=name == "phone")
        await sign_in(player.page, name.title())
        await open_table(player.page)
        turns = await play_turns_checking_the_buttons(player.page, 2, name)
        await no_sideways_scroll(player.page)
        return turns

    turns = await asyncio.gather(*(evening(name, size) for name, size in SCREENS.items()))
    assert all(n >= 2 for n in turns), turns


SHORT_PHONES: dict[str, ViewportSize] = {
    "phone-360": {"width": 360, "height": 640},
    "phone-375": {"width": 375, "height": 667},
}
"""Phone windows too short for the felt and the turn's panel one above the other: the
README ("The action bar") says the panel covers your seat box there until you scroll."""


@pytest.mark.parametrize("screen", SHORT_PHONES.values(), ids=SHORT_PHONES.keys())
async def test_on_a_short_phone_a_short_scroll_shows_your_seat_box_above_the_panel(
    open_player: OpenPlayer, screen: ViewportSize
) -> None:
    ann = await open_player(screen, phone=True)
    page = ann.page
    await sign_in(page, "Ann")
    await open_table(page)
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible(timeout=HAND_LIMIT * 1000)
    await page.evaluate("scrollTo(0, 0)")
    under = await seat_under_the_panel(page)
    covered = 0 if under is None else under["seat_bottom"] - under["panel_top"]
    assert covered <= 130, under  # the README's "about 120 px"
    await page.evaluate("by => scrollBy(0, Math.ceil(by))", covered)
    assert await seat_under_the_panel(page) is None
    await expect(page.locator(".seat.me")).to_be_in_viewport(ratio=1)
    await expect(page.locator(CHECK_OR_CALL).first).to_be_in_viewport(ratio=1)


async def test_on_a_desktop_your_tiles_stay_in_view_once_the_side_column_grows(
    open_player: OpenPlayer,
) -> None:
    """The first result and the log make the column beside the table taller than the
    table: the rows under the felt stretched with it, and your tiles went under the
    window's edge from the second hand on, with empty felt above them."""
    ann = await open_player(DESKTOP)
    page = ann.page
    await sign_in(page, "Ann")
    await open_table(page)
    await play_hand([page], 1)
    await expect(page.locator(".center .phase")).to_contain_text(
        "Hand #2", timeout=HAND_LIMIT * 1000
    )
    await expect(page.locator(".mine .mine-tiles .domino.face")).to_have_count(3)
    await expect(page.locator(".mine")).to_be_in_viewport(ratio=1)


async def test_on_a_desktop_the_action_buttons_stay_in_the_window_scrolled_down_to_the_log(
    open_player: OpenPlayer,
) -> None:
    """The column beside the table (the result, the fair deal, the log) runs past the
    window's bottom; scrolled down to read it, the turn's panel went off the top of the
    window with its buttons and its clock, sticky only within its own row."""
    # A laptop's window under the browser's own bars: the log runs further past its foot.
    ann = await open_player({"width": 1280, "height": 640})
    page = ann.page
    await sign_in(page, "Ann")
    await open_table(page)
    await play_hand([page], 1)
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible(timeout=HAND_LIMIT * 1000)
    await page.evaluate("scrollTo(0, document.documentElement.scrollHeight)")
    boxes = await buttons_on_screen(page)
    assert boxes, "a turn with no button"
    assert boxes[0]["scrolled"] > 0, "the page is no taller than the window"
    for box in boxes:
        assert box["top"] >= 0, box
        assert box["bottom"] <= box["height"], box


async def test_a_bust_shows_the_showdown_then_out_of_chips_and_buying_in_again_seats_you_there(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    with known_table_seed():
        table_id = await open_table_without_the_bot(page, buy_in=100)
    # Ann's own seed makes Bo's hand 1 the better one, so that her first hand breaks her.
    await use_seed(page, client_seed_dealing(table_id, lambda mine, bo: compare(mine, bo) < 0))
    async with socket_player(server, "Bo", table_id, 1000, all_in=True):
        # Bo bets everything whenever it may; Ann calls, until her chips are gone.
        async with asyncio.timeout(HAND_LIMIT * 4):
            while not await page.locator(".bust").count():
                button = page.locator(CHECK_OR_CALL).first
                if await button.count():
                    await button.click()
                await asyncio.sleep(0.05)

        # Still at the table: the hand that broke Ann is on screen, then the offer.
        assert page.url.endswith(f"#/table/{table_id}")
        (left,) = frames_of(ann, "table_left")
        assert left["cashed_out"] == 0
        last = frames_of(ann, "showdown")[-1]
        await expect(page.locator(".result .shown-hand")).to_have_count(len(last["hands"]))
        await expect(page.locator(".result")).to_have_attribute("data-hand", str(last["hand_id"]))
        await expect(page.locator(".result .verify.ok")).to_be_visible()
        started = [f for f in frames_of(ann, "hand_started") if f["hand_id"] == last["hand_id"]]
        before = next(s["amount"] for s in started[0]["stacks"] if s["seat"] == left["seat"])
        await expect(page.locator(".result .net")).to_have_text(
            f"For you: \u2212{before} net this hand"
        )
        await expect(page.locator(".result .why")).to_contain_text("Bo won")
        await expect(page.locator(".bust-title")).to_have_text("You're out of chips")
        # The most offered is what the balance holds (900), not the table's 10,000.
        await expect(page.locator(".bust p")).to_contain_text(
            "Your balance is 900. Buy in again at this table (100 to 900)"
        )
        await expect(page.locator(".role")).to_have_text("Out of chips")
        # Bo's shove was more than Ann had: what she could not match came back to him,
        # and with chips in front of him again he is not all in.
        assert frames_of(ann, "bet_returned")
        bo = page.locator(".seat", has_text="Bo")
        await expect(bo).to_contain_text("1,100")
        await expect(bo.locator(".tag.allin")).to_have_count(0)
        # The log writes amounts as the felt does: it said "with 1000" beside "1,100".
        await expect(page.locator(".log")).to_contain_text("Bo sat down at seat 2 with 1,000.")
        await page.screenshot(path=screenshot("bust"))

        # Enter in the field buys in, as it bets in the turn's amount field.
        await page.fill("input[name=rebuy]", "200")
        await page.press("input[name=rebuy]", "Enter")
        await expect(page.locator(".seat.me .seat-name")).to_have_text("Ann (you)")
        (joined,) = frames_of(ann, "table_joined")[-1:]
        assert joined["table_id"] == table_id
        assert joined["buy_in"] == 200
        await expect(page.locator(".table-title strong")).to_have_text(f"Table {table_id}")
        # Dealt in again with the next hand: Bo was waiting for a second player. Until it
        # comes, the tiles of the hand that broke her are not shown as hers to play.
        await expect(page.locator(".mine .mine-tiles .domino.face").first).to_be_visible(
            timeout=HAND_LIMIT * 1000
        )


async def test_a_call_that_takes_the_whole_stack_says_all_in(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page, buy_in=100)
    async with socket_player(server, "Bo", table_id, 1000, all_in=True):
        # Ann checks until Bo has bet more than she has left.
        enabled_call = f"{MY_TURN} [data-action=call]:enabled"
        await check_until(page, enabled_call)
        call = page.locator(enabled_call)
        legal = [f["legal"] for f in frames_of(ann, "turn_started") if f.get("legal")][-1]
        stack = await page.locator(".seat.me .seat-stack").inner_text()
        assert stack == str(legal["call"])
        await expect(call).to_have_text(f"Call {legal['call']} (all in)")


def tie(mine: Hand, theirs: Hand) -> bool:
    """Two equal normal hands, which the highest tile settles."""
    a, b = rank(mine), rank(theirs)
    return a.category == b.category == "normal" and a.pairs == b.pairs


def highest_of_tie(shown: list[dict[str, Any]]) -> str:
    hands = [Hand(parse_tiles(" ".join(h["tiles"]))) for h in shown]
    winner = hands[0] if compare(hands[0], hands[1]) > 0 else hands[1]
    return str(rank(winner).highest)


async def test_a_tie_is_explained_by_the_tile_that_settled_it_and_the_net_is_shown(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    with known_table_seed():
        table_id = await open_table_without_the_bot(page)
    # Ann's own seed, typed into the page before Bo sits down, makes hand 1 a tie.
    await use_seed(page, client_seed_dealing(table_id, tie))
    async with socket_player(server, "Bo", table_id, 500):
        await play_hand([page], 1)
    (shown,) = frames_of(ann, "showdown")
    tile = highest_of_tie(shown["hands"])
    values = {tuple(h["cut"]["values"]) for h in shown["hands"]}
    assert len(values) == 1, "the seed should deal a tie"
    (high, low) = values.pop()
    why = page.locator(".result .why li")
    await expect(why).to_have_count(1)
    await expect(why).to_contain_text(
        f"equal hands ({high}-{low}), the highest tile decides: {tile} beats"
    )
    ended = frames_of(ann, "hand_ended")[0]
    net = next(s["amount"] for s in ended["stacks"] if s["seat"] == 0) - 500
    await expect(page.locator(".result .net")).to_have_text(f"For you: {signed(net)} net this hand")
    await expect(page.locator(".session-net")).to_have_text(signed(net))
    await page.screenshot(path=screenshot("tie"))


async def test_a_winner_who_stood_up_as_the_hand_ended_is_still_named_in_its_result(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    with known_table_seed():
        table_id = await open_table_without_the_bot(page)
    await use_seed(page, client_seed_dealing(table_id, lambda mine, bo: compare(mine, bo) < 0))
    async with socket_player(server, "Bo", table_id, 500) as bo:
        await expect(page.locator(".center .phase")).to_contain_text("Hand #1")
        await bo.send(json.dumps({"type": "leave_table", "table_id": table_id, "after_hand": True}))
        await play_hand([page], 1)
        await expect(page.locator(".felt .seat", has_text="Bo")).to_have_count(0)
    # Bo's seat is empty by now: the result still says who won, not "Seat 2".
    await expect(page.locator(".result .why li")).to_contain_text("Bo won")
    await expect(page.locator(".center .outcome")).to_contain_text("Bo wins")


async def test_on_a_phone_your_turn_with_four_tiles_shows_their_best_cut_above_the_panel(
    open_player: OpenPlayer,
) -> None:
    ann = await open_player(PHONE, phone=True)
    page = ann.page
    await sign_in(page, "Ann")
    await page.select_option("select[name=betting_rounds]", "2")
    await open_table(page)
    # Check or call until a turn of the second round, the fourth tile in hand.
    async with asyncio.timeout(HAND_LIMIT * 2):
        while not (
            await page.locator(MY_TURN).count()
            and await page.locator(".mine .mine-tiles .domino.face").count() == 4
        ):
            button = page.locator(CHECK_OR_CALL).first
            if await button.count():
                await button.tap()
            await asyncio.sleep(0.05)
    best = rank(Hand(parse_tiles(" ".join(await my_tiles(page))))).pairs
    values = page.locator(".seat.me .pair-value")
    await expect(values).to_have_text([str(v) for v in best])
    panel_top = await page.locator(MY_TURN).evaluate("p => p.getBoundingClientRect().top")
    bottoms = await values.evaluate_all("vs => vs.map((v) => v.getBoundingClientRect().bottom)")
    assert all(0 < bottom <= panel_top for bottom in bottoms), (bottoms, panel_top)


async def test_a_bet_nobody_called_goes_back_to_you_in_a_sentence_as_written(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # It said "10 unmatched went back to You."
    page, table_id = await ann_at_a_table_without_the_bot(open_player)
    async with socket_player(server, "Bo", table_id, 500, folds=True):
        await page.click(f"{MY_TURN} [data-action=bet]:enabled")
        await expect(page.locator(".log")).to_contain_text("10 unmatched went back to you.")
        await expect(page.locator(".result[data-hand='1']")).to_contain_text("everyone else folded")
