"""The page back after its connection was down while the server played its seat: what
happened meanwhile is said, and counted once, as the server's own records have it."""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
from playwright.async_api import Page, WebSocketRoute, expect

from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from tests.leases import lease_taken
from tests.web.conftest import Player, cut_every_connection, restarted_on
from tests.web.evening_helpers import at_a_table_on_a_short_lease, signed
from tests.web.test_browser import (
    CHECK_OR_CALL,
    HAND_LIMIT,
    MY_TURN,
    OpenPlayer,
    frames_of,
    open_table,
    play_hand,
    seated_against_the_bot,
    sign_in,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")

AWAY_LIMIT = 30.0
"""Seconds the server may take to play the hands a test waits for (turns of two seconds)."""


@asynccontextmanager
async def seated_with_short_turns(
    open_player: OpenPlayer, grace: float
) -> AsyncIterator[tuple[QiuQiuServer, Player, str]]:
    """Ann, on a server of her own, at a dealer-bot table whose turns last two seconds,
    so its timer plays hand after hand for her while she is away. Half a second was too
    short on a busy machine: the first hand was over before the page had shown it."""
    config = ServerConfig(port=0, hand_pause=0.3, bot_delay=0.0, grace=grace)
    server = QiuQiuServer(config, store=MemoryStore(), rng=random.Random(11))
    await server.start()
    try:
        ann = await open_player()
        page = ann.page
        await page.goto(f"http://127.0.0.1:{server.port}/")
        await sign_in(page, "Ann")
        await page.fill("input[name=turn_seconds]", "2")
        table_id = await open_table(page)
        await expect(page.locator(".center .phase")).to_have_text(re.compile("Hand #1"))
        yield server, ann, table_id
    finally:
        await server.stop()


async def away_until(
    server: QiuQiuServer, ann: Player, done: Callable[[], Awaitable[bool]]
) -> None:
    """The page's network goes (its socket cut, and no new one can open) until ``done``."""
    await ann.context.set_offline(True)
    cut_every_connection(server)
    async with asyncio.timeout(AWAY_LIMIT):
        while not await done():
            await asyncio.sleep(0.1)
    await ann.context.set_offline(False)


async def test_hands_played_for_the_seat_while_away_are_told_and_counted_once(
    open_player: OpenPlayer,
) -> None:
    """Back within the grace period after three hands the server's timer played for
    her: each is said in the log with its net, the page asks for no snapshot over the
    replayed ends, and the figures on leaving are the server's. The page had said
    nothing of those hands, left them out of the evening's figure (3 hands counted of
    7), and asked for a snapshot the protocol says comes unasked."""
    async with seated_with_short_turns(open_player, grace=30.0) as (server, ann, table_id):
        page = ann.page
        account_id = frames_of(ann, "welcome")[0]["account_id"]

        async def three_hands_and_one_in_play() -> bool:
            played = len(await server.store.account_hands(account_id))
            table = await server.store.table(table_id)
            return played >= 3 and table is not None and table.hand_open

        await away_until(server, ann, three_hands_and_one_in_play)
        await expect(page.locator("#status")).to_have_attribute("data-sessions", "2")
        log = page.locator(".log")
        for hand_id in (1, 2, 3):
            said = rf"Hand #{hand_id} was played out while you were away: \S+ net for you\."
            await expect(log).to_contain_text(re.compile(said))
        resumed = next(i for i, m in enumerate(ann.sent) if m.get("token"))
        assert not [m for m in ann.sent[resumed:] if m["type"] == "request_snapshot"]
        # Where the page came back, in order: the hands played out, then the one it came
        # back into, headed as any hand (its start went by unseen).
        lines = await log.locator("li").all_inner_texts()
        back = lines.index("Back online.")
        told = [line for line in lines if "was played out while you were away" in line]
        assert lines[back + 1 : back + 1 + len(told)] == told, lines
        snapshot = frames_of(ann, "table_snapshot")[1]
        hand = snapshot["table"].get("hand")
        if hand and hand["phase"] != "ended":
            head = f"Hand #{hand['hand_id']} (begun while you were away)"
            assert lines[back + 1 + len(told) : back + 2 + len(told)] == [head], lines

        await page.click(".leave")
        await expect(page.locator(".farewell")).to_be_visible(timeout=HAND_LIMIT * 1000)
        hands = await server.store.account_hands(account_id)
        nets = [hand.net(account_id) for hand in hands]
        await expect(page.locator(".farewell-table")).to_contain_text(
            f"At that table: {len(hands)} hands, won {sum(n > 0 for n in nets)}, "
            f"lost {sum(n < 0 for n in nets)}, net {signed(sum(nets))}"
        )
        await expect(page.locator(".session-net")).to_have_text(signed(sum(nets)))


async def test_a_seat_given_up_while_away_is_said_with_the_hands_played_for_it(
    open_player: OpenPlayer,
) -> None:
    """Back after the grace period: the seat stood up meanwhile and its chips went back
    to the balance. The page says so, with the hands played for the seat until then in
    its figures, and does not watch the table it sat at. It had said only that the table
    was no longer open, "or the server restarted", counted none of those hands, and
    asked to watch the table."""
    async with seated_with_short_turns(open_player, grace=1.0) as (server, ann, table_id):
        page = ann.page
        account_id = frames_of(ann, "welcome")[0]["account_id"]

        async def stood_up() -> bool:
            return not await server.store.seated_tables(account_id)

        await away_until(server, ann, stood_up)
        farewell = page.locator(".farewell")
        await expect(farewell).to_contain_text(
            "Your seat was given up while the connection was down (you were away past the "
            "grace period): your chips went back to your balance."
        )
        hands = await server.store.account_hands(account_id)
        nets = [hand.net(account_id) for hand in hands]
        counted = f"{len(hands)} hand{'s' * (len(hands) > 1)}"
        await expect(farewell).to_contain_text(
            f"Meanwhile {counted} {'were' if len(hands) > 1 else 'was'} played for you: "
            f"{signed(sum(nets))} net."
        )
        await expect(page.locator(".farewell-table")).to_contain_text(f"At that table: {counted},")
        await expect(page.locator(".session-net")).to_have_text(signed(sum(nets)))
        account = await server.store.account(account_id)
        assert account is not None
        await expect(page.locator(".balance-amount")).to_have_text(f"{account.balance:,}")
        await expect(page.locator(".at-table")).to_have_count(0)
        await expect(page.locator("#toast")).not_to_contain_text("no longer open")
        assert not [m for m in ann.sent if m["type"] == "watch_table"]
        assert page.url.endswith("#/"), (page.url, table_id)


async def cut_at(page: Page, sent: str, *, heard: bool) -> None:
    """From now on, the page's connection closes as it sends its first message of type
    ``sent``, which the server gets only if ``heard`` (a reload puts the route in place)."""
    closing: list[asyncio.Future[None]] = []

    def route(ws: WebSocketRoute) -> None:
        server_side = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            cuts = json.loads(message)["type"] == sent
            if heard or closing or not cuts:
                server_side.send(message)
            if cuts and not closing:
                closing.append(asyncio.ensure_future(ws.close()))

        ws.on_message(from_page)

    await page.route_web_socket(re.compile(".*"), route)
    await page.reload()


async def cut_as_it_sits_down(page: Page, *, heard: bool) -> None:
    """The page's connection closes as it sends its ``join_table`` for the table it
    opens, which the server gets only if ``heard``."""
    await cut_at(page, "join_table", heard=heard)
    await sign_in(page, "Ann")
    await page.click("[data-action=create]")


async def test_a_seat_taken_as_the_connection_dropped_is_where_the_page_goes_back(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """The connection drops as the page sits down, before its ``table_joined`` reaches
    it. Back, the welcome lists the seat: the page goes to it, as it would have, and
    plays. It stayed in the lobby, saying nothing, its player seated at a table that
    dealt her hands."""
    ann = await open_player()
    page = ann.page
    await cut_as_it_sits_down(page, heard=True)
    await expect(page.locator(".table-bar .role")).to_have_text("Seat 1")
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    assert [w["resumed"] for w in frames_of(ann, "welcome")] == [False, True]


async def test_a_seat_asked_for_as_the_connection_dropped_and_not_taken_is_said(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """The connection drops as the page sits down, and the request never reaches the
    server. Back, the welcome lists no seat: the page says so, where it said nothing."""
    ann = await open_player()
    page = ann.page
    await cut_as_it_sits_down(page, heard=False)
    toast = page.locator("#toast .toast-item")
    await expect(toast.filter(has_text="you did not sit down at table")).to_be_visible()
    await expect(page.locator(".lobby")).to_be_visible()
    await expect(page.locator(".balance-amount")).to_have_text("1,000")


async def test_a_seat_left_as_the_connection_dropped_is_said_to_be_left(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """Between hands the page asks to leave, and the connection drops before the
    ``table_left`` reaches it. Back, the welcome lists no seat: the lobby says she left,
    with the hand she played in its figures. The page watched the table instead, and
    said it was no longer open."""
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await play_hand([page], 1)
    await cut_at(page, "leave_table", heard=True)
    await expect(page.locator(".center .phase")).to_have_text("Next hand soon")
    await page.click(".leave")
    farewell = page.locator(".farewell")
    await expect(farewell).to_contain_text(
        "You left while the connection was down: your chips went back to your balance."
    )
    await expect(page.locator(".farewell-table")).to_contain_text("At that table: 1 hand,")
    await expect(page.locator("#toast")).not_to_contain_text("no longer open")
    assert not [m for m in ann.sent if m["type"] == "watch_table"]


async def test_the_shuffles_kept_of_a_table_its_restarted_server_forgot_are_said_lost(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """An in-memory server stops, standing the seat up, and starts again knowing
    nothing; the close that revealed the table's seed as it stopped never reached the
    page (here its socket drops it). The hands the page kept to rebuild once the seed
    is out never will be: the lobby says so, where it said for ever that the seed would
    come."""

    def route(ws: WebSocketRoute) -> None:
        server_side = ws.connect_to_server()
        server_side.on_message(
            lambda message: None if '"table_closed"' in str(message) else ws.send(message)
        )

    ann = await open_player()
    page = ann.page
    await page.route_web_socket(re.compile(".*"), route)
    await page.reload()
    await sign_in(page, "Ann")
    table_id = await open_table(page)
    await play_hand([page], 1)
    port = server.port
    await server.stop()
    async with restarted_on(port):
        audit = page.locator(f".audit[data-table-id='{table_id}']")
        await expect(audit).to_contain_text(
            "whose shuffle cannot be rebuilt: the server no longer knows the table",
            timeout=20_000,
        )
        await expect(page.locator(".audits")).not_to_contain_text("reveals its seed")


@pytest.mark.parametrize("heard", [True, False])
async def test_an_action_sent_as_the_connection_dropped_is_said_played_or_not(
    server: QiuQiuServer, open_player: OpenPlayer, heard: bool
) -> None:
    """Ann checks, and the connection drops as the check goes out: the server gets it
    (``heard``) or not. Back, the log says which, once, and a check not played leaves
    her turn hers to play again. The page said only "Back online.": a check played
    was not in the log, and one lost could have been either."""
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await cut_at(page, "check", heard=heard)
    await page.locator(f"{MY_TURN} [data-action=check]").click()
    log = page.locator(".log")
    said = "Your check reached the server before the connection dropped, and was played."
    if not heard:
        said = "Your check did not reach the server before the connection dropped: "
        said += "it is still your turn."
    await expect(log).to_contain_text(said)
    await expect(log.locator("li", has_text="Your check")).to_have_count(1)
    # What reached the server: the check once, or not at all; never sent again.
    checks = [m for m in ann.sent if m["type"] == "check"]
    assert len(checks) == heard, checks
    if not heard:
        await expect(page.locator(f"{MY_TURN} [data-action=check]:enabled")).to_be_visible()


async def test_a_seat_at_a_table_that_moved_to_another_server_stays_on_screen_and_plays_on(
    redis_url: str, open_player: OpenPlayer
) -> None:
    """The page's server stalled past the table's lease (here its lease is taken at
    Redis, as an adopter does, and lapses for the server to adopt the table again). The
    page went back to the lobby saying "The table closed", while it reconnected and its
    seat played on out of sight. It stays at the table, says it is moving, and shows it
    again from its new host's snapshot, where the next hand is played."""
    async with at_a_table_on_a_short_lease(redis_url, open_player) as (ann, table_id):
        page = ann.page
        await page.evaluate(
            """() => {
                window.viewsShown = [];
                const seen = () => window.viewsShown.push(document.body.dataset.view);
                const watched = { attributeFilter: ["data-view"] };
                new MutationObserver(seen).observe(document.body, watched);
            }"""
        )
        await lease_taken(redis_url, table_id)
        log = page.locator(".log")
        moving = "The table moved to another server: finding your seat there"
        await expect(log).to_contain_text(moving)
        await expect(log).to_contain_text("Back online.", timeout=HAND_LIMIT * 1000)
        assert len(frames_of(ann, "welcome")) == 2, "the page reconnected to the table's new host"
        hand = await page.wait_for_function(
            "id => window.qiuqiu.tables.get(id)?.hand?.handId", arg=table_id
        )
        await play_hand([page], await hand.json_value(), fold_to_bets=True)
        assert "lobby" not in await page.evaluate("window.viewsShown")
        await expect(page.locator(".table-bar .role")).to_have_text("Seat 1")
        assert page.url.endswith(f"#/table/{table_id}")
