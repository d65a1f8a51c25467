"""Nobody sees what they should not, and everyone can check the deal."""

from __future__ import annotations

import asyncio
from typing import Any

from qiuqiu.protocol import verify_deal
from qiuqiu.server.gateway import QiuQiuServer
from tests.server.test_play import Connect, call_or_check, play_hand, seat_three

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
    """Fail if ``frames`` show another seat's tiles before a showdown, or the deck
    before the hand ends. Returns how many hands were checked."""
    hands = 0
    shown = False
    for message in frames:
        if message["type"] == "hand_started":
            shown = False
        if message["type"] == "showdown":
            shown = True
        if message["type"] == "hand_ended":
            hands += 1
        assert "deck" not in message or message["type"] == "hand_ended"
        assert "seed" not in message or message["type"] == "hand_ended"
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


async def test_every_deal_matches_its_commitment_and_the_tiles_each_seat_got(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    clients, table_id = await seat_three(connect_client, (1000, 1000, 1000))
    for _ in range(3):
        await asyncio.gather(*(play_hand(c, table_id, call_or_check) for c in clients))

    for seat, client in enumerate(clients):
        started = {m["hand_id"]: m for m in client.frames if m["type"] == "hand_started"}
        for ended in (m for m in client.frames if m["type"] == "hand_ended"):
            opened = started[ended["hand_id"]]
            assert verify_deal(opened["commitment"], ended["seed"], ended["deck"])
            assert not verify_deal(opened["commitment"], ended["seed"], ended["deck"][::-1])
            # Seat i in acting order gets deck[3i:3i+3]; acting order starts after the button.
            seats = sorted(s["seat"] for s in opened["stacks"])
            after = seats.index(opened["button"]) + 1
            order = seats[after:] + seats[:after]
            i = order.index(seat)
            dealt = next(
                m["tiles"]
                for m in client.frames
                if m["type"] == "tiles_dealt"
                and m["hand_id"] == ended["hand_id"]
                and m["seat"] == seat
            )
            assert dealt == ended["deck"][3 * i : 3 * i + 3]
