"""How many tables one connection watches at once (``--max-watched-tables``): a table
takes few spectators, and one connection must not take a place at every table.

Each test runs over real WebSocket connections to a real server; the last, across two
server processes on one Redis, the tables hosted by the process the watcher is not on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.gateway import QiuQiuServer
from tests.conftest import free_port
from tests.server.conftest import FAST, Client
from tests.server.processes import Servers

Connect = Callable[[], Awaitable[Client]]

CAP = 2
TWO_WATCHED = FAST.model_copy(update={"max_watched_tables": CAP})
WAITING = {"seats": 3, "dealer_bot": False, "min_players": 3}
"""A table that deals no hand: it waits for a third player."""

capped = pytest.mark.parametrize(
    "config", [pytest.param(TWO_WATCHED, id=f"{CAP} tables a connection")]
)


async def _tables(host: Client, count: int) -> list[str]:
    """``count`` tables where ``host`` sits (so they stay open) and no hand is dealt."""
    made = []
    for _ in range(count):
        created = await host.reply("create_table", options=WAITING, buy_in=100)
        assert created["type"] == "table_created", created
        made.append(created["table"]["table_id"])
    return made


async def _hosted(connect_client: Connect, count: int) -> tuple[Client, list[str]]:
    host = await connect_client()
    await host.hello("Host")
    return host, await _tables(host, count)


async def _eve(connect_client: Connect) -> Client:
    eve = await connect_client()
    await eve.hello("Eve")
    return eve


@capped
async def test_a_connection_watches_as_many_tables_as_the_cap_and_one_more_is_refused(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    _, tables = await _hosted(connect_client, CAP + 1)
    eve = await _eve(connect_client)
    for table_id in tables[:CAP]:
        assert (await eve.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    refused = await eve.reply("watch_table", table_id=tables[CAP])
    assert refused["code"] == "too_many_watched", refused
    assert f"{CAP} tables" in refused["message"]
    assert not server.lobby.tables[tables[CAP]].core.spectators
    # Watching a watched table again takes no more room.
    again = await eve.reply("watch_table", table_id=tables[0])
    assert again["type"] == "table_watched", again
    # Leaving one frees its place.
    assert (await eve.reply("leave_table", table_id=tables[0]))["type"] == "table_left"
    watched = await eve.reply("watch_table", table_id=tables[CAP])
    assert watched["type"] == "table_watched", watched


@capped
async def test_watches_sent_all_at_once_are_held_to_the_cap(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    _, tables = await _hosted(connect_client, CAP + 1)
    eve = await _eve(connect_client)
    sent = [await eve.send("watch_table", table_id=table_id) for table_id in tables]
    answers = await _answers(eve, sent)
    assert [a["type"] for a in answers] == ["table_watched"] * CAP + ["error"]
    assert answers[-1]["code"] == "too_many_watched"
    watching = [t for t in tables if server.lobby.tables[t].core.spectators]
    assert watching == tables[:CAP]


@capped
async def test_a_table_that_closes_or_where_the_watcher_sits_down_frees_its_place(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    host, tables = await _hosted(connect_client, CAP + 2)
    eve = await _eve(connect_client)
    closing, joined = tables[:CAP]
    for table_id in (closing, joined):
        assert (await eve.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    # The host, its last player, leaves: it closes, and says so to its spectators only.
    assert (await host.reply("leave_table", table_id=closing))["type"] == "table_left"
    await eve.expect("table_closed", table_id=closing)
    watched = await eve.reply("watch_table", table_id=tables[CAP])
    assert watched["type"] == "table_watched", watched
    sat = await eve.reply("join_table", table_id=joined, buy_in=100)
    assert sat["type"] == "table_joined", sat
    watched = await eve.reply("watch_table", table_id=tables[CAP + 1])
    assert watched["type"] == "table_watched", watched


@capped
async def test_a_connection_after_a_reconnect_watches_its_tables_again(
    server: QiuQiuServer, connect_client: Connect
) -> None:
    """The SDK and the page watch again, on the new connection, every table they watched:
    the old connection's watches are not counted against it."""
    _, tables = await _hosted(connect_client, CAP + 1)
    eve = await connect_client()
    token = (await eve.hello("Eve"))["token"]
    for table_id in tables[:CAP]:
        assert (await eve.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    await eve.close()
    back = await connect_client()
    welcome = await back.reply("hello", version=PROTOCOL_VERSION, token=token)
    assert welcome["type"] == "welcome", welcome
    for table_id in tables[:CAP]:
        assert (await back.reply("watch_table", table_id=table_id))["type"] == "table_watched"
    refused = await back.reply("watch_table", table_id=tables[CAP])
    assert refused["code"] == "too_many_watched", refused


async def test_tables_another_process_hosts_count_against_the_cap(
    servers: Servers,
) -> None:
    hosting, relaying = free_port(), free_port()
    flags = ("--max-watched-tables", str(CAP), "--max-spectators", "1")
    for port in (hosting, relaying):
        await servers.start(port, flags=flags)
    async with connect(f"ws://127.0.0.1:{hosting}") as socket:
        host = Client(socket)
        await host.hello("Host")
        tables = await _tables(host, CAP + 2)
        full = (await host.reply("create_table", options=WAITING))["table"]["table_id"]
        assert (await host.reply("watch_table", table_id=full))["type"] == "table_watched"
        async with connect(f"ws://127.0.0.1:{relaying}") as other:
            eve = Client(other)
            await eve.hello("Eve")
            # Refused by the host: that watch counts no more.
            refused = await eve.reply("watch_table", table_id=full)
            assert refused["code"] == "too_many_spectators", refused
            # All at once: a watch sent to the host counts before its answer comes.
            sent = [await eve.send("watch_table", table_id=t) for t in tables[: CAP + 1]]
            answers = await _answers(eve, sent)
            assert [a["type"] for a in answers] == ["table_watched"] * CAP + ["error"]
            assert answers[-1]["code"] == "too_many_watched"
            left = await eve.reply("leave_table", table_id=tables[0])
            assert left["type"] == "table_left", left
            watched = await eve.reply("watch_table", table_id=tables[CAP])
            assert watched["type"] == "table_watched", watched
            # The host closes a watched table: its place is free too.
            assert (await host.reply("leave_table", table_id=tables[1]))["type"] == "table_left"
            await eve.expect("table_closed", table_id=tables[1])
            watched = await eve.reply("watch_table", table_id=tables[CAP + 1])
            assert watched["type"] == "table_watched", watched
            refused = await eve.reply("watch_table", table_id=tables[0])
            assert refused["code"] == "too_many_watched", refused


async def _answers(client: Client, refs: list[int]) -> list[dict[str, Any]]:
    """The answers to the messages ``refs`` named, in that order, whichever came first:
    a refusal here comes before the answers of a table elsewhere."""
    found: dict[int, dict[str, Any]] = {}
    while len(found) < len(refs):
        answer = await client.wait(lambda m: m.get("ref") in refs and "seq" not in m)
        found[answer["ref"]] = answer
    return [found[ref] for ref in refs]
