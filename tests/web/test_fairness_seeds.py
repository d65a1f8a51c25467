"""The page's own client seed: one the server would refuse is said and not sent; a
resumed seat, or a tab taking the game back, sends a seed of its own that deals from the
next hand; one the server never confirms fails the second hand dealt without it."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from playwright.async_api import WebSocketRoute, expect

from qiuqiu.server.config import ServerConfig
from tests.web.conftest import DESKTOP, PHONE, QUICK, screenshot
from tests.web.test_browser import (
    CHECK_OR_CALL,
    HAND_LIMIT,
    OpenPlayer,
    answer_turn,
    frames_of,
    open_table,
    play_hand,
    seated_against_the_bot,
    sign_in,
)
from tests.web.test_fairness import SEED, failed_check, listed_seed, play_until_checked

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture
def config() -> ServerConfig:
    return QUICK


PLACEHOLDER_CUT = """input => {
  const value = input.value;
  input.value = input.placeholder;
  const cut = input.scrollWidth > input.clientWidth;
  input.value = value;
  return cut;
}"""
"""Whether ``input``'s placeholder runs past its box (measured as typed text, as it is drawn)."""


@pytest.mark.parametrize("screen", ["desktop", "phone"])
async def test_a_client_seed_the_server_would_refuse_is_said_and_not_sent(
    open_player: OpenPlayer, screen: str
) -> None:
    # "Use this seed" greyed out without a word, and the placeholder that named the
    # characters a seed may hold was cut off in the panel.
    ann = await open_player(PHONE if screen == "phone" else DESKTOP, phone=screen == "phone")
    page = ann.page
    await sign_in(page, "Ann")
    await open_table(page)
    seed = page.locator("input[name=client_seed]")
    use = page.locator("[data-action=set-seed]")
    problem = page.locator(".seed-form .seed-problem")
    await expect(page.locator(".seed-form")).to_contain_text(
        "Letters a\u2013z and A\u2013Z, digits, _ and -, up to 64"
    )
    assert not await seed.evaluate(PLACEHOLDER_CUT)
    await expect(problem).to_be_hidden()

    await seed.fill("lucky 7!")
    await expect(problem).to_have_text(
        "A seed holds only letters a\u2013z and A\u2013Z, digits, _ and -:"
        " not spaces, \u201c!\u201d."
    )
    await expect(use).to_be_disabled()
    await page.locator(".seed-form small").scroll_into_view_if_needed()
    await page.screenshot(path=screenshot(f"seed-refused-{screen}"))
    await seed.press("Enter")
    assert not [m for m in ann.sent if m["type"] == "set_seed"]

    await seed.fill("lucky-7")
    await expect(problem).to_be_hidden()
    await use.click()
    await expect(page.locator(".fairness .seed-line")).to_contain_text("lucky-7")
    assert [m["client_seed"] for m in ann.sent if m["type"] == "set_seed"] == ["lucky-7"]


async def test_a_resumed_seat_sends_a_seed_of_its_own_which_deals_from_the_next_hand(
    open_player: OpenPlayer,
) -> None:
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    (join,) = [m for m in ann.sent if m["type"] == "join_table"]
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()

    # A reload forgets the seed this page joined with: it sends a new one at once.
    await page.reload()
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    (sent,) = [m for m in ann.sent if m["type"] == "set_seed"]
    assert SEED.match(sent["client_seed"])
    assert sent["client_seed"] != join["client_seed"]
    seed_line = page.locator(".fairness .seed-line")
    await expect(seed_line).to_have_text(f"Your client seed: {sent['client_seed'][:16]}…")
    assert [f["client_seed"] for f in frames_of(ann, "seed_set")] == [sent["client_seed"]]

    # The hand under way still has the old seed, which this page cannot know any more.
    await play_hand([page], 1)
    (joined,) = frames_of(ann, "table_joined")
    assert listed_seed(ann, 1, joined["seat"]) == join["client_seed"]
    await play_hand([page], 2)
    assert listed_seed(ann, 2, joined["seat"]) == sent["client_seed"]


async def test_a_seed_set_withheld_after_a_reload_fails_the_second_hand_dealt_without_it(
    open_player: OpenPlayer,
) -> None:
    """Reloaded, the page cannot know its seat's seed, and sends one of its own. A server
    that never confirms it could list a seed of its own choosing in every hand (here,
    the one the page sat with, which it forgot), every deck rebuilding from the seeds
    listed at the close: only the hand it was writing as the seed came may miss it."""
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    withheld: list[str] = []
    started: list[int] = []
    """The hands begun after the reload, as their hand_started came."""

    def route(ws: WebSocketRoute) -> None:
        server_side = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            asked = json.loads(message)
            if asked["type"] == "set_seed":
                withheld.append(asked["client_seed"])  # so no seed_set ever comes
            else:
                server_side.send(message)

        def from_server(message: str | bytes) -> None:
            told = json.loads(message)
            if told["type"] == "hand_started":
                started.append(told["hand_id"])
            ws.send(message)

        ws.on_message(from_page)
        server_side.on_message(from_server)

    await page.route_web_socket(re.compile(".*"), route)
    await page.reload()
    async with asyncio.timeout(HAND_LIMIT * 2):
        while not started:
            await answer_turn(page, 1)
            await asyncio.sleep(0.05)
    assert withheld, "the page sent no seed of its own"
    await play_until_checked(page, started[0])
    await expect(page.locator(f".result[data-hand='{started[0]}'] .verify")).to_contain_text(
        "Deal verified"
    )
    failed = await failed_check(page, started[0] + 1)
    await expect(failed).to_contain_text(
        "A second hand was dealt without the seed this page sent, which the server never confirmed"
    )


async def test_a_tab_taking_the_game_back_sends_a_seed_of_its_own_and_fails_no_hand(
    open_player: OpenPlayer,
) -> None:
    # The tab that took the game sent a seed of its own; the first, taking the game
    # back, held the next hand to the seed it had sent itself: "DEAL CHECK FAILED".
    ann, _ = await seated_against_the_bot(open_player)
    first = ann.page
    await play_hand([first], 1)
    (joined,) = frames_of(ann, "table_joined")

    second = await ann.context.new_page()
    second.on("pageerror", lambda error: ann.errors.append(str(error)))
    await second.goto(first.url)
    confirmed = re.compile(r"^Your client seed: [0-9a-f]{16}…$")
    await expect(second.locator(".fairness .seed-line")).to_have_text(confirmed)
    await play_hand([second], 2)
    # Past the pause between hands: hand 3 is dealt with the second tab's seed.
    await expect(second.locator(".center .phase")).to_contain_text(
        "Hand #3", timeout=HAND_LIMIT * 1000
    )

    await first.bring_to_front()
    await first.click("[data-action=take-back]")
    await expect(first.locator(".center .phase")).to_contain_text("Hand #3")
    await play_until_checked(first, 3)
    await expect(first.locator(".result[data-hand='3'] .verify")).to_contain_text("Deal verified")
    # Sent again, the same, with a second snapshot that may come while it is on its way.
    (seed,) = {m["client_seed"] for m in ann.sent if m["type"] == "set_seed"}
    await play_until_checked(first, 4)
    await expect(first.locator(".result[data-hand='4'] .verify")).to_contain_text("Deal verified")
    assert listed_seed(ann, 4, joined["seat"]) == seed
    await expect(first.locator(".log li.bad")).to_have_count(0)
