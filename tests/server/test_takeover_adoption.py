"""A table adopted by another server process on one Redis once its host's lease runs
out: the host, frozen or stalled past it, plays nothing more of the table, whose players
reconnect and play on; a watch, a leave or a message met while the table is adopted
changes nothing it should not."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator

from qiuqiu.server.redis_store import RedisStore
from tests.conftest import free_port
from tests.server.conftest import Client
from tests.server.faulty_store import Fault, FaultPlan
from tests.server.processes import Servers, hands_dealt, until
from tests.server.takeover_helpers import (
    HEADS_UP,
    LEASE,
    answer,
    at_a_table_hosted_elsewhere,
    check_or_call,
    client_at,
    killed_in_its_lease,
    resume,
    seen,
    seen_after,
    turn_at,
    unasked_snapshot,
)


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
