"""The page watching several tables: the one it shows is the one its player chose."""

from __future__ import annotations

import pytest
from playwright.async_api import expect
from websockets.asyncio.client import ClientConnection

from qiuqiu.server.gateway import QiuQiuServer
from tests.web.conftest import Player
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
    sight. A reconnect watches them again; the page stayed in the lobby, and later at
    her own seat, not at whichever table was watched again last."""
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

        table_id = await open_table(page)
        await dropped(server, eve, [citra, dewi])
        await expect(page.locator(".table-title strong")).to_have_text(f"Table {table_id}")
        await expect(page.locator(".table-bar .role")).to_have_text("Seat 1")
        assert page.url.endswith(f"#/table/{table_id}"), page.url
