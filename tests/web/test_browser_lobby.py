"""The browser's lobby: the tables listed with their stakes and seats, joined and
watched; buy-ins and a new table's options checked in the form before anything is sent;
a lobby cut off from its server; and an address naming no open table, which lands in the
lobby saying so."""

from __future__ import annotations

import asyncio
import json

import pytest
from playwright.async_api import expect

from qiuqiu.server.gateway import QiuQiuServer
from tests.web.conftest import Player, cut_every_connection, restarted_on, screenshot
from tests.web.test_browser import (
    HAND_LIMIT,
    OpenPlayer,
    frames_of,
    open_table,
    play_hand,
    sign_in,
    table_by_socket,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def bo_in_the_lobby_of_anns_table(open_player: OpenPlayer) -> tuple[Player, str]:
    """Bo, signed in, in the lobby beside the table Ann opened without the bot; its id."""
    ann, bo = await open_player(), await open_player()
    await sign_in(ann.page, "Ann")
    table_id = await open_table(ann.page, bot=False)
    await sign_in(bo.page, "Bo")
    return bo, table_id


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
