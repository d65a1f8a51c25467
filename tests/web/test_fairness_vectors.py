"""The fair deal's checks in the page, on hands the test writes: verify.js against every
value of the test vectors, in a page with and without ``crypto.subtle``, its verdicts
agreeing with the Python reference's on tampered hands; and a closed table's history
audited, saying which hands it could not check and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
from tests.web.conftest import QUICK
from tests.web.test_browser import OpenPlayer

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
