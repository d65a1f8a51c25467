"""The browser client, end to end, at the table: a real Chromium plays whole hands by
clicks, keys and taps on the page that the real server serves, and bets with the turn's
controls; the server's own frames say what happened. The lobby is
test_browser_lobby.py; the page's connection, test_browser_connection.py; the header and
another tab taking the game, test_browser_header.py.

Every wait is for something to appear on the page (never a timing assertion).
They take the screenshots in docs/screenshots/ (conftest.SCREENSHOTS says where they go).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from playwright.async_api import Page, expect
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from websockets.asyncio.client import ClientConnection, connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.gateway import QiuQiuServer
from tests.web.conftest import PHONE, Player, screenshot, shows_why_on_timeout

pytestmark = pytest.mark.asyncio(loop_scope="session")

OpenPlayer = Callable[..., Awaitable[Player]]

MY_TURN = ".actions.my-turn"
CHECK_OR_CALL = f"{MY_TURN} button:is([data-action=check], [data-action=call]):enabled"
CHECK, CALL, FOLD = (
    f"{MY_TURN} button[data-action={action}]:enabled" for action in ("check", "call", "fold")
)
HAND_LIMIT = 15.0
"""Seconds a hand may take before a test gives up on it (the bot acts at once)."""


VALUES_BROKEN = """element => {
  const broken = [];
  const width = element.style.width;
  element.style.width = "1px";
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const found of node.data.matchAll(/\\d-\\d/g)) {
      const range = document.createRange();
      range.setStart(node, found.index);
      range.setEnd(node, found.index + 3);
      const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      if (tops.size > 1) broken.push(found[0]);
    }
  }
  element.style.width = width;
  return broken;
}"""
"""The hand values (``9-6``) in ``element`` whose text runs over two lines when it is
as narrow as it can be: wherever a line may break, it does."""


async def sign_in(page: Page, name: str) -> None:
    await page.fill("input[name=name]", name)
    await page.click("[data-action=enter]")
    await expect(page.locator(".lobby")).to_be_visible()


async def open_table(page: Page, *, bot: bool = True, seats: int = 2) -> str:
    """Open a table from the lobby's form and sit down; its id."""
    await page.select_option("select[name=seats]", str(seats))
    await page.set_checked("input[name=dealer_bot]", bot)
    await page.click("[data-action=create]")
    await expect(page.locator(".table-view")).to_be_visible()
    title = await page.locator(".table-title strong").inner_text()
    return title.removeprefix("Table ")


async def seated_against_the_bot(open_player: OpenPlayer) -> tuple[Player, str]:
    """Ann, signed in from a desktop browser, at a new table against the dealer bot."""
    ann = await open_player()
    await sign_in(ann.page, "Ann")
    return ann, await open_table(ann.page)


async def play_hand(
    pages: list[Page], hand: int, *, tap: bool = False, fold_to_bets: bool = False
) -> None:
    """Answer each turn (:func:`answer_turn`) on whichever page has it, until every page
    has shown hand ``hand``'s result with its deal verified."""
    done = [f".result[data-hand='{hand}'] .verify.ok" for _ in pages]
    async with (
        shows_why_on_timeout(f"hand {hand} never verified", *pages),
        asyncio.timeout(HAND_LIMIT),
    ):
        while True:
            finished = [
                await page.locator(sel).count() > 0 for page, sel in zip(pages, done, strict=True)
            ]
            if all(finished):
                return
            for page in pages:
                await answer_turn(page, hand, tap=tap, fold_to_bets=fold_to_bets)
            await asyncio.sleep(0.05)


async def answer_turn(
    page: Page, hand: int, *, tap: bool = False, fold_to_bets: bool = False, script: bool = False
) -> bool:
    """Check or call (or, with ``fold_to_bets``, check or fold: never more than the ante
    lost) if the page has its turn in hand ``hand`` or an earlier one, never in a later
    one: a test waiting for hand ``hand``'s result would lose it to the next hand's.
    ``script`` clicks from the page's own script (Playwright's click would scroll the
    button into view), and waits for the turn's buttons to go. Whether it answered."""
    answers = [CHECK, FOLD if fold_to_bets else CALL]
    if not await page.evaluate(MARK_THE_ANSWER, [hand, answers, script]):
        return False
    button = page.locator(f"[data-answers-hand='{hand}']")
    if script:
        await button.wait_for(state="detached")
        return True
    # Its turn may go by first: the hand ended, or another tab acted. A tab in the
    # background takes a second or more to be clicked at all.
    try:
        await (button.tap if tap else button.click)(timeout=HAND_LIMIT * 1000 / 3)
    except PlaywrightTimeoutError:
        return False
    return True


MARK_THE_ANSWER = """([hand, answers, script]) => {
  // Its result stays in view until the next hand ends: played on at once (no pause
  // between hands), a page can be past the hand before its result was looked for.
  const past = [...window.qiuqiu.tables.values()].some((t) => (t.hand?.handId ?? 0) > hand);
  const button = past ? null : answers.map((a) => document.querySelector(a)).find((b) => b);
  for (const b of document.querySelectorAll("[data-answers-hand]")) delete b.dataset.answersHand;
  if (!button) return false;
  button.dataset.answersHand = String(hand);
  if (script) button.click();
  return true;
}"""
"""Mark the button :func:`answer_turn` clicks (or click it), in the same task that saw
the page at ``hand`` or before: a new turn draws new buttons, so a click can never land
on a later hand's."""


async def my_tiles(page: Page) -> list[str]:
    tiles: list[str] = await page.locator(".mine .mine-tiles .domino.face").evaluate_all(
        "tiles => tiles.map(t => t.dataset.tile)"
    )
    return tiles


def frames_of(player: Player, type: str) -> list[dict[str, Any]]:
    return [frame for frame in player.frames if frame.get("type") == type]


async def no_sideways_scroll(page: Page) -> None:
    overflow = await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"the page is {overflow} px wider than the screen"


@asynccontextmanager
async def table_by_socket(
    server: QiuQiuServer, name: str, buy_in: int, options: dict[str, Any]
) -> AsyncIterator[ClientConnection]:
    """A player who opened a table over a plain WebSocket, seated until the block ends."""
    async with connect(server.url) as ws:
        await ws.send(
            json.dumps({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": name})
        )
        await ws.send(
            json.dumps({"type": "create_table", "id": 2, "buy_in": buy_in, "options": options})
        )
        async with asyncio.timeout(5):
            while json.loads(await ws.recv())["type"] != "table_joined":
                pass
        yield ws


async def test_a_whole_hand_against_the_dealer_bot_is_played_by_clicks_and_its_deal_verified(
    open_player: OpenPlayer,
) -> None:
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page

    # The first turn: three tiles face up, the dealer's face down, the antes in the pot.
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    assert len(await my_tiles(page)) == 3
    await expect(page.locator(".seat:not(.me) .domino.back")).to_have_count(3)
    await expect(page.locator(".pot-amount")).to_have_text("20")
    await expect(page.locator(".seat.me .seat-stack")).to_have_text("490")
    await expect(page.locator(".seat.me")).to_have_class("seat me actor")
    await expect(page.locator(f"{MY_TURN} .timer-text")).to_have_text(re.compile(r"^\d+ s$"))
    await expect(page.locator(".center .turn")).to_have_text("Your turn")
    # What a screen reader is told of each seat: who, what part, how many chips.
    felt = page.get_by_role("group", name="table", exact=True)
    await expect(felt.get_by_role("group", name="Ann (you), 490 chips, to act")).to_be_visible()
    dealer = "Dealer, the dealer bot, on the button, 9,990 chips"
    await expect(felt.get_by_role("group", name=dealer, exact=True)).to_be_visible()
    await page.screenshot(path=screenshot("hand"))

    await play_hand([page], 1)

    # Every hand the server showed is on the page, tile for tile, and so is the winner.
    (shown,) = frames_of(ann, "showdown")
    rows = page.locator(".result .shown-hand")
    await expect(rows).to_have_count(len(shown["hands"]))
    for hand in shown["hands"]:
        row = page.locator(f".result .shown-hand[data-seat='{hand['seat']}']")
        tiles = await row.locator(".domino.face").evaluate_all("ts => ts.map(t => t.dataset.tile)")
        assert sorted(tiles) == sorted(hand["tiles"])
    winners = {
        share["seat"] for award in frames_of(ann, "pot_awarded") for share in award["shares"]
    }
    for seat in winners:
        await expect(
            page.locator(f".result .shown-hand[data-seat='{seat}'] .badge.win")
        ).to_be_visible()
    await expect(page.locator(".result .verify.ok")).to_contain_text("Deal verified")
    (joined,) = frames_of(ann, "table_joined")
    (ended,) = frames_of(ann, "hand_ended")
    stack = next(s["amount"] for s in ended["stacks"] if s["seat"] == joined["seat"])
    if stack:
        best = page.locator(".mine .best-value")
        await expect(best).to_have_text(re.compile(r"^(\d-\d|.+!)$"))
    else:  # the bot can put every chip in: an all-in call lost empties the seat
        await expect(page.locator(".mine")).to_contain_text("Your seat is empty")
    await expect(page.locator(".center .outcome")).to_contain_text("win")
    await page.screenshot(path=screenshot("showdown"))


async def test_a_hand_won_by_a_fold_promises_no_fourth_tile_to_anyone(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """Under the three tiles of a hand over (won by a fold), and under a folded player's,
    the page still said "The fourth tile comes after the betting."""
    ann, bo = await open_player(), await open_player()
    await sign_in(ann.page, "Ann")
    table_id = await open_table(ann.page, bot=False)
    await sign_in(bo.page, "Bo")
    await bo.page.locator(f".table-row[data-table-id='{table_id}'] [data-action=join]").click()
    async with asyncio.timeout(HAND_LIMIT):
        while not (turns := [p for p in (ann.page, bo.page) if await p.locator(MY_TURN).count()]):
            await asyncio.sleep(0.05)
    first = turns[0]
    await first.click(f"{MY_TURN} [data-action=bet]")
    other = bo.page if first is ann.page else ann.page
    await other.click(f"{MY_TURN} [data-action=fold]")
    for page in (first, other):
        await expect(page.locator(".result[data-hand='1'] .verify.ok")).to_be_visible()
        await expect(page.locator(".mine .mine-tiles .domino.face")).to_have_count(3)
        await expect(page.locator(".mine")).not_to_contain_text("fourth tile")


async def test_a_player_on_the_keyboard_finds_each_turns_actions_one_tab_away(
    open_player: OpenPlayer,
) -> None:
    """Each turn gives the focus back to the action panel (the last turn's buttons took it
    with them), so Tab reaches the turn's actions and Enter plays one; focus put
    elsewhere by the player stays there."""
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page

    def my_turns() -> int:
        return sum(1 for f in frames_of(ann, "turn_started") if f.get("legal"))

    for _ in range(4):
        await expect(page.locator(f"{MY_TURN}:focus")).to_have_count(1)
        passive = page.locator(f"{MY_TURN} :is([data-action=check], [data-action=call]):focus")
        for _ in range(4):  # past Fold, when there is a bet to answer
            await page.keyboard.press("Tab")
            if await passive.count():
                break
        await expect(passive).to_have_count(1)
        turns = my_turns()
        await page.keyboard.press("Enter")
        async with asyncio.timeout(HAND_LIMIT):
            while my_turns() == turns:
                await asyncio.sleep(0.05)
    await page.locator("input[name=client_seed]").focus()
    turns = my_turns()
    await page.locator(CHECK_OR_CALL).first.click()
    await page.locator("input[name=client_seed]").focus()
    async with asyncio.timeout(HAND_LIMIT):
        while my_turns() == turns:
            await asyncio.sleep(0.05)
    await expect(page.locator(MY_TURN)).to_have_count(1)
    await expect(page.locator("input[name=client_seed]")).to_be_focused()


async def test_a_reload_mid_hand_resumes_the_seat_with_its_tiles_and_the_hand_goes_on(
    open_player: OpenPlayer,
) -> None:
    ann, table_id = await seated_against_the_bot(open_player)
    page = ann.page
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    tiles = await my_tiles(page)
    token = await page.evaluate("Object.keys(localStorage).find(k => k.startsWith('qiuqiu.token'))")
    assert token is not None

    await page.reload()

    # The resume token brought the same account back to its seat, mid-hand.
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    assert await my_tiles(page) == tiles
    assert page.url.endswith(f"#/table/{table_id}")
    welcomes = frames_of(ann, "welcome")
    assert [w["resumed"] for w in welcomes] == [False, True]
    assert welcomes[1]["tables"] == [table_id]
    await play_hand([page], 1)
    await expect(page.locator(".result .shown-hand")).to_have_count(2)


async def test_on_a_phone_sized_screen_nothing_scrolls_sideways_and_a_hand_is_played_by_tapping(
    open_player: OpenPlayer,
) -> None:
    bo = await open_player(PHONE, phone=True)
    page = bo.page
    await sign_in(page, "Bo")
    await no_sideways_scroll(page)
    await open_table(page)
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    await no_sideways_scroll(page)

    # Every button, the amount field and every tile fit across the screen.
    width = PHONE["width"]
    # (The slider is left out on a phone: the number box and its shortcuts do its job.)
    controls = page.locator(f"{MY_TURN} button, {MY_TURN} input, .mine .domino, .seat").locator(
        "visible=true"
    )
    for box in [await c.bounding_box() for c in await controls.all()]:
        assert box is not None
        assert box["x"] >= 0, box
        assert box["x"] + box["width"] <= width, box
    await page.screenshot(path=screenshot("phone"))
    await page.locator(CHECK_OR_CALL).first.scroll_into_view_if_needed()
    await expect(page.locator(CHECK_OR_CALL).first).to_be_in_viewport()

    await play_hand([page], 1, tap=True)
    await expect(page.locator(".result .shown-hand")).to_have_count(2)
    await no_sideways_scroll(page)
    # The winning hand's value is one word in the middle of the table: "9-" on one
    # line and "6" on the next read as two numbers.
    await expect(page.locator(".center .outcome")).to_be_visible()
    broken = await page.locator(".center .outcome").evaluate(VALUES_BROKEN)
    assert broken == [], broken


async def test_a_bet_of_one_possible_amount_offers_no_shortcuts_to_it(
    open_player: OpenPlayer,
) -> None:
    # At a table whose bets are 50 and no other, the page offered Min, ½ pot, Pot and
    # Max, each setting the 50 already in the field.
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    await page.fill("input[name=min_bet]", "50")
    await page.fill("input[name=max_bet]", "50")
    await open_table(page)
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    legal = [f["legal"] for f in frames_of(ann, "turn_started") if "legal" in f][-1]
    assert legal["bet"] == {"min": 50, "max": 50}
    await expect(page.locator(f"{MY_TURN} [data-action=bet]")).to_have_text("Bet 50")
    await expect(page.locator(f"{MY_TURN} .amount .hint")).to_have_text("50 only")
    await expect(page.locator(f"{MY_TURN} .chipbtn")).to_have_count(0)
    await page.screenshot(path=screenshot("one-amount"))


@pytest.mark.parametrize(
    ("min_bet", "max_bet", "shortcuts"),
    [
        # ½ pot (10) is the min bet and the pot (20) the max.
        (10, 20, {"Min": 10, "Max": 20}),
        # The pot (20) is over the max bet, and pulled down to it.
        (5, 15, {"Min": 5, "½ pot": 10, "Max": 15}),
        # ½ pot (10) too.
        (5, 8, {"Min": 5, "Max": 8}),
    ],
)
async def test_no_two_bet_shortcuts_set_the_same_amount(
    open_player: OpenPlayer, min_bet: int, max_bet: int, shortcuts: dict[str, int]
) -> None:
    # Min, ½ pot, Pot and Max were offered whatever they came to: at a bet of 10 to 20
    # into a pot of 20, ½ pot set what Min did, and Pot what Max did.
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    await page.fill("input[name=min_bet]", str(min_bet))
    await page.fill("input[name=max_bet]", str(max_bet))
    await open_table(page)
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    # At the dealer bot's table the player acts first: the pot is the two antes of 10.
    (turn,) = [f for f in frames_of(ann, "turn_started") if "legal" in f]
    assert (turn["pot"], turn["legal"]["bet"]) == (20, {"min": min_bet, "max": max_bet})
    buttons = page.locator(f"{MY_TURN} .chipbtn")
    await expect(buttons).to_have_text(list(shortcuts))
    amount = page.locator(f"{MY_TURN} input[name=amount]")
    for i, n in enumerate(shortcuts.values()):
        await buttons.nth(i).click()
        await expect(amount).to_have_value(str(n))


async def test_the_amount_field_is_bounded_by_the_legal_range_of_the_turn(
    open_player: OpenPlayer,
) -> None:
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()

    legal = [f["legal"] for f in frames_of(ann, "turn_started") if "legal" in f][-1]
    low, high = legal["bet"]["min"], legal["bet"]["max"]
    amount = page.locator(f"{MY_TURN} input[name=amount]")
    bet = page.locator(f"{MY_TURN} [data-action=bet]")
    await expect(amount).to_have_attribute("min", str(low))
    await expect(amount).to_have_attribute("max", str(high))
    await expect(amount).to_have_value(str(low))

    # Out of range, the bet cannot be sent; leaving the field pulls it back in range.
    await amount.fill(str(high + 1))
    await expect(bet).to_be_disabled()
    await expect(amount).to_have_class(re.compile(r"\binvalid\b"))
    await amount.press("Tab")
    await expect(amount).to_have_value(str(high))
    await amount.fill(str(low - 1))
    await expect(bet).to_be_disabled()
    await amount.press("Tab")
    await expect(amount).to_have_value(str(low))
    await page.click(f"{MY_TURN} .chipbtn >> text=Max")
    await expect(amount).to_have_value(str(high))

    await amount.fill("30")
    await expect(bet).to_have_text("Bet 30")
    await bet.click()
    await expect(page.locator(".log")).to_contain_text("You bet 30.")
    placed = frames_of(ann, "bet_placed")
    assert placed[0]["seat"] == 0
    assert placed[0]["amount"] == 30
    assert not frames_of(ann, "error")
    # The page's own seed makes every deal new, so the bot may answer with a raise.
    await play_hand([page], 1)
