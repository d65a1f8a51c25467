"""The browser page's connection to the server: cut off, then back by itself with the
hand going on; a sign-in left past the hello timeout; and refused, for the connections
of its address or an origin the server does not allow, saying so."""

from __future__ import annotations

import asyncio
import json

import pytest
from playwright.async_api import expect
from websockets.asyncio.client import connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from tests.web.conftest import cut_every_connection, screenshot
from tests.web.test_browser import (
    CHECK_OR_CALL,
    HAND_LIMIT,
    OpenPlayer,
    frames_of,
    my_tiles,
    play_hand,
    seated_against_the_bot,
    sign_in,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")


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
