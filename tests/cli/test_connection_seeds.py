"""The SDK's connection and its own seed, against a real server: a seat taken without one
of this client's gets one for the next hands, and the hands dealt before it went out
count not against it; a resumed session's seed, sent before its snapshot or never
confirmed, fails no hand; a seat taken just after its last player left checks no hand
it was not in."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clients.examples.always_call import AlwaysCall
from qiuqiu.cli.bot import play
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.deals import DealChecked
from qiuqiu.protocol import DealTampered, TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.gateway import QiuQiuServer
from tests.cli.proxy import Send, proxy
from tests.server.conftest import WAIT


async def test_a_seat_taken_without_a_seed_of_this_clients_gets_one_for_the_next_hands(
    server: QiuQiuServer,
) -> None:
    """As after a restart: seated, but this process never sent the seat's seed."""
    async with await Connection.open(server.url, name="Ann") as conn:
        created = await conn.request(cmd.CreateTable(buy_in=500), wire.TableCreated)
        table_id = created.table.table_id
        summary = await asyncio.wait_for(play(AlwaysCall(), conn, table_id, hands=3), 30)
    deals = conn.deals[table_id]
    assert deals.seed is not None
    assert len(deals.seed) == 64
    # The first hand may have begun before the server had the seed; the last did not.
    last = max(deals.kept)
    assert deals.seed in deals.kept[last].client_seeds.values()
    assert deals.checks[last] == DealChecked(tiles=8, own_seed=True, paid=True)
    assert summary.verified == summary.hands


async def test_hands_dealt_before_a_seed_went_out_count_not_against_it_read_however_late(
    server: QiuQiuServer,
) -> None:
    """Seated without a seed of this process's, whose messages nobody reads while the
    table deals two hands (the turns time out): the seed goes out as the snapshot is
    read, after both were heard. They began before the server could have it, and were
    counted as two hands dealt without it: an honest table failed."""
    quick = TableOptions(turn_seconds=0.05)
    async with await Connection.open(server.url, name="Ann") as conn:
        created = await conn.request(cmd.CreateTable(options=quick, buy_in=500), wire.TableCreated)
        table_id = created.table.table_id
        async with await Connection.open(server.url, name="Wes") as wes:
            await wes.request(cmd.WatchTable(table_id=table_id), wire.TableWatched)
            async with asyncio.timeout(WAIT):
                async for message in wes.messages():
                    if isinstance(message, wire.HandStarted) and message.hand_id == 3:
                        break
        summary = await asyncio.wait_for(play(AlwaysCall(), conn, table_id, hands=3), 30)
    deals = conn.deals[table_id]
    assert deals.tampered is None
    assert summary.hands == 3


async def test_a_seed_sent_by_a_resumed_session_before_its_snapshot_fails_no_hand(
    server: QiuQiuServer,
) -> None:
    """A new process, resumed by its token, sets a seed of its own before it has read
    the table (the snapshot comes after the welcome): sent then, the table's commitment
    would be seen only after it, which fails the table."""
    issued: list[str] = []
    async with await Connection.open(server.url, name="Ann", on_token=issued.append) as first:
        table, _ = await first.open_table(TableOptions(), buy_in=500)
    async with await Connection.open(server.url, token=issued[0]) as again:
        await again.set_seed(table.table_id, "my-own-seed")
        summary = await asyncio.wait_for(play(AlwaysCall(), again, table.table_id, hands=2), 30)
    deals = again.deals[table.table_id]
    assert deals.tampered is None
    assert deals.seed_commitment == table.seed_commitment
    assert (deals.seed, summary.verified) == ("my-own-seed", summary.hands)


async def test_a_seed_set_before_the_snapshot_counts_not_the_hand_in_it_as_dealt_without_it(
    server: QiuQiuServer,
) -> None:
    """The hand in play when a resumed session reads its snapshot began before its seed
    went out. Held to at most one hand dealt without an unconfirmed seed (here never
    confirmed: the proxy keeps it from the server), the session lets the first hand
    that starts after the snapshot through, as the one the seed came too late for."""
    issued: list[str] = []
    withheld: list[str] = []

    async def withhold(message: dict[str, Any], to_client: Send, to_server: Send) -> bool:
        if message["type"] == "set_seed":
            withheld.append(message["client_seed"])
            return True
        return False

    async with proxy(server.url, up=withhold) as url:
        first = await Connection.open(url, name="Ann", on_token=issued.append)
        table, _ = await first.open_table(TableOptions(), buy_in=500)
        async with asyncio.timeout(WAIT):  # a hand in play, that waits for Ann's turn
            async for message in first.messages():
                if isinstance(message, wire.TurnStarted):
                    break
        async with await Connection.open(url, token=issued[0]) as again:
            await again.set_seed(table.table_id, "my-own-seed")
            with pytest.raises(DealTampered, match="a second hand was dealt without"):
                await asyncio.wait_for(play(AlwaysCall(), again, table.table_id, hands=5), 30)
        await first.close()
    assert withheld == ["my-own-seed"]
    deals = again.deals[table.table_id]
    in_play = min(deals.checks)  # the snapshot's hand
    assert isinstance(deals.checks[in_play + 1], DealChecked)
    assert deals.tampered is not None
    assert deals.tampered.hand_id == in_play + 2


async def test_a_seed_never_confirmed_is_sent_again_with_the_next_snapshot(
    server: QiuQiuServer,
) -> None:
    """As when the server that got the seed stopped before writing it."""
    async with await Connection.open(server.url, name="Ann") as conn:
        table, _ = await conn.open_table(TableOptions(), buy_in=500)
        deals = conn.deals[table.table_id]
        deals.sent_seed("lost-on-the-way")
        await conn.send(cmd.RequestSnapshot(table_id=table.table_id))
        async with asyncio.timeout(10):
            async for message in conn.messages():
                if isinstance(message, wire.SeedSet):
                    break
    assert (deals.seed, deals.pending_seed) == ("lost-on-the-way", None)


async def test_a_seat_taken_just_after_its_last_player_left_checks_no_hand_it_was_not_in(
    server: QiuQiuServer,
) -> None:
    """Bo plays two hands at Ann's table and leaves; Cy sits in his seat while the table
    still shows the last hand, which was Bo's: hers to play, not hers to check."""
    async with (
        await Connection.open(server.url, name="Ann") as ann,
        await Connection.open(server.url, name="Bo") as bo,
        await Connection.open(server.url, name="Cy") as cy,
    ):
        table, _ = await ann.open_table(TableOptions(dealer_bot=False), buy_in=500)
        table_id = table.table_id
        hosting = asyncio.create_task(play(AlwaysCall(), ann, table_id, hands=50))
        try:
            await bo.join_table(table_id, 500)
            await asyncio.wait_for(play(AlwaysCall(), bo, table_id, hands=2), 30)
            joined = await cy.join_table(table_id, 500)
            summary = await asyncio.wait_for(play(AlwaysCall(), cy, table_id, hands=2), 30)
        finally:
            hosting.cancel()
    assert joined.seat is not None
    assert summary.hands == 2
    assert summary.verified == 2
