"""Sessions and tables moving between real server processes on one Redis: a live
connection moved, hosts killed over and over, a seat whose process died given its grace
period, and a hand whose end the store fails to write. Commands relayed to a table's
host are test_takeover_relay.py; a table adopted from a host past its lease,
test_takeover_adoption.py.

PROTOCOL.md promises that a token works "on this server process or another one
sharing its Redis", that ``seq`` never goes backwards for a client, and that an
``error`` means nothing changed; each test holds the server to one of these
over real connections.
"""

from __future__ import annotations

import asyncio
import random
import signal
from pathlib import Path
from typing import Any

import pytest

from qiuqiu.server.redis_store import RedisStore
from tests.conftest import free_port
from tests.server.faulty_store import FaultPlan
from tests.server.processes import HOST_LEASE, Servers, chips_in_redis, hands_dealt, until
from tests.server.recorder import (
    MID_HAND,
    STEADY,
    STEADY_HEADS_UP,
    Player,
    errors_after_effects,
    of_client,
    seen_from_start,
    seq_regressions,
    unfinished_hands,
)
from tests.server.takeover_helpers import (
    HEADS_UP,
    answer,
    check_or_call,
    client_at,
    resume,
    seen,
    seen_after,
    turn_at,
    unasked_snapshot,
    ws,
)


async def test_a_live_connection_moved_to_another_process_keeps_its_seat_playable(
    servers: Servers,
) -> None:
    here, there = free_port(), free_port()
    for port in (here, there):
        await servers.start(port)
    ann = await client_at(here)
    token = (await ann.hello("Ann"))["token"]
    created = await ann.reply("create_table", options={"turn_seconds": 4}, buy_in=500)
    table_id = created["table"]["table_id"]
    joined = await ann.expect("table_joined", table_id=table_id)
    seat = joined["seat"]
    sam = await client_at(here)
    await sam.hello("Sam")
    assert (await sam.reply("watch_table", table_id=table_id))["type"] == "table_watched"

    moved, welcome = await resume(there, token)
    assert table_id in welcome["tables"], welcome
    first = await moved.expect("table_snapshot")
    assert first["table"]["table_id"] == table_id
    snapshot = await moved.reply("request_snapshot", table_id=table_id)
    assert snapshot["type"] == "table_snapshot", snapshot

    played = await check_or_call(moved, table_id, snapshot)
    after = await moved.wait(lambda m: m.get("table_id") == table_id and m["seq"] > played["seq"])
    assert after["type"] != "table_closed", after

    await sam.expect("player_reconnected", table_id=table_id, seat=seat)
    await sam.expect(played["type"], table_id=table_id, seq=played["seq"])
    disconnected = [f for f in sam.frames if f["type"] == "player_disconnected"]
    assert disconnected == [], "the seat never lost its player"
    for client in (ann, sam, moved):
        await client.close()


async def test_a_welcome_mid_takeover_names_every_seat_and_the_lost_hands_are_voided(
    redis_store: RedisStore, servers: Servers
) -> None:
    """The host of both of Ann's tables is killed mid-hand. Once their leases have run
    out, and most likely before the other process adopts them (it looks for orphans
    every third of a lease), she says hello there. The welcome names both tables,
    those nobody hosts yet as moving; each table's snapshot comes by itself once it
    is adopted, after ``hand_voided`` for the hand she saw start."""
    dying, living = free_port(), free_port()
    host = await servers.start(dying, lease=3.0)
    await servers.start(living, lease=3.0)
    ann = await client_at(dying)
    token = (await ann.hello("Ann"))["token"]
    in_play = {}
    for _ in range(2):
        created = await ann.reply("create_table", buy_in=300)
        table_id = created["table"]["table_id"]
        in_play[table_id] = (await ann.wait(turn_at(table_id)))["hand_id"]
    tables = set(in_play)
    host.send_signal(signal.SIGKILL)
    await host.wait()

    async def orphaned() -> bool:
        return all([await redis_store.table_host(t) is None for t in tables])

    await until(orphaned)

    back, welcome = await resume(living, token)
    assert set(welcome["tables"]) == tables, welcome
    moving = set(welcome.get("moving", ()))
    assert moving <= tables, welcome
    for table_id in moving:
        reply = await back.reply("request_snapshot", table_id=table_id)
        assert reply["type"] == "table_snapshot" or reply["code"] == "table_moving", reply
    for table_id in tables:
        snapshot = back.frames.index(await seen(back, unasked_snapshot(table_id)))
        voided = [
            f["hand_id"]
            for f in back.frames[:snapshot]
            if f["type"] == "hand_voided" and f["table_id"] == table_id
        ]
        assert voided == [in_play[table_id]], f"hand_voided before the snapshot of {table_id}"
    await back.close()


KILL_EVERY = (1.5, 3.0)
"""Seconds between kills, drawn: long enough for tables to be adopted in between."""


async def test_a_short_sigkill_loop_keeps_seq_and_every_hand_and_every_chip(
    redis_store: RedisStore, servers: Servers
) -> None:
    await sigkill_loop(redis_store, servers, kills=4, seed=2026)


@pytest.mark.long
async def test_a_long_sigkill_loop_keeps_seq_and_every_hand_and_every_chip(
    redis_store: RedisStore, servers: Servers
) -> None:
    await sigkill_loop(redis_store, servers, kills=12, seed=14)


async def sigkill_loop(store: RedisStore, servers: Servers, *, kills: int, seed: int) -> None:
    """Three processes; SDK bots at three duels and one table without the bot, one of
    whose players comes through another process. One process at a time is killed
    and started again on its port; the bots reconnect by themselves."""
    moments = random.Random(seed)
    ports = [free_port() for _ in range(3)]
    processes = [await servers.start(port, flags=MID_HAND) for port in ports]
    duelists = [
        Player(name, ws(port)) for name, port in zip(("Ann", "Bo", "Cy"), ports, strict=True)
    ]
    dan, eve = Player("Dan", ws(ports[0])), Player("Eve", ws(ports[1]))
    players = [*duelists, dan, eve]
    for player in players:
        await player.connect()
    for player in duelists:
        await player.create(STEADY)
    heads_up = await dan.create(STEADY_HEADS_UP)
    await eve.join(heads_up)
    table_ids = sorted({p.table_id for p in players if p.table_id is not None})
    for player in players:
        player.start()

    for kill in range(kills):
        await asyncio.sleep(moments.uniform(*KILL_EVERY))
        victim = moments.randrange(len(processes))
        processes[victim].send_signal(signal.SIGKILL)
        await processes[victim].wait()
        before = await hands_dealt(store, table_ids)
        processes[victim] = await servers.start(ports[victim], flags=MID_HAND)

        async def every_table_dealt_again(before: dict[str, int] = before) -> bool:
            now = await hands_dealt(store, table_ids)
            return all(now.get(t, 0) > before.get(t, 0) for t in table_ids)

        try:
            await until(every_table_dealt_again)
        except TimeoutError:
            now = await hands_dealt(store, table_ids)
            stuck = [t for t in table_ids if now.get(t, 0) <= before.get(t, 0)]
            seen_there = {
                p.name: [f["type"] for _, f in p.frames[-6:]]
                for p in players
                if p.table_id in stuck
            }
            raise AssertionError(
                f"after kill {kill + 1}, no more hands at {stuck} (closed if not in {now}); "
                f"their players last saw {seen_there}"
            ) from None

    balances = await asyncio.gather(*(p.finish() for p in players))
    stopped = [await servers.stop_within_deadline(p) for p in processes]
    problems = [f"could not leave: {b}" for b in balances if not isinstance(b, int)]
    problems += [f"still running past the stop deadline: {stopped}"] * (None in stopped)
    if (total := await chips_in_redis(store)) != 0:
        problems.append(f"the chips in Redis sum to {total}, not 0")
    for player in players:
        problems += [f"{player.name}: {r}" for r in seq_regressions(player.frames)]
        unfinished = unfinished_hands(player.frames)
        problems += [
            f"{player.name} saw hand {h} of {t} start, never end: then "
            f"{seen_from_start(player.frames, t, h)[:16]}"
            for t, h in unfinished
        ]
        errors = errors_after_effects(player.frames)
        problems += [f"{player.name} got an error after effects: {e}" for e in errors]
    assert not problems, "\n".join(problems)


async def test_an_all_in_call_whose_hand_end_the_store_fails_is_never_refused_after_the_fact(
    redis_store: RedisStore, servers: Servers, tmp_path: Path
) -> None:
    """Heads-up without the bot: Ann bets everything, Redis starts to come and go, Bo
    calls. Whatever the store does, Bo is never told his call changed nothing after
    he saw it played; once Redis is steady, the busted seat is stood up and the
    table deals again when Cy sits down."""
    outage = tmp_path / "outage"
    port = free_port()
    server = await servers.start(port, lease=5.0, plan=FaultPlan(), outage=outage)
    ann, bo, cy = [await client_at(port) for _ in range(3)]
    await ann.hello("Ann")
    created = await ann.reply("create_table", options=HEADS_UP, buy_in=500)
    table_id = created["table"]["table_id"]
    await bo.hello("Bo")
    assert (await bo.reply("join_table", table_id=table_id, buy_in=500))["type"] == "table_joined"

    turn = await ann.wait(turn_at(table_id))
    hand_id = turn["hand_id"]
    everything = turn["legal"]["bet"]["max"]
    bet = await answer(ann, "bet", table_id=table_id, hand_id=hand_id, amount=everything)
    assert bet["type"] == "error" or bet.get("all_in"), bet
    bos_turn = turn_at(table_id)
    await bo.wait(lambda m: bos_turn(m) and m["hand_id"] == hand_id)

    outage.write_text("flap")
    while True:
        call = await answer(bo, "call", table_id=table_id, hand_id=hand_id)
        if call.get("code") != "store_unavailable":
            break  # refused because Redis was away: nothing changed, so call again
    assert call["type"] == "called", call
    ended = await seen(bo, lambda m: m["type"] == "hand_ended" and m["hand_id"] == hand_id)
    await asyncio.sleep(1.0)  # Redis keeps coming and going while the hand is settled
    outage.unlink()

    problems = []
    for name, client in (("Ann", ann), ("Bo", bo)):
        problems += [
            f"{name}: error after effects {e}"
            for e in errors_after_effects(of_client(client.frames))
        ]
    busted = next((s["seat"] for s in ended["stacks"] if s["amount"] == 0), None)
    # The busted seat's own player gets table_left; the other one sees player_left.

    def stood_up(m: dict[str, Any]) -> bool:
        return m["type"] in ("player_left", "table_left") and m.get("seat") == busted

    try:
        async with asyncio.timeout(30):
            while not any(stood_up(m) for c in (ann, bo) for m in c.frames):
                await asyncio.sleep(0.05)
    except TimeoutError:
        problems.append(f"seat {busted} busted in hand {hand_id} and was never stood up")
    await cy.hello("Cy")
    try:
        async with asyncio.timeout(30):
            # Refused, nothing changed, while the server is not yet sure of its lease
            # again after the outage (renewals failed): asked again, as a client would.
            joined = await cy.reply("join_table", table_id=table_id, buy_in=500)
            while joined.get("code") == "store_unavailable":
                await asyncio.sleep(0.1)
                joined = await cy.reply("join_table", table_id=table_id, buy_in=500)
        assert joined["type"] == "table_joined", joined
        await seen(cy, lambda m: m["type"] == "hand_started" and m["hand_id"] > hand_id)
    except (TimeoutError, AssertionError) as stuck:
        problems.append(f"the table dealt no hand after Cy sat down: {stuck!r}")
    for client in (ann, bo, cy):
        await client.close()
    if await servers.stop_within_deadline(server) is None:
        problems.append("the server was still running past its stop deadline")
    if (total := await chips_in_redis(redis_store)) != 0:
        problems.append(f"the chips in Redis sum to {total}, not 0")
    assert not problems, "\n".join(problems)


async def test_a_seat_whose_process_died_at_a_quiet_table_elsewhere_gets_its_grace_period(
    servers: Servers,
) -> None:
    """Pat sits alone at a table that waits for a second player, hosted by one process
    while she is connected to another, and that other process is killed. The table has
    nothing to send her, yet its host learns she is gone: Sam, watching, sees her
    disconnected, and once her grace period ends she is stood up and the table closes,
    as when her own connection drops."""
    hosting, relaying = free_port(), free_port()
    await servers.start(hosting, lease=HOST_LEASE, flags=("--grace", "1"))
    dying = await servers.start(relaying, lease=HOST_LEASE)
    sam = await client_at(hosting)
    await sam.hello("Sam")
    created = await sam.reply("create_table", options=HEADS_UP)
    table_id = created["table"]["table_id"]
    pat = await client_at(relaying)
    await pat.hello("Pat")
    joined = await pat.reply("join_table", table_id=table_id, buy_in=300, client_seed="pat")
    assert joined["type"] == "table_joined", joined
    await pat.expect("table_snapshot")
    assert (await sam.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    watched = await sam.expect("table_snapshot")
    dying.send_signal(signal.SIGKILL)
    await dying.wait()
    away = await seen_after(sam, watched, lambda m: m["type"] == "player_disconnected")
    assert away["seat"] == joined["seat"], away
    left = await seen_after(sam, away, lambda m: m["type"] == "player_left")
    assert left["cashed_out"] == 300, left
    await seen_after(sam, left, lambda m: m["type"] == "table_closed")
