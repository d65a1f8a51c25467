"""Nobody sees what they should not, and everyone can check every tile they saw."""

from __future__ import annotations

import asyncio
from typing import Any

from websockets.asyncio.client import connect

from qiuqiu.protocol import fairness
from qiuqiu.server.gateway import QiuQiuServer
from tests.conftest import free_port
from tests.server.conftest import Client
from tests.server.processes import Servers
from tests.server.test_play import NO_BOT_3, Connect, call_or_check, play_hand, seat_three
from tests.server.witness import hands_seen

HANDS = 6


def tiles_in(message: dict[str, Any]) -> list[tuple[int, list[str]]]:
    """Every (seat, tiles) a message reveals, wherever in it they are."""
    found: list[tuple[int, list[str]]] = []
    match message:
        case {"type": "tiles_dealt", "seat": seat, "tiles": tiles}:
            found.append((seat, tiles))
        case {"type": "fourth_tile_dealt", "seat": seat, "tile": tile}:
            found.append((seat, [tile]))
        case {"type": "cut_declared", "seat": seat, "cut": cut}:
            found.append((seat, [t for pair in cut["pairs"] for t in pair]))
        case {"type": "table_snapshot", "table": table}:
            found += [(s["seat"], s["tiles"]) for s in table["seats"] if "tiles" in s]
    return found


def check_hidden(frames: list[dict[str, Any]], me: int | None) -> int:
    """Fail if ``frames`` show another seat's tiles before a showdown, or ever a seed or
    a deck. Returns how many hands were checked."""
    hands = 0
    shown = False
    for message in frames:
        if message["type"] == "hand_started":
            shown = False
        if message["type"] == "showdown":
            shown = True
        if message["type"] == "hand_ended":
            hands += 1
        assert "deck" not in message
        assert "seed" not in message
        for seat, _ in tiles_in(message):
            assert seat == me or shown, f"seat {me} saw seat {seat}'s tiles in {message}"
    return hands


async def test_no_player_or_spectator_sees_another_seats_tiles_before_the_showdown(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    clients, table_id = await seat_three(connect_client, (1000, 1000, 1000))
    spectator = await connect_client()
    await spectator.hello("Watcher")
    watched = await spectator.reply("watch_table", table_id=table_id)
    assert watched["type"] == "table_watched"

    for _ in range(HANDS):
        await asyncio.gather(*(play_hand(c, table_id, call_or_check) for c in clients))

    for seat, client in enumerate(clients):
        assert check_hidden(client.frames, seat) >= HANDS
        mine = [tiles for s, tiles in tiles_in_all(client.frames) if s == seat]
        assert mine, "a player sees its own tiles"
    assert check_hidden(spectator.frames, None) >= HANDS - 1
    assert any(m["type"] == "showdown" for m in spectator.frames)


def tiles_in_all(frames: list[dict[str, Any]]) -> list[tuple[int, list[str]]]:
    return [found for message in frames for found in tiles_in(message)]


async def test_every_tile_each_seat_saw_opens_its_committed_position(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    clients, table_id = await seat_three(connect_client, (1000, 1000, 1000))
    for _ in range(3):
        await asyncio.gather(*(play_hand(c, table_id, call_or_check) for c in clients))

    for seat, client in enumerate(clients):
        hands = [h for h in hands_seen(client.frames) if h.ended]
        assert len(hands) >= 3
        for hand in hands:
            seen = hand.seen()
            assert fairness.verify_hand(seen) >= 4, "at least its own four tiles"
            positions = fairness.dealt_positions(tuple(seen.client_seeds), seen.button)[seat]
            assert sorted(hand.openings[seat]) == sorted(positions)


async def test_a_folded_hand_stays_hidden_from_players_and_spectators_on_another_process(
    servers: Servers,
) -> None:
    """The table's own process writes each seat's copy; a player and a spectator on the
    other process get theirs relayed over Redis. Bo folds every hand: nobody but Bo ever
    sees his tiles, the hands shown down included."""
    host, other = free_port(), free_port()
    for port in (host, other):
        await servers.start(port)
    ann, bo, cy, watcher = [
        Client(await connect(f"ws://127.0.0.1:{port}")) for port in (host, other, other, other)
    ]
    for name, client in zip(("Ann", "Bo", "Cy", "Watcher"), (ann, bo, cy, watcher), strict=True):
        await client.hello(name)
    created = await ann.reply("create_table", options={**NO_BOT_3, "turn_seconds": 30})
    table_id = created["table"]["table_id"]
    assert (await watcher.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    seats = []
    for client in (ann, bo, cy):
        joined = await client.reply("join_table", table_id=table_id, buy_in=1000)
        seats.append(joined["seat"])

    def bet_or_call(legal: dict[str, Any]) -> dict[str, Any]:
        return (
            {"type": "bet", "amount": legal["bet"]["min"]}
            if "bet" in legal
            else call_or_check(legal)
        )

    def fold_to_a_bet(legal: dict[str, Any]) -> dict[str, Any]:
        return {"type": "fold"} if legal["fold"] else {"type": "check"}

    for _ in range(3):
        await asyncio.gather(
            play_hand(ann, table_id, bet_or_call),
            play_hand(bo, table_id, fold_to_a_bet),
            play_hand(cy, table_id, call_or_check),
        )
        await watcher.reply("request_snapshot", table_id=table_id)

    bo_seat = seats[1]
    assert any(s == bo_seat for s, _ in tiles_in_all(bo.frames)), "Bo sees his own tiles"
    for seat, client in ((seats[0], ann), (seats[2], cy), (None, watcher)):
        assert check_hidden(client.frames, seat) >= 2
        assert any(m["type"] == "showdown" for m in client.frames)
        for message in client.frames:
            hands = message.get("hands", []) if message["type"] == "showdown" else []
            seen = tiles_in(message) + [(h["seat"], h["tiles"]) for h in hands]
            assert all(s != bo_seat for s, _ in seen), f"Bo's folded tiles in {message}"
    for client in (ann, bo, cy, watcher):
        await client.close()
