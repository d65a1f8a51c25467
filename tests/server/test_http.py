"""Plain HTTP beside the WebSocket upgrade: health, metrics, the page, origins."""

from __future__ import annotations

import asyncio
import random
import re
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import TableCommit
from tests.conftest import free_port, own_redis
from tests.server.conftest import FAST, Client, at_bot_table, my_turn
from tests.server.processes import listening, until


async def get(
    server: QiuQiuServer, path: str, method: str = "GET", **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 request, by hand, so the test sees exactly what the server wrote:
    its status, its headers and every byte after them until it closed."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    lines = [f"{method} {path} HTTP/1.1", "Host: localhost"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")[:-2]
    fields = dict(line.split(": ", 1) for line in header_lines)
    body = await reader.read()
    writer.close()
    return int(status_line.split()[1]), fields, body


def samples(text: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text page, parsed by Prometheus' own parser."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text.decode())
        for s in family.samples
    }


async def test_healthz_says_ok_while_the_server_serves(server: QiuQiuServer) -> None:
    status, _, body = await get(server, "/healthz")
    assert (status, body) == (200, b"ok\n")


async def test_metrics_count_connections_tables_hands_errors_and_action_latency(
    server: QiuQiuServer, connect_client: Callable[[], Any]
) -> None:
    client, turn = await at_bot_table(connect_client)
    table_id = turn["table_id"]
    while True:
        action = "check" if turn["legal"]["check"] else "fold"
        await client.send(action, table_id=table_id, hand_id=turn["hand_id"])
        message = await client.wait(lambda m: m["type"] == "hand_ended" or "legal" in m)
        if message["type"] == "hand_ended":
            break
        turn = message
    refused = await client.reply("fold", table_id=table_id, hand_id=1)
    assert refused["code"] == "stale_hand"
    await client.send_raw("{not json")
    await client.expect("error", code="bad_json")

    status, headers, body = await get(server, "/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    seen = samples(body)
    assert seen[("qiuqiu_connections", ())] == 1
    assert seen[("qiuqiu_tables", ())] == 1
    assert seen[("qiuqiu_hands_total", ())] >= 1
    assert seen[("qiuqiu_errors_total", (("code", "stale_hand"),))] == 1
    assert seen[("qiuqiu_errors_total", (("code", "bad_json"),))] == 1
    assert seen[("qiuqiu_action_seconds_count", ())] >= 1
    assert seen[("qiuqiu_tasks", ())] > 0
    assert seen[("process_resident_memory_bytes", ())] > 0


README = Path(__file__).parents[2] / "README.md"
DOCUMENTED_METRIC = re.compile(r"^\| `(qiuqiu_\w+)(?:\{\w+\})?` \|", re.MULTILINE)
"""A row of the README's table of metrics: its name, without its labels."""
HISTOGRAM_SERIES = ("_bucket", "_count", "_sum")


async def test_every_series_on_metrics_is_in_the_readmes_table(
    server: QiuQiuServer, connect_client: Callable[[], Any]
) -> None:
    # prometheus-client's own *_created series were served and documented nowhere.
    client = await connect_client()
    await client.send_raw("{not json")
    await client.expect("error", code="bad_json")
    documented = set(DOCUMENTED_METRIC.findall(README.read_text()))
    served = set()
    for family in text_string_to_metric_families((await get(server, "/metrics"))[2].decode()):
        for sample in family.samples:
            name = sample.name
            if family.type == "histogram" and name.endswith(HISTOGRAM_SERIES):
                name = name.rsplit("_", 1)[0]
            served.add(name)
    assert {name for name in served if not name.startswith("process_")} - documented == set()


async def test_a_voided_hand_is_not_counted_as_played(
    server: QiuQiuServer, connect_client: Callable[[], Any]
) -> None:
    client, _ = await at_bot_table(connect_client)
    await server.stop()  # voids the hand in play, every chip back
    await client.expect("hand_voided")
    assert samples(server.metrics.render()).get(("qiuqiu_hands_total", ()), 0) == 0


class SlowHandEnds(MemoryStore):
    """The store, taking ``END_WRITE`` seconds to write a hand's end."""

    async def commit(self, commit: TableCommit) -> dict[str, int]:
        if commit.hand is not None:
            await asyncio.sleep(END_WRITE)
        return await super().commit(commit)


END_WRITE = 0.2


async def test_a_hands_last_action_is_timed_until_its_events_go_out() -> None:
    # What it caused waits for the hand's end to be written, and the metric covers that
    # wait: it is asserted from a write made slow on purpose.
    server = QiuQiuServer(FAST, store=SlowHandEnds(), rng=random.Random(2026))
    await server.start()
    try:
        client = Client(await connect(server.url))
        await client.hello()
        created = await client.reply("create_table", buy_in=300)
        table_id = created["table"]["table_id"]
        # Check until the bot bets, then fold: the fold ends the hand.
        actions = 0
        while True:
            turn = await my_turn(client, table_id)
            ids = {"table_id": table_id, "hand_id": turn["hand_id"]}
            actions += 1
            if turn["legal"]["check"]:
                await client.send("check", **ids)
                continue
            await client.send("fold", **ids)
            await client.expect("hand_ended")
            break
        _, _, body = await get(server, "/metrics")
        await client.close()
    finally:
        await server.stop()
    seen = samples(body)
    assert seen[("qiuqiu_action_seconds_count", ())] == actions
    assert seen[("qiuqiu_action_seconds_sum", ())] >= END_WRITE


async def test_metrics_count_closed_connections_by_close_code(
    server: QiuQiuServer, connect_client: Callable[[], Any]
) -> None:
    client: Client = await connect_client()
    await client.hello()
    await client.send_raw("x" * (server.config.max_frame + 1))
    await client.closed()
    await until(lambda: _closed_with(server, "1009"))


async def test_metrics_count_a_close_code_of_the_clients_own_as_other(
    server: QiuQiuServer,
) -> None:
    """A client chooses its close code: each one its own label would let any client
    add some two thousand series to the metrics."""
    for code in (3000, 4321, 4999):
        async with connect(server.url) as client:
            await client.close(code)
    await until(lambda: _closed_with(server, "other", 3))
    _, _, body = await get(server, "/metrics")
    closed = [labels for name, labels in samples(body) if name.endswith("closed_total")]
    assert {dict(labels)["code"] for labels in closed} == {"other"}


async def _closed_with(server: QiuQiuServer, code: str, times: int = 1) -> bool:
    _, _, body = await get(server, "/metrics")
    return samples(body).get(("qiuqiu_connections_closed_total", (("code", code),)), 0) >= times


async def test_healthz_reflects_a_lost_redis_and_its_return(tmp_path: Path) -> None:
    port = free_port()

    redis = own_redis(port, tmp_path)
    try:
        await until(lambda: listening(port))
        store = await RedisStore.from_url(f"redis://127.0.0.1:{port}/0")
        server = QiuQiuServer(FAST, store=store)
        await server.start()
        assert (await get(server, "/healthz"))[::2] == (200, b"ok\n")
        redis.kill()
        redis.wait()
        status, _, body = await get(server, "/healthz")
        assert status == 503
        assert body.startswith(b"store unreachable")
        redis = own_redis(port, tmp_path)
        await until(lambda: listening(port))
        assert (await get(server, "/healthz"))[::2] == (200, b"ok\n")
        await server.stop()
        await store.close()
    finally:
        redis.kill()
        redis.wait()


async def test_the_store_round_trips_are_a_counter_that_counts_each_request(
    redis_url: str,
) -> None:
    # They were a gauge: Prometheus' rate() reads a gauge's fall as a fall, not a reset.
    store = await RedisStore.from_url(redis_url)
    server = QiuQiuServer(FAST, store=store)
    await server.start()

    def round_trips(body: bytes) -> float:
        (family,) = [
            f
            for f in text_string_to_metric_families(body.decode())
            if f.name == "qiuqiu_store_round_trips"
        ]
        assert family.type == "counter"
        (sample,) = family.samples
        assert sample.name == "qiuqiu_store_round_trips_total"
        return sample.value

    try:
        before = round_trips((await get(server, "/metrics"))[2])
        assert before > 0
        await store.ping()  # the leases' renewals count too, whenever they fall
        assert round_trips((await get(server, "/metrics"))[2]) >= before + 1
    finally:
        await server.stop()
        await store.close()


async def test_healthz_waits_for_redis_as_long_as_the_store_timeout(tmp_path: Path) -> None:
    # It gave Redis 1 s whatever --store-timeout said, so a Redis that a player's
    # request may wait 5 s for was reported down after 1 s.
    port = free_port()
    redis = own_redis(port, tmp_path)
    try:
        await until(lambda: listening(port))
        store = await RedisStore.from_url(f"redis://127.0.0.1:{port}/0", timeout=5.0)
        server = QiuQiuServer(FAST.model_copy(update={"store_timeout": 5.0}), store=store)
        await server.start()
        redis.send_signal(signal.SIGSTOP)
        asyncio.get_running_loop().call_later(2.0, redis.send_signal, signal.SIGCONT)
        assert (await get(server, "/healthz"))[::2] == (200, b"ok\n")
        await server.stop()
        await store.close()
    finally:
        redis.kill()
        redis.wait()


@pytest.mark.parametrize(
    "path",
    ["/nothing-here", "/../pyproject.toml", "/%2e%2e/pyproject.toml", "/.hidden", "//etc/passwd"],
)
async def test_a_path_that_names_no_file_of_the_page_is_not_found(
    server: QiuQiuServer, path: str
) -> None:
    status, _, body = await get(server, path)
    assert (status, body) == (404, b"not found\n")


async def test_the_page_is_served_at_the_root_with_its_content_type(server: QiuQiuServer) -> None:
    status, headers, body = await get(server, "/")
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert b"<html" in body.lower()


@pytest.mark.parametrize("path", ["/", "/healthz", "/metrics", "/nothing-here"])
async def test_head_gets_the_headers_get_would_and_no_body(server: QiuQiuServer, path: str) -> None:
    status, headers, body = await get(server, path)
    head_status, head_headers, head_body = await get(server, path, method="HEAD")
    assert head_status == status
    assert head_headers["Content-Type"] == headers["Content-Type"]
    if path != "/metrics":  # its counters move between the two requests
        assert head_headers["Content-Length"] == headers["Content-Length"] == str(len(body))
    assert head_body == b""


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS"])
async def test_any_other_method_is_not_allowed(server: QiuQiuServer, method: str) -> None:
    status, headers, body = await get(server, "/healthz", method=method)
    assert (status, body) == (405, b"only GET and HEAD\n")
    assert headers["Allow"] == "GET, HEAD"


async def test_a_websocket_upgrade_on_any_path_reaches_the_game(server: QiuQiuServer) -> None:
    async with connect(server.url + "/metrics") as ws:
        client = Client(ws)
        welcome = await client.hello()
        assert welcome["type"] == "welcome"
        await client.close()


class TestAllowedOrigins:
    @pytest.fixture
    def config(self) -> ServerConfig:
        return FAST.model_copy(update={"allowed_origins": ("https://qiuqiu.example",)})

    async def test_a_browser_from_an_allowed_origin_plays(self, server: QiuQiuServer) -> None:
        async with connect(server.url, origin="https://qiuqiu.example") as ws:  # type: ignore[arg-type]
            client = Client(ws)
            assert (await client.hello())["type"] == "welcome"
            await client.close()

    async def test_the_page_the_server_serves_itself_plays(self, server: QiuQiuServer) -> None:
        # It was refused: its origin, the server's own address, was not on the list.
        own = f"http://127.0.0.1:{server.port}"
        async with connect(server.url, origin=own) as ws:  # type: ignore[arg-type]
            client = Client(ws)
            assert (await client.hello())["type"] == "welcome"
            await client.close()
        other_port = f"http://127.0.0.1:{server.port + 1}"
        with pytest.raises(InvalidStatus) as refused:
            await connect(server.url, origin=other_port)  # type: ignore[arg-type]
        assert refused.value.response.status_code == 403

    async def test_a_browser_from_another_origin_is_refused_with_403(
        self, server: QiuQiuServer
    ) -> None:
        with pytest.raises(InvalidStatus) as refused:
            await connect(server.url, origin="https://evil.example")  # type: ignore[arg-type]
        assert refused.value.response.status_code == 403

    async def test_a_client_that_sends_no_origin_such_as_a_bot_plays(
        self, server: QiuQiuServer, connect_client: Callable[[], Any]
    ) -> None:
        _, turn = await at_bot_table(connect_client)
        assert "legal" in turn
