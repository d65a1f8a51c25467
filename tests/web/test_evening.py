"""A player's evening in the browser, at the table: the buttons always on screen, a bust
and a rebuy, results that say why, seat layouts on every screen, and players who share a
name. The evening looked back on is test_evening_history.py; interrupted (a server
stopped or killed, a bust's wait, a seat away), test_evening_interrupted.py.

Each test plays against the real server (and, where a table needs people, players
on plain WebSockets who check or call); what the page shows is compared with the
frames the server sent it. The screenshots in docs/screenshots/ come from here too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from itertools import combinations
from typing import Any

import pytest
from playwright.async_api import Page, ViewportSize, expect

from qiuqiu.engine import Hand, compare, parse_tiles, rank
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from tests.dealing import client_seed_dealing, known_table_seed
from tests.web.conftest import (
    DESKTOP,
    PHONE,
    SCREENS,
    screenshot,
    shows_why_on_timeout,
)
from tests.web.evening_helpers import (
    HAND_LIMIT,
    OpenPlayer,
    ann_at_a_table_without_the_bot,
    check_until,
    open_table_without_the_bot,
    seat_under_the_panel,
    side_pot_hand,
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
    seated_against_the_bot,
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


async def seat_boxes(page: Page) -> list[dict[str, float]]:
    boxes: list[dict[str, float]] = await page.locator(
        ".table-view > .play .felt .seat"
    ).evaluate_all(
        "seats => seats.map(s => { const r = s.getBoundingClientRect();"
        " return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; })"
    )
    return boxes


def overlapping(boxes: list[dict[str, float]]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for (i, a), (j, b) in combinations(enumerate(boxes), 2)
        if a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    ]


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
async def test_two_to_six_seats_are_laid_out_without_overlapping_boxes(
    server: QiuQiuServer, open_player: OpenPlayer, seats: int
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page, seats=seats, to_start=seats)
    async with contextlib.AsyncExitStack() as stack:
        sockets = [
            await stack.enter_async_context(socket_player(server, f"P{n}", table_id, 500))
            for n in range(1, seats)
        ]
        await expect(page.locator(".mine .mine-tiles .domino.face")).to_have_count(3)
        await expect(page.locator(".felt .seat:not(.empty)")).to_have_count(seats)
        for name, screen in SCREENS.items():
            await page.set_viewport_size(screen)
            await expect(page.locator(".felt .seat:not(.empty)")).to_have_count(seats)
            boxes = await seat_boxes(page)
            assert len(boxes) == seats
            assert not overlapping(boxes), (name, boxes)
            assert all(b["left"] >= 0 and b["right"] <= screen["width"] for b in boxes), boxes
            await no_sideways_scroll(page)
            await page.screenshot(path=screenshot(f"seats-{seats}-{name}"))
        # A player whose connection drops is marked away, with the time they have left.
        sockets[-1].transport.abort()
        away = page.locator(".felt .seat .tag.away")
        await expect(away).to_have_text(re.compile(r"^away · \d+ s$"))
        # On one line, even in a side seat on a phone (the last size above).
        lines = await away.evaluate(
            """tag => {
                 const text = document.createRange();
                 text.selectNodeContents(tag);
                 return new Set([...text.getClientRects()].map((r) => Math.round(r.top))).size;
               }"""
        )
        assert lines == 1, seats
        assert not overlapping(await seat_boxes(page)), seats
        if seats == 6:
            await page.screenshot(path=screenshot("away"))


@pytest.mark.parametrize("seats", [4, 5, 6])
async def test_the_dealer_bots_name_is_shown_whole_beside_its_badges_at_every_size(
    server: QiuQiuServer, open_player: OpenPlayer, seats: int
) -> None:
    """Its box in a side seat on a phone or a tablet had no room for the name, the
    button's D and bot on one line, and the name was cut to "D…"; the badges go under it."""
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table(page, seats=seats)
    async with contextlib.AsyncExitStack() as stack:
        for name in ["Citra", "Dewi", "Eko", "Fajar"][: seats - 2]:
            await stack.enter_async_context(socket_player(server, name, table_id, 500))
        await expect(page.locator(".felt .seat:not(.empty)")).to_have_count(seats)
        dealer = page.locator(".felt .seat", has=page.locator(".badge.bot")).locator(
            ".seat-name-text"
        )
        tablet: ViewportSize = {"width": 768, "height": 1024}
        for screen in [*SCREENS.values(), tablet]:
            await page.set_viewport_size(screen)
            await expect(dealer).to_have_text("Dealer")
            cut = await dealer.evaluate("name => name.scrollWidth > name.clientWidth")
            assert not cut, (seats, screen)
            assert not overlapping(await seat_boxes(page)), (seats, screen)


FELT_SCREENS: dict[str, ViewportSize] = {
    "desktop": DESKTOP,
    "phone-375": {"width": 375, "height": 667},
    "phone-390": PHONE,
    "phone-414": {"width": 414, "height": 896},
}
"""The sizes the middle of the table is checked at: a desktop and three phones."""


FELT = ".table-view > .play .felt"
"""The live table's felt (a replay has one of its own)."""


async def center_covered(page: Page) -> list[str]:
    """What covers the middle of the live felt: each line of ``.center`` that meets a
    seat box or a bet chip, said as the two texts."""
    covered: list[str] = await page.evaluate(
        """(selector) => {
             const felt = document.querySelector(selector);
             const meet = (a, b) => a.left < b.right && b.left < a.right
                                    && a.top < b.bottom && b.top < a.bottom;
             const out = [];
             for (const line of felt.querySelectorAll('.center > *')) {
               const box = line.getBoundingClientRect();
               for (const other of felt.querySelectorAll('.seat, .seat-bet')) {
                 if (meet(box, other.getBoundingClientRect())) {
                   out.push(`${line.textContent} under ${other.textContent}`);
                 }
               }
             }
             return out;
           }""",
        FELT,
    )
    return covered


async def center_wrapped(page: Page) -> list[str]:
    """The lines of words in the middle of the live felt that run over two lines."""
    wrapped: list[str] = await page.locator(f"{FELT} .center .phase").evaluate_all(
        """lines => lines.filter((line) => {
             const text = document.createRange();
             text.selectNodeContents(line);
             return new Set([...text.getClientRects()].map((r) => Math.round(r.top))).size > 1;
           }).map((line) => line.textContent)"""
    )
    return wrapped


SHOWDOWN_STAYS = ServerConfig(port=0, hand_pause=60.0, bot_delay=0.05, grace=30.0)
"""A minute between hands: the checks of a showdown on the felt, at every screen size
and for each seat, outlasted the five seconds other tests keep it, on a busy machine."""


async def amounts_in_the_middle(page: Page) -> dict[str, list[str]]:
    """Each winner's "wins 1,000" in the middle of the live felt, by how the line's box
    draws it: ``cut`` at either end, ``hidden`` below its one line, or ``shown``."""
    found: dict[str, list[str]] = await page.locator(f"{FELT} .center .outcome").evaluate(
        """line => {
             const box = line.getBoundingClientRect();
             const found = { cut: [], hidden: [], shown: [] };
             const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
             for (let node = walker.nextNode(); node; node = walker.nextNode()) {
               for (const amount of node.data.matchAll(/wins? [\\d,]+/g)) {
                 const range = document.createRange();
                 range.setStart(node, amount.index);
                 range.setEnd(node, amount.index + amount[0].length);
                 const at = range.getBoundingClientRect();
                 const across = at.left >= box.left - 0.5 && at.right <= box.right + 0.5;
                 const down = at.top >= box.top - 0.5 && at.bottom <= box.bottom + 0.5;
                 found[!across ? "cut" : !down ? "hidden" : "shown"].push(amount[0]);
               }
             }
             return found;
           }"""
    )
    return found


async def worths_in_the_middle(page: Page) -> dict[str, list[str]]:
    """Each winner's " with 9-2" in the middle of the live felt: ``shown`` whole on the
    line, ``hidden`` below it, or ``cut`` (its end given up to an ellipsis, or the line's
    edge)."""
    found: dict[str, list[str]] = await page.locator(f"{FELT} .center .outcome").evaluate(
        """line => {
             const box = line.getBoundingClientRect();
             const found = { cut: [], hidden: [], shown: [] };
             for (const worth of line.querySelectorAll(".outcome-worth")) {
               const at = worth.getBoundingClientRect();
               const whole = worth.scrollWidth <= worth.clientWidth + 0.5;
               const inside = at.left >= box.left - 0.5 && at.right <= box.right + 0.5
                 && at.bottom <= box.bottom + 0.5;
               const below = at.top >= box.bottom - 0.5;
               found[below ? "hidden" : whole && inside ? "shown" : "cut"].push(worth.textContent);
             }
             return found;
           }"""
    )
    return found


async def longest_outcome(page: Page) -> None:
    """Each part of the winner's line in the middle made the longest it can be: a name
    of 64 letters, 10,000 chips, the longest hand's name."""
    await page.locator(f"{FELT} .center .outcome").evaluate(
        """line => {
             const fill = (part, text) => line.querySelectorAll(`.outcome-${part}`)
               .forEach((p) => { p.textContent = text; });
             fill("who", "W".repeat(64));
             fill("amount", " wins 10,000");
             fill("worth", " with Pure Big");
           }"""
    )


@pytest.mark.parametrize("config", [pytest.param(SHOWDOWN_STAYS, id="a minute between hands")])
async def test_a_winner_with_a_long_name_has_the_amount_whole_in_the_middle_of_the_table(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """Between side seats the middle is narrow: "Ann wins 1,000 with 9-2" was cut at its
    end, the amount too ("Ann wins 1,00…"). The name gives way now, the amount never."""
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page, seats=3, to_start=3)
    long_names = [f"{n} {'Wilhelmina' * 6}" for n in (1, 2)]
    async with contextlib.AsyncExitStack() as stack:
        for name in long_names:
            await stack.enter_async_context(socket_player(server, name, table_id, 500, bets=True))
        await check_until(page, f"{MY_TURN} [data-action=fold]:enabled")
        await page.locator(f"{MY_TURN} [data-action=fold]:enabled").click()
        await expect(page.locator(".center .outcome")).to_contain_text("Wilhelmina")
        cut = {}
        for name, screen in FELT_SCREENS.items():
            await page.set_viewport_size(screen)
            cut[name] = (await amounts_in_the_middle(page))["cut"]
        assert not any(cut.values()), cut


@pytest.mark.parametrize("config", [pytest.param(SHOWDOWN_STAYS, id="a minute between hands")])
async def test_two_winners_in_the_middle_of_the_table_never_have_an_amount_cut(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """Bo's all in wins the main pot of 300, Ann the side pot of 220. Between the side
    seats the two winners gave up their names and still ran over both ends of the
    middle: "win 300 · wins 40" for Bo's 400 at four seats. A winner who does not fit
    is left to the seats, and the one shown is whole."""
    async with side_pot_hand(server, open_player) as ann:
        page = ann.page
        await expect(page.locator(".center .outcome .outcome-amount")).to_have_count(2)
        cut, shown = {}, {}
        for name, screen in FELT_SCREENS.items():
            await page.set_viewport_size(screen)
            amounts = await amounts_in_the_middle(page)
            cut[name], shown[name] = amounts["cut"], amounts["shown"]
        assert not any(cut.values()), cut
        assert all(shown.values()), shown
        await page.set_viewport_size(DESKTOP)
        await page.screenshot(path=screenshot("two-winners"))


@pytest.mark.parametrize("config", [pytest.param(SHOWDOWN_STAYS, id="a minute between hands")])
async def test_a_winner_who_went_all_in_is_no_longer_tagged_all_in_once_the_hand_is_over(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # Bo, all in for 100, won the main pot of 300: his seat said "300 ALL IN" until
    # the next hand began, all in in a hand that was over, with the chips he won.
    async with side_pot_hand(server, open_player) as ann:
        page = ann.page
        await expect(page.locator(".result[data-hand='1'] .verify.ok")).to_be_visible()
        bo = page.locator(".felt .seat[data-seat='1']")
        await expect(bo.locator(".seat-stack")).to_have_text("300")
        await expect(bo.locator(".tag.allin")).to_have_count(0)
        assert "all in" not in (await bo.get_attribute("aria-label") or "")


@pytest.mark.parametrize("config", [pytest.param(SHOWDOWN_STAYS, id="a minute between hands")])
async def test_a_seat_that_folded_is_no_longer_tagged_folded_once_the_hand_is_over(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # Bo folded to Ann's bet: his seat said "FOLDED", faded, through the pause until the
    # next hand began, in a hand that was over. His tiles stay unseen all the same, as
    # the showdown between Ann and Cici goes on showing theirs.
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page, seats=3, to_start=3)
    async with socket_player(server, "Bo", table_id, 500, folds=True):
        await expect(page.locator(".felt .seat[data-seat='1'] .seat-name")).to_have_text("Bo")
        async with socket_player(server, "Cici", table_id, 500):
            bet = page.locator(f"{MY_TURN} [data-action=bet]:enabled")
            await expect(bet).to_be_visible(timeout=HAND_LIMIT * 1000)
            await bet.click()
            await expect(page.locator(".log")).to_contain_text("Bo folded.")
            await expect(page.locator(".result[data-hand='1'] .verify.ok")).to_be_visible()
            bo = page.locator(".felt .seat[data-seat='1']")
            await expect(bo).not_to_have_class(re.compile(r"\bfolded\b"))
            await expect(bo.locator(".tag")).to_have_count(0)
            assert "folded" not in (await bo.get_attribute("aria-label") or "")
            await expect(bo.locator(".domino")).to_have_count(0)
            cici = page.locator(".felt .seat[data-seat='2']")
            await expect(cici.locator(".seat-tiles.shown .domino.face")).to_have_count(4)
            await expect(page.locator(".result .shown-hand")).to_have_count(2)


@pytest.mark.parametrize("config", [pytest.param(SHOWDOWN_STAYS, id="a minute between hands")])
@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
async def test_no_seat_box_or_bet_chip_covers_the_pot_or_the_middle_of_the_table(
    server: QiuQiuServer, open_player: OpenPlayer, seats: int
) -> None:
    ann, cici = await open_player(), await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page, seats=seats, to_start=seats)
    await sign_in(cici.page, "Cici")
    await cici.page.click(f".table-row[data-table-id='{table_id}'] [data-action=watch]")
    await expect(cici.page.locator(".role")).to_have_text("Watching")
    async with contextlib.AsyncExitStack() as stack:
        for n in range(1, seats):
            await stack.enter_async_context(
                socket_player(server, f"Player {n}", table_id, 500, bets=True)
            )
        # Ann checks until someone has bet and the others called: chips on the table.
        await check_until(page, f"{MY_TURN} [data-action=call]:enabled")
        await expect(page.locator(".center .turn.yours")).to_contain_text("to call")
        # Ann sees it from her seat, Cici as a watcher ("Ann to act · 10 to call").
        await expect(cici.page.locator(".center .turn")).to_contain_text("Ann to act")
        covered = {}
        for viewer in (page, cici.page):
            await expect(viewer.locator(".felt .seat-bet")).not_to_have_count(0)
            for name, screen in FELT_SCREENS.items():
                await viewer.set_viewport_size(screen)
                await expect(viewer.locator(".center .pot")).to_be_visible()
                covered[name] = await center_covered(viewer)
            assert not any(covered.values()), covered

        # The hand's result in the middle, once Ann calls and the hand is shown down.
        await page.set_viewport_size(DESKTOP)
        await page.click(f"{MY_TURN} [data-action=call]")
        await play_hand([page], 1)
        await expect(page.locator(".center .outcome")).to_be_visible()
        wrapped = {}
        for name, screen in FELT_SCREENS.items():
            await page.set_viewport_size(screen)
            assert await page.locator(".center .outcome").count(), name
            await expect(page.locator(".center .phase")).to_contain_text("hand soon")
            covered[name] = await center_covered(page)
            # "Hand #1 is over · next hand soon" broke after "next hand" between side
            # seats, on a desktop as on phones.
            wrapped[name] = await center_wrapped(page)
        assert not any(covered.values()), covered
        assert not any(wrapped.values()), wrapped
        await expect(page.locator(f"{FELT} .center .outcome .outcome-amount")).not_to_have_count(0)
        await longest_outcome(page)
        cut, worth_cut = {}, {}
        for name, screen in FELT_SCREENS.items():
            await page.set_viewport_size(screen)
            cut[name] = (await amounts_in_the_middle(page))["cut"]
            # "Bob wins 600 wi…": the hand's worth goes whole, or stays whole.
            worths = await worths_in_the_middle(page)
            assert any(worths.values()), "no hand's worth in the middle to check"
            worth_cut[name] = worths["cut"]
        assert not any(cut.values()), cut
        assert not any(worth_cut.values()), worth_cut
        met = {}
        # The tallest seat a showdown makes, in each seat in turn: the longest line of a
        # winner (a special hand's name wrapped under it once) and a player gone away.
        # And the longest result in the middle a hand of these seats can have: not the
        # one this deal happened to make.
        await page.evaluate(
            """felt => { document.querySelector(`${felt} .center .outcome`).textContent =
                "Player 2 wins 10,000 with Pure Big"; }""",
            FELT,
        )
        for seat in range(await page.locator(f"{FELT} .seat-value").count()):
            await page.evaluate(
                """([felt, seat]) => {
                     const values = document.querySelectorAll(`${felt} .seat-value`);
                     values.forEach((v, n) => { v.textContent = n === seat
                       ? "Four Doubles · wins 10,000" : "9-9"; });
                     document.querySelectorAll(`${felt} .seat-line .away`).forEach(a => a.remove());
                     const away = Object.assign(document.createElement("span"),
                       { className: "tag away", textContent: "away · 30 s" });
                     values[seat].closest(".seat").querySelector(".seat-line").append(away);
                   }""",
                [FELT, seat],
            )
            for name, screen in FELT_SCREENS.items():
                await page.set_viewport_size(screen)
                covered[f"{name}, seat {seat}"] = await center_covered(page)
                met[f"{name}, seat {seat}"] = overlapping(await seat_boxes(page))
        assert not any(covered.values()), {k: v for k, v in covered.items() if v}
        # Nor one seat another: six seats' side ones met at every showdown on a desktop.
        assert not any(met.values()), met


async def test_at_two_seats_the_result_in_the_middle_takes_the_felt_and_is_not_cut_short(
    open_player: OpenPlayer,
) -> None:
    """Two seats leave the sides of the felt empty: a winner's line there is not cut to
    "Dealer wins 66 with …", as it is between side seats."""
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await play_hand([page], 1)
    await expect(page.locator(".center .outcome")).to_be_visible()
    cut = {}
    covered = {}
    for name, screen in FELT_SCREENS.items():
        await page.set_viewport_size(screen)
        # The longest line the middle shows at two seats, the page's own names aside.
        cut[name] = await page.locator(f"{FELT} .center .outcome").evaluate(
            """line => {
                 line.textContent = "Player 2 wins 10,000 with Pure Big";
                 return line.scrollWidth > line.clientWidth;
               }"""
        )
        covered[name] = await center_covered(page)
    assert not any(cut.values()), cut
    assert not any(covered.values()), covered


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


async def test_players_who_share_a_name_are_told_apart_by_their_seats(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # Two players named Bo were both "Bo": on the felt, in the log and at the showdown.
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page, seats=3, to_start=3)
    async with (
        socket_player(server, "Bo", table_id, 500),
        socket_player(server, "Bo", table_id, 500),
    ):
        await expect(page.locator(".felt .seat:not(.empty)")).to_have_count(3)
        names = page.locator(".felt .seat .seat-name")
        await expect(names).to_have_text(["Ann (you)", "Bo (seat 2)", "Bo (seat 3)"])
        # As the eye reads them too: the space before the bracket showed as "Ann(you)".
        suffixes = page.locator(".felt .seat .seat-name-suffix")
        read = await suffixes.evaluate_all("suffixes => suffixes.map((s) => s.innerText)")
        assert read == [" (you)", " (seat 2)", " (seat 3)"]
        for seat in (2, 3):
            await expect(page.locator(".log")).to_contain_text(f"Bo sat down at seat {seat}")
        await play_hand([page], 1)
        shown = page.locator(".result[data-hand='1'] .shown-hand .who")
        await expect(shown).to_have_text(["You", "Bo (seat 2)", "Bo (seat 3)"])
        cy = await open_player()
        await sign_in(cy.page, "Cy")
        listed = cy.page.locator(".lobby .seat-chip:not(.free)")
        await expect(listed).to_contain_text(["Ann", "Bo (seat 2)", "Bo (seat 3)"])
    # One's own seat says "(you)", which no other seat of the name does.
    bo = await open_player()
    await sign_in(bo.page, "Bo")
    table_id = await open_table_without_the_bot(bo.page)
    async with socket_player(server, "Bo", table_id, 500):
        await expect(bo.page.locator(".felt .seat .seat-name")).to_have_text(
            ["Bo (you)", "Bo (seat 2)"]
        )


async def test_the_lobby_lists_a_right_to_left_name_before_its_stack(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # "שרה 500" showed as "500 שרה": the stack's digits joined the name's run.
    ann = await open_player()
    await sign_in(ann.page, "Ann")
    table_id = await open_table_without_the_bot(ann.page)
    async with socket_player(server, "שרה", table_id, 500):
        cy = await open_player()
        await sign_in(cy.page, "Cy")
        chip = cy.page.locator(".lobby .seat-chip", has_text="שרה")
        await expect(chip).to_be_visible()
        stack_left, name_right = await chip.evaluate(
            """chip => {
                 const stack = chip.querySelector('small');
                 const name = document.createRange();
                 name.setStartBefore(chip.firstChild);
                 name.setEndBefore(stack);
                 return [stack.getBoundingClientRect().left, name.getBoundingClientRect().right];
               }"""
        )
        assert stack_left >= name_right - 1, (stack_left, name_right)


async def test_a_right_to_left_name_shows_its_hand_after_it_in_the_log(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # "שרה: 9-3." showed as "9-3 :שרה.": the value joined the name's run.
    page, table_id = await ann_at_a_table_without_the_bot(open_player)
    async with socket_player(server, "שרה", table_id, 500):
        await play_hand([page], 1)
        line = page.locator(".log li", has_text=re.compile(r"שרה\W*: \d-\d"))
        await expect(line).to_have_count(1)
        value_left, name_right = await line.evaluate(
            """li => {
                 const texts = document.createTreeWalker(li, NodeFilter.SHOW_TEXT);
                 let text = texts.nextNode();
                 while (!text.data.includes('שרה')) text = texts.nextNode();
                 const at = (from, to) => {
                   const range = document.createRange();
                   range.setStart(text, from);
                   range.setEnd(text, to);
                   return range.getBoundingClientRect();
                 };
                 const name = text.data.indexOf('שרה');
                 const value = text.data.search(/\\d-\\d/);
                 return [at(value, value + 3).left, at(name, name + 3).right];
               }"""
        )
        assert value_left >= name_right - 1, (value_left, name_right)


async def test_a_long_name_with_no_space_wraps_in_the_log(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # "WWWW... sat down at seat 2" ran past the log's right edge, cut off; and the
    # result's "WWWW... won 20: ..." past the result's (here "WWWW... takes the pot").
    page, table_id = await ann_at_a_table_without_the_bot(open_player)
    async with socket_player(server, "W" * 24, table_id, 500, bets=True):
        await play_hand([page], 1, fold_to_bets=True)
        await expect(page.locator(".result")).to_contain_text("W" * 24 + " takes the pot")
        for box in (".log", ".result[data-hand='1']"):
            overflow = await page.locator(box).evaluate("box => [box.scrollWidth, box.clientWidth]")
            assert overflow[0] <= overflow[1], (box, overflow)


async def test_a_bet_nobody_called_goes_back_to_you_in_a_sentence_as_written(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # It said "10 unmatched went back to You."
    page, table_id = await ann_at_a_table_without_the_bot(open_player)
    async with socket_player(server, "Bo", table_id, 500, folds=True):
        await page.click(f"{MY_TURN} [data-action=bet]:enabled")
        await expect(page.locator(".log")).to_contain_text("10 unmatched went back to you.")
        await expect(page.locator(".result[data-hand='1']")).to_contain_text("everyone else folded")


SUFFIX_CLIPPED = """names => names.flatMap((name) => {
  const box = name.getBoundingClientRect();
  const walker = document.createTreeWalker(name, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.data.search(/\\((seat \\d|you)\\)/);
    if (at < 0) continue;
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, node.data.length);
    const said = range.getBoundingClientRect();
    if (said.width === 0 || said.right > box.right + 0.5) return [name.textContent];
  }
  return [];
})"""
"""The seat names whose "(seat N)" or "(you)" is cut off by the box's edge."""


async def test_on_a_phone_a_long_shared_name_keeps_its_seat_number_in_view(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # "Alexandrina (seat 2)" was cut to "Alexandrina (se…": the part that told it apart.
    ann = await open_player(PHONE, phone=True)
    page = ann.page
    await sign_in(page, "Alexandrina")
    table_id = await open_table_without_the_bot(page, seats=6, to_start=6)
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(5):
            await stack.enter_async_context(socket_player(server, "Alexandrina", table_id, 500))
        await expect(page.locator(".felt .seat:not(.empty)")).to_have_count(6)
        names = page.locator(".felt .seat .seat-name")
        await expect(names.nth(5)).to_contain_text("(seat 6)")
        assert await names.evaluate_all(SUFFIX_CLIPPED) == []
        # A name cut short in its box is whole in its hover title.
        titles = page.locator(".felt .seat .seat-name-text[title='Alexandrina']")
        await expect(titles).to_have_count(6)
        await page.screenshot(path=screenshot("seats-6-one-name"))
