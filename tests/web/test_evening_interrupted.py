"""A player's evening in the browser, interrupted: a server stopped, killed or forgetful,
a bust and the wait for a rebuy, a table short of players, a seat away, and a cutting
phase a watcher waits through. Each test plays against the real server, as in
test_evening.py."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from playwright.async_api import Page, expect
from websockets.asyncio.client import connect

from qiuqiu.cli.connection import Connection
from qiuqiu.protocol import PROTOCOL_VERSION, TableOptions
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from tests.conftest import free_port
from tests.server.processes import HOST_LEASE, Servers
from tests.web.conftest import (
    Player,
    cut_every_connection,
    restarted_on,
    screenshot,
)
from tests.web.evening_helpers import (
    HAND_LIMIT,
    OpenPlayer,
    ann_at_a_table_without_the_bot,
    open_table_without_the_bot,
    socket_player,
)
from tests.web.test_browser import (
    CHECK_OR_CALL,
    MY_TURN,
    frames_of,
    open_table,
    play_hand,
    seated_against_the_bot,
    sign_in,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_the_server_stopping_and_forgetting_the_account_are_said_in_plain_words(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    port = server.port

    await server.stop()
    toast = page.locator("#toast .toast-item")
    await expect(toast.filter(has_text="The server stopped.")).to_be_visible()
    await expect(page.locator("#status")).to_have_attribute("data-status", "reconnecting")

    # The same address, a new server that kept nothing: the page says so, then goes on.
    async with restarted_on(port):
        await expect(
            toast.filter(has_text="The server no longer knows your account")
        ).to_be_visible(timeout=20_000)
        await expect(page.locator(".lobby")).to_be_visible()
        await expect(page.locator(".balance-amount")).to_have_text("1,000")
        # The server stopping stood the seat up, then closed the table with its seed:
        # the page keeps it, and rebuilds the hands from it though the server that came
        # back forgot the table. It said the seed would never come.
        closed = frames_of(ann, "table_closed")
        assert [c["reason"] for c in closed] == ["the server is shutting down"], closed
        await expect(page.locator(".audit")).to_contain_text("shuffle rebuilt")
        await page.screenshot(path=screenshot("server-restarted"))
        assert [w["resumed"] for w in frames_of(ann, "welcome")] == [False, False]


async def test_a_watcher_at_a_server_stopping_is_not_told_of_chips_it_never_had(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # "your chips went back to your balance", said to a page that only watched.
    ann, cici = await open_player(), await open_player()
    await sign_in(ann.page, "Ann")
    table_id = await open_table(ann.page)
    await sign_in(cici.page, "Cici")
    await cici.page.click(f".table-row[data-table-id='{table_id}'] [data-action=watch]")
    await expect(cici.page.locator(".role")).to_have_text("Watching")
    await server.stop()
    for page in (ann.page, cici.page):
        told = page.locator("#toast .toast-item").filter(has_text="The server stopped.")
        await expect(told).to_be_visible()
        await expect(told).not_to_contain_text("your chips")
    # The seat's own chips are said where it stood up, and why, from the table's close:
    # not "the server is stopping, or you were away past the grace period".
    await expect(ann.page.locator(".farewell")).to_contain_text(
        "You were stood up as the table closed (the server is shutting down): your 500 chips"
        " went back to your balance."
    )


async def test_a_server_that_died_and_forgot_everything_leaves_no_chips_at_its_table(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # The header went on counting "+ 490 at the table" of a table no server knew.
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    port = server.port
    # Dead, not stopped: the page hears of no table closing.
    cut_every_connection(server)
    await server.stop()
    async with restarted_on(port):
        toast = page.locator("#toast .toast-item")
        await expect(toast.filter(has_text="is no longer open")).to_be_visible(timeout=20_000)
        await expect(page.locator(".lobby")).to_be_visible()
        await expect(page.locator(".balance-amount")).to_have_text("1,000")
        await expect(page.locator(".at-table")).to_have_count(0)


async def test_hands_at_a_table_a_dead_server_forgot_are_said_not_to_be_rebuilt(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """The hands played there went from the page without a word: no "Shuffles of the
    tables you left" in the lobby, neither rebuilt nor said never to be."""
    ann, table_id = await seated_against_the_bot(open_player)
    page = ann.page
    await play_hand([page], 1)
    port = server.port
    cut_every_connection(server)
    await server.stop()
    async with restarted_on(port):
        await expect(page.locator(".lobby")).to_be_visible(timeout=20_000)
        await expect(page.locator(f".audit[data-table-id='{table_id}']")).to_contain_text(
            "whose shuffle cannot be rebuilt"
        )


async def test_a_hand_its_dead_server_was_playing_is_said_to_be_called_off(
    redis_url: str, open_player: OpenPlayer
) -> None:
    """Bo's table is hosted by one process, Ann plays at it through the other. The host
    is killed mid-hand: the other adopts the table and voids the hand, in a hand_voided
    that comes after a gap in seq. The page went from "Back online." to the next hand
    without a word of why the chips were back."""
    servers = Servers(redis_url)
    try:
        hosting, relaying = free_port(), free_port()
        host = await servers.start(hosting, lease=HOST_LEASE)
        await servers.start(relaying, lease=HOST_LEASE)
        bo = await Connection.open(f"ws://127.0.0.1:{hosting}", name="Bo", reconnect=False)
        table, _ = await bo.open_table(TableOptions(dealer_bot=False, turn_seconds=5), 500)
        ann = await open_player()
        page = ann.page
        await page.goto(f"http://127.0.0.1:{relaying}/")
        await sign_in(page, "Ann")
        await page.locator(
            f".table-row[data-table-id='{table.table_id}'] [data-action=join]"
        ).click()
        await expect(page.locator(".center .phase")).to_have_text(re.compile("Hand #1"))
        host.kill()
        await host.wait()
        await expect(page.locator(".log")).to_contain_text(
            "The hand was called off (the server hosting the table stopped); every chip went back.",
            timeout=HAND_LIMIT * 1000,
        )
        await bo.close()
    finally:
        await servers.kill_remaining()


async def test_a_server_killed_mid_hand_and_started_again_is_said_to_be_back(
    redis_url: str, open_player: OpenPlayer
) -> None:
    # Its hand called off came before the snapshot, and the page never said "Back online."
    servers = Servers(redis_url)
    try:
        port = free_port()
        host = await servers.start(port)
        ann = await open_player()
        page = ann.page
        await page.goto(f"http://127.0.0.1:{port}/")
        await sign_in(page, "Ann")
        await open_table(page)
        await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
        host.kill()
        await host.wait()
        log = page.locator(".log")
        await expect(log).to_contain_text("Connection lost: reconnecting…")
        await servers.start(port)
        await expect(log).to_contain_text(
            "The hand was called off (the server hosting the table stopped)",
            timeout=HAND_LIMIT * 1000,
        )
        await expect(page.locator("#status")).to_have_attribute("data-status", "online")
        await expect(log).to_contain_text("Back online.")
    finally:
        await servers.kill_remaining()


async def go_bust(page: Page) -> None:
    """Everything in on every turn: Max and bet, or call, until the chips are gone."""
    async with asyncio.timeout(HAND_LIMIT * 4):
        while not await page.locator(".bust").count():
            bet = page.locator(f"{MY_TURN} [data-action=bet]:enabled")
            call = page.locator(f"{MY_TURN} [data-action=call]:enabled")
            if await bet.count():
                # A bet of one possible amount has no Max: the field holds that one already.
                most = page.locator(f"{MY_TURN} .chipbtn >> text=Max")
                if await most.count():
                    await most.click()
                await bet.click()
            elif await call.count():
                await call.click()
            await asyncio.sleep(0.05)


@asynccontextmanager
async def busted_at_a_dealer_bot_table(
    open_player: OpenPlayer, grace: float
) -> AsyncIterator[tuple[QiuQiuServer, Player, str]]:
    """Ann, on a server of her own, opens a dealer-bot table with 100 chips and plays
    them all in until she is out; the server, Ann and the table."""
    config = ServerConfig(port=0, hand_pause=0.3, bot_delay=0.0, grace=grace)
    server = QiuQiuServer(config, store=MemoryStore(), rng=random.Random(7))
    await server.start()
    try:
        ann = await open_player()
        page = ann.page
        await page.goto(f"http://127.0.0.1:{server.port}/")
        await sign_in(page, "Ann")
        await page.fill("input[name=buy_in]", "100")
        table_id = await open_table(page)
        await go_bust(page)
        yield server, ann, table_id
    finally:
        await server.stop()


async def test_busting_at_a_dealer_bot_table_keeps_it_open_for_the_rebuy(
    open_player: OpenPlayer,
) -> None:
    async with busted_at_a_dealer_bot_table(open_player, grace=30.0) as (_, ann, table_id):
        page = ann.page
        last = frames_of(ann, "showdown")[-1]
        await expect(page.locator(".result")).to_have_attribute("data-hand", str(last["hand_id"]))
        await expect(page.locator(".result .shown-hand")).to_have_count(2)
        # Each name whole beside the winner's badge, not "Dea…".
        cut_short = await page.locator(".result .shown-hand .who").evaluate_all(
            "names => names.filter((n) => n.scrollWidth > n.clientWidth).map((n) => n.innerText)"
        )
        assert not cut_short
        await expect(page.locator(".bust-title")).to_have_text("You're out of chips")
        # No "next hand soon": none comes for Ann unless she buys in again.
        await expect(page.locator(".center .phase")).to_have_text(
            f"Hand #{last['hand_id']} is over"
        )
        assert not frames_of(ann, "table_closed")
        await page.click("[data-action=rebuy]")
        await expect(page.locator(".seat.me .seat-name")).to_have_text("Ann (you)")
        assert frames_of(ann, "table_joined")[-1]["table_id"] == table_id
        assert len(frames_of(ann, "table_created")) == 1


async def test_a_rebuy_after_the_table_closed_opens_one_like_it_without_an_error(
    open_player: OpenPlayer,
) -> None:
    async with busted_at_a_dealer_bot_table(open_player, grace=1.0) as (server, ann, table_id):
        page = ann.page
        # Nobody buys in within the grace period: the table closes behind the offer.
        async with connect(server.url) as ws, asyncio.timeout(HAND_LIMIT):
            hello = {"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": "Lookout"}
            await ws.send(json.dumps(hello))
            for ref in itertools.count(2):
                await ws.send(json.dumps({"type": "list_tables", "id": ref}))
                listed = json.loads(await ws.recv())
                while listed.get("ref") != ref:
                    listed = json.loads(await ws.recv())
                if table_id not in {t["table_id"] for t in listed["tables"]}:
                    break
                await asyncio.sleep(0.1)
        await page.click("[data-action=rebuy]")
        await expect(page.locator(".seat.me .seat-name")).to_have_text("Ann (you)")
        assert len(frames_of(ann, "table_created")) == 2
        await expect(page.locator(".table-title strong")).not_to_have_text(f"Table {table_id}")
        # It did what the offer said, and says so; a refusal in red would say it failed.
        assert not await page.locator(".toast-item.bad").all_inner_texts()
        await expect(page.locator(".toast-item").first).to_have_text(
            f"Table {table_id} has closed: you sit down at a new one like it."
        )


async def test_a_table_short_of_players_says_it_waits_for_them_not_for_a_next_hand(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # Left alone at a table of players, Ann read "Next hand soon", and none ever came.
    page, table_id = await ann_at_a_table_without_the_bot(open_player)
    waiting = "Waiting for 1 more player to sit down."
    await expect(page.locator(".actions")).to_have_text(waiting)
    async with socket_player(server, "Bo", table_id, 500) as bo:
        await play_hand([page], 1)
        await bo.send(json.dumps({"type": "leave_table", "id": 3, "table_id": table_id}))
        await expect(page.locator(".log")).to_contain_text("Bo left with")
    await expect(page.locator(".center .phase")).to_have_text("Waiting for players")
    await expect(page.locator(".actions")).to_have_text(waiting)


@pytest.mark.parametrize(
    "config", [ServerConfig(port=0, hand_pause=5.0, bot_delay=0.05, grace=3.0)]
)
async def test_an_away_seat_says_no_time_it_does_not_know_and_leaving_past_its_grace(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # A watcher coming in read "away · 0 s" of a seat with its grace period before it
    # (a snapshot does not say how long), and a seat past it read "away · 0 s" until
    # the hand it is stood up after ended.
    ann, cy = await open_player(), await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page)
    async with socket_player(server, "Bo", table_id, 500) as bo:
        await expect(page.locator(MY_TURN)).to_be_visible()
        bo.transport.abort()
        away = page.locator(".felt .seat .tag.away")
        await expect(away).to_have_text(re.compile(r"^away · \d s$"))
        await sign_in(cy.page, "Cy")
        await cy.page.click(f".table-row[data-table-id='{table_id}'] [data-action=watch]")
        await expect(cy.page.locator(".felt .seat .tag.away")).to_have_text("away")
        await expect(away).to_have_text("away · leaving", timeout=HAND_LIMIT * 1000)


async def test_a_watcher_is_told_who_cuts_the_hands_and_when_they_are_cutting(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    async with connect(server.url) as ws:
        hello = {"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": "Host"}
        await ws.send(json.dumps(hello))
        options = {"dealer_bot": False, "manual_split": True}
        await ws.send(json.dumps({"type": "create_table", "id": 2, "options": options}))
        created = json.loads(await ws.recv())
        while created["type"] != "table_created":
            created = json.loads(await ws.recv())
    table_id = created["table"]["table_id"]
    dee = await open_player()
    page = dee.page
    await sign_in(page, "Dee")
    await page.locator(f".table-row[data-table-id='{table_id}'] [data-action=watch]").click()
    await expect(page.locator(".role")).to_have_text("Watching")
    # Bo and Cy check and call, and leave their cuts to the turn's time-out.
    async with (
        socket_player(server, "Bo", table_id, 500),
        socket_player(server, "Cy", table_id, 500),
    ):
        await expect(page.locator(".center")).to_contain_text("cutting", timeout=HAND_LIMIT * 1000)
        await expect(page.locator(".actions")).to_have_text(
            "Waiting for the players to cut their hands…"
        )
        # It was told "Cut your hands into two pairs.", as if it had a hand to cut.
        await expect(page.locator(".log")).to_contain_text(
            "The players cut their hands into two pairs."
        )
        await expect(page.locator(".log")).not_to_contain_text("Cut your")
        # The table says who cuts, as the lobby's row did.
        await expect(page.locator(".table-title .stakes")).to_have_text(
            "Ante 10 · Bet 10+ · 1 round · players cut their own hands · 30 s turns"
        )
