"""A player's evening in the browser, its players' names: players who share a name told
apart by their seats, on a phone too; a right-to-left name in the lobby and the log; a
long name with no space wrapped in the log. Each test plays against the real server, as
in test_evening.py."""

from __future__ import annotations

import contextlib
import re

import pytest
from playwright.async_api import expect

from qiuqiu.server.gateway import QiuQiuServer
from tests.web.conftest import PHONE, screenshot
from tests.web.evening_helpers import (
    OpenPlayer,
    ann_at_a_table_without_the_bot,
    open_table_without_the_bot,
    socket_player,
)
from tests.web.test_browser import play_hand, sign_in

pytestmark = pytest.mark.asyncio(loop_scope="session")


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
