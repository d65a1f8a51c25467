"""The page watching several tables: the one it shows is the one its player chose."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import expect
from websockets.asyncio.client import ClientConnection

from qiuqiu.cli.bot import play
from qiuqiu.cli.connection import Connection
from qiuqiu.protocol import TableOptions
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.redis_store import RedisStore
from tests.cli.test_watch import (
    BETWEEN_HANDS,
    SMALL,
    CheckOrCall,
    a_fold_just_played,
    seated,
    seated_to_win,
    the_dealer_down,
)
from tests.conftest import free_port
from tests.leases import lease_taken
from tests.server.processes import HOST_LEASE, Servers
from tests.web.conftest import QUICK, Player
from tests.web.test_browser import OpenPlayer, frames_of, open_table, sign_in, table_by_socket

pytestmark = pytest.mark.asyncio(loop_scope="session")

FOR_GOOD = {"seats": 3, "dealer_bot": False, "min_players": 3}
"""A table that deals no hand while the test watches it."""


async def dropped(server: QiuQiuServer, player: Player, keep: list[ClientConnection]) -> None:
    """The page's connection is cut (the others in ``keep`` stay), and the page is back:
    welcomed again, with a new snapshot of every table it watches."""
    welcomes = len(frames_of(player, "welcome"))
    await player.page.evaluate("() => { window.before = new Map(window.qiuqiu.tables); }")
    kept = {ws.local_address for ws in keep}
    assert server._server is not None
    for connection in list(server._server.connections):
        if connection.remote_address not in kept:
            connection.transport.abort()
    await player.page.wait_for_function(
        "() => [...window.before.keys()].every("
        "id => window.qiuqiu.tables.get(id) !== window.before.get(id))"
    )
    assert len(frames_of(player, "welcome")) == welcomes + 1


async def test_a_reconnect_leaves_the_page_where_it_was_not_at_a_table_it_watched(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """Eve watched two tables and went back to the lobby: they stay watched, out of
    sight, and the lobby offers to go back to them. A reconnect watches them again;
    the page stayed in the lobby, and later at her own seat, not at whichever table
    was watched again last."""
    async with (
        table_by_socket(server, "Citra", 500, FOR_GOOD) as citra,
        table_by_socket(server, "Dewi", 500, FOR_GOOD) as dewi,
    ):
        eve = await open_player()
        page = eve.page
        await sign_in(page, "Eve")
        rows = page.locator(".table-row")
        for name in ("Citra", "Dewi"):
            await rows.filter(has_text=name).locator("[data-action=watch]").click()
            await expect(page.locator(".table-bar .role")).to_have_text("Watching")
            await page.click(".table-bar button:has-text('Lobby')")
            await expect(page.locator(".lobby")).to_be_visible()

        await dropped(server, eve, [citra, dewi])
        await expect(page.locator(".lobby")).to_be_visible()
        assert page.url.endswith("#/"), page.url

        # The lobby says which tables are still watched, and goes back to one as it is.
        back = rows.filter(has_text="Citra").locator("[data-action=open]")
        await expect(back).to_have_text("Back to watching")
        await expect(rows.locator("[data-action=watch]")).to_have_count(0)
        watches = [m for m in eve.sent if m["type"] == "watch_table"]
        await back.click()
        await expect(page.locator(".table-bar .role")).to_have_text("Watching")
        await expect(page.locator(".seat .seat-name")).to_have_text(["Citra"])
        assert [m for m in eve.sent if m["type"] == "watch_table"] == watches
        await page.click(".table-bar button:has-text('Lobby')")

        table_id = await open_table(page)
        await dropped(server, eve, [citra, dewi])
        await expect(page.locator(".table-title strong")).to_have_text(f"Table {table_id}")
        await expect(page.locator(".table-bar .role")).to_have_text("Seat 1")
        assert page.url.endswith(f"#/table/{table_id}"), page.url


async def watching_on(open_player: OpenPlayer, port: int, table_id: str) -> Player:
    """Eve, on the page of the server at ``port``, watching ``table_id`` from its lobby."""
    eve = await open_player()
    await eve.page.goto(f"http://127.0.0.1:{port}/")
    await sign_in(eve.page, "Eve")
    await eve.page.locator(f".table-row[data-table-id='{table_id}'] [data-action=watch]").click()
    await expect(eve.page.locator(".table-bar .role")).to_have_text("Watching")
    return eve


async def test_a_table_watched_out_of_sight_and_taken_over_by_another_server_stays_there(
    redis_url: str, open_player: OpenPlayer
) -> None:
    """Bo's table is hosted by one process; Eve watches it through the other, then goes
    back to the lobby. The host is killed: the other process adopts the table and
    tells Eve, unasked, that she watches it there (PROTOCOL.md, "Several servers"). The
    page stays in the lobby: it went to the table."""
    servers = Servers(redis_url)
    try:
        hosting, relaying = free_port(), free_port()
        host = await servers.start(hosting, lease=HOST_LEASE)
        await servers.start(relaying, lease=HOST_LEASE)
        bo = await Connection.open(f"ws://127.0.0.1:{hosting}", name="Bo", reconnect=False)
        options = TableOptions(seats=3, dealer_bot=False, min_players=3)
        table, _ = await bo.open_table(options, 500)
        eve = await watching_on(open_player, relaying, table.table_id)
        page = eve.page
        await page.click(".table-bar button:has-text('Lobby')")
        await expect(page.locator(".lobby")).to_be_visible()
        await page.evaluate(
            "id => { window.before = window.qiuqiu.tables.get(id); }", table.table_id
        )

        host.kill()
        await host.wait()
        await page.wait_for_function(
            "id => window.qiuqiu.tables.get(id) !== window.before", arg=table.table_id
        )
        unasked = [m for m in frames_of(eve, "table_watched") if "ref" not in m]
        assert unasked, "the adopting process told the page it watches the table there"
        await expect(page.locator(".lobby")).to_be_visible()
        assert page.url.endswith("#/"), page.url
        await bo.close()
    finally:
        await servers.kill_remaining()


@pytest.mark.parametrize("config", [BETWEEN_HANDS])
async def test_a_watch_begun_between_hands_shows_no_one_in_the_hand_that_is_over(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """Bo bet and Cy folded, and the next hand is not dealt: the snapshot Eve's page
    gets still says Cy folded in the last hand, and the other held three tiles. Nobody
    is in a hand now: the page shows no seat folded, and no tiles."""
    async with a_fold_just_played(server) as table_id:
        eve = await open_player()
        page = eve.page
        await sign_in(page, "Eve")
        await page.locator(f".table-row[data-table-id='{table_id}'] [data-action=watch]").click()
        await expect(page.locator(".table-bar .role")).to_have_text("Watching")
        seats = page.locator(".felt .seat")
        await expect(seats.locator(".seat-name-text")).to_have_text(["Bo", "Cy"])
        await expect(page.locator(".felt .phase")).to_have_text("Next hand soon")
        await expect(seats.locator(".tag")).to_have_count(0)
        await expect(seats.locator(".seat-tiles")).to_have_count(0)
        for label in await seats.evaluate_all("boxes => boxes.map(b => b.ariaLabel)"):
            assert "folded" not in label, label


@pytest.mark.parametrize("config", [QUICK])
async def test_the_dealer_bots_top_up_between_hands_is_said_in_the_log(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """The server tops the dealer bot up to its buy-in as a hand ends, and says nothing:
    the next hand's start has its stack back up. The page's log says so."""
    async with seated_to_win(server) as (bo, table_id):
        eve = await open_player()
        page = eve.page
        await sign_in(page, "Eve")
        await page.locator(f".table-row[data-table-id='{table_id}'] [data-action=watch]").click()
        await expect(page.locator(".table-bar .role")).to_have_text("Watching")
        chips = await the_dealer_down(bo, table_id)
        topped_up = (
            f"The dealer bot topped up its stack to {SMALL.max_buy_in:,} (it had {chips:,})."
        )
        await expect(page.locator(".log")).to_contain_text(topped_up)


async def test_a_watched_table_that_moved_to_another_server_is_watched_there(
    redis_url: str, open_player: OpenPlayer
) -> None:
    """The page's server stalled past the table's lease (here its lease is taken at
    Redis, as an adopter does, and lapses for the server to adopt the table again). The
    page said "The table closed: ... reconnect to go on playing" and went back to the
    lobby watching nothing, while the table played on; the terminal client watches on.
    It watches the table there now, and says so."""
    store = await RedisStore.from_url(redis_url)
    server = QiuQiuServer(ServerConfig(port=0, lease=0.3, hand_pause=0.0), store=store)
    await server.start()
    try:
        async with seated(server) as (bo, table_id):
            eve = await watching_on(open_player, server.port, table_id)
            page = eve.page
            await lease_taken(redis_url, table_id)
            await expect(page.locator(".log")).to_contain_text(
                "The table moved to another server: watching it there"
            )
            # Bo's connection was closed (1012) for the move: it comes back as he plays.
            player = CheckOrCall()
            await play(player, bo, table_id, hands=1)
            (result,) = player.results
            # Told to the page, which only a spectator of the table is (the table closes
            # as Bo leaves after it, taking the page back to the lobby).
            async with asyncio.timeout(30):
                while result.hand_id not in {f["hand_id"] for f in frames_of(eve, "hand_ended")}:
                    await asyncio.sleep(0.05)
            assert len([m for m in eve.sent if m["type"] == "watch_table"]) >= 2
    finally:
        await server.stop()
        await store.close()
