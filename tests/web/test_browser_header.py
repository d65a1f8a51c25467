"""The page's header, and the game taken over by another tab of the account: the chips
at the table the header counts beside the balance, and the way back (the bar's button
under the table, the header's in the lobby), in view and covered by nothing."""

from __future__ import annotations

import pytest
from playwright.async_api import expect

from tests.web.conftest import DESKTOP, PHONE, screenshot
from tests.web.test_browser import (
    CHECK_OR_CALL,
    OpenPlayer,
    open_table,
    play_hand,
    seated_against_the_bot,
    sign_in,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_second_tab_of_the_account_takes_the_game_over_and_the_first_can_take_it_back(
    open_player: OpenPlayer,
) -> None:
    ann, _ = await seated_against_the_bot(open_player)
    first = ann.page
    await expect(first.locator(CHECK_OR_CALL)).to_be_visible()
    await expect(first.locator(".felt [data-timer]")).to_have_count(1)

    # The same browser, so the same stored token: the server hands the session over.
    second = await ann.context.new_page()
    second.on("pageerror", lambda error: ann.errors.append(str(error)))
    await second.goto(first.url)
    await expect(second.locator(CHECK_OR_CALL)).to_be_visible()

    await expect(first.locator("#status")).to_have_attribute("data-status", "stopped")
    await expect(first.locator(".log")).to_contain_text("You are back.")
    await expect(first.locator(".actions")).to_contain_text("another tab or window")
    await expect(first.locator(".actions")).not_to_contain_text("Reconnecting")
    await expect(first.locator(".felt [data-timer]")).to_have_count(0)

    await first.click("[data-action=take-back]")
    await expect(first.locator(CHECK_OR_CALL)).to_be_visible()
    await expect(first.locator(".felt [data-timer]")).to_have_count(1)
    await expect(second.locator("[data-action=take-back]")).to_be_visible()
    await play_hand([first], 1)


TOASTS_OVER = """button => {
  const b = button.getBoundingClientRect();
  return [...document.querySelectorAll('#toast .toast-item')].filter((t) => {
    const r = t.getBoundingClientRect();
    return r.left < b.right && b.left < r.right && r.top < b.bottom && b.top < r.bottom;
  }).map((t) => t.textContent);
}"""
"""The notes on screen that cover ``button`` (they let clicks through, not the eye)."""


@pytest.mark.parametrize("screen", ["desktop", "phone"])
async def test_play_here_instead_is_in_view_as_soon_as_another_tab_takes_the_game(
    open_player: OpenPlayer, screen: str
) -> None:
    # The note "This account was opened in another tab or window." covered the button
    # at the bottom of the window for the five seconds it stayed (and at the top, the
    # header's Reconnect): the bar under the table says so, with its button.
    ann = await open_player(PHONE if screen == "phone" else DESKTOP, phone=screen == "phone")
    await sign_in(ann.page, "Ann")
    await open_table(ann.page)
    first = ann.page
    await expect(first.locator(CHECK_OR_CALL)).to_be_visible()
    second = await ann.context.new_page()
    await second.goto(first.url)
    take_back = first.locator("[data-action=take-back]")
    await expect(take_back).to_be_visible()
    await expect(first.locator(".actions")).to_contain_text("another tab or window")
    assert await take_back.evaluate(TOASTS_OVER) == []
    # One way back: the header said "Disconnected" with a Reconnect of its own beside
    # the bar's button, two buttons doing the one thing.
    await expect(first.locator("#status")).to_contain_text("Playing in another tab")
    await expect(first.locator("#status button")).to_be_hidden()
    await first.screenshot(path=screenshot(f"taken-over-{screen}"))
    await take_back.click()
    await expect(first.locator(CHECK_OR_CALL)).to_be_visible()


async def test_in_the_lobby_the_header_takes_the_game_back_from_another_tab(
    open_player: OpenPlayer,
) -> None:
    # Away from the table there is no bar with its button: the header's is the way back.
    ann, _ = await seated_against_the_bot(open_player)
    first = ann.page
    await expect(first.locator(CHECK_OR_CALL)).to_be_visible()
    second = await ann.context.new_page()
    await second.goto(first.url)
    await expect(first.locator("[data-action=take-back]")).to_be_visible()
    await first.click(".table-bar >> text=← Lobby")
    await expect(first.locator(".lobby")).to_be_visible()
    await expect(first.locator("#status")).to_contain_text("Playing in another tab")
    # Online all the same: the list said it came back "once this page is back online".
    await expect(first.locator(".lobby .empty")).to_have_text(
        "The open tables are listed again once you play here again (Play here instead, above)."
    )
    take_back = first.locator("#status button")
    await expect(take_back).to_have_text("Play here instead")
    await take_back.click()
    await expect(first.locator("#status")).to_have_attribute("data-status", "online")
    await expect(second.locator("[data-action=take-back]")).to_be_visible()


HEADER_CROWDED = """() => {
  const parts = ['.brand', '.balance-amount', '.at-table', '.session', '.status']
    .map((s) => [s, document.querySelector(s).getBoundingClientRect()]);
  const out = parts.filter(([, r]) => r.width === 0 || r.left < 0 || r.right > innerWidth)
    .map(([s]) => `${s} out of view`);
  for (const [i, [a, r]] of parts.entries()) {
    for (const [b, q] of parts.slice(i + 1)) {
      if (r.left < q.right && q.left < r.right && r.top < q.bottom && q.top < r.bottom) {
        out.push(`${a} over ${b}`);
      }
    }
  }
  return out;
}"""
"""What of the header is out of view, or covered by another part of it."""


async def test_on_a_phone_the_header_shows_the_chips_at_the_table_and_covers_nothing(
    open_player: OpenPlayer,
) -> None:
    # At 390 px the header left out "+ 490 at the table"; once another tab took the
    # game, "Disconnected" and its Reconnect button covered the balance.
    ann = await open_player(PHONE, phone=True)
    page = ann.page
    await sign_in(page, "Ann")
    await open_table(page)
    await expect(page.locator(".seat.me .seat-stack")).to_have_text("490")
    await expect(page.locator(".at-table")).to_be_visible()
    await expect(page.locator(".at-table")).to_have_text(" + 490 at the table")
    assert await page.evaluate(HEADER_CROWDED) == []
    second = await ann.context.new_page()
    await second.goto(page.url)
    await expect(page.locator("#status")).to_contain_text("Playing in another tab")
    assert await page.evaluate(HEADER_CROWDED) == []
    await page.click(".table-bar >> text=← Lobby")
    await expect(page.locator("#status button")).to_have_text("Play here instead")
    assert await page.evaluate(HEADER_CROWDED) == []
    await page.screenshot(path=screenshot("taken-over-lobby-phone"))


async def test_the_chips_at_two_tables_are_said_to_be_at_two_tables(
    open_player: OpenPlayer,
) -> None:
    # Seated at two tables, the header said "+ 980 at the table".
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await expect(page.locator(".at-table")).to_have_text(" + 490 at the table")
    await page.click(".table-bar >> text=← Lobby")
    await open_table(page)
    await expect(page.locator(".at-table")).to_have_text(" + 980 at 2 tables")


async def test_the_chips_at_the_table_in_the_header_are_the_stack_the_seat_shows(
    open_player: OpenPlayer,
) -> None:
    # The header kept the stack the seat sat down with, or had as the last hand ended:
    # "+ 500 at the table" beside a seat of 490 once the ante was in.
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    await expect(page.locator(".seat.me .seat-stack")).to_have_text("490")
    await expect(page.locator(".at-table")).to_have_text(" + 490 at the table")
