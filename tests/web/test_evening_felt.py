"""A player's evening in the browser, the felt: two to six seats laid out without
overlapping boxes on every screen, the dealer bot's name whole, and the middle of the
table (pot, result, winners' amounts) never covered or cut short, nor a seat tagged
all in or folded once its hand is over. Each test plays against the real server, as in
test_evening.py."""

from __future__ import annotations

import contextlib
import re
from itertools import combinations

import pytest
from playwright.async_api import Page, ViewportSize, expect

from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from tests.web.conftest import DESKTOP, PHONE, SCREENS, screenshot
from tests.web.evening_helpers import (
    HAND_LIMIT,
    OpenPlayer,
    check_until,
    open_table_without_the_bot,
    side_pot_hand,
    socket_player,
)
from tests.web.test_browser import (
    MY_TURN,
    no_sideways_scroll,
    open_table,
    play_hand,
    seated_against_the_bot,
    sign_in,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")


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
