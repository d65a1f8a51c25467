"""The browser client, end to end: a real Chromium clicks through the page that the
real server serves, and the server's own frames say what happened.

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
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from tests.web.conftest import (
    DESKTOP,
    PHONE,
    Player,
    cut_every_connection,
    restarted_on,
    screenshot,
    shows_why_on_timeout,
)

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


async def bo_in_the_lobby_of_anns_table(open_player: OpenPlayer) -> tuple[Player, str]:
    """Bo, signed in, in the lobby beside the table Ann opened without the bot; its id."""
    ann, bo = await open_player(), await open_player()
    await sign_in(ann.page, "Ann")
    table_id = await open_table(ann.page, bot=False)
    await sign_in(bo.page, "Bo")
    return bo, table_id


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


async def test_the_lobby_lists_tables_with_stakes_and_seats_and_players_create_join_and_watch(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    async with (
        table_by_socket(server, "Citra", 800, {"ante": 20, "min_bet": 20, "max_bet": 200}),
        table_by_socket(server, "Dewi", 1000, {"seats": 4, "dealer_bot": False}),
    ):
        ann, bo, cici = await open_player(), await open_player(), await open_player()
        await sign_in(ann.page, "Ann")
        table_id = await open_table(ann.page, bot=False)
        await expect(ann.page.locator(".center .phase")).to_have_text("Waiting for players")

        # Bo sees every table with its stakes and who sits where.
        await sign_in(bo.page, "Bo")
        rows = bo.page.locator(".table-row")
        await expect(rows).to_have_count(3)
        ours = bo.page.locator(f".table-row[data-table-id='{table_id}']")
        await expect(ours.locator(".t-count")).to_have_text("1/2 seats")
        await expect(ours.locator(".t-seats")).to_contain_text("Ann")
        await expect(ours.locator(".t-stakes")).to_contain_text("Ante 10")
        await expect(ours.locator(".badge.people")).to_be_visible()
        citra = rows.filter(has_text="Citra")
        await expect(citra.locator(".t-stakes")).to_contain_text("Ante 20 · bets 20\u2013200")
        await expect(citra.locator(".t-count")).to_have_text("2/2 seats")
        await expect(citra.locator("[data-action=join]")).to_be_disabled()
        await expect(rows.filter(has_text="Dewi").locator(".t-count")).to_have_text("1/4 seats")
        await bo.page.screenshot(path=screenshot("lobby"))

        # Bo joins Ann's table, so a hand starts for the two of them.
        await ours.locator("[data-action=join]").click()
        await expect(bo.page.locator(".seat.me .seat-name")).to_have_text("Bo (you)")
        for page in (ann.page, bo.page):
            await expect(page.locator(".mine .mine-tiles .domino.face")).to_have_count(3)
            await expect(page.locator(".seat:not(.me) .domino.back")).to_have_count(3)

        # Cici watches: both seats, and not one of their tiles face up.
        await sign_in(cici.page, "Cici")
        await cici.page.locator(
            f".table-row[data-table-id='{table_id}'] [data-action=watch]"
        ).click()
        watcher = cici.page
        await expect(watcher.locator(".role")).to_have_text("Watching")
        await expect(watcher.locator(".seat .seat-name")).to_have_text(["Ann", "Bo"])
        await expect(watcher.locator(".seat .domino.back")).to_have_count(6)
        await expect(watcher.locator(".domino.face")).to_have_count(0)
        # A watcher has no seed in the shuffles, and no one has opened the hand history.
        await expect(watcher.locator(".seed-form")).to_be_hidden()
        await expect(watcher.locator(".history")).to_be_hidden()
        seen = json.dumps(cici.frames)
        for hidden in ('"tiles"', '"tile"', '"legal"'):
            assert hidden not in seen

        await play_hand([ann.page, bo.page, watcher], 1)
        # At the showdown the watcher sees every hand, as the players do.
        await expect(watcher.locator(".result .shown-hand")).to_have_count(2)
        await expect(watcher.locator(".result .badge.win")).to_have_count(1)


async def test_a_lobby_cut_off_from_its_server_lists_no_table_it_can_no_longer_see(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """With the server stopped, the lobby listed the tables of its last refresh for the
    whole outage, each with a Join button: a table the server had closed, its stacks as
    they were when the list was read."""
    async with table_by_socket(server, "Citra", 800, {"dealer_bot": False}):
        bo = await open_player()
        await sign_in(bo.page, "Bo")
        await expect(bo.page.locator(".table-row")).to_have_count(1)
    port = server.port
    await server.stop()
    await expect(bo.page.locator("#status")).to_have_attribute("data-status", "reconnecting")
    await expect(bo.page.locator(".table-row")).to_have_count(0)
    await expect(bo.page.locator(".tables-card")).to_contain_text(
        "The open tables are listed again once this page is back online."
    )
    async with restarted_on(port):
        await expect(bo.page.locator("#status")).to_have_attribute("data-status", "online")
        await expect(bo.page.locator(".tables-card")).to_contain_text("No tables yet.")


async def test_a_table_opened_offline_is_said_not_to_be_and_none_is_opened_later(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """Offline, "Open the table and sit down" did nothing at all: not a word."""
    bo = await open_player()
    await sign_in(bo.page, "Bo")
    await bo.context.set_offline(True)
    cut_every_connection(server)
    await expect(bo.page.locator("#status")).not_to_have_attribute("data-status", "online")
    await bo.page.click("[data-action=create]")
    await expect(bo.page.locator("#toast .toast-item").last).to_have_text(
        "Not connected to the server: nothing was sent. Try again once the page is back online."
    )
    await bo.context.set_offline(False)
    await expect(bo.page.locator("#status")).to_have_attribute("data-status", "online")
    assert not [f for f in bo.sent if f["type"] == "create_table"]
    await expect(bo.page.locator(".lobby")).to_be_visible()


async def test_cut_off_the_felt_shows_no_turn_nor_its_timer_until_it_is_back(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """Offline, "Your turn" and its timer stayed on the felt, the timer at 0 s, while the
    server's clock played the turn out."""
    bo, _ = await seated_against_the_bot(open_player)
    page = bo.page
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    await expect(page.locator(".felt .center .turn")).to_have_text("Your turn")
    await bo.context.set_offline(True)
    cut_every_connection(server)
    await expect(page.locator("#status")).not_to_have_attribute("data-status", "online")
    await expect(page.locator(".felt .center .turn")).to_have_count(0)
    await expect(page.locator(".felt .seat .timer")).to_have_count(0)
    await bo.context.set_offline(False)
    await expect(page.locator("#status")).to_have_attribute("data-status", "online")
    await expect(page.locator(".felt .center .turn")).to_have_count(1)


async def test_a_buy_in_the_server_would_refuse_opens_no_table(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann = await open_player()
    await sign_in(ann.page, "Ann")
    toast = ann.page.locator("#toast .toast-item")
    for buy_in, said in (
        ("2000", "not enough for 2,000"),
        ("50", "100 to 1,000 chips (your balance), not 50"),
        ("20000", "100 to 1,000 chips (your balance), not 20,000"),
    ):
        await ann.page.fill("input[name=buy_in]", buy_in)
        await ann.page.click("[data-action=create]")
        await expect(toast.filter(has_text=said)).to_be_visible()
    await ann.page.fill("input[name=buy_in]", "500")
    table_id = await open_table(ann.page)
    assert [f["type"] for f in ann.sent if f["type"] == "create_table"] == ["create_table"]
    assert list(server.lobby.tables) == [table_id]


async def test_a_buy_in_the_server_would_refuse_is_said_in_the_lobby_row_and_not_sent(
    open_player: OpenPlayer,
) -> None:
    # "Join" sent any buy-in, and the server's own wording came back: "buy in with 100
    # to 10000 chips, not 50; your balance is 1000", "buy_in: Input should be a valid integer".
    bo, table_id = await bo_in_the_lobby_of_anns_table(open_player)
    page = bo.page
    row = page.locator(f".table-row[data-table-id='{table_id}']")
    toast = page.locator("#toast .toast-item")
    for buy_in, said in (
        ("50", "Buy in with 100 to 1,000 chips (your balance), not 50."),
        ("20000", "Buy in with 100 to 1,000 chips (your balance), not 20,000."),
        ("5000", "Your balance is 1,000 chips, not enough for 5,000."),
        ("", "Buy in with a whole number of chips, 100 to 1,000 (your balance)."),
        ("12.5", "Buy in with a whole number of chips, 100 to 1,000 (your balance)."),
    ):
        await row.locator("input[name=buy_in]").fill(buy_in)
        await row.locator("[data-action=join]").click()
        await expect(toast.filter(has_text=said).last).to_be_visible()
    assert not [f for f in bo.sent if f["type"] == "join_table"]
    assert not frames_of(bo, "error")
    await row.locator("input[name=buy_in]").fill("300")
    await row.locator("[data-action=join]").click()
    await expect(page.locator(".seat.me")).to_be_visible()
    assert [f["buy_in"] for f in bo.sent if f["type"] == "join_table"] == [300]


async def test_a_buy_in_being_typed_in_the_lobby_outlasts_the_lists_refresh(
    open_player: OpenPlayer,
) -> None:
    # The list, made again every few seconds, put back 500 in the field and took the
    # focus away: typed slowly, 250 became a join with 500.
    bo, table_id = await bo_in_the_lobby_of_anns_table(open_player)
    page = bo.page
    field = page.locator(f".table-row[data-table-id='{table_id}'] input[name=buy_in]")
    await field.fill("250")
    listed = len(frames_of(bo, "table_list"))
    async with asyncio.timeout(HAND_LIMIT):
        while len(frames_of(bo, "table_list")) == listed:
            await asyncio.sleep(0.05)
    await expect(field).to_have_value("250")
    await expect(field).to_be_focused()
    # Enter in the field joins, as it bets in the turn's amount field.
    await page.keyboard.press("Enter")
    await expect(page.locator(".seat.me")).to_be_visible()
    assert [f["buy_in"] for f in bo.sent if f["type"] == "join_table"] == [250]


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


async def test_stakes_that_do_not_agree_are_said_in_the_form_and_not_sent(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # A max bet under the min bet went to the server, and its own wording came back:
    # "max_bet (20) is below min_bet (50)".
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    cases = (
        (
            {"min_bet": "50", "max_bet": "20"},
            "max_bet",
            "The max bet must be at least the min bet, 50.",
        ),
        (
            {"min_buy_in": "2000", "max_buy_in": "1000"},
            "max_buy_in",
            "Buy-ins must go up to at least where they start, 2,000.",
        ),
        (
            {"ante": "1500", "max_buy_in": "1000"},
            "ante",
            "The ante must be no more than the largest buy-in, 1,000.",
        ),
    )
    defaults = {
        "ante": "10",
        "min_bet": "10",
        "max_bet": "",
        "min_buy_in": "100",
        "max_buy_in": "10000",
    }
    for values, told, said in cases:
        for name, value in values.items():
            await page.fill(f"input[name={name}]", value)
        await page.click("[data-action=create]")
        field = page.locator(f"input[name={told}]")
        assert await field.evaluate("i => i.validationMessage") == said
        await expect(field).to_have_css("border-color", "rgb(239, 91, 91)")
        for name, value in defaults.items():
            await page.fill(f"input[name={name}]", value)
    assert not [f for f in ann.sent if f["type"] == "create_table"]
    assert not await page.locator("#toast .toast-item").count()

    await page.fill("input[name=min_bet]", "50")
    await page.fill("input[name=max_bet]", "50")
    await open_table(page)
    created = [f for f in ann.sent if f["type"] == "create_table"]
    assert [(c["options"]["min_bet"], c["options"]["max_bet"]) for c in created] == [(50, 50)]


async def test_the_form_takes_the_options_the_server_takes_and_says_where_it_stops(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # The form stopped a turn at 5 whole seconds and the stakes and buy-ins at 100,000
    # or 1,000,000 chips, where the server and `qiuqiu play --turn-seconds 7.5` go on.
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    taken = {
        "turn_seconds": "7.5",
        "max_buy_in": "2000000",
        "ante": "200000",
        "min_bet": "200000",
        "max_bet": "3000000",
        "min_buy_in": "1000",
    }
    for name, value in taken.items():
        await page.fill(f"input[name={name}]", value)
    for name in taken:
        field = page.locator(f"input[name={name}]")
        assert await field.evaluate("i => i.validationMessage") == "", name
    # Every chip at a table must fit in one amount: six seats of half of 10^12 do not.
    await page.select_option("select[name=seats]", "6")
    await page.fill("input[name=max_buy_in]", "500000000000")
    await page.fill("input[name=buy_in]", "1000")
    await page.click("[data-action=create]")
    most = page.locator("input[name=max_buy_in]")
    assert await most.evaluate("i => i.validationMessage") == (
        "Buy-ins times the seats must be no more than 1,000,000,000,000 chips: at most"
        " 166,666,666,666 at 6 seats."
    )
    assert not [f for f in ann.sent if f["type"] == "create_table"]

    await page.select_option("select[name=seats]", "2")
    await page.fill("input[name=max_buy_in]", "2000000")
    await page.click("[data-action=create]")
    await expect(page.locator(".table-view")).to_be_visible()
    created = [f for f in ann.sent if f["type"] == "create_table"]
    options = created[0]["options"]
    assert {k: options[k] for k in taken} == {
        "turn_seconds": 7.5,
        "ante": 200_000,
        "min_bet": 200_000,
        "max_bet": 3_000_000,
        "min_buy_in": 1_000,
        "max_buy_in": 2_000_000,
    }
    assert not frames_of(ann, "error")


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


async def test_a_dropped_connection_comes_back_by_itself_and_the_hand_goes_on(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    tiles = await my_tiles(page)
    status = page.locator("#status")
    await expect(status).to_have_attribute("data-sessions", "1")

    # The connection dies without a closing handshake, as when a network drops.
    cut_every_connection(server)

    await expect(status).to_have_attribute("data-sessions", "2")
    await expect(status).to_have_attribute("data-status", "online")
    await expect(page.locator(".log")).to_contain_text("Back online.")
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    assert await my_tiles(page) == tiles
    assert [w["resumed"] for w in frames_of(ann, "welcome")] == [False, True]
    await play_hand([page], 1)
    await expect(page.locator(".result .shown-hand")).to_have_count(2)


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


@pytest.mark.parametrize("config", [ServerConfig(port=0, hello_timeout=1.0)])
async def test_a_page_left_at_its_sign_in_past_the_hello_timeout_signs_in_all_the_same(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """The server closes a connection that has said no hello in time (1008): the page,
    waiting for its player to type a name, lets that one go and says hello on a new one."""
    ann = await open_player()
    status = ann.page.locator("#status")
    await expect(status).to_have_attribute("data-status", "need-name")
    async with asyncio.timeout(HAND_LIMIT):
        while not ann.sockets[0].is_closed():
            await asyncio.sleep(0.05)
    await sign_in(ann.page, "Ann")
    await expect(status).to_have_attribute("data-status", "online")
    assert len(ann.sockets) == 2


CAP = 12
"""Connections one address may hold: twice the six Chromium opens at once to load a
page, which count while they close. At six, the page's socket was at times dropped as
it connected, and the page never got to ask for a name."""


@pytest.mark.parametrize(
    "config", [ServerConfig(port=0, hello_timeout=1.0, max_connections_per_address=CAP)]
)
async def test_a_page_refused_for_the_connections_of_its_address_says_so(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """1008 closes more than a flood: the page shows the server's own reason."""
    ann = await open_player()
    status = ann.page.locator("#status")
    await expect(status).to_have_attribute("data-status", "need-name")
    async with asyncio.timeout(HAND_LIMIT):
        while not ann.sockets[0].is_closed():
            await asyncio.sleep(0.05)
    # Every connection the address may hold is taken before the page opens its next.
    held = [await connect(server.url) for _ in range(CAP)]
    for n, connection in enumerate(held):
        await connection.send(
            json.dumps({"type": "hello", "version": PROTOCOL_VERSION, "name": f"H{n}"})
        )
        await connection.recv()
    await ann.page.fill("input[name=name]", "Ann")
    await ann.page.click("[data-action=enter]")
    await expect(status).to_have_attribute("data-status", "stopped")
    reason = f"too many connections from your address (at most {CAP})"
    await expect(ann.page.locator("#toast")).to_contain_text(reason)
    for connection in held:
        await connection.close()


async def test_a_page_from_an_origin_the_server_does_not_allow_is_told_so_plainly(
    open_player: OpenPlayer, page_url: str
) -> None:
    # It said "Reconnecting…" for ever: the browser tells a page nothing of a refused
    # handshake, which looks like a server that is down.
    strict = QiuQiuServer(
        ServerConfig(port=0, allowed_origins=("https://qiuqiu.example",)), store=MemoryStore()
    )
    await strict.start()
    try:
        ann = await open_player()
        page = ann.page
        await page.goto(f"{page_url}?server={strict.url}")
        status = page.locator("#status")
        await expect(status).to_have_attribute("data-status", "refused")
        await expect(status).to_contain_text("Not allowed")
        origin = page_url.rstrip("/")
        await expect(page.locator(".signin .connection-note")).to_contain_text(
            f"This server does not accept connections from this page's origin ({origin})"
        )
        assert not frames_of(ann, "welcome")
        await page.screenshot(path=screenshot("refused-origin"))
    finally:
        await strict.stop()


async def signed_in_at(open_player: OpenPlayer, address: str) -> Player:
    """Ann, signed in, then sent to ``address`` (as a link or a reload would)."""
    ann = await open_player()
    await sign_in(ann.page, "Ann")
    await ann.page.goto(address)
    return ann


async def test_an_address_naming_a_table_that_is_gone_says_so_in_words(
    open_player: OpenPlayer, page_url: str
) -> None:
    # A reload after the server restarted without Redis said "there is no table t...".
    page = (await signed_in_at(open_player, f"{page_url}#/table/t0123abcd")).page
    await expect(page.locator("#toast")).to_contain_text(
        "Table t0123abcd is no longer open: it closed, or the server restarted"
    )
    await expect(page.locator(".lobby")).to_be_visible()


@pytest.mark.parametrize("typed", ["x" * 40, "t0123abcd/", "%20t0123abcd", ""])
async def test_an_address_naming_no_table_id_says_so_in_words(
    open_player: OpenPlayer, page_url: str, typed: str
) -> None:
    # 40 letters said "table_id: String should have at most 32 characters"; the others,
    # nothing at all.
    ann = await signed_in_at(open_player, f"{page_url}#/table/{typed}")
    page = ann.page
    await expect(page.locator("#toast")).to_contain_text(
        "The address names no table: after #/table/ comes a table's id, 1 to 32 letters,"
        " digits, _ or -, such as t3c41b5e0."
    )
    await expect(page.locator("#toast")).not_to_contain_text("String should")
    await expect(page.locator(".lobby")).to_be_visible()
    assert not [m for m in ann.sent if m["type"] == "watch_table"]


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
