"""Signing in from the browser: a name the server refuses leaves the page at its
sign-in card, saying what to do, with nothing on the page claiming a session it has not
got; a name it takes goes to the lobby with no trace of the refusal."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Page, WebSocketRoute, expect
from websockets.asyncio.client import connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from tests.server.test_outage import SwitchedStore
from tests.web.conftest import Player, cut_every_connection, restarted_on
from tests.web.test_away import cut_at
from tests.web.test_browser import HAND_LIMIT, OpenPlayer, frames_of, open_table, sign_in

pytestmark = pytest.mark.asyncio(loop_scope="session")

RESERVED = "That name is the dealer bot's: pick another name."
INVISIBLE = "That name has no visible character: pick another name."
TOO_MANY = "Your address has opened as many new accounts as the server allows for now"


async def enter(page: Page, name: str) -> None:
    await page.fill("input[name=name]", name)
    await page.click("[data-action=enter]")


async def refused_at_sign_in(player: Player, code: str, words: str) -> None:
    """The server refused the page's `hello` with `code`: the sign-in card says `words`
    and takes a name again; nothing says the page is disconnected, or signed in."""
    page = player.page
    async with asyncio.timeout(HAND_LIMIT):
        while not [f for f in frames_of(player, "error") if f["code"] == code]:
            await asyncio.sleep(0.05)
    status = page.locator("#status")
    await expect(status).to_have_attribute("data-status", "need-name")
    await expect(status).to_have_text("Not signed in")
    await expect(status.locator("button")).to_have_count(0)
    await expect(page.locator("#account")).to_be_empty()
    await expect(page.locator(".lobby")).to_have_count(0)
    await expect(page.locator("input[name=name]")).to_be_editable()
    await expect(page.locator("[data-action=enter]")).to_be_enabled()
    await expect(page.locator(".signin .connection-note")).to_have_text(words)


@pytest.mark.parametrize(
    ("name", "code", "words"),
    [("Dealer", "reserved_name", RESERVED), ("\u200b\u200b", "invalid_message", INVISIBLE)],
)
async def test_a_name_refused_leaves_the_page_ready_for_another_and_is_gone_once_signed_in(
    open_player: OpenPlayer, name: str, code: str, words: str
) -> None:
    # The refusal turned the header to "Disconnected" with a Reconnect that did nothing,
    # and its toast was still over the lobby once a good name had signed in.
    ann = await open_player()
    page = ann.page
    await enter(page, name)
    await refused_at_sign_in(ann, code, words)
    await sign_in(page, "Ann")
    await expect(page.locator("#status")).to_have_attribute("data-status", "online")
    for part in ("#main", "#toast", "#status"):
        await expect(page.locator(part)).not_to_contain_text(words)


async def test_a_name_of_spaces_is_said_to_have_no_visible_character_and_sends_nothing(
    open_player: OpenPlayer,
) -> None:
    """With spaces alone, "Take a seat" did nothing at all, or left the refusal of the
    name before on the card ("That name is the dealer bot's")."""
    ann = await open_player()
    page = ann.page
    await enter(page, "Dealer")
    await refused_at_sign_in(ann, "reserved_name", RESERVED)
    await enter(page, "   ")
    await expect(page.locator(".signin .connection-note")).to_have_text(INVISIBLE)
    assert [f["name"] for f in ann.sent if f["type"] == "hello"] == ["Dealer"]
    await sign_in(page, "Ann")


# Long enough for the page's hello to come first on a busy machine: one that goes out as
# the wait runs out is said again on a new connection (the test after this one).
@pytest.mark.parametrize("config", [ServerConfig(port=0, hello_timeout=3.0)])
async def test_a_refused_name_still_says_why_once_the_server_lets_the_connection_go(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """A refused `hello` is no `hello`: the server closes the connection when its time for
    one is up (1008). The page said "no hello within 3 seconds", with a Reconnect that
    sent the refused name again."""
    ann = await open_player()
    page = ann.page
    await enter(page, "Dealer")
    await refused_at_sign_in(ann, "reserved_name", RESERVED)
    async with asyncio.timeout(HAND_LIMIT):
        while not ann.sockets[0].is_closed():
            await asyncio.sleep(0.05)
    await refused_at_sign_in(ann, "reserved_name", RESERVED)
    await expect(page.locator("#toast")).to_be_empty()
    await sign_in(page, "Ann")
    assert [m["name"] for m in ann.sent if m["type"] == "hello"] == ["Dealer", "Ann"]


async def test_a_name_sent_as_the_servers_wait_for_a_hello_runs_out_is_said_on_a_new_connection(
    open_player: OpenPlayer,
) -> None:
    """The server's wait for a `hello` ran out (1008) as the page's went out: the page
    stopped, saying "no hello within 10 seconds", and the player had to reconnect."""
    ann = await open_player()
    page = ann.page
    closed: list[asyncio.Future[None]] = []
    hellos: list[str] = []

    def route(ws: WebSocketRoute) -> None:
        server_side = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            sent = json.loads(message)
            if sent["type"] == "hello":
                hellos.append(sent["name"])
            if sent["type"] == "hello" and not closed:
                why = "no hello within 10 seconds"
                closed.append(asyncio.ensure_future(ws.close(code=1008, reason=why)))
                return
            server_side.send(message)

        ws.on_message(from_page)

    await page.route_web_socket(re.compile(".*"), route)
    await page.reload()
    await sign_in(page, "Ann")
    await expect(page.locator("#status")).to_have_attribute("data-status", "online")
    assert closed, "the first hello met the close"
    assert hellos == ["Ann", "Ann"]


async def test_a_refused_name_is_not_tried_again_after_a_reload(open_player: OpenPlayer) -> None:
    # The page kept the name before the server took it: a reload said hello with it at
    # once, was refused again, and showed nothing but "Disconnected".
    ann = await open_player()
    page = ann.page
    await enter(page, "Dealer")
    await refused_at_sign_in(ann, "reserved_name", RESERVED)
    await page.reload()
    await expect(page.locator("#status")).to_have_attribute("data-status", "need-name")
    await expect(page.locator(".signin input[name=name]")).to_be_editable()
    assert [m["name"] for m in ann.sent if m["type"] == "hello"] == ["Dealer"]


async def open_accounts(server: QiuQiuServer, count: int) -> None:
    """Open `count` accounts from this machine's address, over plain WebSockets."""
    for n in range(count):
        async with connect(server.url) as ws:
            hello = {"type": "hello", "version": PROTOCOL_VERSION, "name": f"Early {n}"}
            await ws.send(json.dumps(hello))
            assert json.loads(await ws.recv())["type"] == "welcome"


@pytest.mark.parametrize("config", [ServerConfig(port=0, new_accounts_per_address=1)])
async def test_too_many_accounts_from_one_address_is_said_in_words_and_the_card_stays(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann = await open_player()
    await open_accounts(server, 1)
    await enter(ann.page, "Ann")
    await refused_at_sign_in(ann, "too_many_accounts", f"{TOO_MANY}: try again later.")
    await ann.page.click("[data-action=enter]")
    async with asyncio.timeout(HAND_LIMIT):
        while len(frames_of(ann, "error")) < 2:
            await asyncio.sleep(0.05)
    await refused_at_sign_in(ann, "too_many_accounts", f"{TOO_MANY}: try again later.")


@contextlib.asynccontextmanager
async def restarted_forgetting(server: QiuQiuServer) -> AsyncIterator[None]:
    """The in-memory server restarts, no longer knowing any token, and refuses the new
    account a page then asks for: its one for this address is taken."""
    port = server.port
    await server.stop()
    async with restarted_on(port, new_accounts_per_address=1) as again:
        await open_accounts(again, 1)
        yield


async def test_an_account_forgotten_and_not_opened_again_shows_no_lobby_nor_balance(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """The page kept the lobby and "Ann 1,000" in its header, beside "Disconnected"."""
    ann = await open_player()
    await sign_in(ann.page, "Ann")
    await expect(ann.page.locator("#account")).to_contain_text("1,000")
    await ann.context.set_offline(True)
    async with restarted_forgetting(server):
        await ann.context.set_offline(False)
        await refused_at_sign_in(ann, "too_many_accounts", f"{TOO_MANY}: try again later.")


async def test_a_page_opened_at_a_forgotten_accounts_table_leaves_the_table_out_of_its_address(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """The address kept `#/table/...`, of a table the restarted server no longer has,
    under the sign-in card: the next reload, or the link shared, named it still."""
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_address = page.url.removesuffix("#/") + f"#/table/{await open_table(page)}"
    async with restarted_forgetting(server):
        await page.goto("about:blank")
        await page.goto(table_address)
        await refused_at_sign_in(ann, "too_many_accounts", f"{TOO_MANY}: try again later.")
        assert "#/table/" not in page.url


async def test_a_name_whose_connection_drops_before_the_answer_signs_in_all_the_same(
    open_player: OpenPlayer,
) -> None:
    # The page said nothing and stayed at its card, "Connected", until the player
    # clicked again: it let the connection go as it does one waiting for a name.
    ann = await open_player()
    page = ann.page
    await cut_at(page, "hello", heard=False)
    await sign_in(page, "Ann")
    await expect(page.locator("#status")).to_have_attribute("data-status", "online")


class StoreAway(SwitchedStore):
    """A store that can be switched off, resuming accounts too."""

    async def account_for_token(self, token_hash: str) -> Any:
        self._fail()
        return await super().account_for_token(token_hash)


async def test_a_resume_refused_while_the_store_is_away_is_tried_again(
    open_player: OpenPlayer,
) -> None:
    """The server cannot reach its store as the page comes back with its token
    (`store_unavailable`). The page said "Disconnected" with a Reconnect that did
    nothing while the refused connection stayed open: it tries again by itself."""
    store = StoreAway()
    server = QiuQiuServer(ServerConfig(port=0), store=store, rng=random.Random(1))
    await server.start()
    try:
        ann = await open_player()
        page = ann.page
        await page.goto(f"http://127.0.0.1:{server.port}/")
        await sign_in(page, "Ann")
        store.off = True
        cut_every_connection(server)
        async with asyncio.timeout(HAND_LIMIT):
            while not [f for f in frames_of(ann, "error") if f["code"] == "store_unavailable"]:
                await asyncio.sleep(0.05)
        await expect(page.locator("#status")).to_have_attribute("data-status", "reconnecting")
        store.off = False
        await expect(page.locator("#status")).to_have_attribute("data-status", "online")
        await expect(page.locator(".lobby")).to_be_visible()
    finally:
        await server.stop()
