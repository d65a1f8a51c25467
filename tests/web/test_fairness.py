"""The fair deal as the browser checks it: verify.js against every value of the
test vectors, in a page with and without ``crypto.subtle``, its verdicts agreeing
with the Python reference's on tampered hands."""

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
    leaf,
    verify_hand,
    verify_reveal,
)
from tests.web.test_browser import OpenPlayer

pytestmark = pytest.mark.asyncio(loop_scope="session")

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
    return {
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
      mySeat: variant.my_seat ?? null, mySeeds: variant.my_seeds ?? null, conflicts: [],
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
        verify_hand(hand, my_seat=variant.get("my_seat"), my_seeds=variant.get("my_seeds", ()))
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
