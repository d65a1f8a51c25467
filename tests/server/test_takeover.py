"""Sessions and tables moving between real server processes on one Redis: a live
connection moved, a host killed, a relayed command meeting a store that is away,
and a hand whose end the store fails to write.

PROTOCOL.md promises that a token works "on this server process or another one
sharing its Redis", that ``seq`` never goes backwards for a client, and that an
``error`` means nothing changed; each test holds the server to one of these
over real connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from websockets.asyncio.client import connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.redis_store import RedisStore
from tests.conftest import free_port
from tests.server.conftest import Client
from tests.server.faulty_store import Fault, FaultPlan
from tests.server.processes import Servers, chips_in_redis, hands_dealt, until
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

HEADS_UP = {"seats": 2, "dealer_bot": False}


def ws(port: int) -> str:
    return f"ws://127.0.0.1:{port}"


OPENED: list[Client] = []


@pytest.fixture(autouse=True)
async def clients_closed() -> AsyncIterator[None]:
    """Every test client is closed at the end of its test, passed or failed."""
    yield
    while OPENED:
        await OPENED.pop().close()


async def client_at(port: int) -> Client:
    client = Client(await connect(ws(port)))
    OPENED.append(client)
    return client


async def resume(port: int, token: str) -> tuple[Client, dict[str, Any]]:
    """A new connection to ``port`` saying hello with ``token`` alone."""
    client = await client_at(port)
    return client, await client.reply("hello", version=PROTOCOL_VERSION, token=token)


async def answer(client: Client, type: str, **fields: Any) -> dict[str, Any]:
    """Send a message and return the first frame naming it: its event, reply or error."""
    ref = await client.send(type, **fields)
    return await client.wait(lambda m: m.get("ref") == ref)


async def seen(client: Client, found: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first frame ``client`` has received, or will within a generous wait, that
    ``found`` accepts (for waits longer than a reply takes: takeovers, stores back)."""

    async def arrived() -> bool:
        return any(map(found, client.frames))

    await until(arrived)
    return next(filter(found, client.frames))


async def check_or_call(client: Client, table_id: str, snapshot: dict[str, Any]) -> dict[str, Any]:
    """Play the client's turn at ``table_id`` (the snapshot's, or the next one) by
    checking or calling; the event the action made."""
    table = snapshot["table"]
    if table.get("legal") is None:
        turn = await client.wait(turn_at(table_id))
        hand_id, legal = turn["hand_id"], turn["legal"]
    else:
        hand_id, legal = table["hand"]["hand_id"], table["legal"]
    action = "check" if legal["check"] else "call"
    played = await answer(client, action, table_id=table_id, hand_id=hand_id)
    assert played["type"] == {"check": "checked", "call": "called"}[action], played
    return played


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


def turn_at(table_id: str) -> Callable[[dict[str, Any]], bool]:
    """The actor's own ``turn_started`` at ``table_id`` (only its copy has ``legal``)."""

    def found(m: dict[str, Any]) -> bool:
        return m["type"] == "turn_started" and "legal" in m and m["table_id"] == table_id

    return found


def unasked_snapshot(table_id: str) -> Callable[[dict[str, Any]], bool]:
    def found(m: dict[str, Any]) -> bool:
        return (
            m["type"] == "table_snapshot" and "ref" not in m and m["table"]["table_id"] == table_id
        )

    return found


@dataclass
class Elsewhere:
    """Ann at a table hosted by one process while she is connected to the other."""

    host: asyncio.subprocess.Process
    hosting: int
    relaying: int
    ann: Client
    table_id: str


async def at_a_table_hosted_elsewhere(
    servers: Servers, *, flags: tuple[str, ...] = ()
) -> Elsewhere:
    """Ann's table with the dealer bot, a hand in play, hosted by one process while she
    is connected to the other one (started with ``flags``): her messages about it go
    between them."""
    hosting, relaying = free_port(), free_port()
    host = await servers.start(hosting, lease=LEASE)
    await servers.start(relaying, lease=LEASE, flags=flags)
    ann = await client_at(hosting)
    token = (await ann.hello("Ann"))["token"]
    created = await ann.reply("create_table", options={"turn_seconds": 30}, buy_in=300)
    table_id = created["table"]["table_id"]
    await ann.wait(turn_at(table_id))
    moved, welcome = await resume(relaying, token)
    assert welcome["tables"] == [table_id], welcome
    await moved.expect("table_snapshot")
    return Elsewhere(host, hosting, relaying, moved, table_id)


LEASE = 1.5
"""The lease of the relay tests: long enough for a message to reach a dead host before
its lease runs out, short enough for the adoption to come soon after."""


async def listened_to(redis_url: str, process: str) -> bool:
    """Whether Redis still counts ``process`` among the listeners of the bus."""
    async with Redis.from_url(redis_url) as redis:
        return bool(await redis.pubsub_channels(f"*{process}*"))


async def killed_in_its_lease(
    host: asyncio.subprocess.Process, table_id: str, redis_store: RedisStore, redis_url: str
) -> None:
    """Kill the host of ``table_id``, and return once Redis has dropped its connection
    to the bus, while the table's lease still names it."""
    dead = await redis_store.table_host(table_id)
    assert dead is not None
    host.send_signal(signal.SIGKILL)
    await host.wait()

    async def gone() -> bool:
        return not await listened_to(redis_url, dead)

    await until(gone)
    assert await redis_store.table_host(table_id) == dead, "the lease ran out before the test"


async def test_a_relayed_command_no_server_heard_is_refused_table_moving_and_the_snapshot_follows(
    redis_store: RedisStore, redis_url: str, servers: Servers
) -> None:
    """The host of Ann's table is killed; once Redis has dropped its connection, a check
    from Ann (connected to the other process, while the table's lease still names the
    dead host) reaches nobody: she is told at once, with nothing changed, and the
    table's snapshot comes once the other process has adopted it. Sam, watching the
    table from that process too, watches on there."""
    there = await at_a_table_hosted_elsewhere(servers)
    host, ann, table_id = there.host, there.ann, there.table_id
    hand_id = ann.frames[-1]["table"]["hand"]["hand_id"]
    sam = await client_at(there.relaying)
    await sam.hello("Sam")
    assert (await sam.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    watched = await sam.expect("table_snapshot")
    await killed_in_its_lease(host, table_id, redis_store, redis_url)
    refused = await answer(ann, "check", table_id=table_id, hand_id=hand_id)
    assert (refused["type"], refused["code"]) == ("error", "table_moving"), refused
    await seen_after(ann, refused, voided_at(table_id))
    adopted = await seen_after(ann, refused, unasked_snapshot(table_id))
    snapshot = await seen_after(sam, watched, unasked_snapshot(table_id))
    assert snapshot["seq"] >= adopted["seq"] > watched["seq"], (snapshot, watched)
    assert "you" not in snapshot["table"], "a spectator's snapshot"
    # Ann plays on at the adopter, and Sam sees it.
    turn = await seen_after(ann, adopted, turn_at(table_id))
    action = "check" if turn["legal"]["check"] else "call"
    played = await answer(ann, action, table_id=table_id, hand_id=turn["hand_id"])
    assert played["type"] in ("checked", "called"), played
    await seen_after(sam, snapshot, lambda m: m.get("seq") == played["seq"])


@pytest.mark.parametrize(
    "relay_timeout",
    [
        pytest.param("1", id="deadline"),
        pytest.param("600", id="adoption", marks=pytest.mark.long),
    ],
)
async def test_a_relayed_command_a_frozen_host_never_answers_is_outcome_unknown_then_snapshot(
    servers: Servers, relay_timeout: str
) -> None:
    """The host of Ann's table freezes (SIGSTOP) with its connection to Redis open, so
    that her request reaches it and is not answered. She is told the outcome is
    unknown (at the deadline, or when the other process adopts the table, whichever is
    first), then gets the snapshot from the adopter. When the old host wakes up, it
    serves what it was sent, but nothing of it reaches her: the table has moved on."""
    there = await at_a_table_hosted_elsewhere(servers, flags=("--relay-timeout", relay_timeout))
    host, ann, table_id = there.host, there.ann, there.table_id
    sam = await client_at(there.hosting)
    await sam.hello("Sam")
    assert (await sam.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    host.send_signal(signal.SIGSTOP)
    try:
        unknown = await seen_answer(ann, "request_snapshot", table_id=table_id)
        assert (unknown["type"], unknown["code"]) == ("error", "outcome_unknown"), unknown
        snapshot = await seen_after(ann, unknown, unasked_snapshot(table_id))
        host.send_signal(signal.SIGCONT)
        await seen(sam, lambda m: m["type"] == "table_closed")  # it knows it lost the table
        await asyncio.sleep(0.5)  # for whatever it sent before that to arrive
        stale = [f for f in ann.frames if f.get("ref") == unknown["ref"] and f is not unknown]
        assert stale == [], stale
        assert seq_regressions(of_client(ann.frames)) == []
        after = ann.frames[ann.frames.index(snapshot) :]
        assert not [f for f in after if f["type"] == "table_closed"], after
    finally:
        host.send_signal(signal.SIGKILL)
        await host.wait()


async def test_a_relayed_leave_answered_at_the_hand_end_is_not_taken_for_silence(
    servers: Servers,
) -> None:
    """Bo, connected to the process that does not host his heads-up table, leaves in a
    hand that Ann, at the host, takes her time over. The host has his leave, so he is
    not told its outcome is unknown however long the hand lasts: he gets table_left
    when it ends, with nothing before it."""
    hosting, relaying = free_port(), free_port()
    await servers.start(hosting)
    # A deadline short enough for the test, long enough for a busy machine's Redis.
    await servers.start(relaying, flags=("--relay-timeout", "1"))
    ann = await client_at(hosting)
    await ann.hello("Ann")
    created = await ann.reply("create_table", options={**HEADS_UP, "turn_seconds": 30}, buy_in=500)
    table_id = created["table"]["table_id"]
    bo = await client_at(relaying)
    await bo.hello("Bo")
    assert (await bo.reply("join_table", table_id=table_id, buy_in=500))["type"] == "table_joined"
    turn = await seen(ann, turn_at(table_id))

    ref = await bo.send("leave_table", table_id=table_id)
    await asyncio.sleep(3)  # three times the deadline, with Ann to act
    answers = [f for f in bo.frames if f.get("ref") == ref]
    assert answers == [], answers
    await answer(
        ann,
        "check" if turn["legal"]["check"] else "call",
        table_id=table_id,
        hand_id=turn["hand_id"],
    )
    left = await seen(bo, lambda m: m.get("ref") == ref)
    assert left["type"] == "table_left", left
    assert [f for f in bo.frames if f.get("ref") == ref] == [left]


async def seen_answer(client: Client, type: str, **fields: Any) -> dict[str, Any]:
    """Send a message and return the first frame naming it, within a generous wait."""
    ref = await client.send(type, **fields)
    return await seen(client, lambda m: m.get("ref") == ref)


async def seen_after(
    client: Client, earlier: dict[str, Any], found: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The first frame after ``earlier`` that ``found`` accepts, within a generous wait."""
    start = client.frames.index(earlier) + 1

    async def arrived() -> bool:
        return any(map(found, client.frames[start:]))

    await until(arrived)
    return next(filter(found, client.frames[start:]))


def voided_at(table_id: str) -> Callable[[dict[str, Any]], bool]:
    def found(m: dict[str, Any]) -> bool:
        return bool(m["type"] == "hand_voided" and m["table_id"] == table_id)

    return found


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


async def test_a_relayed_command_that_meets_the_store_away_gets_an_answer(
    servers: Servers, tmp_path: Path
) -> None:
    """Cy, connected to one process, joins a table hosted by the other while that
    one's Redis is away: she is told so, and once it is back she sits down."""
    outage = tmp_path / "outage"
    relaying, hosting = free_port(), free_port()
    await servers.start(relaying, lease=5.0)
    await servers.start(hosting, lease=5.0, plan=FaultPlan(), outage=outage)
    bo = await client_at(hosting)
    await bo.hello("Bo")
    created = await bo.reply("create_table", options=HEADS_UP, buy_in=500)
    table_id = created["table"]["table_id"]
    cy = await client_at(relaying)
    await cy.hello("Cy")

    outage.write_text("down")
    try:
        refused = await cy.reply("join_table", table_id=table_id, buy_in=500)
    except TimeoutError:
        raise AssertionError("join_table got no reply and no error") from None
    assert refused["type"] == "error", refused
    assert refused["code"] == "store_unavailable", refused
    outage.unlink()
    # The host learns that Redis is back from its next call to it (a lease renewal
    # within a tenth of the lease): until then it still says store_unavailable.
    for _ in range(50):
        joined = await cy.reply("join_table", table_id=table_id, buy_in=500)
        if joined.get("code") != "store_unavailable":
            break
        await asyncio.sleep(0.1)
    assert joined["type"] == "table_joined", joined
    for client in (bo, cy):
        await client.close()


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


async def test_a_host_frozen_past_its_lease_plays_nothing_more_of_the_hand_it_lost(
    servers: Servers, redis_store: RedisStore
) -> None:
    """Ann's table's host freezes (SIGSTOP) on her turn for longer than its lease; the
    other process adopts the table and voids the hand. When the frozen one wakes, her
    turn's timer is long overdue and the action she sent meanwhile waits to be read.
    It can no longer be sure it hosts the table, so it plays neither: Ann gets no
    event of the lost hand, only the table's ``table_closed`` (moved)."""
    hosting = free_port()
    host = await servers.start(hosting)
    await servers.start(free_port())
    ann = await client_at(hosting)
    await ann.hello("Ann")
    created = await ann.reply("create_table", options={"turn_seconds": 1}, buy_in=500)
    table_id = created["table"]["table_id"]
    owner = await redis_store.table_host(table_id)
    turn = await ann.wait(turn_at(table_id))
    host.send_signal(signal.SIGSTOP)
    try:
        frozen_at = len(ann.frames)
        action = "check" if turn["legal"]["check"] else "call"
        await ann.send(action, table_id=table_id, hand_id=turn["hand_id"])

        async def adopted() -> bool:
            return await redis_store.table_host(table_id) not in (None, owner)

        await until(adopted)
        host.send_signal(signal.SIGCONT)
        closed = await seen(ann, lambda m: m["type"] == "table_closed")
        after = ann.frames[frozen_at : ann.frames.index(closed)]
        played = [f for f in after if f.get("hand_id") == turn["hand_id"]]
        assert played == [], (turn, after)
    finally:
        host.send_signal(signal.SIGCONT)
        host.send_signal(signal.SIGKILL)
        await host.wait()


@contextlib.asynccontextmanager
async def frozen_until_adopted(
    host: asyncio.subprocess.Process, redis_store: RedisStore, table_id: str
) -> AsyncIterator[None]:
    """``host`` stopped (SIGSTOP) from the start of the block until the other process
    has adopted ``table_id`` and dealt a hand there, then woken."""
    dealt = (await hands_dealt(redis_store, [table_id]))[table_id]
    host.send_signal(signal.SIGSTOP)
    try:
        yield

        async def adopted() -> bool:
            return (await hands_dealt(redis_store, [table_id]))[table_id] > dealt

        await until(adopted)
    finally:
        host.send_signal(signal.SIGCONT)


async def test_a_player_on_a_host_that_stalled_past_its_lease_reconnects_and_plays_on(
    servers: Servers, redis_store: RedisStore
) -> None:
    """Ann's table moves while its host, which she is connected to, is frozen. When it
    wakes up, it must not keep her connection as if nothing moved, or her client
    would hear nothing more while the adopter, counting her away, takes her ante
    each hand and cashes her out after the grace period. Her connection is closed
    with 1012 (restart), as any client reconnects after, and she plays on there."""
    here, there = free_port(), free_port()
    host = await servers.start(here)
    await servers.start(there)
    ann = await client_at(here)
    token = (await ann.hello("Ann"))["token"]
    created = await ann.reply("create_table", options={"turn_seconds": 30}, buy_in=500)
    table_id = created["table"]["table_id"]
    await ann.wait(turn_at(table_id))
    async with frozen_until_adopted(host, redis_store, table_id):
        pass
    closed = await seen(ann, lambda m: m["type"] == "table_closed")
    assert "table_seed" not in closed, "the table goes on elsewhere"
    async with asyncio.timeout(10):
        await ann.closed()
    assert ann.connection.close_code == 1012
    back, welcome = await resume(here, token)
    assert table_id in welcome["tables"], welcome
    snapshot = await back.wait(lambda m: m["type"] == "table_snapshot")
    await check_or_call(back, table_id, snapshot)
    await back.close()


async def test_a_host_woken_past_its_lease_shows_no_snapshot_of_the_table_it_lost(
    servers: Servers, redis_store: RedisStore
) -> None:
    """Ann asks for her table's snapshot while its host is frozen past its lease and the
    other process adopts the table, voiding the hand. The woken host reads her request
    before its renewal answers: it cannot tell whether the table is still its own, so
    it shows nothing (``store_unavailable``, nothing changed), then finds the table
    gone and sends her away (1012) without a snapshot of the hand that was voided."""
    here = free_port()
    host = await servers.start(here)
    await servers.start(free_port())
    ann = await client_at(here)
    await ann.hello("Ann")
    created = await ann.reply("create_table", options={"turn_seconds": 30}, buy_in=500)
    table_id = created["table"]["table_id"]
    await ann.wait(turn_at(table_id))
    async with frozen_until_adopted(host, redis_store, table_id):
        frozen_at = len(ann.frames)
        ref = await ann.send("request_snapshot", table_id=table_id)
    async with asyncio.timeout(10):
        await ann.closed()
    assert ann.connection.close_code == 1012
    after = ann.frames[frozen_at:]
    assert [f["type"] for f in after if f["type"] == "table_snapshot"] == [], after
    answers = [f for f in after if f.get("ref") == ref]
    assert [(f["type"], f.get("code")) for f in answers] == [("error", "store_unavailable")]


async def test_a_watch_its_host_refused_is_not_made_good_when_another_process_adopts_the_table(
    servers: Servers,
) -> None:
    """Ann's table takes two spectators. Sam, on its host, and Tom, on the other
    process, watch it; Eve, on the other process too, is refused. When the host is
    killed and the other process adopts the table, Tom watches on there, unasked, as
    PROTOCOL.md says; Eve, who never watched, is not made a spectator of it."""
    host_port, here = free_port(), free_port()
    host = await servers.start(host_port, flags=("--max-spectators", "2"))
    await servers.start(here, flags=("--max-spectators", "2"))
    ann = await client_at(host_port)
    await ann.hello("Ann")
    created = await ann.reply("create_table", options=HEADS_UP, buy_in=500)
    table_id = created["table"]["table_id"]
    await ann.expect("table_snapshot")
    sam, tom, eve = await client_at(host_port), await client_at(here), await client_at(here)
    for client, name in ((sam, "Sam"), (tom, "Tom"), (eve, "Eve")):
        await client.hello(name)
    for client in (sam, tom):
        assert (await client.reply("watch_table", table_id=table_id))["type"] == "table_watched"
        await client.expect("table_snapshot")
    refused = await answer(eve, "watch_table", table_id=table_id)
    assert (refused["type"], refused["code"]) == ("error", "too_many_spectators"), refused

    host.send_signal(signal.SIGKILL)
    await host.wait()
    watched = await tom.wait(lambda m: m["type"] == "table_watched" and "ref" not in m)
    await seen_after(tom, watched, unasked_snapshot(table_id))
    # Told after the adoption: Eve's snapshot is refused, as she watches nothing there.
    asked = await answer(eve, "request_snapshot", table_id=table_id)
    assert (asked["type"], asked.get("code")) == ("error", "not_at_table"), asked
    assert [m for m in eve.frames if m["type"] == "table_watched"] == []


async def test_a_watch_or_a_leave_no_server_heard_changes_nothing_once_the_table_is_adopted(
    redis_store: RedisStore, redis_url: str, servers: Servers
) -> None:
    """The host of Ann's table is killed. Once Redis has dropped its connection, and
    while the table's lease still names it, Eve asks to watch the table and Sam, who
    watches it, asks to leave, both from the other process: neither reaches a server,
    and each is told ``table_moving``, nothing changed. So once the other process adopts
    the table, Sam watches on there (unasked, as every spectator does) and Eve, who
    never watched, is no spectator of it."""
    there = await at_a_table_hosted_elsewhere(servers)
    host, table_id = there.host, there.table_id
    sam, eve = await client_at(there.relaying), await client_at(there.relaying)
    await sam.hello("Sam")
    await eve.hello("Eve")
    assert (await sam.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    watched = await sam.expect("table_snapshot")
    before = there.ann.frames[-1]
    await killed_in_its_lease(host, table_id, redis_store, redis_url)
    refused = await answer(eve, "watch_table", table_id=table_id)
    assert (refused["type"], refused["code"]) == ("error", "table_moving"), refused
    stayed = await answer(sam, "leave_table", table_id=table_id)
    assert (stayed["type"], stayed["code"]) == ("error", "table_moving"), stayed

    await seen_after(there.ann, before, unasked_snapshot(table_id))
    await seen_after(sam, stayed, unasked_snapshot(table_id))
    asked = await answer(eve, "request_snapshot", table_id=table_id)
    assert (asked["type"], asked.get("code")) == ("error", "not_at_table"), asked
    assert [m for m in eve.frames if m["type"] in ("table_watched", "table_snapshot")] == []
    assert watched in sam.frames


async def adopted_slowly(
    redis_store: RedisStore, servers: Servers, names: tuple[str, str], *, watching: bool
) -> tuple[str, list[Client]]:
    """Ann's table, its host killed, and two other processes (a client of each, named
    ``names``, watching it if ``watching``) that read a table's hands slowly: returned
    once one of them holds the table's lease, while it has not loaded the table yet.
    Whichever adopts it, the other relays to it."""
    slow = FaultPlan((Fault("table_hands", 1, "stall", stall=2.0),))
    host_port, ports = free_port(), (free_port(), free_port())
    host = await servers.start(host_port, lease=LEASE)
    for port in ports:
        await servers.start(port, lease=LEASE, plan=slow)
    ann = await client_at(host_port)
    await ann.hello("Ann")
    created = await ann.reply("create_table", options=HEADS_UP, buy_in=500)
    table_id = created["table"]["table_id"]
    await ann.expect("table_snapshot")
    watchers = [await client_at(port) for port in ports]
    for watcher, name in zip(watchers, names, strict=True):
        await watcher.hello(name)
        if watching:
            reply = await watcher.reply("watch_table", table_id=table_id)
            assert reply["type"] == "table_watched", reply
            await watcher.expect("table_snapshot")
    dead = await redis_store.table_host(table_id)
    host.send_signal(signal.SIGKILL)
    await host.wait()

    async def leased_again() -> bool:
        return await redis_store.table_host(table_id) not in (dead, None)

    await until(leased_again)
    return table_id, watchers


async def test_a_message_while_a_table_is_being_adopted_is_refused_table_moving(
    redis_store: RedisStore, servers: Servers
) -> None:
    """The host of Ann's table is killed, and the process adopting it reads the table's
    hands slowly: it holds the lease, but not the table yet. A watch_table sent then,
    to the adopter or relayed to it from another process, is refused ``table_moving``
    (nothing changed, the table is on its way), not ``unknown_table`` (there is a
    table) nor ``table_moved`` (nobody lost it). Both processes read slowly, so that
    whichever adopts the table, the other relays to it."""
    table_id, watchers = await adopted_slowly(redis_store, servers, ("Bo", "Cy"), watching=False)
    refusals = [await answer(w, "watch_table", table_id=table_id) for w in watchers]
    assert [(r["type"], r.get("code")) for r in refusals] == [("error", "table_moving")] * 2
    for watcher in watchers:  # and a moment later, the watch is taken

        async def watched(watcher: Client = watcher) -> bool:
            reply = await answer(watcher, "watch_table", table_id=table_id)
            return bool(reply["type"] == "table_watched")

        await until(watched)


async def test_a_spectators_leave_refused_while_the_table_is_adopted_keeps_it_watching(
    redis_store: RedisStore, servers: Servers
) -> None:
    """Dee and Eve watch Ann's table, each from another process than its host. The
    host is killed, and the process adopting the table reads its hands slowly. Both ask
    to leave then, and are refused ``table_moving``: nothing changed, so once the table
    is adopted, both watch on there, unasked. Both processes read slowly, so that one
    of the leaves is refused by the adopter itself, the other relayed to it."""
    table_id, watchers = await adopted_slowly(redis_store, servers, ("Dee", "Eve"), watching=True)
    refusals = [await answer(w, "leave_table", table_id=table_id) for w in watchers]
    assert [(r["type"], r.get("code")) for r in refusals] == [("error", "table_moving")] * 2
    for watcher, refused in zip(watchers, refusals, strict=True):
        await seen_after(watcher, refused, unasked_snapshot(table_id))


async def test_a_seat_whose_process_died_at_a_quiet_table_elsewhere_gets_its_grace_period(
    servers: Servers,
) -> None:
    """Pat sits alone at a table that waits for a second player, hosted by one process
    while she is connected to another, and that other process is killed. The table has
    nothing to send her, yet its host learns she is gone: Sam, watching, sees her
    disconnected, and once her grace period ends she is stood up and the table closes,
    as when her own connection drops."""
    hosting, relaying = free_port(), free_port()
    await servers.start(hosting, lease=LEASE, flags=("--grace", "1"))
    dying = await servers.start(relaying, lease=LEASE)
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
