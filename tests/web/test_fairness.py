"""The fair deal as the browser checks it: verify.js against every value of the
test vectors, in a page with and without ``crypto.subtle``, its verdicts agreeing
with the Python reference's on tampered hands; then whole hands against a real
server, honest or made to cheat (tests/server/cheats.py), where the page must say
which hands check, and fail loudly at the one that does not."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Locator, Page, WebSocketRoute, expect

from qiuqiu.protocol.common import Opening
from qiuqiu.protocol.fairness import (
    DealTampered,
    HandSeen,
    commitment,
    dealt_positions,
    derive_deck,
    hand_seed,
    leaf,
    seed_commitment,
    verify_hand,
    verify_reveal,
)
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from tests.server import cheats
from tests.web.conftest import DESKTOP, PHONE, QUICK, Player, screenshot
from tests.web.evening_helpers import socket_player
from tests.web.test_browser import (
    CHECK_OR_CALL,
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


VECTORS = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "fairness-vectors.json").read_text()
)["cases"]


def tampered(case: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each way a hand can be wrong, as what a viewer saw of it: the honest one
    first. Every seat's four tiles are opened, as after a showdown of all."""
    deck, salts, where = case["deck"], case["salts"], case["dealt_positions"]
    openings = {
        seat: [{"position": p, "tile": deck[p], "salt": salts[p]} for p in positions]
        for seat, positions in where.items()
    }
    seats = sorted(where, key=int)
    first, second = seats[0], seats[1]
    listed = {x["seat"]: x["client_seed"] for x in case["client_seeds"]}
    mine = {"my_seat": int(first), "my_seeds": [listed[int(first)]]}

    def opened(seat: str, index: int, **change: Any) -> dict[str, Any]:
        copy = {s: [dict(o) for o in os] for s, os in openings.items()}
        copy[seat][index].update(change)
        return {"openings": copy}

    other = next(t for t in deck if t not in (o["tile"] for o in openings[first]))
    stolen = openings[second][0]
    # A deck that holds one tile twice, committed to as it is: only the openings show it.
    twice = openings[first][0]["tile"]
    doubled = list(case["leaves"])
    doubled[stolen["position"]] = leaf(stolen["position"], twice, stolen["salt"])
    seeded = [x["seat"] for x in case["client_seeds"] if x["client_seed"]]
    # Called the dealer bot's, a seat that lists a seed: one the server chose.
    bot = {"openings": openings, "bot_seat": seeded[-1]} if seeded else None
    return {
        **({"a dealer bot's seat with a seed": bot} if bot else {}),
        "honest": {"openings": openings, **mine},
        "a tile other than the committed one": opened(first, 0, tile=other),
        "a salt other than the committed one": opened(first, 1, salt="00" * 16),
        "another seat's position": {
            "openings": {**openings, first: [*openings[first][1:], stolen]}
        },
        "a tile dealt twice": {
            "openings": {**openings, second: [{**stolen, "tile": twice}, *openings[second][1:]]},
            "leaves": doubled,
            "commitment": commitment(doubled),
        },
        "a commitment the leaves do not hash to": {
            "openings": openings,
            "commitment": "0" * 64,
        },
        "a leaf changed": {
            "openings": openings,
            "leaves": ["0" * 64, *case["leaves"][1:]],
        },
        "a client seed this page never sent": {
            "openings": openings,
            "my_seat": int(first),
            "my_seeds": ["never-sent"],
        },
    }


CHECK = """async (cases) => {
  const v = await import("./verify.js");
  const hex = v.toHex;
  const out = [];
  for (const c of cases) {
    const handSeed = v.handSeed(c.table_seed, c.table_id, c.hand_id);
    const key = v.dealKey(handSeed, c.client_seeds);
    const deck = v.deriveDeck(handSeed, c.client_seeds);
    const seen = (variant) => ({
      tableId: c.table_id, handId: c.hand_id, button: c.button,
      commitment: variant.commitment ?? c.commitment, leaves: variant.leaves ?? c.leaves,
      clientSeeds: c.client_seeds,
      openings: new Map(Object.entries(variant.openings).map(([s, os]) => [Number(s), os])),
      mySeat: variant.my_seat ?? null, mySeeds: variant.my_seeds ?? null,
      botSeat: variant.bot_seat ?? null, conflicts: [],
    });
    const verdicts = {};
    for (const [name, variant] of Object.entries(c.variants)) {
      verdicts[name] = await v.verifyHand(seen(variant));
    }
    const honest = seen(c.variants.honest);
    const seats = c.client_seeds.map((x) => x.seat);
    const others = c.client_seeds.map((x) => ({ ...x, client_seed: x.client_seed ? "" : "x" }));
    const reveal = (hand, seed, to = c.seed_commitment) => v.verifyReveal(hand, seed, to).ok;
    out.push({
      seed_commitment: v.seedCommitment(c.table_seed),
      hand_seed: handSeed,
      deal_key: hex(key),
      stream_first_64_bytes: hex(new v.Stream(key).take(64)),
      dealt_positions: Object.fromEntries(v.dealtPositions(seats, c.button)),
      deck: deck.tiles,
      salts: deck.salts,
      leaves: deck.leaves,
      commitment: deck.commitment,
      leaf_0: v.leafOf(0, c.deck[0], c.salts[0]),
      verdicts,
      reveal: {
        honest: reveal(honest, c.table_seed),
        another_table_seed: reveal(honest, "1".repeat(64)),
        a_seed_not_committed: reveal(honest, c.table_seed, "0".repeat(64)),
        other_client_seeds: reveal({ ...honest, clientSeeds: others }, c.table_seed),
        another_hand: reveal({ ...honest, handId: c.hand_id - 1 }, c.table_seed),
      },
    });
  }
  return { subtle: Boolean(globalThis.crypto?.subtle), out };
}"""

FIELDS = (
    "seed_commitment",
    "hand_seed",
    "deal_key",
    "stream_first_64_bytes",
    "deck",
    "salts",
    "leaves",
    "commitment",
)


def python_verdict(case: dict[str, Any], variant: dict[str, Any]) -> bool:
    """The reference's answer for the same hand (fairness.verify_hand)."""
    hand = HandSeen(
        table_id=case["table_id"],
        hand_id=case["hand_id"],
        button=case["button"],
        commitment=variant.get("commitment", case["commitment"]),
        leaves=tuple(variant.get("leaves", case["leaves"])),
        client_seeds={x["seat"]: x["client_seed"] for x in case["client_seeds"]},
        openings={
            int(seat): [Opening(**o) for o in os] for seat, os in variant["openings"].items()
        },
    )
    try:
        verify_hand(
            hand,
            my_seat=variant.get("my_seat"),
            my_seeds=variant.get("my_seeds", ()),
            bot_seat=variant.get("bot_seat"),
        )
        verify_reveal(hand, case["table_seed"], case["seed_commitment"])
    except DealTampered:
        return False
    return True


async def test_verify_js_rebuilds_every_vector_and_catches_each_tampering_with_and_without_subtle(
    open_player: OpenPlayer,
) -> None:
    cases = [{**case, "variants": tampered(case)} for case in VECTORS]
    for secure in (True, False):
        player = await open_player()
        if not secure:
            # As on a page served over plain http from another host: no crypto.subtle.
            await player.context.add_init_script(
                "Object.defineProperty(Crypto.prototype, 'subtle', {get: () => undefined})"
            )
            await player.page.reload()
        result = await player.page.evaluate(CHECK, cases)
        assert result["subtle"] is secure
        for case, got in zip(cases, result["out"], strict=True):
            for name in FIELDS:
                assert got[name] == case[name], f"{case['table_id']}: {name}"
            assert got["dealt_positions"] == case["dealt_positions"]
            assert got["leaf_0"] == case["leaves"][0]
            verdicts = got["verdicts"]
            tiles = 4 * len(case["client_seeds"])
            assert verdicts["honest"] == {
                "ok": True,
                "tilesChecked": tiles,
                "detail": f"{tiles} tiles checked at their committed positions.",
            }
            for name, variant in case["variants"].items():
                assert verdicts[name]["ok"] is (name == "honest"), name
                assert python_verdict(case, variant) is verdicts[name]["ok"], name
            assert got["reveal"] == {
                "honest": True,
                "another_table_seed": False,
                "a_seed_not_committed": False,
                "other_client_seeds": False,
                "another_hand": False,
            }


# -- a table's history, rebuilt ------------------------------------------------

HISTORY_SEED = "ab" * 32
HISTORY_TABLE = "thistory"

AUDIT_HISTORY = """async ({ table_id, seed_commitment, table_seed, history }) => {
  const { DealLedger } = await import("./deals.js");
  const ledger = new DealLedger(table_id, seed_commitment, () => null);
  ledger.botSeat = 1;
  return ledger.revealWithHistory(table_seed, history);
}"""


def listed(hand_id: int, *, voided: bool = False, dealt_from: str = HISTORY_SEED) -> dict[str, Any]:
    """Hand ``hand_id`` of a closed dealer-bot table as ``list_hands`` lists it: Ann at
    seat 0 shows down against the bot (both hands opened), its deck made from
    ``dealt_from``; a voided one keeps only its ``hand_voided``."""
    head = {"table_id": HISTORY_TABLE, "hand_id": hand_id}
    if voided:
        events = [{**head, "seq": 1, "type": "hand_voided"}]
        return {**head, "voided": True, "seats": [], "events": events, "table_seed": HISTORY_SEED}
    seeds = {0: "ann-seed", 1: ""}
    deck = derive_deck(hand_seed(dealt_from, HISTORY_TABLE, hand_id), seeds)
    started = {
        **head,
        "seq": 1,
        "type": "hand_started",
        "button": 1,
        "stacks": [{"seat": 0, "amount": 100}, {"seat": 1, "amount": 100}],
        "commitment": deck.commitment,
        "leaves": list(deck.leaves),
        "client_seeds": [{"seat": seat, "client_seed": seed} for seat, seed in seeds.items()],
    }
    shown = [
        {
            "seat": seat,
            "tiles": [deck.tiles[p] for p in positions],
            "openings": [
                {"position": p, "tile": deck.tiles[p], "salt": deck.salts[p]} for p in positions
            ],
        }
        for seat, positions in dealt_positions([0, 1], 1).items()
    ]
    showdown = {**head, "seq": 2, "type": "showdown", "hands": shown}
    return {
        **head,
        "voided": False,
        "seats": [],
        "events": [started, showdown],
        "table_seed": HISTORY_SEED,
    }


async def test_the_audit_of_a_tables_history_says_which_hands_it_could_not_check_and_why(
    open_player: OpenPlayer,
) -> None:
    page = (await open_player()).page

    async def audit(history: list[dict[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = await page.evaluate(
            AUDIT_HISTORY,
            {
                "table_id": HISTORY_TABLE,
                "seed_commitment": seed_commitment(HISTORY_SEED),
                "table_seed": HISTORY_SEED,
                "history": history,
            },
        )
        return result

    # The server's last 100 hands, 21 to 120, one of them called off as its server stopped.
    full = [listed(n, voided=n == 50) for n in range(21, 121)]
    assert await audit(full) == {
        "ok": True,
        "detail": "99 hands checked, the shuffle of each rebuilt from the revealed seed. "
        "20 earlier hands were not checked: the server keeps only a table's last 100 hands, "
        "and this page did not see them. 1 hand was not checked: called off when the server "
        "stopped, its record does not say how it was dealt.",
    }
    assert await audit([listed(n) for n in (1, 2, 4)]) == {
        "ok": True,
        "detail": "3 hands checked, the shuffle of each rebuilt from the revealed seed. "
        "1 hand was not checked: the table's history does not list it, and this page did "
        "not see it.",
    }

    # A deck the seed does not make, though its leaves and openings agree with each other.
    chosen = await audit([listed(1), listed(2, dealt_from="cd" * 32)])
    assert chosen["ok"] is False
    assert chosen["detail"].startswith("Hand #2: the revealed seed and the listed client seeds")
    swapped = listed(1)
    (opened, *_) = swapped["events"][1]["hands"][0]["openings"]
    opened["tile"] = "6-6" if opened["tile"] != "6-6" else "0-0"
    assert (await audit([swapped]))["detail"].startswith("Hand #1, in the table's history: ")
    undealt = {**listed(1), "events": []}
    assert await audit([undealt]) == {
        "ok": False,
        "detail": "Hand #1's record in the table's history does not say how it was dealt.",
    }


OPENED_TWICE = """async ({ started, first, second }) => {
  const { DealLedger } = await import("./deals.js");
  const ledger = new DealLedger(started.table_id, null, () => null);
  ledger.start(started, null);
  ledger.open(started.hand_id, 0, [first], [first.tile]);
  ledger.open(started.hand_id, 0, [second], [second.tile]);
  return ledger.hands.get(started.hand_id).conflicts;
}"""


async def test_a_position_opened_twice_with_another_salt_says_the_salt_differs(
    open_player: OpenPlayer,
) -> None:
    page = (await open_player()).page
    hand = listed(1)
    started, showdown = hand["events"]
    opened = showdown["hands"][0]["openings"][0]
    salt = opened["salt"]
    resalted = {**opened, "salt": ("0" if salt[0] != "0" else "1") + salt[1:]}
    conflicts = await page.evaluate(
        OPENED_TWICE, {"started": started, "first": opened, "second": resalted}
    )
    assert conflicts == [
        f"Position {opened['position']} of seat 1 was opened as {opened['tile']} twice, "
        "with two different salts."
    ]


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


PLACEHOLDER_CUT = """input => {
  const value = input.value;
  input.value = input.placeholder;
  const cut = input.scrollWidth > input.clientWidth;
  input.value = value;
  return cut;
}"""
"""Whether ``input``'s placeholder runs past its box (measured as typed text, as it is drawn)."""


@pytest.mark.parametrize("screen", ["desktop", "phone"])
async def test_a_client_seed_the_server_would_refuse_is_said_and_not_sent(
    open_player: OpenPlayer, screen: str
) -> None:
    # "Use this seed" greyed out without a word, and the placeholder that named the
    # characters a seed may hold was cut off in the panel.
    ann = await open_player(PHONE if screen == "phone" else DESKTOP, phone=screen == "phone")
    page = ann.page
    await sign_in(page, "Ann")
    await open_table(page)
    seed = page.locator("input[name=client_seed]")
    use = page.locator("[data-action=set-seed]")
    problem = page.locator(".seed-form .seed-problem")
    await expect(page.locator(".seed-form")).to_contain_text(
        "Letters a\u2013z and A\u2013Z, digits, _ and -, up to 64"
    )
    assert not await seed.evaluate(PLACEHOLDER_CUT)
    await expect(problem).to_be_hidden()

    await seed.fill("lucky 7!")
    await expect(problem).to_have_text(
        "A seed holds only letters a\u2013z and A\u2013Z, digits, _ and -:"
        " not spaces, \u201c!\u201d."
    )
    await expect(use).to_be_disabled()
    await page.locator(".seed-form small").scroll_into_view_if_needed()
    await page.screenshot(path=screenshot(f"seed-refused-{screen}"))
    await seed.press("Enter")
    assert not [m for m in ann.sent if m["type"] == "set_seed"]

    await seed.fill("lucky-7")
    await expect(problem).to_be_hidden()
    await use.click()
    await expect(page.locator(".fairness .seed-line")).to_contain_text("lucky-7")
    assert [m["client_seed"] for m in ann.sent if m["type"] == "set_seed"] == ["lucky-7"]


async def test_a_resumed_seat_sends_a_seed_of_its_own_which_deals_from_the_next_hand(
    open_player: OpenPlayer,
) -> None:
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    (join,) = [m for m in ann.sent if m["type"] == "join_table"]
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()

    # A reload forgets the seed this page joined with: it sends a new one at once.
    await page.reload()
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    (sent,) = [m for m in ann.sent if m["type"] == "set_seed"]
    assert SEED.match(sent["client_seed"])
    assert sent["client_seed"] != join["client_seed"]
    seed_line = page.locator(".fairness .seed-line")
    await expect(seed_line).to_have_text(f"Your client seed: {sent['client_seed'][:16]}…")
    assert [f["client_seed"] for f in frames_of(ann, "seed_set")] == [sent["client_seed"]]

    # The hand under way still has the old seed, which this page cannot know any more.
    await play_hand([page], 1)
    (joined,) = frames_of(ann, "table_joined")
    assert listed_seed(ann, 1, joined["seat"]) == join["client_seed"]
    await play_hand([page], 2)
    assert listed_seed(ann, 2, joined["seat"]) == sent["client_seed"]


async def test_a_seed_set_withheld_after_a_reload_fails_the_second_hand_dealt_without_it(
    open_player: OpenPlayer,
) -> None:
    """Reloaded, the page cannot know its seat's seed, and sends one of its own. A server
    that never confirms it could list a seed of its own choosing in every hand (here,
    the one the page sat with, which it forgot), every deck rebuilding from the seeds
    listed at the close: only the hand it was writing as the seed came may miss it."""
    ann, _ = await seated_against_the_bot(open_player)
    page = ann.page
    await expect(page.locator(CHECK_OR_CALL)).to_be_visible()
    withheld: list[str] = []
    started: list[int] = []
    """The hands begun after the reload, as their hand_started came."""

    def route(ws: WebSocketRoute) -> None:
        server_side = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            asked = json.loads(message)
            if asked["type"] == "set_seed":
                withheld.append(asked["client_seed"])  # so no seed_set ever comes
            else:
                server_side.send(message)

        def from_server(message: str | bytes) -> None:
            told = json.loads(message)
            if told["type"] == "hand_started":
                started.append(told["hand_id"])
            ws.send(message)

        ws.on_message(from_page)
        server_side.on_message(from_server)

    await page.route_web_socket(re.compile(".*"), route)
    await page.reload()
    async with asyncio.timeout(HAND_LIMIT * 2):
        while not started:
            await answer_turn(page, 1)
            await asyncio.sleep(0.05)
    assert withheld, "the page sent no seed of its own"
    await play_until_checked(page, started[0])
    await expect(page.locator(f".result[data-hand='{started[0]}'] .verify")).to_contain_text(
        "Deal verified"
    )
    failed = await failed_check(page, started[0] + 1)
    await expect(failed).to_contain_text(
        "A second hand was dealt without the seed this page sent, which the server never confirmed"
    )


async def test_a_tab_taking_the_game_back_sends_a_seed_of_its_own_and_fails_no_hand(
    open_player: OpenPlayer,
) -> None:
    # The tab that took the game sent a seed of its own; the first, taking the game
    # back, held the next hand to the seed it had sent itself: "DEAL CHECK FAILED".
    ann, _ = await seated_against_the_bot(open_player)
    first = ann.page
    await play_hand([first], 1)
    (joined,) = frames_of(ann, "table_joined")

    second = await ann.context.new_page()
    second.on("pageerror", lambda error: ann.errors.append(str(error)))
    await second.goto(first.url)
    confirmed = re.compile(r"^Your client seed: [0-9a-f]{16}…$")
    await expect(second.locator(".fairness .seed-line")).to_have_text(confirmed)
    await play_hand([second], 2)
    # Past the pause between hands: hand 3 is dealt with the second tab's seed.
    await expect(second.locator(".center .phase")).to_contain_text(
        "Hand #3", timeout=HAND_LIMIT * 1000
    )

    await first.bring_to_front()
    await first.click("[data-action=take-back]")
    await expect(first.locator(".center .phase")).to_contain_text("Hand #3")
    await play_until_checked(first, 3)
    await expect(first.locator(".result[data-hand='3'] .verify")).to_contain_text("Deal verified")
    # Sent again, the same, with a second snapshot that may come while it is on its way.
    (seed,) = {m["client_seed"] for m in ann.sent if m["type"] == "set_seed"}
    await play_until_checked(first, 4)
    await expect(first.locator(".result[data-hand='4'] .verify")).to_contain_text("Deal verified")
    assert listed_seed(ann, 4, joined["seat"]) == seed
    await expect(first.locator(".log li.bad")).to_have_count(0)


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
