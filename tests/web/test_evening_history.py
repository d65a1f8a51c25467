"""A player's evening in the browser, looked back on: the replayer and its verified deal,
a hand won without a showdown, the manual-split chooser, motion that respects the
system's wishes, the session's figure and summary, and a snapshot asked for again after a
gap. Each test plays against the real server, as in test_evening.py."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from playwright.async_api import WebSocketRoute, expect
from websockets.asyncio.client import connect

from qiuqiu.engine import Hand, pair_value, parse_tiles, rank
from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.gateway import QiuQiuServer
from tests.web.conftest import (
    DESKTOP,
    PHONE,
    QUICK,
    screenshot,
)
from tests.web.evening_helpers import (
    HAND_LIMIT,
    OpenPlayer,
    ann_at_a_table_without_the_bot,
    check_until,
    open_table_without_the_bot,
    replayed_to_the_end,
    seat_under_the_panel,
    side_pot_hand,
    signed,
    socket_player,
)
from tests.web.test_browser import (
    CHECK_OR_CALL,
    MY_TURN,
    frames_of,
    my_tiles,
    open_table,
    play_hand,
    seated_against_the_bot,
    sign_in,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_the_replayer_steps_through_a_finished_hand_to_its_verified_deal(
    open_player: OpenPlayer,
) -> None:
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
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


async def test_the_replayer_is_stepped_through_by_the_keyboard_alone(
    open_player: OpenPlayer,
) -> None:
    # Each step made the replay again under the focused button, and the focus fell to
    # the page: Enter on "Next ▶" played one step, and the next Enter nothing.
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await play_hand([page], 1)
    await page.focus("[data-action=history]")
    await page.keyboard.press("Enter")
    replay_button = page.locator(".history .past-hand[data-hand='1'] [data-action=replay]")
    await expect(replay_button).to_be_focused()
    await page.keyboard.press("Enter")
    replay = page.locator(".history .replay")
    total = int(await replay.get_attribute("data-total") or 0)
    for step in range(2, total + 1):
        await page.keyboard.press("Enter")
        await expect(replay).to_have_attribute("data-step", str(step))
    # "Next ▶" is done at the end: the focus stays in the replayer, on its way back.
    await expect(page.locator("[data-action=replay-first]")).to_be_focused()
    await page.focus("[data-action=history-list]")
    await page.keyboard.press("Enter")
    await expect(replay_button).to_be_focused()


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
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
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


async def test_the_biggest_pot_won_is_a_pot_you_won_not_every_pot_of_the_hand(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """Bo goes all in for 100 and has the best hand; Ann raises, Cici calls, and Ann
    beats Cici: Bo's main pot is 300, Ann's side pot 220. The header said "top 520",
    the hand's every pot, as if Ann had won Bo's too."""
    async with side_pot_hand(server, open_player) as ann:
        page = ann.page
        await expect(page.locator(".result[data-hand='1'] .verify.ok")).to_be_visible(
            timeout=HAND_LIMIT * 1000
        )
    awards = [
        (f["amount"], [s["seat"] for s in f["shares"]]) for f in frames_of(ann, "pot_awarded")
    ]
    assert awards == [(300, [1]), (220, [0])], awards
    await expect(page.locator(".session-hands")).to_have_text("1 hand · 1W 0L · top 220")


async def test_a_replayed_hand_names_who_played_it_though_another_sits_there_now(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # The replay named each seat's player of now: Cy, in the hand Bo played.
    page, table_id = await ann_at_a_table_without_the_bot(open_player)
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
