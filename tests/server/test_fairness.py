"""The fair deal over real connections (PROTOCOL.md, "Fairness").

Tables of 2 (against the dealer bot), 3 and 6 seats are played with spectators
watching, some seats folding, until everyone leaves and the table closes. Then,
for every connection: no tile it received, or could work out from what it
received (live events, snapshots, ``hand_list``), was a folded hand's, a
walk-over winner's or an undealt one; every hand it saw verifies; and every
shuffle verifies from the seed revealed at the close.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from qiuqiu.engine import ALL_TILES
from qiuqiu.protocol import fairness
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.history import played
from qiuqiu.server.records import hand_from_json, hand_json, table_from_json
from qiuqiu.server.store import HandRecord
from tests.server.conftest import Client
from tests.server.test_play import Connect, call_or_check
from tests.server.witness import hands_seen, seed_commitments, table_seeds

HANDS = 5


def sometimes_fold(rng: random.Random) -> Any:
    def choose(legal: dict[str, Any]) -> dict[str, Any]:
        if legal.get("fold") and rng.random() < 0.3:
            return {"type": "fold"}
        if "bet" in legal and rng.random() < 0.3:
            return {"type": "bet", "amount": legal["bet"]["min"]}
        return call_or_check(legal)

    return choose


async def play(client: Client, table_id: str, hands: int, choose: Any) -> None:
    """Answer every turn with ``choose`` until ``hands`` hands have ended, then leave."""
    ended = 0
    while ended < hands:
        message = await client.wait(
            lambda m: (
                m.get("table_id") == table_id
                and (m["type"] == "hand_ended" or (m["type"] == "turn_started" and "legal" in m))
            )
        )
        if message["type"] == "hand_ended":
            ended += 1
            continue
        await client.send(**choose(message["legal"]), table_id=table_id, hand_id=message["hand_id"])
    left = await client.reply("leave_table", table_id=table_id)
    assert left["type"] == "table_left"


async def closed_hands(client: Client, table_id: str) -> list[dict[str, Any]]:
    """The table's hands from ``list_hands``, once the close has revealed its seed."""
    async with asyncio.timeout(10):
        while True:
            listed = await client.reply("list_hands", table_id=table_id, limit=100)
            hands: list[dict[str, Any]] = listed["hands"]
            if hands and all(h["table_seed"] for h in hands):
                return hands
            await asyncio.sleep(0.02)


def check_connection(
    frames: list[dict[str, Any]],
    me: int | None,
    my_seeds: tuple[str, ...],
    table_seed: str,
    commitment: str,
) -> int:
    """Everything a client of this connection must be able to say; the hands checked."""
    assert not any("deck" in f or "seed" in f for f in frames)
    hands = hands_seen(frames)
    for hand in hands:
        seen = hand.seen()
        fairness.verify_hand(seen, my_seat=me, my_seeds=my_seeds if me is not None else ())
        fairness.verify_reveal(seen, table_seed, commitment)
        leaked = hand.tiles_known() - hand.tiles_allowed(me)
        assert not leaked, f"seat {me} learnt {leaked} in hand {hand.hand_id}"
        opened = {p for by in hand.openings.values() for p in by}
        dealt = fairness.dealt_positions(tuple(seen.client_seeds), seen.button)
        mine = set(dealt.get(me, ())) if me is not None else set()
        shown = {p for seat in hand.shown for p in dealt[seat]}
        assert opened <= mine | shown, "an opening of a position this viewer must not see"
    return sum(hand.ended for hand in hands)


@pytest.mark.parametrize(("seats", "bot"), [(2, True), (3, False), (6, False)])
async def test_no_connection_learns_a_hidden_tile_and_every_hand_verifies(
    server: QiuQiuServer, connect_client: Connect, seats: int, bot: bool
) -> None:
    players = seats - 1 if bot else seats
    clients = [await connect_client() for _ in range(players)]
    for i, client in enumerate(clients):
        await client.hello(f"P{i}")
    # Bets capped, so that no raise war busts a player before its hands are played.
    options = {
        "seats": seats,
        "dealer_bot": bot,
        "min_players": seats,
        "max_bet": 20,
        "max_raises": 1,
    }
    created = await clients[0].reply("create_table", options=options)
    table_id = created["table"]["table_id"]
    commitment = created["table"]["seed_commitment"]
    spectators = [await connect_client() for _ in range(2)]
    for i, spectator in enumerate(spectators):
        await spectator.hello(f"S{i}")
        assert (await spectator.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    seeds = [f"seed-{seats}-{i}" for i in range(players)]
    for client, seed in zip(clients, seeds, strict=True):
        joined = await client.reply("join_table", table_id=table_id, buy_in=1000, client_seed=seed)
        assert joined["type"] == "table_joined"
    rng = random.Random(seats)
    await asyncio.gather(
        *(play(c, table_id, HANDS, sometimes_fold(random.Random(rng.random()))) for c in clients)
    )
    for spectator in spectators:
        await spectator.expect("table_closed", table_id=table_id)

    table_seed = table_seeds(spectators[0].frames)[table_id]
    assert fairness.seed_commitment(table_seed) == commitment
    for i, client in enumerate(clients):
        assert seed_commitments(client.frames)[table_id] == commitment
        assert check_connection(client.frames, i, (seeds[i],), table_seed, commitment) >= HANDS
    for spectator in spectators:
        assert check_connection(spectator.frames, None, (), table_seed, commitment) >= HANDS

    # The table's history, after the close: what a spectator saw, and the seed with it.
    recalled = await closed_hands(clients[0], table_id)
    assert {h["table_seed"] for h in recalled} == {table_seed}
    live = {h.hand_id: h for h in hands_seen(spectators[0].frames) if h.ended}
    for hand in recalled:
        events = hand["events"]
        assert check_connection(events, None, (), table_seed, commitment) == 1
        watched = [f for f in live[hand["hand_id"]].frames if "seq" in f and "hand_id" in f]
        assert events == watched


async def test_a_walk_over_winner_and_a_folded_hand_show_no_tile(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    a, b = await connect_client(), await connect_client()
    await a.hello("A")
    await b.hello("B")
    created = await a.reply("create_table", options={"dealer_bot": False})
    table_id = created["table"]["table_id"]
    for client in (a, b):
        await client.reply("join_table", table_id=table_id, buy_in=500, client_seed="x")
    turn = await a.wait(lambda m: m["type"] == "turn_started" and "legal" in m)
    await a.send("bet", table_id=table_id, hand_id=turn["hand_id"], amount=10)
    await b.wait(lambda m: m["type"] == "turn_started" and "legal" in m)
    await b.send("fold", table_id=table_id, hand_id=turn["hand_id"])
    await b.expect("hand_ended", hand_id=turn["hand_id"])
    await a.expect("hand_ended", hand_id=turn["hand_id"])
    for me, client in ((0, a), (1, b)):
        (hand,) = [h for h in hands_seen(client.frames) if h.hand_id == turn["hand_id"]]
        assert not hand.shown
        assert set(hand.openings) == {me}
        assert hand.tiles_known() == hand.tiles_allowed(me)


async def test_a_seed_set_counts_from_the_next_hand_and_is_refused_when_not_seated(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    client = await connect_client()
    await client.hello("Ann")
    created = await client.reply("create_table")
    table_id = created["table"]["table_id"]
    refused = await client.reply("set_seed", table_id=table_id, client_seed="early")
    assert (refused["type"], refused["code"]) == ("error", "not_seated")
    await client.reply("join_table", table_id=table_id, buy_in=500, client_seed="first")
    first = await client.expect("hand_started")
    assert {"seat": 0, "client_seed": "first"} in first["client_seeds"]
    assert {"seat": 1, "client_seed": ""} in first["client_seeds"], "the bot's seat adds nothing"
    answer = await client.reply("set_seed", table_id=table_id, client_seed="second")
    assert answer == {
        "ref": answer["ref"],
        "type": "seed_set",
        "table_id": table_id,
        "client_seed": "second",
    }
    bad = await client.reply("set_seed", table_id=table_id, client_seed="not allowed!")
    assert (bad["type"], bad["code"]) == ("error", "invalid_message")
    # The hand in play goes on with the first seed: finish it.
    turn = next(m for m in reversed(client.frames) if m["type"] == "turn_started" and "legal" in m)
    while turn["type"] == "turn_started":
        action = call_or_check(turn["legal"])
        await client.send(**action, table_id=table_id, hand_id=turn["hand_id"])
        turn = await client.wait(
            lambda m: (
                (m["type"] == "hand_started" and m["hand_id"] > first["hand_id"])
                or (m["type"] == "turn_started" and "legal" in m)
            )
        )
    assert {"seat": 0, "client_seed": "second"} in turn["client_seeds"]


def test_a_hand_recorded_before_protocol_2_is_listed_without_its_seed_and_deck() -> None:
    # Such a hand ended by revealing its whole deck, folded hands included.
    started = {"table_id": "t1", "seq": 2, "hand_id": 1, "type": "hand_started", "button": 1}
    ended = {"table_id": "t1", "seq": 9, "hand_id": 1, "type": "hand_ended", "stacks": []}
    revealed = {**ended, "seed": "ab" * 32, "deck": [str(t) for t in ALL_TILES]}
    frames = (json.dumps({**started, "commitment": "cd" * 32}), json.dumps(revealed))
    old = HandRecord("t1", 1, ((0, "a1"),), ((0, 500),), ((0, 520),), frames)
    listed = played(hand_from_json(hand_json(old)))
    assert listed.events == ({**started, "commitment": "cd" * 32}, ended)
    assert listed.table_seed is None


def test_a_table_recorded_before_protocol_2_reads_with_no_seed_for_the_next_host_to_draw() -> None:
    old = json.dumps(
        {
            "table_id": "t1",
            "options": {"seats": 2, "dealer_bot": False},
            "seats": [
                {"seat": 0, "account_id": "a1", "name": "Ann", "stack": 300, "is_bot": False}
            ],
            "hand_id": 4,
            "hand_open": False,
            "seq": 9,
            "created_by": "a1",
        }
    )
    table = table_from_json(old)
    assert table.table_seed == ""
    assert [s.client_seed for s in table.seats] == [""]
    assert [s.missed_since for s in table.seats] == [0]
