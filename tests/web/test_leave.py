"""The page's Leave button in a hand: the seat plays the hand out and stands up as it
ends, before the next is dealt; clicked again ("Leave now"), at once.

The server deals the next hand as the last ends, and Bo plays on there with the
dealer bot, so a seat that stood up late would be dealt into it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Page, WebSocketRoute, expect
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from qiuqiu.cli.bot import play
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.play import Steady
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.table.reasons import IN_DOUBT
from tests.leases import lease_taken
from tests.web.conftest import PHONE, Player, screenshot, shows_why_on_timeout
from tests.web.evening_helpers import HAND_LIMIT, OpenPlayer, at_a_table_on_a_short_lease
from tests.web.test_browser import (
    CHECK_OR_CALL,
    frames_of,
    no_sideways_scroll,
    open_table,
    play_hand,
    seated_against_the_bot,
    sign_in,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")

MOVES = ("checked", "called", "bet_placed", "raised", "folded")


@pytest.fixture
def config(request: pytest.FixtureRequest) -> ServerConfig:
    """No pause between hands, unless a test asks for one (``indirect``)."""
    pause = getattr(request, "param", 0.0)
    return ServerConfig(port=0, hand_pause=pause, bot_delay=0.05, grace=30.0)


@contextlib.asynccontextmanager
async def bo_playing_at(server: QiuQiuServer, table_id: str) -> AsyncIterator[None]:
    """Bo, seated at ``table_id`` and checking or calling, until the block ends."""
    async with await Connection.open(server.url, name="Bo") as bo:
        await bo.join_table(table_id, 500)
        playing = asyncio.create_task(play(Steady(), bo, table_id))
        try:
            yield
        finally:
            playing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await playing


async def seated_with_bo(open_player: OpenPlayer) -> tuple[Player, str]:
    ann = await open_player()
    await sign_in(ann.page, "Ann")
    return ann, await open_table(ann.page, seats=3)


async def my_turn_after_bo_sat(page: Page) -> None:
    """Bo seated, a turn of this page's own (checked or called through till then)."""
    async with asyncio.timeout(HAND_LIMIT):
        while True:
            await expect(page.locator(CHECK_OR_CALL)).to_be_visible(timeout=HAND_LIMIT * 1000)
            if await page.locator(".felt .seat", has_text="Bo").count():
                return
            await page.locator(CHECK_OR_CALL).first.click()


async def played_until_gone(page: Page) -> None:
    """Check or call at each of this page's turns until it has left the table."""
    async with shows_why_on_timeout("the page never left", page), asyncio.timeout(HAND_LIMIT):
        while not await page.locator(".farewell").count():
            button = page.locator(CHECK_OR_CALL).first
            if await button.count():
                # Redrawn under the click as the turn moves on: the next loop looks again.
                with contextlib.suppress(PlaywrightTimeoutError):
                    await button.click(timeout=1000)
            await asyncio.sleep(0.05)


def leave_requests(ann: Player) -> list[dict[str, Any]]:
    return [m for m in ann.sent if m["type"] == "leave_table"]


async def test_leave_in_a_hand_plays_it_out_and_the_seat_is_not_dealt_the_next(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann, table_id = await seated_with_bo(open_player)
    page = ann.page
    async with bo_playing_at(server, table_id):
        await my_turn_after_bo_sat(page)
        (me,) = {m["seat"] for m in frames_of(ann, "table_joined")}
        hand = frames_of(ann, "hand_started")[-1]["hand_id"]
        await page.click(".table-bar .leave")
        await expect(page.locator(".table-bar .role.leaving")).to_have_text(
            "Leaving after this hand"
        )
        await expect(page.locator(".table-bar .leave")).to_have_text("Leave now")
        await expect(page.locator(".log")).to_contain_text("You will leave after this hand")
        # The turn it was clicked at is still this page's, and every one after it.
        await played_until_gone(page)
        await expect(page.locator(".farewell")).to_contain_text("You left with")
        (asked,) = leave_requests(ann)
        assert asked["after_hand"] is True
        (left,) = frames_of(ann, "table_left")
        assert left["ref"] == asked["id"]
        # Its moves in that hand answer its own messages: none was played for it.
        mine = [m for m in ann.frames if m.get("seat") == me and m.get("hand_id") == hand]
        moves = [m for m in mine if m["type"] in MOVES]
        assert moves
        assert all("ref" in m for m in moves), moves
        assert not [m for m in mine if m["type"] == "turn_timed_out"]
        # Not dealt the next hand, which Bo and the dealer bot play without it.
        assert all(m["hand_id"] <= hand for m in frames_of(ann, "hand_started"))
        async with asyncio.timeout(HAND_LIMIT):
            while not [h for h in await server.store.table_hands(table_id) if h.hand_id > hand]:
                await asyncio.sleep(0.05)
    account = frames_of(ann, "welcome")[0]["account_id"]
    later = [h for h in await server.store.table_hands(table_id) if h.hand_id > hand]
    assert all(account not in dict(h.accounts).values() for h in later)


async def test_leave_now_in_a_hand_leaves_at_once_its_turns_checked_or_folded(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann = await open_player(PHONE, phone=True)
    page = ann.page
    await sign_in(page, "Ann")
    await open_table(page)
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible(timeout=HAND_LIMIT * 1000)
    await page.click(".table-bar .leave")
    await expect(page.locator(".table-bar .role.leaving")).to_be_visible()
    await no_sideways_scroll(page)
    await page.screenshot(path=screenshot("leaving-after-the-hand"))
    await page.click(".table-bar .leave:has-text('Leave now')")
    await expect(page.locator(".farewell")).to_contain_text("You left with")
    first, then = leave_requests(ann)
    assert first["after_hand"] is True
    assert "after_hand" not in then
    (left,) = frames_of(ann, "table_left")
    assert left["ref"] == then["id"]
    # The first request gets no answer of its own: the second's settles it too.
    assert not await page.evaluate("id => window.qiuqiu.conn.pending.has(id)", first["id"])


async def test_on_the_keyboard_leave_keeps_the_focus_on_leave_now(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # "Leave table" was made again as "Leave now" under the focus, which fell to the
    # page: the next Enter did nothing, and Tab started from the page's top.
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible(timeout=HAND_LIMIT * 1000)
    await page.focus(".table-bar .leave")
    await page.keyboard.press("Enter")
    await expect(page.locator(".table-bar .role.leaving")).to_be_visible()
    await expect(page.locator(".table-bar .leave")).to_have_text("Leave now")
    await expect(page.locator(".table-bar .leave")).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(page.locator(".farewell")).to_contain_text("You left with")


@pytest.mark.parametrize("config", [60.0], indirect=True)
async def test_leave_between_hands_leaves_at_once(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await play_hand([page], 1)
    await page.click(".table-bar .leave")
    await expect(page.locator(".farewell")).to_contain_text("You left with")
    (asked,) = leave_requests(ann)
    assert "after_hand" not in asked
    assert not frames_of(ann, "hand_started")[1:], "the next hand waits a minute"


async def test_a_leave_lost_with_a_table_that_moved_is_asked_for_again(
    redis_url: str, open_player: OpenPlayer
) -> None:
    """The table's lease is taken at Redis, as an adopter does, and lapses for the
    page's server to adopt the table again: the request went with the table as it
    was, its hand is voided, and the seat would be dealt hand after hand."""
    async with at_a_table_on_a_short_lease(redis_url, open_player) as (ann, table_id):
        page = ann.page
        await page.click(".table-bar .leave")
        await expect(page.locator(".table-bar .role.leaving")).to_be_visible()
        await lease_taken(redis_url, table_id)
        # At most the hand dealt as the table came back is played out; not one more.
        await played_until_gone(page)
        await expect(page.locator(".farewell")).to_contain_text("You left with")
        welcomes = [i for i, m in enumerate(ann.frames) if m.get("type") == "welcome"]
        assert len(welcomes) >= 2, "the page reconnected to the table's new host"
        dealt = {m["hand_id"] for m in ann.frames[welcomes[-1] :] if m["type"] == "hand_started"}
        assert len(dealt) <= 1, dealt


@pytest.mark.parametrize("where", ["reloaded", "in a second tab"])
async def test_a_leave_asked_in_a_hand_outlives_a_reload_or_a_second_tab(
    page_url: str, open_player: OpenPlayer, where: str
) -> None:
    """The snapshot a page gets does not say the seat asked to stand up: the page
    that asked keeps it, so the bar still says so, and as the hand ends the seat is
    told it left, not that the server stood it up."""
    ann = await open_player()
    await sign_in(ann.page, "Ann")
    await open_table(ann.page)
    await expect(ann.page.locator(CHECK_OR_CALL)).to_be_visible(timeout=HAND_LIMIT * 1000)
    await ann.page.click(".table-bar .leave")
    await expect(ann.page.locator(".table-bar .role.leaving")).to_be_visible()
    if where == "reloaded":
        page = ann.page
        await page.reload()
    else:
        page = await ann.context.new_page()
        page.on("pageerror", lambda error: ann.errors.append(str(error)))
        await page.goto(page_url)
    await expect(page.locator(".table-bar .role.leaving")).to_have_text("Leaving after this hand")
    await expect(page.locator(".table-bar .leave")).to_have_text("Leave now")
    await played_until_gone(page)
    await expect(page.locator(".farewell")).to_contain_text("You left with")
    await expect(page.locator(".farewell")).not_to_contain_text("stood up")


async def test_a_leave_refused_store_unavailable_is_asked_again_and_the_seat_stands_up(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """A table whose host lost touch with Redis past its lease refuses what it is sent,
    ``store_unavailable``, until it is sure it still hosts the table: nothing changed,
    send it again in a moment. The page showed the refusal and forgot the leave, the
    seat playing on. The page's socket is routed to refuse its first ``leave_table`` so."""
    refused: list[int] = []

    def route(ws: WebSocketRoute) -> None:
        server_side = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            asked = json.loads(message)
            if asked["type"] == "leave_table" and not refused:
                refused.append(asked["id"])
                error = {"type": "error", "ref": asked["id"], "code": "store_unavailable"}
                ws.send(json.dumps({**error, "message": IN_DOUBT}))
            else:
                server_side.send(message)

        ws.on_message(from_page)

    ann = await open_player()
    page = ann.page
    await page.route_web_socket(re.compile(".*"), route)
    await page.reload()
    await sign_in(page, "Ann")
    await open_table(page)
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible(timeout=HAND_LIMIT * 1000)
    await page.click(".table-bar .leave")
    await expect(page.locator(".log")).to_contain_text("Not left yet")
    await expect(page.locator(".log")).to_contain_text("Asking again in a moment")
    await played_until_gone(page)
    await expect(page.locator(".farewell")).to_contain_text("You left with")
    assert refused, "the route refused no leave_table"
    assert not await page.locator(".toast-item", has_text="making sure").count()


async def test_a_click_on_leave_pressed_before_a_redraw_and_released_after_it_still_counts(
    open_player: OpenPlayer,
) -> None:
    # The bar was made again at each redraw (a hand's start redraws several times): a
    # click pressed on one "Leave table" and released on the next reached neither.
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible(timeout=HAND_LIMIT * 1000)
    box = await page.locator(".table-bar .leave").bounding_box()
    assert box is not None
    await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    await page.mouse.down()
    await page.evaluate("window.qiuqiu.redraw()")
    await page.mouse.up()
    await expect(page.locator(".table-bar .leave")).to_have_text("Leave now")
