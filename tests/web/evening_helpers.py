"""What the tests of a player's evening in the browser share: players on plain WebSockets,
a table opened without the dealer bot, checking through turns, the page's signs for a
net and a seed typed in, a past hand replayed to its end."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from playwright.async_api import Locator, Page, expect
from websockets.asyncio.client import ClientConnection, connect

from qiuqiu.engine import compare
from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.redis_store import RedisStore
from tests.dealing import known_table_seed, three_seat_seed
from tests.web.conftest import Player
from tests.web.test_browser import CHECK_OR_CALL, MY_TURN, open_table, sign_in


async def check_until(page: Page, wanted: str) -> None:
    """Check at each of this page's turns until the button ``wanted`` is there."""
    # One look in the page's own thread: two, and the turn looked for could come
    # between them, to be checked away.
    look = """([wanted, check]) => {
        if (document.querySelector(wanted)) return true;
        document.querySelector(check)?.click();
        return false;
    }"""
    check = f"{MY_TURN} [data-action=check]:enabled"
    async with asyncio.timeout(HAND_LIMIT):
        while not await page.evaluate(look, [wanted, check]):
            await asyncio.sleep(0.05)


OpenPlayer = Callable[..., Awaitable[Player]]
HAND_LIMIT = 30.0
"""Seconds a test gives a hand, or a run of hands, before it gives up (not a timing check)."""


async def seat_under_the_panel(page: Page) -> dict[str, float] | None:
    """Where the turn's panel covers your own seat box (its stack, tiles and timer), as
    the window shows them now; ``None`` where it does not."""
    overlap: dict[str, float] | None = await page.evaluate(
        """() => {
             const seat = document.querySelector('.seat.me').getBoundingClientRect();
             const panel = document.querySelector('.actions.my-turn').getBoundingClientRect();
             const across = Math.min(seat.right, panel.right) - Math.max(seat.left, panel.left);
             const down = Math.min(seat.bottom, panel.bottom) - Math.max(seat.top, panel.top);
             return across > 0 && down > 0
               ? {seat_bottom: seat.bottom, panel_top: panel.top, height: innerHeight}
               : null;
           }"""
    )
    return overlap


@asynccontextmanager
async def socket_player(
    server: QiuQiuServer,
    name: str,
    table_id: str,
    buy_in: int,
    *,
    all_in: bool = False,
    bets: bool = False,
    folds: bool = False,
) -> AsyncIterator[ClientConnection]:
    """A player on a plain WebSocket at ``table_id``: checks or calls on each turn (or,
    ``all_in``, bets everything it may and calls whatever it takes; ``bets``, bets the
    least it may rather than check; ``folds``, folds rather than call), until the block
    ends."""
    async with connect(server.url) as ws:
        await ws.send(
            json.dumps({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": name})
        )
        await ws.send(
            json.dumps({"type": "join_table", "id": 2, "table_id": table_id, "buy_in": buy_in})
        )

        async def play() -> None:
            async for frame in ws:
                m = json.loads(frame)
                legal = m.get("legal") if m["type"] == "turn_started" else None
                if legal is None:
                    continue
                action = "check" if legal.get("check") else "fold" if folds else "call"
                if (all_in or bets) and legal.get("check") and legal.get("bet"):
                    action = "bet"
                move = {"type": action, "table_id": table_id, "hand_id": m["hand_id"]}
                if action == "bet":
                    move["amount"] = legal["bet"]["max" if all_in else "min"]
                await ws.send(json.dumps(move))

        task = asyncio.create_task(play())
        try:
            yield ws
        finally:
            task.cancel()


async def open_table_without_the_bot(
    page: Page, *, seats: int = 2, buy_in: int = 500, to_start: int = 2
) -> str:
    await page.select_option("select[name=seats]", str(seats))
    await page.set_checked("input[name=dealer_bot]", False)
    await page.fill("input[name=min_players]", str(to_start))
    await page.fill("input[name=buy_in]", str(buy_in))
    await page.click("[data-action=create]")
    await expect(page.locator(".table-view")).to_be_visible()
    title = await page.locator(".table-title strong").inner_text()
    return title.removeprefix("Table ")


async def ann_at_a_table_without_the_bot(open_player: OpenPlayer) -> tuple[Page, str]:
    """Ann's page, signed in and seated at a two-seat table of her own without the
    dealer bot; and the table's id."""
    ann = await open_player()
    await sign_in(ann.page, "Ann")
    return ann.page, await open_table_without_the_bot(ann.page)


def signed(n: int) -> str:
    """A number of chips as the page writes a gain or a loss."""
    return f"+{n}" if n > 0 else f"\u2212{-n}" if n < 0 else "±0"


async def use_seed(page: Page, seed: str) -> None:
    """Type ``seed`` into the fair-deal panel and wait for the server to take it."""
    await page.fill("input[name=client_seed]", seed)
    await page.click("[data-action=set-seed]")
    await expect(page.locator(".seed-line")).to_contain_text(f"{seed[:16]}")
    await expect(page.locator(".seed-line")).not_to_contain_text("on its way")


async def replayed_to_the_end(page: Page, hand: int) -> Locator:
    """Open the hand history, replay hand ``hand`` and skip to its end; the replay."""
    await page.click("[data-action=history]")
    await page.locator(f".history .past-hand[data-hand='{hand}'] [data-action=replay]").click()
    await page.click("[data-action=replay-end]")
    return page.locator(".history .replay")


@asynccontextmanager
async def side_pot_hand(server: QiuQiuServer, open_player: OpenPlayer) -> AsyncIterator[Player]:
    """Ann's page at a three-seat table without the bot, raised to 200 in its first hand:
    Bo is all in for 100 with the best hand, Cici calls and Ann beats her, so Bo wins
    the main pot of 300 and Ann the side pot of 220. Bo and Cici sit on meanwhile."""
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    with known_table_seed():
        table_id = await open_table_without_the_bot(page, seats=3, to_start=3)
    await use_seed(
        page,
        three_seat_seed(table_id, lambda ann, bo, cici: compare(bo, ann) > 0 > compare(cici, ann)),
    )
    async with socket_player(server, "Bo", table_id, 100, all_in=True):
        await expect(page.locator(".felt .seat[data-seat='1'] .seat-name")).to_have_text("Bo")
        async with socket_player(server, "Cici", table_id, 500):
            await check_until(page, f"{MY_TURN} [data-action=raise]:enabled")
            await page.fill(f"{MY_TURN} input[name=amount]", "200")
            await page.click(f"{MY_TURN} [data-action=raise]")
            yield ann


@asynccontextmanager
async def at_a_table_on_a_short_lease(
    redis_url: str, open_player: OpenPlayer
) -> AsyncIterator[tuple[Player, str]]:
    """Ann's page at a dealer-bot table, at her turn, on a server on Redis whose leases
    last 0.3 s: the table moves when a test takes its lease (:mod:`tests.leases`), and
    the same server adopts it again once that lapses. With the table's id."""
    store = await RedisStore.from_url(redis_url)
    config = ServerConfig(port=0, lease=0.3, hand_pause=0.0, bot_delay=0.05, grace=30.0)
    server = QiuQiuServer(config, store=store)
    await server.start()
    try:
        ann = await open_player()
        await ann.page.goto(f"http://127.0.0.1:{server.port}/")
        await sign_in(ann.page, "Ann")
        table_id = await open_table(ann.page)
        await expect(ann.page.locator(CHECK_OR_CALL)).to_be_visible(timeout=HAND_LIMIT * 1000)
        yield ann, table_id
    finally:
        await server.stop()
        await store.close()
