"""A player's evening in the browser: the buttons always on screen, a bust and a rebuy,
results that say why, the session's figure, seat layouts, the hand history and its
replayer, the manual-split chooser, and motion that respects the system's wishes.

Each test plays against the real server (and, where a table needs people, players
on plain WebSockets who check or call); what the page shows is compared with the
frames the server sent it. The screenshots in docs/screenshots/ come from here too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from itertools import combinations
from typing import Any

import pytest
from playwright.async_api import Locator, Page, ViewportSize, WebSocketRoute, expect
from websockets.asyncio.client import ClientConnection, connect

from qiuqiu.cli.connection import Connection
from qiuqiu.engine import Hand, compare, pair_value, parse_tiles, rank
from qiuqiu.protocol import PROTOCOL_VERSION, TableOptions
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from tests.conftest import free_port
from tests.server.processes import Servers
from tests.web.conftest import (
    DESKTOP,
    PHONE,
    QUICK,
    SCREENS,
    Player,
    client_seed_dealing,
    known_table_seed,
    screenshot,
)
from tests.web.test_browser import (
    CHECK_OR_CALL,
    MY_TURN,
    frames_of,
    my_tiles,
    no_sideways_scroll,
    open_table,
    play_hand,
    sign_in,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def check_until(page: Page, wanted: str) -> None:
    """Check at each of this page's turns until the button ``wanted`` is there."""
    async with asyncio.timeout(HAND_LIMIT):
        while not await page.locator(wanted).count():
            check = page.locator(f"{MY_TURN} [data-action=check]:enabled")
            if await check.count():
                await check.click()
            await asyncio.sleep(0.05)


OpenPlayer = Callable[..., Awaitable[Player]]
HAND_LIMIT = 30.0
"""Seconds a test gives a hand, or a run of hands, before it gives up (not a timing check)."""


async def buttons_on_screen(page: Page) -> list[dict[str, float]]:
    """The action buttons' boxes, as the window shows them now, without scrolling."""
    boxes: list[dict[str, float]] = await page.evaluate(
        """() => [...document.querySelectorAll('.actions.my-turn button')].map((b) => {
             const r = b.getBoundingClientRect();
             return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
                     height: innerHeight, width: innerWidth, scrolled: scrollY};
           })"""
    )
    return boxes


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


async def play_turns_checking_the_buttons(page: Page, hands: int, name: str) -> int:
    """Check or call through ``hands`` hands; before every click, every action button
    must be inside the window as it stands, and the panel must leave your own seat box
    in view. The number of turns seen."""
    turns = 0
    async with asyncio.timeout(HAND_LIMIT * hands):
        while await page.locator(f".result[data-hand='{hands}'] .verify.ok").count() == 0:
            button = page.locator(CHECK_OR_CALL).first
            if not await button.count():
                await asyncio.sleep(0.05)
                continue
            boxes = await buttons_on_screen(page)
            assert boxes, "a turn with no button"
            for box in boxes:
                assert box["scrolled"] == 0, box
                inside = box["top"] >= 0, box["bottom"] <= box["height"], box["left"] >= 0
                assert all(inside), (name, box)
                assert box["right"] <= box["width"], (name, box)
            assert await seat_under_the_panel(page) is None, name
            if turns == 0:
                await page.screenshot(path=screenshot(f"turn-{name}"))
            turns += 1
            # A click from a script: Playwright's own would scroll the button into view.
            # The button clicked goes with its turn, even when the dealer bot bets at
            # once and the next turn's buttons come back within the blink of an eye.
            clicked = await button.element_handle()
            await clicked.evaluate("b => b.click()")
            await clicked.wait_for_element_state("hidden")
    return turns


async def test_the_action_buttons_are_on_screen_without_scrolling_on_every_turn(
    open_player: OpenPlayer,
) -> None:
    async def evening(name: str, screen: ViewportSize) -> int:
        player = await open_player(screen, phone=name == "phone")
        await sign_in(player.page, name.title())
        await open_table(player.page)
        turns = await play_turns_checking_the_buttons(player.page, 2, name)
        await no_sideways_scroll(player.page)
        return turns

    turns = await asyncio.gather(*(evening(name, size) for name, size in SCREENS.items()))
    assert all(n >= 2 for n in turns), turns


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


async def test_a_bust_shows_the_showdown_then_out_of_chips_and_buying_in_again_seats_you_there(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    with known_table_seed():
        table_id = await open_table_without_the_bot(page, buy_in=100)
    # Ann's own seed makes Bo's hand 1 the better one, so that her first hand breaks her.
    await use_seed(page, client_seed_dealing(table_id, lambda mine, bo: compare(mine, bo) < 0))
    async with socket_player(server, "Bo", table_id, 1000, all_in=True):
        # Bo bets everything whenever it may; Ann calls, until her chips are gone.
        async with asyncio.timeout(HAND_LIMIT * 4):
            while not await page.locator(".bust").count():
                button = page.locator(CHECK_OR_CALL).first
                if await button.count():
                    await button.click()
                await asyncio.sleep(0.05)

        # Still at the table: the hand that broke Ann is on screen, then the offer.
        assert page.url.endswith(f"#/table/{table_id}")
        (left,) = frames_of(ann, "table_left")
        assert left["cashed_out"] == 0
        last = frames_of(ann, "showdown")[-1]
        await expect(page.locator(".result .shown-hand")).to_have_count(len(last["hands"]))
        await expect(page.locator(".result")).to_have_attribute("data-hand", str(last["hand_id"]))
        await expect(page.locator(".result .verify.ok")).to_be_visible()
        started = [f for f in frames_of(ann, "hand_started") if f["hand_id"] == last["hand_id"]]
        before = next(s["amount"] for s in started[0]["stacks"] if s["seat"] == left["seat"])
        await expect(page.locator(".result .net")).to_have_text(
            f"For you: \u2212{before} net this hand"
        )
        await expect(page.locator(".result .why")).to_contain_text("Bo won")
        await expect(page.locator(".bust-title")).to_have_text("You're out of chips")
        # The most offered is what the balance holds (900), not the table's 10,000.
        await expect(page.locator(".bust p")).to_contain_text(
            "Your balance is 900. Buy in again at this table (100 to 900)"
        )
        await expect(page.locator(".role")).to_have_text("Out of chips")
        # Bo's shove was more than Ann had: what she could not match came back to him,
        # and with chips in front of him again he is not all in.
        assert frames_of(ann, "bet_returned")
        bo = page.locator(".seat", has_text="Bo")
        await expect(bo).to_contain_text("1,100")
        await expect(bo.locator(".tag.allin")).to_have_count(0)
        # The log writes amounts as the felt does: it said "with 1000" beside "1,100".
        await expect(page.locator(".log")).to_contain_text("Bo sat down at seat 2 with 1,000.")
        await page.screenshot(path=screenshot("bust"))

        await page.fill("input[name=rebuy]", "200")
        await page.click("[data-action=rebuy]")
        await expect(page.locator(".seat.me .seat-name")).to_have_text("Ann (you)")
        (joined,) = frames_of(ann, "table_joined")[-1:]
        assert joined["table_id"] == table_id
        assert joined["buy_in"] == 200
        await expect(page.locator(".table-title strong")).to_have_text(f"Table {table_id}")
        # Dealt in again with the next hand: Bo was waiting for a second player. Until it
        # comes, the tiles of the hand that broke her are not shown as hers to play.
        await expect(page.locator(".mine .mine-tiles .domino.face").first).to_be_visible(
            timeout=HAND_LIMIT * 1000
        )


async def test_a_call_that_takes_the_whole_stack_says_all_in(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page, buy_in=100)
    async with socket_player(server, "Bo", table_id, 1000, all_in=True):
        # Ann checks until Bo has bet more than she has left.
        enabled_call = f"{MY_TURN} [data-action=call]:enabled"
        await check_until(page, enabled_call)
        call = page.locator(enabled_call)
        legal = [f["legal"] for f in frames_of(ann, "turn_started") if f.get("legal")][-1]
        stack = await page.locator(".seat.me .seat-stack").inner_text()
        assert stack == str(legal["call"])
        await expect(call).to_have_text(f"Call {legal['call']} (all in)")


def signed(n: int) -> str:
    """A number of chips as the page writes a gain or a loss."""
    return f"+{n}" if n > 0 else f"\u2212{-n}" if n < 0 else "±0"


def tie(mine: Hand, theirs: Hand) -> bool:
    """Two equal normal hands, which the highest tile settles."""
    a, b = rank(mine), rank(theirs)
    return a.category == b.category == "normal" and a.pairs == b.pairs


def highest_of_tie(shown: list[dict[str, Any]]) -> str:
    hands = [Hand(parse_tiles(" ".join(h["tiles"]))) for h in shown]
    winner = hands[0] if compare(hands[0], hands[1]) > 0 else hands[1]
    return str(rank(winner).highest)


async def use_seed(page: Page, seed: str) -> None:
    """Type ``seed`` into the fair-deal panel and wait for the server to take it."""
    await page.fill("input[name=client_seed]", seed)
    await page.click("[data-action=set-seed]")
    await expect(page.locator(".seed-line")).to_contain_text(f"{seed[:16]}")
    await expect(page.locator(".seed-line")).not_to_contain_text("on its way")


async def test_a_tie_is_explained_by_the_tile_that_settled_it_and_the_net_is_shown(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    with known_table_seed():
        table_id = await open_table_without_the_bot(page)
    # Ann's own seed, typed into the page before Bo sits down, makes hand 1 a tie.
    await use_seed(page, client_seed_dealing(table_id, tie))
    async with socket_player(server, "Bo", table_id, 500):
        await play_hand([page], 1)
    (shown,) = frames_of(ann, "showdown")
    tile = highest_of_tie(shown["hands"])
    values = {tuple(h["cut"]["values"]) for h in shown["hands"]}
    assert len(values) == 1, "the seed should deal a tie"
    (high, low) = values.pop()
    why = page.locator(".result .why li")
    await expect(why).to_have_count(1)
    await expect(why).to_contain_text(
        f"equal hands ({high}-{low}), the highest tile decides: {tile} beats"
    )
    ended = frames_of(ann, "hand_ended")[0]
    net = next(s["amount"] for s in ended["stacks"] if s["seat"] == 0) - 500
    await expect(page.locator(".result .net")).to_have_text(f"For you: {signed(net)} net this hand")
    await expect(page.locator(".session-net")).to_have_text(signed(net))
    await page.screenshot(path=screenshot("tie"))


async def seat_boxes(page: Page) -> list[dict[str, float]]:
    boxes: list[dict[str, float]] = await page.locator(
        ".table-view > .play .felt .seat"
    ).evaluate_all(
        "seats => seats.map(s => { const r = s.getBoundingClientRect();"
        " return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; })"
    )
    return boxes


def overlapping(boxes: list[dict[str, float]]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for (i, a), (j, b) in combinations(enumerate(boxes), 2)
        if a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    ]


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
async def test_two_to_six_seats_are_laid_out_without_overlapping_boxes(
    server: QiuQiuServer, open_player: OpenPlayer, seats: int
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page, seats=seats, to_start=seats)
    async with contextlib.AsyncExitStack() as stack:
        sockets = [
            await stack.enter_async_context(socket_player(server, f"P{n}", table_id, 500))
            for n in range(1, seats)
        ]
        await expect(page.locator(".mine .mine-tiles .domino.face")).to_have_count(3)
        await expect(page.locator(".felt .seat:not(.empty)")).to_have_count(seats)
        for name, screen in SCREENS.items():
            await page.set_viewport_size(screen)
            await expect(page.locator(".felt .seat:not(.empty)")).to_have_count(seats)
            boxes = await seat_boxes(page)
            assert len(boxes) == seats
            assert not overlapping(boxes), (name, boxes)
            assert all(b["left"] >= 0 and b["right"] <= screen["width"] for b in boxes), boxes
            await no_sideways_scroll(page)
            await page.screenshot(path=screenshot(f"seats-{seats}-{name}"))
        # A player whose connection drops is marked away, with the time they have left.
        sockets[-1].transport.abort()
        away = page.locator(".felt .seat .tag.away")
        await expect(away).to_have_text(re.compile(r"^away · \d+ s$"))
        # On one line, even in a side seat on a phone (the last size above).
        lines = await away.evaluate(
            """tag => {
                 const text = document.createRange();
                 text.selectNodeContents(tag);
                 return new Set([...text.getClientRects()].map((r) => Math.round(r.top))).size;
               }"""
        )
        assert lines == 1, seats
        assert not overlapping(await seat_boxes(page)), seats
        if seats == 6:
            await page.screenshot(path=screenshot("away"))


FELT_SCREENS: dict[str, ViewportSize] = {
    "desktop": DESKTOP,
    "phone-375": {"width": 375, "height": 667},
    "phone-390": PHONE,
    "phone-414": {"width": 414, "height": 896},
}
"""The sizes the middle of the table is checked at: a desktop and three phones."""


FELT = ".table-view > .play .felt"
"""The live table's felt (a replay has one of its own)."""


async def center_covered(page: Page) -> list[str]:
    """What covers the middle of the live felt: each line of ``.center`` that meets a
    seat box or a bet chip, said as the two texts."""
    covered: list[str] = await page.evaluate(
        """(selector) => {
             const felt = document.querySelector(selector);
             const meet = (a, b) => a.left < b.right && b.left < a.right
                                    && a.top < b.bottom && b.top < a.bottom;
             const out = [];
             for (const line of felt.querySelectorAll('.center > *')) {
               const box = line.getBoundingClientRect();
               for (const other of felt.querySelectorAll('.seat, .seat-bet')) {
                 if (meet(box, other.getBoundingClientRect())) {
                   out.push(`${line.textContent} under ${other.textContent}`);
                 }
               }
             }
             return out;
           }""",
        FELT,
    )
    return covered


async def center_wrapped(page: Page) -> list[str]:
    """The lines of words in the middle of the live felt that run over two lines."""
    wrapped: list[str] = await page.locator(f"{FELT} .center .phase").evaluate_all(
        """lines => lines.filter((line) => {
             const text = document.createRange();
             text.selectNodeContents(line);
             return new Set([...text.getClientRects()].map((r) => Math.round(r.top))).size > 1;
           }).map((line) => line.textContent)"""
    )
    return wrapped


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
async def test_no_seat_box_or_bet_chip_covers_the_pot_or_the_middle_of_the_table(
    server: QiuQiuServer, open_player: OpenPlayer, seats: int
) -> None:
    ann, cici = await open_player(), await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page, seats=seats, to_start=seats)
    await sign_in(cici.page, "Cici")
    await cici.page.click(f".table-row[data-table-id='{table_id}'] [data-action=watch]")
    await expect(cici.page.locator(".role")).to_have_text("Watching")
    async with contextlib.AsyncExitStack() as stack:
        for n in range(1, seats):
            await stack.enter_async_context(
                socket_player(server, f"Player {n}", table_id, 500, bets=True)
            )
        # Ann checks until someone has bet and the others called: chips on the table.
        await check_until(page, f"{MY_TURN} [data-action=call]:enabled")
        await expect(page.locator(".center .turn.yours")).to_contain_text("to call")
        # Ann sees it from her seat, Cici as a watcher ("Ann to act · 10 to call").
        await expect(cici.page.locator(".center .turn")).to_contain_text("Ann to act")
        covered = {}
        for viewer in (page, cici.page):
            await expect(viewer.locator(".felt .seat-bet")).not_to_have_count(0)
            for name, screen in FELT_SCREENS.items():
                await viewer.set_viewport_size(screen)
                await expect(viewer.locator(".center .pot")).to_be_visible()
                covered[name] = await center_covered(viewer)
            assert not any(covered.values()), covered

        # The hand's result in the middle, once Ann calls and the hand is shown down.
        await page.set_viewport_size(DESKTOP)
        await page.click(f"{MY_TURN} [data-action=call]")
        await play_hand([page], 1)
        await expect(page.locator(".center .outcome")).to_be_visible()
        wrapped = {}
        for name, screen in FELT_SCREENS.items():
            await page.set_viewport_size(screen)
            assert await page.locator(".center .outcome").count(), name
            await expect(page.locator(".center .phase")).to_contain_text("hand soon")
            covered[name] = await center_covered(page)
            # "Hand #1 is over · next hand soon" broke after "next hand" between side
            # seats, on a desktop as on phones.
            wrapped[name] = await center_wrapped(page)
        assert not any(covered.values()), covered
        assert not any(wrapped.values()), wrapped
        met = {}
        # The tallest seat a showdown makes, in each seat in turn: the longest line of a
        # winner (a special hand's name wrapped under it once) and a player gone away.
        # And the longest result in the middle a hand of these seats can have: not the
        # one this deal happened to make.
        await page.evaluate(
            """felt => { document.querySelector(`${felt} .center .outcome`).textContent =
                "Player 2 wins 10,000 with Pure Big"; }""",
            FELT,
        )
        for seat in range(await page.locator(f"{FELT} .seat-value").count()):
            await page.evaluate(
                """([felt, seat]) => {
                     const values = document.querySelectorAll(`${felt} .seat-value`);
                     values.forEach((v, n) => { v.textContent = n === seat
                       ? "Four Doubles · wins 10,000" : "9-9"; });
                     document.querySelectorAll(`${felt} .seat-line .away`).forEach(a => a.remove());
                     const away = Object.assign(document.createElement("span"),
                       { className: "tag away", textContent: "away · 30 s" });
                     values[seat].closest(".seat").querySelector(".seat-line").append(away);
                   }""",
                [FELT, seat],
            )
            for name, screen in FELT_SCREENS.items():
                await page.set_viewport_size(screen)
                covered[f"{name}, seat {seat}"] = await center_covered(page)
                met[f"{name}, seat {seat}"] = overlapping(await seat_boxes(page))
        assert not any(covered.values()), {k: v for k, v in covered.items() if v}
        # Nor one seat another: six seats' side ones met at every showdown on a desktop.
        assert not any(met.values()), met


async def test_the_replayer_steps_through_a_finished_hand_to_its_verified_deal(
    open_player: OpenPlayer,
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    await open_table(page)
    await play_hand([page], 1)
    (shown,) = frames_of(ann, "showdown")

    await page.click("[data-action=history]")
    row = page.locator(".history .past-hand[data-hand='1']")
    await expect(row).to_be_visible()
    (record,) = frames_of(ann, "hand_list")[-1]["hands"]
    mine = next(s for s in record["seats"] if s["seat"] == 0)
    net = mine["after"] - mine["before"]
    await expect(row.locator(".net")).to_have_text(signed(net))
    await expect(page.locator(".session-hands")).to_contain_text("1 hand ·")
    await row.locator("[data-action=replay]").click()

    replay = page.locator(".history .replay")
    total = len(record["events"])
    await expect(replay).to_have_attribute("data-total", str(total))
    for step in range(1, total):
        await expect(replay).to_have_attribute("data-step", str(step))
        event = record["events"][step - 1]
        await expect(replay.locator(".replay-step")).to_contain_text(
            event["type"].replace("_", " ")
        )
        await page.click("[data-action=replay-next]")
    await expect(replay).to_have_attribute("data-step", str(total))
    await expect(page.locator("[data-action=replay-next]")).to_be_disabled()
    # The end of the replay: every hand shown down, and its deal checked again.
    for hand in shown["hands"]:
        tiles = await replay.locator(
            f".seat[data-seat='{hand['seat']}'] .domino.face"
        ).evaluate_all("ts => ts.map(t => t.dataset.tile)")
        assert sorted(tiles) == sorted(hand["tiles"])
    await expect(replay.locator(".verify.ok")).to_contain_text("Deal verified")
    await page.locator(".history").screenshot(path=screenshot("replay"))
    # On a phone the replayed felt stays over its step and its buttons: it went to the
    # bottom of the replay, under them, with the live felt's place in the one column.
    await page.set_viewport_size(PHONE)
    felt = await replay.locator(".replay-felt").bounding_box()
    told = await replay.locator(".replay-step").bounding_box()
    assert felt
    assert told
    assert felt["y"] + felt["height"] <= told["y"]


async def test_a_hand_without_a_showdown_is_not_called_verified_where_no_tile_was_seen(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann, cici = await open_player(), await open_player()
    await sign_in(ann.page, "Ann")
    table_id = await open_table_without_the_bot(ann.page)
    await sign_in(cici.page, "Cici")
    await cici.page.click(f".table-row[data-table-id='{table_id}'] [data-action=watch]")
    await expect(cici.page.locator(".role")).to_have_text("Watching")
    async with socket_player(server, "Bo", table_id, 500, all_in=True):
        # Ann checks, Bo bets everything, Ann folds: nobody's tiles are shown.
        page = ann.page
        await check_until(page, f"{MY_TURN} [data-action=fold]:enabled")
        await page.locator(f"{MY_TURN} [data-action=fold]:enabled").click()

        # Ann checked her own three tiles; Cici was shown none, so checked none.
        await expect(page.locator(".result[data-hand='1'] .verify.ok")).to_contain_text(
            "3 tiles checked"
        )
        watched = cici.page.locator(".result[data-hand='1'] .verify")
        await expect(watched).to_contain_text("Nothing to check yet")
        await expect(watched).to_contain_text("once the table closes and reveals its seed")
        await expect(watched).not_to_have_class(re.compile(r"\bok\b"))
        await expect(cici.page.locator(".log")).not_to_contain_text("Deal verified")

        # Cici's replay of the hand has no tile to check either.
        replay = await replayed_to_the_end(cici.page, 1)
        await expect(replay.locator(".verify")).to_contain_text("Nothing to check yet")

        # Ann's replay shows the tiles she folded, which her page kept, and checks them again.
        (dealt,) = [f for f in frames_of(ann, "tiles_dealt") if f.get("tiles")]
        replay = await replayed_to_the_end(page, 1)
        shown = await replay.locator(
            f".seat[data-seat='{dealt['seat']}'] .domino.face"
        ).evaluate_all("ts => ts.map(t => t.dataset.tile)")
        assert sorted(shown) == sorted(dealt["tiles"])
        await expect(replay.locator(".verify.ok")).to_contain_text("3 tiles checked")
        await expect(replay.locator(".center .phase")).to_have_text("Hand #1 is over")


async def replayed_to_the_end(page: Page, hand: int) -> Locator:
    """Open the hand history, replay hand ``hand`` and skip to its end; the replay."""
    await page.click("[data-action=history]")
    await page.locator(f".history .past-hand[data-hand='{hand}'] [data-action=replay]").click()
    await page.click("[data-action=replay-end]")
    return page.locator(".history .replay")


async def test_the_lobby_opens_a_manual_split_table_and_the_chooser_shows_each_cut_once(
    open_player: OpenPlayer,
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    for screen in (DESKTOP, PHONE):
        await page.set_viewport_size(screen)
        # Each drop-down is as wide as its longest choice would make it.
        widths = await page.locator(".create select").evaluate_all(
            """selects => selects.map((s) => {
                 const has = s.getBoundingClientRect().width;
                 s.style.width = "max-content";
                 const needs = s.getBoundingClientRect().width;
                 s.style.width = "";
                 return [s.name, has, needs];
               })"""
        )
        assert all(has >= needs for _, has, needs in widths), (screen, widths)
    await page.select_option("select[name=tie_rule]", "split")
    await page.set_checked("input[name=manual_split]", True)
    await page.select_option("select[name=betting_rounds]", "2")
    await page.fill("input[name=max_raises]", "3")
    await page.fill("input[name=max_bet]", "200")
    await page.fill("input[name=min_buy_in]", "200")
    await page.fill("input[name=max_buy_in]", "2000")
    await page.click("[data-action=create]")
    await expect(page.locator(".table-view")).to_be_visible()
    (created,) = frames_of(ann, "table_created")
    options = created["table"]["options"]
    assert {k: options[k] for k in ("tie_rule", "manual_split", "betting_rounds")} == {
        "tie_rule": "split",
        "manual_split": True,
        "betting_rounds": 2,
    }
    assert (options["max_raises"], options["max_bet"]) == (3, 200)
    assert (options["min_buy_in"], options["max_buy_in"]) == (200, 2000)

    async with asyncio.timeout(HAND_LIMIT):
        while not await page.locator(".cuts").count():
            button = page.locator(CHECK_OR_CALL).first
            if await button.count():
                await button.click()
            await asyncio.sleep(0.05)
    # The chooser is the tallest the turn's panel gets: it too leaves your seat box in view.
    assert await seat_under_the_panel(page) is None
    tiles = parse_tiles(" ".join(await my_tiles(page)))
    a, b, c, d = tiles
    cuts = [((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))]
    worth = sorted(
        {tuple(sorted((pair_value(*p), pair_value(*q)), reverse=True)) for p, q in cuts},
        reverse=True,
    )
    options_shown = page.locator(".cuts .cut-option")
    await expect(options_shown).to_have_count(len(worth))
    await expect(options_shown.locator(".cut-total")).to_have_text(
        [f"{high}-{low}" for high, low in worth]
    )
    for n in range(len(worth)):
        await expect(options_shown.nth(n).locator(".domino.face")).to_have_count(4)
    await expect(page.locator(".cuts .cut-option.best .cut-note")).to_have_text("Best")
    best = rank(Hand(tiles)).pairs
    assert worth[0] == best
    await expect(page.locator(".log")).to_contain_text("Cut your hand into two pairs.")
    await page.locator(".cuts").screenshot(path=screenshot("split"))
    await options_shown.first.click()
    await expect(page.locator(".result[data-hand='1'] .verify.ok")).to_be_visible(
        timeout=HAND_LIMIT * 1000
    )
    declared = [f for f in frames_of(ann, "cut_declared") if f["seat"] == 0]
    assert tuple(declared[0]["cut"]["values"]) == best


async def test_motion_plays_for_a_dealt_tile_and_stops_when_the_system_asks(
    open_player: OpenPlayer,
) -> None:
    for reduced, expected in ((False, "deal"), (True, "none")):
        player = await open_player(PHONE, phone=True, reduced_motion=reduced)
        await sign_in(player.page, "Moe")
        await open_table(player.page)
        tile = player.page.locator(".felt .seat.me .domino").first
        await expect(tile).to_be_visible()
        # Whether the tile is still new when this looks is a race: ask the style itself.
        name = await tile.evaluate(
            "t => { t.classList.add('fresh'); return getComputedStyle(t).animationName; }"
        )
        assert name == expected, (reduced, name)


async def test_the_session_figure_and_the_summary_on_leaving_match_the_servers_records(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    await open_table(page)
    await play_hand([page], 1)
    # A reload in the middle of hand 2 loses none of the figures, that hand's included.
    await expect(page.locator(".center .phase")).to_have_text(
        "Hand #2 · betting", timeout=HAND_LIMIT * 1000
    )
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    await page.reload()
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    await expect(page.locator(".at-table")).to_be_visible()
    await play_hand([page], 2)
    await play_hand([page], 3)
    await page.click(".leave")
    await expect(page.locator(".farewell")).to_be_visible(timeout=HAND_LIMIT * 1000)
    account_id = frames_of(ann, "welcome")[0]["account_id"]
    hands = await server.store.account_hands(account_id)
    nets = [hand.net(account_id) for hand in hands]
    shown = signed(sum(nets))
    await expect(page.locator(".farewell-table")).to_contain_text(
        f"At that table: {len(hands)} hands, won {sum(n > 0 for n in nets)}, "
        f"lost {sum(n < 0 for n in nets)}, net {shown}"
    )
    await expect(page.locator(".session-net")).to_have_text(shown)
    await expect(page.locator(".session-hands")).to_contain_text(f"{len(hands)} hands")
    await page.screenshot(path=screenshot("farewell"))


async def test_the_server_stopping_and_forgetting_the_account_are_said_in_plain_words(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    await open_table(page)
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    port = server.port

    await server.stop()
    toast = page.locator("#toast .toast-item")
    await expect(toast.filter(has_text="The server stopped.")).to_be_visible()
    await expect(page.locator("#status")).to_have_attribute("data-status", "reconnecting")

    # The same address, a new server that kept nothing: the page says so, then goes on.
    config = ServerConfig(port=port, hand_pause=5.0, bot_delay=0.05, grace=30.0)
    again = QiuQiuServer(config, store=MemoryStore(), rng=random.Random(1))
    await again.start()
    try:
        await expect(
            toast.filter(has_text="The server no longer knows your account")
        ).to_be_visible(timeout=20_000)
        await expect(page.locator(".lobby")).to_be_visible()
        await expect(page.locator(".balance-amount")).to_have_text("1,000")
        # The hands kept of the table it forgot: their seed is never coming.
        await expect(page.locator(".audit")).to_contain_text("cannot be rebuilt")
        await page.screenshot(path=screenshot("server-restarted"))
        assert [w["resumed"] for w in frames_of(ann, "welcome")] == [False, False]
    finally:
        await again.stop()


async def test_a_server_that_died_and_forgot_everything_leaves_no_chips_at_its_table(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # The header went on counting "+ 490 at the table" of a table no server knew.
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    await open_table(page)
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    port = server.port
    # Dead, not stopped: the page hears of no table closing.
    assert server._server is not None
    for connection in list(server._server.connections):
        connection.transport.abort()
    await server.stop()
    config = ServerConfig(port=port, hand_pause=5.0, bot_delay=0.05, grace=30.0)
    again = QiuQiuServer(config, store=MemoryStore(), rng=random.Random(1))
    await again.start()
    try:
        toast = page.locator("#toast .toast-item")
        await expect(toast.filter(has_text="is no longer open")).to_be_visible(timeout=20_000)
        await expect(page.locator(".lobby")).to_be_visible()
        await expect(page.locator(".balance-amount")).to_have_text("1,000")
        await expect(page.locator(".at-table")).to_have_count(0)
    finally:
        await again.stop()


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
        host = await servers.start(hosting)
        await servers.start(relaying)
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
                await page.click(f"{MY_TURN} .chipbtn >> text=Max")
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
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page)
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


async def test_on_a_phone_your_turn_with_four_tiles_shows_their_best_cut_above_the_panel(
    open_player: OpenPlayer,
) -> None:
    ann = await open_player(PHONE, phone=True)
    page = ann.page
    await sign_in(page, "Ann")
    await page.select_option("select[name=betting_rounds]", "2")
    await open_table(page)
    # Check or call until a turn of the second round, the fourth tile in hand.
    async with asyncio.timeout(HAND_LIMIT * 2):
        while not (
            await page.locator(MY_TURN).count()
            and await page.locator(".mine .mine-tiles .domino.face").count() == 4
        ):
            button = page.locator(CHECK_OR_CALL).first
            if await button.count():
                await button.tap()
            await asyncio.sleep(0.05)
    best = rank(Hand(parse_tiles(" ".join(await my_tiles(page))))).pairs
    values = page.locator(".seat.me .pair-value")
    await expect(values).to_have_text([str(v) for v in best])
    panel_top = await page.locator(MY_TURN).evaluate("p => p.getBoundingClientRect().top")
    bottoms = await values.evaluate_all("vs => vs.map((v) => v.getBoundingClientRect().bottom)")
    assert all(0 < bottom <= panel_top for bottom in bottoms), (bottoms, panel_top)


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


async def test_a_bet_nobody_called_goes_back_to_you_in_a_sentence_as_written(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # It said "10 unmatched went back to You."
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page)
    async with socket_player(server, "Bo", table_id, 500, folds=True):
        await page.click(f"{MY_TURN} [data-action=bet]:enabled")
        await expect(page.locator(".log")).to_contain_text("10 unmatched went back to you.")
        await expect(page.locator(".result[data-hand='1']")).to_contain_text("everyone else folded")


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
        await page.screenshot(path=screenshot("seats-6-one-name"))


async def test_a_replayed_hand_names_who_played_it_though_another_sits_there_now(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # The replay named each seat's player of now: Cy, in the hand Bo played.
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table_without_the_bot(page)
    async with socket_player(server, "Bo", table_id, 500) as bo:
        await play_hand([page], 1)
        await bo.send(json.dumps({"type": "leave_table", "id": 9, "table_id": table_id}))
        await expect(page.locator(".log")).to_contain_text("Bo left with")
    async with socket_player(server, "Cy", table_id, 500):
        await expect(page.locator(".felt .seat[data-seat='1'] .seat-name")).to_have_text("Cy")
        await page.click("[data-action=history]")
        await page.locator(".history .past-hand[data-hand='1'] [data-action=replay]").click()
        replay = page.locator(".history .replay")
        await expect(replay.locator(".seat[data-seat='1'] .seat-name")).to_have_text("Bo")
        # A page that never saw the hand (reloaded: it kept nothing) reads the names from
        # the hand's record. It named Cy, who sits there now.
        await page.reload()
        await expect(page.locator(".felt .seat[data-seat='1'] .seat-name")).to_have_text("Cy")
        await page.click("[data-action=history]")
        await page.locator(".history .past-hand[data-hand='1'] [data-action=replay]").click()
        await expect(replay.locator(".seat[data-seat='1'] .seat-name")).to_have_text("Bo")
        await expect(replay.locator(".seat[data-seat='0'] .seat-name")).to_have_text("Ann (you)")


@pytest.mark.parametrize("config", [QUICK])
async def test_a_snapshot_refused_after_a_gap_is_asked_for_again(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """Cici watches Ann and Bo play. One event never reaches her page (a gap in ``seq``),
    and the snapshot it asks for is refused, as a table's server unsure of its lease a
    moment refuses one (``store_unavailable``). The page asks again at a later gap,
    rather than never, and is in step with the table once the snapshot comes."""
    cici = await open_player()
    page = cici.page
    asked: list[int] = []
    dropped: list[dict[str, Any]] = []

    def route(ws: WebSocketRoute) -> None:
        server_side = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            frame = json.loads(message)
            if frame["type"] == "request_snapshot":
                asked.append(frame["id"])
                if len(asked) == 1:
                    refusal = {"code": "store_unavailable", "message": "try again shortly"}
                    ws.send(json.dumps({"type": "error", "ref": frame["id"], **refusal}))
                    return
            server_side.send(message)

        def from_server(message: str | bytes) -> None:
            frame = json.loads(message)
            if not dropped and frame["type"] == "betting_round_started":
                dropped.append(frame)
                return
            ws.send(message)

        ws.on_message(from_page)
        server_side.on_message(from_server)

    await page.route_web_socket(re.compile(".*"), route)
    await page.reload()
    await sign_in(page, "Cici")
    async with connect(server.url) as host:
        await host.send(
            json.dumps({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": "Host"})
        )
        options = {"seats": 2, "dealer_bot": False}
        await host.send(json.dumps({"type": "create_table", "id": 2, "options": options}))
        while (m := json.loads(await host.recv()))["type"] != "table_created":
            pass
        table_id = m["table"]["table_id"]
        await page.click(f".table-row[data-table-id='{table_id}'] [data-action=watch]")
        await expect(page.locator(".role")).to_have_text("Watching")
        async with (
            socket_player(server, "Ann", table_id, 500),
            socket_player(server, "Bo", table_id, 500),
        ):
            async with asyncio.timeout(30):
                while len(asked) < 2:
                    await asyncio.sleep(0.05)
            hand = dropped[0]["hand_id"]
            # In step: a hand dealt after the snapshot has its result on the page (the
            # page keeps the last hand's, so hands may have gone by since).
            results = "[...document.querySelectorAll('.result')].map(r => +r.dataset.hand)"
            async with asyncio.timeout(30):
                while max(await page.evaluate(results), default=0) < hand + 3:
                    await asyncio.sleep(0.05)
    assert len(asked) == 2, "asked once more, then in step"
