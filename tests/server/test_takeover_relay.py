"""Commands relayed between real server processes on one Redis, to the process that
hosts the table: one no server heard is refused ``table_moving`` and the snapshot
follows, one a frozen host never answers is ``outcome_unknown``, a leave answered at the
hand's end is not taken for silence, and one that meets the store away gets an answer."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from qiuqiu.server.redis_store import RedisStore
from tests.conftest import free_port
from tests.server.conftest import Client
from tests.server.faulty_store import FaultPlan
from tests.server.processes import Servers
from tests.server.recorder import of_client, seq_regressions
from tests.server.takeover_helpers import (
    HEADS_UP,
    answer,
    at_a_table_hosted_elsewhere,
    client_at,
    killed_in_its_lease,
    seen,
    seen_after,
    turn_at,
    unasked_snapshot,
)


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


def voided_at(table_id: str) -> Callable[[dict[str, Any]], bool]:
    def found(m: dict[str, Any]) -> bool:
        return bool(m["type"] == "hand_voided" and m["table_id"] == table_id)

    return found


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
