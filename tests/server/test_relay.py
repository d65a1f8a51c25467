"""What a process answers a message relayed to it for a table it no longer hosts, over
real server processes on one Redis."""

from __future__ import annotations

import signal

from websockets.asyncio.client import connect

from tests.conftest import free_port
from tests.server.conftest import Client
from tests.server.faulty_store import Fault, FaultPlan
from tests.server.processes import Servers, until

RELEASE_STALL = 3.0
"""Seconds the stopping host takes to let its lease go: while it does, the lease still
names it, so the other process relays to it a table it has already handed over."""

LEASE = 10.0


async def test_a_message_relayed_to_a_host_that_has_handed_the_table_over_is_table_moving(
    servers: Servers,
) -> None:
    """Bo, connected to one process, sits at Ann's table hosted by the other. That host
    stops (SIGTERM) and hands the table over, but is slow to let its lease go. Bo's
    requests meanwhile still go to it: it has the table no more, so nothing is applied,
    and Bo, whose own connection has nowhere to move, is told ``table_moving`` (send it
    again once the snapshot comes), not ``table_moved``'s "reconnect"."""
    hosting, relaying = free_port(), free_port()
    slow_release = FaultPlan((Fault("release_table", 1, "stall", stall=RELEASE_STALL),))
    # A lease longer than the stall: the other process relays to the host all along,
    # never finding the lease run out and answering for itself.
    host = await servers.start(hosting, lease=LEASE, plan=slow_release)
    await servers.start(relaying, lease=LEASE)
    ann = Client(await connect(f"ws://127.0.0.1:{hosting}"))
    bo = Client(await connect(f"ws://127.0.0.1:{relaying}"))
    try:
        await ann.hello("Ann")
        created = await ann.reply("create_table", options={"seats": 2, "dealer_bot": False})
        table_id = created["table"]["table_id"]
        await bo.hello("Bo")
        joined = await bo.reply("join_table", table_id=table_id, buy_in=500)
        assert joined["type"] == "table_joined", joined
        await bo.expect("table_snapshot")
        host.send_signal(signal.SIGTERM)
        refusals: list[dict[str, object]] = []

        async def refused() -> bool:
            answer = await bo.reply("request_snapshot", table_id=table_id)
            if answer["type"] == "error":
                refusals.append(answer)
            return bool(refusals)

        await until(refused)
        assert [(r["code"], r["message"]) for r in refusals] == [
            (
                "table_moving",
                "the table moved to another server before this was answered: nothing "
                "changed; send it again in a moment",
            )
        ]
    finally:
        await ann.close()
        await bo.close()
