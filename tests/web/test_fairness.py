"""The fair deal as the browser checks it, in whole hands against a real server, honest
or made to cheat (tests/server/cheats.py), where the page must say which hands check,
and fail loudly at the one that does not. verify.js against the test vectors and a
table's history is test_fairness_vectors.py; the page's own client seed,
test_fairness_seeds.py."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest
from playwright.async_api import Locator, Page, expect

from qiuqiu.protocol.fairness import HandSeen, verify_reveal
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from tests.server import cheats
from tests.web.conftest import QUICK, Player, screenshot
from tests.web.evening_helpers import socket_player
from tests.web.test_browser import (
    HAND_LIMIT,
    OpenPlayer,
    answer_turn,
    frames_of,
    open_table,
    play_hand,
    seated_against_the_bot,
    sign_in,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture
def config() -> ServerConfig:
    return QUICK


# -- whole hands against the server ----------------------------------------------

SEED = re.compile(r"^[0-9a-f]{64}$")


def tiles_opened(player: Player, hand_id: int) -> int:
    """How many positions of hand ``hand_id`` were opened to this player: its own
    tiles and every hand shown down."""
    positions: set[int] = set()
    for frame in player.frames:
        if frame.get("hand_id") != hand_id or "seq" not in frame:
            continue
        if frame["type"] == "tiles_dealt" and frame.get("openings"):
            positions.update(o["position"] for o in frame["openings"])
        if frame["type"] == "fourth_tile_dealt" and frame.get("opening"):
            positions.add(frame["opening"]["position"])
        if frame["type"] == "showdown":
            positions.update(o["position"] for h in frame["hands"] for o in h["openings"])
    return len(positions)


def listed_seed(player: Player, hand_id: int, seat: int) -> str:
    (started,) = [f for f in frames_of(player, "hand_started") if f["hand_id"] == hand_id]
    seed: str = next(x["client_seed"] for x in started["client_seeds"] if x["seat"] == seat)
    return seed


async def play_until_checked(page: Page, hand: int) -> None:
    """Check or call until hand ``hand``'s deal check shows, passed or failed."""
    async with asyncio.timeout(HAND_LIMIT):
        while not await page.locator(f".result[data-hand='{hand}'] .verify:not(.pending)").count():
            await answer_turn(page, hand)
            await asyncio.sleep(0.05)


async def at_the_bot_table(open_player: OpenPlayer) -> Player:
    """Ann, signed in and seated at a dealer-bot table of her own, at stakes where no
    run of luck busts a caller in the hands a test may play: the decks are random, and
    a cheating server deals the bot the better hand."""
    ann: Player = await open_player()
    await sign_in(ann.page, "Ann")
    for name, value in (("ante", "1"), ("min_bet", "1"), ("max_bet", "2")):
        await ann.page.fill(f".create input[name={name}]", value)
    await open_table(ann.page)
    (created,) = frames_of(ann, "table_created")
    assert created["table"]["options"]["max_bet"] == 2
    return ann


async def failed_check(page: Page, hand: int) -> Locator:
    """Hand ``hand``'s deal check, played until it shows, which must have failed."""
    await play_until_checked(page, hand)
    failed = page.locator(f".result[data-hand='{hand}'] .verify.bad")
    await expect(failed).to_contain_text("DEAL CHECK FAILED")
    return failed


async def leave(page: Page) -> None:
    """Leaves at once. With QUICK's one-second pause the next hand may have begun, and
    a leave in a hand waits for its end until asked again ("Leave now")."""
    lobby = page.locator(".lobby")
    now = page.locator(".table-bar .leave:has-text('Leave now')")
    await page.click(".table-bar .leave")
    await expect(lobby.or_(now)).to_be_visible()
    if not await lobby.is_visible():
        await now.click()
    await expect(lobby).to_be_visible()


async def test_honest_hands_check_tile_by_tile_and_after_leaving_every_shuffle_is_rebuilt(
    open_player: OpenPlayer,
) -> None:
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page

    # The table is opened without a buy-in, then joined with the page's own seed.
    (create,) = [m for m in ann.sent if m["type"] == "create_table"]
    assert "buy_in" not in create
    (join,) = [m for m in ann.sent if m["type"] == "join_table"]
    assert SEED.match(join["client_seed"])
    (joined,) = frames_of(ann, "table_joined")
    me = joined["seat"]

    for hand in (1, 2):
        await play_hand([page], hand)
        n = tiles_opened(ann, hand)
        assert n >= 4
        await expect(page.locator(f".result[data-hand='{hand}'] .verify.ok")).to_contain_text(
            f"{n} tiles checked at their committed positions"
        )
        assert listed_seed(ann, hand, me) == join["client_seed"]
    await expect(page.locator(".fairness .seed-line")).to_contain_text(join["client_seed"][:16])
    await expect(page.locator(".fairness .audit.pending")).to_contain_text("hands kept")
    await page.screenshot(path=screenshot("fair-deal"), full_page=True)

    await leave(page)
    hands = len({f["hand_id"] for f in frames_of(ann, "hand_started")})
    audit = page.locator(".audits .audit.ok")
    await expect(audit).to_contain_text(
        f"{hands} hands checked, every hand the table dealt: "
        "the shuffle of each rebuilt from the revealed seed."
    )
    # The seed the page rebuilt from is the one the server revealed for the table.
    revealed = [h for r in frames_of(ann, "hand_list") for h in r["hands"] if h["table_seed"]]
    assert revealed
    table_view = frames_of(ann, "table_snapshot")[-1]["table"]
    for started in frames_of(ann, "hand_started"):
        seen = HandSeen(
            table_id=started["table_id"],
            hand_id=started["hand_id"],
            button=started["button"],
            commitment=started["commitment"],
            leaves=tuple(started["leaves"]),
            client_seeds={x["seat"]: x["client_seed"] for x in started["client_seeds"]},
            openings={},
        )
        verify_reveal(seen, revealed[0]["table_seed"], table_view["seed_commitment"])


async def test_a_table_left_still_open_is_named_in_the_lobby_while_its_seed_is_awaited(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    # The lobby said "2 hands kept: the whole shuffle of each ... is rebuilt when the
    # table closes" under a table rebuilt before it, with no word of which table.
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    table_id = await open_table(page, bot=False)
    async with socket_player(server, "Bo", table_id, 500):
        await play_hand([page], 1)
        await leave(page)
        pending = page.locator(f".audits .audit.pending[data-table-id='{table_id}']")
        await expect(pending).to_contain_text(f"Table {table_id}:")
        await expect(pending).to_contain_text("is rebuilt when the table closes")


def history_of(player: Player) -> list[dict[str, Any]]:
    """The table's hands as the page's last ask for all of them got them (``list_hands``
    with its limit): the closed table's history."""
    *_, asked = [m for m in player.sent if m["type"] == "list_hands" and m.get("limit") == 100]
    (listed,) = [f for f in frames_of(player, "hand_list") if f.get("ref") == asked["id"]]
    hands: list[dict[str, Any]] = listed["hands"]
    return hands


async def kept_after_reload(page: Page, table_id: str) -> int:
    """How many hands of ``table_id`` the page itself holds (those since its reload)."""
    kept: int = await page.evaluate("id => window.qiuqiu.audits.get(id).hands.size", table_id)
    return kept


async def test_after_a_reload_the_audit_rebuilds_every_hand_the_table_dealt_from_its_history(
    open_player: OpenPlayer,
) -> None:
    # A reload forgets the hands seen before it: the audit rebuilt only the later ones
    # and said "1 hand kept, the shuffle of each rebuilt", as if that were the evening.
    ann, table_id = await seated_against_the_bot(open_player)
    page = ann.page
    for hand in (1, 2):
        await play_hand([page], hand)
    await page.reload()
    await play_hand([page], 3)
    await leave(page)

    audit = page.locator(f".audits .audit.ok[data-table-id='{table_id}']")
    await expect(audit).to_contain_text("hands checked")
    history = history_of(ann)
    dealt = sorted(h["hand_id"] for h in history)
    assert dealt == list(range(1, len(dealt) + 1))
    assert await kept_after_reload(page, table_id) < len(dealt)
    await expect(audit).to_have_text(
        f"✔ Table {table_id}: shuffle rebuilt {len(dealt)} hands checked, every hand the "
        "table dealt: the shuffle of each rebuilt from the revealed seed."
    )
    # The history is a spectator's view, and the audit says no tile of it at all.
    assert not re.search(r"\d-\d", await audit.inner_text())


async def test_a_deck_not_made_from_the_seeds_before_a_reload_fails_the_audit_loudly(
    open_player: OpenPlayer,
) -> None:
    ann = await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    with cheats.ignored_client_seeds():
        table_id = await open_table(page)
        await play_hand([page], 1)
    # Honest from hand 2 on. The snapshot after the reload shows hand 2, over or not,
    # and the page keeps it and those after: only the table's history holds hand 1,
    # the one dealt without Ann's seed.
    await play_hand([page], 2)
    await page.reload()
    await play_hand([page], 3)
    await leave(page)
    failed = page.locator(f".audits .audit.bad[data-table-id='{table_id}']")
    await expect(failed).to_contain_text(f"SHUFFLE CHECK FAILED at table {table_id}")
    await expect(failed).to_contain_text("Hand #1:")
    await expect(failed).to_contain_text("Do not trust this server.")
    assert 1 in {h["hand_id"] for h in history_of(ann)}


async def test_a_tile_other_than_the_committed_one_fails_its_hand_loudly(
    open_player: OpenPlayer,
) -> None:
    with cheats.swapped_tile():
        page = (await at_the_bot_table(open_player)).page
        failed = await failed_check(page, 1)
        await expect(failed).to_contain_text("position 27")
        await expect(failed).to_contain_text("Do not trust this server.")
        await expect(page.locator(".log .bad")).to_contain_text("DEAL CHECK FAILED")
        await page.screenshot(path=screenshot("deal-check-failed"), full_page=True)


@pytest.mark.parametrize(
    "cheat", [cheats.chosen_deck, cheats.ignored_client_seeds], ids=["chosen", "ignored"]
)
async def test_a_deck_not_made_from_the_seeds_fails_once_the_table_seed_is_revealed(
    open_player: OpenPlayer, cheat: Callable[[], AbstractContextManager[None]]
) -> None:
    with cheat():
        ann = await open_player()
        page = ann.page
        await sign_in(page, "Ann")
        table_id = await open_table(page)
        # Every tile opened checks against the leaves: only the seed can show the cheat.
        await play_hand([page], 1)
        await leave(page)
        failed = page.locator(f".audits .audit.bad[data-table-id='{table_id}']")
        await expect(failed).to_contain_text(f"SHUFFLE CHECK FAILED at table {table_id}")
        await expect(failed).to_contain_text("Hand #1")
        await expect(failed).to_contain_text("Do not trust this server.")
        await page.screenshot(path=screenshot(f"shuffle-check-failed-{cheat.__name__}"))


async def test_a_table_seed_drawn_again_once_the_players_seed_is_in_fails_the_table(
    open_player: OpenPlayer,
) -> None:
    """The snapshot after join_table shows the new commitment, and the seed revealed at
    the close rebuilds every deck: only the commitment seen before the seed was sent
    (table_created's) shows that the server could have chosen the decks."""
    with cheats.recommitted():
        ann = await open_player()
        page = ann.page
        await sign_in(page, "Ann")
        table_id = await open_table(page)
        await expect(page.locator(".log .bad")).to_contain_text("seed commitment changed")
        await expect(page.locator(".fairness .audit.bad")).to_contain_text(
            "seed commitment changed while it was open"
        )
        await play_hand([page], 1)
        await leave(page)
    (created,) = frames_of(ann, "table_created")
    (snapshot, *_) = frames_of(ann, "table_snapshot")
    assert snapshot["table"]["seed_commitment"] != created["table"]["seed_commitment"]
    failed = page.locator(f".audits .audit.bad[data-table-id='{table_id}']")
    await expect(failed).to_contain_text(f"SHUFFLE CHECK FAILED at table {table_id}")
    await expect(failed).to_contain_text("seed commitment changed while it was open")
    await expect(failed).to_contain_text("Do not trust this server.")


async def test_a_table_the_lobby_lists_without_a_seed_commitment_fails_once_joined(
    open_player: OpenPlayer,
) -> None:
    with cheats.recommitted(unlisted=True):
        ann, bo = await open_player(), await open_player()
        await sign_in(ann.page, "Ann")
        table_id = await open_table(ann.page, bot=False)
        await sign_in(bo.page, "Bo")
        await bo.page.locator(f".table-row[data-table-id='{table_id}'] [data-action=join]").click()
        await expect(bo.page.locator(".log .bad")).to_contain_text(
            "no seed commitment before this page sent its seed"
        )
    (listed, *_) = frames_of(bo, "table_list")
    assert [t.get("seed_commitment") for t in listed["tables"]] == [None]


async def test_a_dealer_bot_seed_the_server_chose_fails_the_hand(
    open_player: OpenPlayer,
) -> None:
    """Every deck rebuilds from the seeds listed: only the bot's seed, which must be
    empty, shows that the server picked it, knowing the player's."""
    with cheats.chosen_bot_seed():
        ann = await at_the_bot_table(open_player)
        await expect(await failed_check(ann.page, 1)).to_contain_text("dealer bot")
    (started, *_) = frames_of(ann, "hand_started")
    assert started["client_seeds"][-1]["client_seed"].startswith("g")


async def test_a_seed_listed_for_a_seat_not_dealt_in_fails_the_hand(
    open_player: OpenPlayer,
) -> None:
    """Every opening sits where the seats listed put it, and every deck rebuilds from
    the seeds listed: only the seats of stacks show the one nobody plays."""
    with cheats.phantom_seat():
        page = (await at_the_bot_table(open_player)).page
        await expect(await failed_check(page, 1)).to_contain_text(
            "lists client seeds for seats 1, 2, 3, but deals in seats 1, 2"
        )


async def test_a_button_the_server_chose_at_a_dealer_bot_table_fails_the_hand(
    open_player: OpenPlayer,
) -> None:
    """The deck is the honest one: only the button shows that the server gave the bot
    the better of the two hands it deals."""
    with cheats.chosen_button():
        ann = await at_the_bot_table(open_player)
        page = ann.page
        for hand_id in range(1, 40):
            await play_until_checked(page, hand_id)
            (started,) = [f for f in frames_of(ann, "hand_started") if f["hand_id"] == hand_id]
            if started["button"] == 0:
                break
        failed = page.locator(f".result[data-hand='{hand_id}'] .verify.bad")
        await expect(failed).to_contain_text("is not the button")


async def test_a_hand_number_the_server_skipped_fails_the_next_hand(
    open_player: OpenPlayer,
) -> None:
    with cheats.skipped_hand():
        ann = await at_the_bot_table(open_player)
        page = ann.page
        # The first hand cannot show a skip: the page saw no hand before it.
        ids: list[int] = []
        async with asyncio.timeout(HAND_LIMIT * 40):
            while len(ids) < 2 or ids[-1] == ids[-2] + 1:
                while len(started := frames_of(ann, "hand_started")) == len(ids):
                    await asyncio.sleep(0.05)
                ids.append(started[len(ids)]["hand_id"])
                await play_until_checked(page, ids[-1])
        failed = page.locator(f".result[data-hand='{ids[-1]}'] .verify.bad")
        await expect(failed).to_contain_text(f"skipped from hand #{ids[-2]} to hand #{ids[-1]}")


async def test_a_button_the_server_chose_at_a_table_of_players_fails_the_hand(
    open_player: OpenPlayer,
) -> None:
    """At two seats the button goes back and forth: a server that gives it to whichever
    seat makes seat 2's hand the best is caught at the first hand it breaks that."""
    with cheats.chosen_button():
        ann, bo = await open_player(), await open_player()
        await sign_in(ann.page, "Ann")
        table_id = await open_table(ann.page, bot=False)
        await sign_in(bo.page, "Bo")
        await bo.page.locator(f".table-row[data-table-id='{table_id}'] [data-action=join]").click()
        buttons: list[int] = []
        async with asyncio.timeout(HAND_LIMIT * 40):
            while len(buttons) < 2 or buttons[-1] != buttons[-2]:
                while len(started := frames_of(ann, "hand_started")) == len(buttons):
                    await asyncio.sleep(0.05)
                buttons.append(started[len(buttons)]["button"])
                checked = f".result[data-hand='{len(buttons)}'] .verify:not(.pending)"
                while not await ann.page.locator(checked).count():
                    for page in (ann.page, bo.page):
                        await answer_turn(page, len(buttons))
                    await asyncio.sleep(0.05)
        failed = ann.page.locator(f".result[data-hand='{len(buttons)}'] .verify.bad")
        seat = buttons[-1] + 1
        await expect(failed).to_contain_text(f"button moved from seat {seat} to seat {seat}")


async def test_a_spectator_at_the_close_rebuilds_every_hand_it_saw_from_table_closed(
    open_player: OpenPlayer,
) -> None:
    ann = await open_player()
    await sign_in(ann.page, "Ann")
    table_id = await open_table(ann.page)
    cici = await open_player()
    await sign_in(cici.page, "Cici")
    await cici.page.click(f".table-row[data-table-id='{table_id}'] [data-action=watch]")
    await expect(cici.page.locator(".role")).to_have_text("Watching")
    await play_hand([ann.page, cici.page], 1)

    await leave(ann.page)
    # Every hand it saw begin, or found under way in its snapshot.
    seen = {f["hand_id"] for f in frames_of(cici, "hand_started")}
    seen |= {
        f["table"]["hand"]["hand_id"]
        for f in frames_of(cici, "table_snapshot")
        if f["table"]["hand"]
    }
    hands = len(seen)
    plural = "hand" if hands == 1 else "hands"
    audit = cici.page.locator(f".audits .audit.ok[data-table-id='{table_id}']")
    await expect(audit).to_contain_text(
        f"{hands} {plural} kept, the shuffle of each rebuilt from the revealed seed."
    )
    # From the event itself: the spectator never asked for the table's hands.
    (closed,) = frames_of(cici, "table_closed")
    assert SEED.match(closed["table_seed"])
    assert not frames_of(cici, "hand_list")
