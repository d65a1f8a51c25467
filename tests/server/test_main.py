"""``qiuqiu-server`` as an operator runs it: a real process, flags, env and SIGTERM."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import re
import signal
import socket
import socketserver
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server import __main__ as command
from qiuqiu.server.accounts import token_hash
from qiuqiu.server.collector import freeze_start_up_heap
from qiuqiu.server.config import ServerConfig, env_name, flag, parse_config, unknown_variables
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.logs import START
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import Account
from tests.conftest import free_port, own_redis
from tests.server.processes import PASSWORDS_REFUSED, listening, redis_asking_a_password, until

LISTENING = re.compile(rb"listening on (ws://[^\s\"]+)")


def test_flags_beat_environment_variables_which_beat_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert parse_config([]) == ServerConfig()
    monkeypatch.setenv("QIUQIU_PORT", "9100")
    monkeypatch.setenv("QIUQIU_HOST", "0.0.0.0")
    from_env = parse_config([])
    assert (from_env.host, from_env.port) == ("0.0.0.0", 9100)
    assert parse_config(["--port", "9200"]).port == 9200


def test_a_choice_is_taken_in_any_case_from_a_flag_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    flags = ["--log-level", "warning", "--log-format", "TEXT", "--gc-freeze", "Young"]
    config = parse_config([*flags, "--loop", "AsyncIO"])
    assert (config.log_level, config.log_format, config.gc_freeze) == ("WARNING", "text", "young")
    assert config.loop == "asyncio"
    monkeypatch.setenv("QIUQIU_LOG_FORMAT", "JSON")
    assert parse_config([]).log_format == "json"


def test_redis_is_off_unless_a_url_is_given_by_flag_or_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert parse_config([]).redis_url is None
    monkeypatch.setenv("QIUQIU_REDIS_URL", "redis://redis:6379/0")
    assert parse_config([]).redis_url == "redis://redis:6379/0"
    from_flag = parse_config(["--redis-url", "redis://localhost:6380/2"])
    assert from_flag.redis_url == "redis://localhost:6380/2"


def test_allowed_origins_are_a_comma_separated_list_from_either_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert parse_config([]).allowed_origins == ()
    monkeypatch.setenv("QIUQIU_ALLOWED_ORIGINS", "https://qiuqiu.example, http://localhost:8765")
    assert parse_config([]).allowed_origins == ("https://qiuqiu.example", "http://localhost:8765")
    assert parse_config(["--allowed-origins", "https://a.example"]).allowed_origins == (
        "https://a.example",
    )


@pytest.mark.parametrize(
    ("flags", "env", "says"),
    [
        ([], {"QIUQIU_PORT": "eighty"}, "QIUQIU_PORT='eighty': Input should be a valid integer"),
        (["--port", "70000"], {}, "--port '70000': Input should be less than or equal to 65535"),
        (["--log-level", "LOUD"], {}, "--log-level 'LOUD': Input should be 'DEBUG'"),
        ([], {"QIUQIU_RATE": "-1"}, "QIUQIU_RATE='-1': Input should be greater than 0"),
        (["--strategies", "/no/such/folder"], {}, "'/no/such/folder' is not a folder"),
        (
            ["--redis-url", "http://x"],
            {},
            "error: --redis-url 'http://x': a Redis URL starts with redis://",
        ),
        (
            ["--redis-url", "redis://:hunter2@localhost:six/0"],
            {},
            "--redis-url 'redis://:***@localhost:six/0': Port could not be cast",
        ),
        (
            [],
            {"QIUQIU_REDIS_URL": "redis://localhost/abc"},
            "the database after the host is a number, not 'abc'",
        ),
        # Every table closed before its creator could sit down.
        (["--grace", "0"], {}, "--grace '0': Input should be greater than 0"),
        (
            ["--redis-url", "unix:///run/redis.sock?db=x"],
            {},
            "the database after db= is a number, not 'x'",
        ),
        (
            ["--redis-url", "unix:///run/redis.sock?db=x&password=hunter2"],
            {},
            "--redis-url 'unix:///run/redis.sock?db=x&password=***': the database after db=",
        ),
        # It listened on every interface, where no host at all means localhost.
        ([], {"QIUQIU_HOST": ""}, "error: QIUQIU_HOST='': empty: give an address"),
        # Each of these started, then closed the first connection with 1011.
        (["--lease", "inf"], {}, "--lease 'inf': Input should be a finite number"),
        ([], {"QIUQIU_GRACE": "inf"}, "QIUQIU_GRACE='inf': Input should be a finite number"),
        (["--lease", "1e300"], {}, "--lease '1e300': Input should be less than or equal to"),
        # Each taken: no hand after the first was ever dealt, and no seat ever freed.
        (["--hand-pause", "1e300"], {}, "--hand-pause '1e300': Input should be less than or"),
        ([], {"QIUQIU_GRACE": "86401"}, "QIUQIU_GRACE='86401': Input should be less than or"),
        # No amount on the wire is larger: every hello closed with 1011, its welcome unsent.
        (
            ["--starting-balance", "1000000000001"],
            {},
            "--starting-balance '1000000000001': Input should be less than or equal to",
        ),
        # Browsers send an origin as scheme://host[:port]: these would refuse every one.
        (["--allowed-origins", "example.com"], {}, "'example.com' is not an origin"),
        (["--allowed-origins", "https://a.example/"], {}, "'https://a.example/' is not an"),
        (["--allowed-origins", "*"], {}, "leave it empty to allow any"),
        # A prefix of a flag is a typo as likely as a shorthand: it is not taken as --grace.
        (["--gra", "5"], {}, "unrecognized arguments: --gra 5"),
    ],
)
def test_a_value_that_does_not_fit_is_a_clear_error_naming_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    env: dict[str, str],
    says: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as exit:
        parse_config(flags)
    assert exit.value.code == 2
    assert says in capsys.readouterr().err


@asynccontextmanager
async def server_process(
    *flags: str, env: dict[str, str] | None = None, said: list[str] | None = None
) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """``qiuqiu-server --port 0`` with ``flags`` (and ``env`` beside the environment),
    and the URL it listens on; ``said`` gets the lines of stderr before that."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "qiuqiu.server",
        "--port",
        "0",
        *flags,
        env={**os.environ, "QIUQIU_HAND_PAUSE": "0", **(env or {})},
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        async with asyncio.timeout(20):
            while not (found := LISTENING.search(line := await proc.stderr.readline())):
                if said is not None:
                    said.append(line.decode())
        yield proc, found.group(1).decode()
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


@pytest.fixture
async def process() -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    async with server_process("--bot-delay", "30") as started:
        yield started


async def test_sigterm_voids_the_hand_in_play_refunds_every_chip_and_closes_with_1001(
    process: tuple[asyncio.subprocess.Process, str],
) -> None:
    proc, url = process
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "hello", "version": PROTOCOL_VERSION, "name": "Ann"}))
        await ws.send(json.dumps({"type": "create_table", "buy_in": 500}))
        frames = []
        async with asyncio.timeout(10):
            async for frame in ws:
                frames.append(json.loads(frame))
                if frames[-1]["type"] == "turn_started" and "legal" in frames[-1]:
                    break
            table_id = frames[-1]["table_id"]
            # A bet, so the dealer bot (slowed to 30 s) is to act when the server stops.
            await ws.send(
                json.dumps({"type": "bet", "table_id": table_id, "hand_id": 1, "amount": 100})
            )
            async for frame in ws:
                frames.append(json.loads(frame))
                if frames[-1]["type"] == "turn_started":
                    break
            proc.send_signal(signal.SIGTERM)
            # Iteration ends at a normal close and raises at an abnormal one.
            frames += [json.loads(frame) async for frame in ws]
    assert ws.close_code == 1001
    voided = next(f for f in frames if f["type"] == "hand_voided")
    assert {(r["seat"], r["amount"]) for r in voided["refunds"]} == {(0, 110), (1, 10)}
    ended = next(f for f in frames if f["type"] == "hand_ended")
    assert {(s["seat"], s["amount"]) for s in ended["stacks"]} == {(0, 500), (1, 10_000)}
    left = next(f for f in frames if f["type"] == "table_left")
    assert left["cashed_out"] == 500
    assert left["balance"] == 1000
    assert await asyncio.wait_for(proc.wait(), 10) == 0
    assert proc.stderr is not None
    log = await proc.stderr.read()
    assert b"stopped" in log
    assert b"Traceback" not in log


async def test_with_a_redis_url_the_server_keeps_accounts_and_tables_in_redis(
    redis_url: str,
) -> None:
    store = await RedisStore.from_url(redis_url)
    try:
        async with server_process("--redis-url", redis_url) as (proc, url):
            async with connect(url) as ws:
                await ws.send(
                    json.dumps({"type": "hello", "version": PROTOCOL_VERSION, "name": "Ann"})
                )
                welcome = json.loads(await asyncio.wait_for(ws.recv(), 10))
                assert welcome["type"] == "welcome", welcome
                found = await store.account_for_token(token_hash(welcome["token"]))
                assert found == Account(welcome["account_id"], "Ann", welcome["balance"])
                await ws.send(json.dumps({"type": "create_table", "buy_in": 500}))
                async with asyncio.timeout(10):
                    # table_joined comes once the buy-in is saved; table_created before.
                    while json.loads(await ws.recv())["type"] != "table_joined":
                        pass
                assert await balance(store, welcome["account_id"]) == welcome["balance"] - 500
                assert len(await store.tables()) == 1
                proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), 10) == 0
        assert proc.stderr is not None
        assert b"Traceback" not in await proc.stderr.read()
        # Stopped cleanly: the hand in play voided, the seat cashed out, the table gone.
        assert await balance(store, welcome["account_id"]) == welcome["balance"]
        assert await store.tables() == ()
        assert sum((await store.balances()).values()) == 0
    finally:
        await store.close()


async def balance(store: RedisStore, account_id: str) -> int:
    account = await store.account(account_id)
    assert account is not None, account_id
    return account.balance


def test_the_qiuqiu_server_command_is_installed_and_documents_its_flags() -> None:
    command = Path(sys.executable).parent / "qiuqiu-server"
    out = subprocess.run([command, "--help"], check=True, capture_output=True, text=True).stdout
    words = " ".join(out.split())  # as wrapped to the terminal's width
    for name, info in ServerConfig.model_fields.items():
        assert flag(name) in out
        # The default as README's table says it: 10, not 10.0.
        assert f"(default {shown_default(info.default)}; env {env_name(name)})" in words


async def test_logs_are_one_json_object_a_line_naming_the_table_and_hand() -> None:
    async with server_process("--log-level", "debug", "--bot-delay", "0") as (proc, url):
        async with connect(url) as ws:
            await ws.send(json.dumps({"type": "hello", "version": PROTOCOL_VERSION, "name": "Ann"}))
            await ws.send(json.dumps({"type": "create_table", "buy_in": 500}))
            async with asyncio.timeout(10):
                async for frame in ws:
                    message = json.loads(frame)
                    if message["type"] == "turn_started" and "legal" in message:
                        action = "check" if message["legal"]["check"] else "fold"
                        await ws.send(
                            json.dumps(
                                {
                                    "type": action,
                                    "table_id": message["table_id"],
                                    "hand_id": message["hand_id"],
                                }
                            )
                        )
                    if message["type"] == "hand_ended":
                        table_id = message["table_id"]
                        break
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 10) == 0
        assert proc.stderr is not None
        lines = (await proc.stderr.read()).decode().splitlines()
    entries = [json.loads(line) for line in lines]
    assert all({"time", "level", "logger", "message"} <= e.keys() for e in entries)
    ended = [e for e in entries if "hand 1 ended: seat" in e["message"]]
    assert ended[0]["table"] == table_id
    assert ended[0]["hand"] == 1
    assert ended[0]["level"] == "INFO"
    assert ended[0]["won"] > 0
    assert ended[0]["winners"]
    closed = next(e for e in entries if "closed:" in e["message"])
    assert closed["table"] == table_id


def settings_table() -> str:
    """The README's table of settings, as the settings themselves say it should read."""
    rows = ["| flag | environment | default | what it is |", "| --- | --- | --- | --- |"]
    for name, info in ServerConfig.model_fields.items():
        shown = shown_default(info.default)
        if info.default is not None and not isinstance(info.default, tuple):
            shown = f"`{shown}`"
        rows.append(f"| `{flag(name)}` | `{env_name(name)}` | {shown} | {info.description} |")
    return "\n".join(rows) + "\n"


def shown_default(default: object) -> str:
    """A setting's default as a person reads it, in README and in ``--help``."""
    if default is None:
        return "unset"
    if isinstance(default, tuple):
        return ",".join(default) or "empty"
    if isinstance(default, float):
        return f"{default:g}"
    return str(default)


def test_the_readme_documents_every_setting_in_one_table() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert settings_table() in readme, "README's settings table should read:\n" + settings_table()


async def test_two_stops_at_once_stop_the_server_once(caplog: pytest.LogCaptureFixture) -> None:
    """As when a supervisor and the process group each send SIGTERM."""
    server = QiuQiuServer(ServerConfig(port=0))
    await server.start()
    with caplog.at_level(logging.INFO, logger="qiuqiu.server.gateway"):
        await asyncio.gather(server.stop(), server.stop())
    said = [r.getMessage() for r in caplog.records if r.name == "qiuqiu.server.gateway"]
    assert sum(m.startswith("stopping") for m in said) == 1
    assert said.count("stopped") == 1


async def test_a_table_opened_while_the_server_stops_is_closed_with_the_others() -> None:
    """A client that sent many create_table messages just before the stop: those read
    after it began opened tables the stop never closed, their players' chips left in
    the store and their table_joined never followed by a table_left."""
    store = MemoryStore()
    config = ServerConfig(
        port=0, rate=1e6, burst=10**6, starting_balance=10**6, max_seats_per_account=300
    )
    server = QiuQiuServer(config, store=store)
    await server.start()
    async with connect(server.url) as ws:
        await ws.send(json.dumps({"type": "hello", "version": PROTOCOL_VERSION, "name": "Ann"}))
        await ws.recv()
        for n in range(300):
            await ws.send(json.dumps({"type": "create_table", "id": n, "buy_in": 100}))
        await asyncio.sleep(0.05)
        await server.stop()
        got = [json.loads(frame) async for frame in ws]
    assert await store.tables() == ()
    assert sum((await store.balances()).values()) == 0
    joined = sum(m["type"] == "table_joined" for m in got)
    assert sum(m["type"] == "table_left" for m in got) == joined


def test_the_server_freezes_what_start_up_made_out_of_the_collectors_sight() -> None:
    thresholds = gc.get_threshold()
    try:
        freeze_start_up_heap(5_000)
        assert gc.get_freeze_count() > 10_000  # modules and the ranked hands, at least
        assert gc.get_threshold() == (5_000, *thresholds[1:])
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        ((), "--gc-freeze start (auto on asyncio), --gc-threshold 700"),
        (
            ("--gc-freeze", "full", "--gc-threshold", "5000"),
            "--gc-freeze full, --gc-threshold 5000",
        ),
    ],
)
async def test_the_line_after_the_listening_one_says_what_the_collector_does(
    flags: tuple[str, ...], said: str
) -> None:
    async with server_process("--loop", "asyncio", *flags) as (proc, _):
        assert proc.stderr is not None
        line = json.loads(await asyncio.wait_for(proc.stderr.readline(), 10))
    assert (line["level"], line["message"]) == ("INFO", f"garbage collector: {said}")


@pytest.mark.parametrize("level", ["WARNING", "ERROR"])
async def test_the_two_start_lines_are_written_at_every_log_level(level: str) -> None:
    # With --port 0 the listening line is the only place that tells the port.
    async with server_process("--log-level", level) as (proc, _):
        assert proc.stderr is not None
        line = json.loads(await asyncio.wait_for(proc.stderr.readline(), 10))
    assert (line["level"], line["logger"]) == ("INFO", START)
    assert line["message"].startswith("garbage collector: --gc-freeze ")


async def test_each_connection_opened_and_closed_is_an_info_line() -> None:
    async with server_process("--log-level", "info") as (proc, url):
        async with connect(url) as ws:
            await ws.send(json.dumps({"type": "hello", "version": PROTOCOL_VERSION, "name": "Ann"}))
            await ws.recv()
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 10) == 0
        assert proc.stderr is not None
        entries = [json.loads(line) for line in (await proc.stderr.read()).splitlines()]
    opened = [e for e in entries if e["message"].startswith("connection opened from 127.0.0.1:")]
    closed = [
        e
        for e in entries
        if re.match(r"connection from 127\.0\.0\.1:\d+ closed \(1000\)", e["message"])
    ]
    assert len(opened) == len(closed) == 1
    assert opened[0]["level"] == closed[0]["level"] == "INFO"
    assert opened[0]["peer"] == closed[0]["peer"]
    assert closed[0]["code"] == 1000


async def test_a_port_in_use_is_one_line_on_stderr_and_exit_status_2() -> None:
    async with server_process() as (_, url):
        port = url.rsplit(":", 1)[1]
        taken = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "qiuqiu.server",
            "--port",
            port,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(taken.communicate(), 20)
    assert taken.returncode == 2
    assert out == b""
    lines = [line for line in err.decode().splitlines() if '"level"' not in line]
    assert lines == [
        f"qiuqiu-server: port {port} on 127.0.0.1 is already in use: "
        "pick another with --port or QIUQIU_PORT (0 picks a free one)"
    ]


def failed_start(*args: str) -> tuple[int, list[str], str]:
    """``qiuqiu-server`` started with ``args`` and expected to stop at once: its exit
    status, what it said on stderr with log records aside, and the whole of stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "qiuqiu.server", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    said = [line for line in done.stderr.splitlines() if '"level"' not in line]
    return done.returncode, said, done.stderr


def test_a_folder_of_strategies_with_a_bad_file_is_one_line_and_exit_status_2(
    tmp_path: Path,
) -> None:
    (tmp_path / "mine.qqs").write_bytes(b"not gzip")
    status, said, _ = failed_start("--port", "0", "--strategies", str(tmp_path))
    assert status == 2
    assert len(said) == 1
    assert said[0].startswith(f"qiuqiu-server: --strategies: {tmp_path / 'mine.qqs'}: not a")


def test_redis_out_of_reach_at_start_is_one_line_without_the_urls_password() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    url = f"redis://:hunter2@127.0.0.1:{port}/0"
    status, said, everything = failed_start("--port", "0", "--redis-url", url)
    assert status == 1
    assert len(said) == 1
    assert said[0].startswith(f"qiuqiu-server: Redis at 127.0.0.1:{port}/0 cannot be reached,")
    assert "hunter2" not in everything  # nor in the log


def test_a_redis_database_redis_does_not_have_is_one_line_and_exit_status_2(
    redis_server: str,
) -> None:
    status, said, _ = failed_start("--port", "0", "--redis-url", f"{redis_server}/99")
    assert status == 2
    assert said == ["qiuqiu-server: --redis-url: Redis refused it: DB index is out of range"]


@pytest.mark.parametrize(("password", "said"), PASSWORDS_REFUSED)
async def test_a_redis_that_refuses_the_password_is_one_line_and_exit_status_2(
    tmp_path: Path, password: str, said: str
) -> None:
    # It was "Redis cannot be reached" with status 1, as if to try again later.
    async with redis_asking_a_password(tmp_path) as port:
        url = f"redis://{password}127.0.0.1:{port}/0"
        status, lines, everything = failed_start("--port", "0", "--redis-url", url)
    assert status == 2
    assert len(lines) == 1
    assert lines[0].startswith(f"qiuqiu-server: --redis-url: Redis refused it: {said}")
    assert "hunter2" not in everything


@pytest.mark.parametrize("requirepass", [(), ("--requirepass", "hunter2")], ids=["none", "set"])
async def test_a_password_redis_does_not_check_is_a_warning_at_start(
    tmp_path: Path, requirepass: tuple[str, ...]
) -> None:
    # Redis without a password takes any in redis-py's handshake: the server started
    # without a word, its operator believing Redis protected.
    port = free_port()
    redis = own_redis(port, tmp_path, *requirepass)
    before: list[str] = []
    try:
        await until(lambda: listening(port))
        url = f"redis://:hunter2@127.0.0.1:{port}/0"
        async with server_process("--redis-url", url, said=before):
            pass
    finally:
        redis.kill()
        redis.wait()
    warned = [json.loads(line)["message"] for line in before if '"WARNING"' in line]
    if requirepass:
        assert warned == []
    else:
        assert warned == [
            f"the password in --redis-url is not checked: Redis at 127.0.0.1:{port}/0 has "
            "none, so it takes any, and anyone who can reach it can use it without one; "
            "give Redis that password (requirepass) or take it out of the URL"
        ]
    assert "hunter2" not in "".join(before)


async def test_the_listening_line_says_where_accounts_and_tables_are_kept(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # An operator who forgot --redis-url had nothing to tell them so before a restart.
    store = await RedisStore.from_url(redis_url)
    in_memory, in_redis = ServerConfig(port=0), ServerConfig(port=0, redis_url=redis_url)
    for server in (QiuQiuServer(in_memory), QiuQiuServer(in_redis, store=store)):
        with caplog.at_level(logging.INFO, logger=START):
            await server.start()
        await server.stop()
    await store.close()
    said = [r.getMessage() for r in caplog.records if "listening on" in r.getMessage()]
    assert said[0].endswith("accounts and tables in memory, gone when the process stops)")
    address = redis_url.removeprefix("redis://")
    assert said[1].endswith(f"accounts and tables in Redis at {address})"), said[1]


class NotRedis(socketserver.BaseRequestHandler):
    """What an HTTP server or proxy on the port of --redis-url says to Redis's hello."""

    def handle(self) -> None:
        self.request.recv(1024)
        self.request.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def test_something_else_than_redis_at_the_url_is_one_line_and_exit_status_2() -> None:
    # It was a traceback ending in redis.exceptions.InvalidResponse.
    with socketserver.TCPServer(("127.0.0.1", 0), NotRedis) as other:
        threading.Thread(target=other.serve_forever, daemon=True).start()
        url = f"redis://127.0.0.1:{other.server_address[1]}/0"
        status, said, _ = failed_start("--port", "0", "--redis-url", url)
        other.shutdown()
    assert status == 2
    assert said == [
        "qiuqiu-server: --redis-url: what answers there is not Redis: "
        "Protocol Error: b'HTTP/1.1 400 Bad Request'"
    ]


class HangUp(socketserver.BaseRequestHandler):
    """What a program that closes the connection without a word says to Redis's hello."""

    def handle(self) -> None:
        self.request.recv(1024)


def test_a_port_that_closes_without_a_word_is_one_line_naming_it() -> None:
    # redis-py's own words, "Connection closed by server.", named no address.
    with socketserver.TCPServer(("127.0.0.1", 0), HangUp) as other:
        threading.Thread(target=other.serve_forever, daemon=True).start()
        port = other.server_address[1]
        status, said, _ = failed_start("--port", "0", "--redis-url", f"redis://127.0.0.1:{port}/0")
        other.shutdown()
    assert status == 1
    assert said == [
        f"qiuqiu-server: Redis at 127.0.0.1:{port}/0 cannot be reached, so nothing started: "
        "Connection closed by server."
    ]


async def test_a_redis_on_a_unix_socket_is_taken_with_its_database(tmp_path: Path) -> None:
    # Every unix:// URL was refused, its socket's path taken for a database number.
    socket_path = tmp_path / "redis.sock"
    port = free_port()
    redis = own_redis(port, tmp_path, "--unixsocket", str(socket_path))

    async def socket_listening() -> bool:
        # Redis listens on its port a moment before its socket, which is what is used.
        try:
            _, writer = await asyncio.open_unix_connection(socket_path)
        except OSError:
            return False
        writer.close()
        await writer.wait_closed()
        return True

    try:
        await until(socket_listening)
        url = parse_config(["--redis-url", f"unix://{socket_path}?db=3"]).redis_url
        assert url is not None
        store = await RedisStore.from_url(url)
        assert store.where == f"in Redis at {socket_path}/3"
        await store.close()
    finally:
        redis.kill()
        redis.wait()


async def test_the_url_logged_for_an_ipv6_host_has_the_address_in_brackets() -> None:
    server = QiuQiuServer(ServerConfig(host="::1", port=0))
    await server.start()
    try:
        assert server.url == f"ws://[::1]:{server.port}"  # it was ws://::1:PORT
        async with connect(server.url) as ws:
            await ws.send(json.dumps({"type": "hello", "version": PROTOCOL_VERSION, "name": "A"}))
            assert json.loads(await ws.recv())["type"] == "welcome"
    finally:
        await server.stop()


async def test_a_redis_that_evicts_any_key_when_full_is_one_line_and_exit_status_2(
    tmp_path: Path,
) -> None:
    # With allkeys-lru a full Redis deleted accounts, and their chips, to make room.
    port = free_port()
    redis = own_redis(port, tmp_path, "--maxmemory-policy", "allkeys-lru")
    try:
        await until(lambda: listening(port))
        url = f"redis://127.0.0.1:{port}/0"
        status, lines, _ = failed_start("--port", "0", "--redis-url", url)
    finally:
        redis.kill()
        redis.wait()
    assert status == 2
    assert lines == [
        "qiuqiu-server: --redis-url: Redis refused it: its maxmemory-policy allkeys-lru "
        "deletes accounts, and their chips, when Redis is full: set it to noeviction"
    ]


@pytest.mark.parametrize(
    ("host", "said"),
    [
        ("999.1.1.1", "host '999.1.1.1' is not a name this machine can resolve"),
        ("192.0.2.1", "host 192.0.2.1 is not an address of this machine"),  # TEST-NET-1
    ],
)
def test_a_host_that_cannot_be_listened_on_is_one_line_and_exit_status_2(
    host: str, said: str
) -> None:
    status, lines, _ = failed_start("--host", host, "--port", "0")
    assert status == 2
    assert lines == [f"qiuqiu-server: {said}: pick another with --host or QIUQIU_HOST"]


async def test_a_misspelt_variable_is_a_warning_naming_the_setting_it_looks_like() -> None:
    # It was ignored without a word: a server meant for Redis ran in memory.
    before: list[str] = []
    env = {"QIUQIU_REDIS_ULR": "redis://nowhere", "QIUQIU_CONFIG_DIR": "/tmp"}
    async with server_process(env=env, said=before):
        pass
    warned = [json.loads(line) for line in before if "QIUQIU_" in line]
    assert [(w["level"], w["message"]) for w in warned] == [
        (
            "WARNING",
            "QIUQIU_REDIS_ULR is not a setting of qiuqiu-server and is ignored;"
            " did you mean QIUQIU_REDIS_URL?",
        )
    ]


def test_a_variable_like_no_setting_is_named_without_a_guess() -> None:
    (line,) = unknown_variables({"QIUQIU_SCREENSHOTS": "/tmp/shots", "QIUQIU_PORT": "1"})
    assert line == "QIUQIU_SCREENSHOTS is not a setting of qiuqiu-server and is ignored"


def test_on_windows_the_command_says_where_to_run_the_server_instead(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its stop on SIGTERM is the event loop's signal handler, which Windows' loops lack:
    without the check, a traceback once it listened."""
    monkeypatch.setattr(sys, "platform", "win32")
    # A flag that does not parse: were the platform not checked first, status 2.
    assert command.main(["--port", "none"]) == 1
    said = capsys.readouterr().err
    assert "not on Windows" in said
    assert "docker compose up" in said


STUBBORN_TASK_BESIDE_THE_SERVER = """
import asyncio, sys
from qiuqiu.server import __main__ as command

real_serve = command.serve

async def stubborn():
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            pass  # the bug: a cancellation swallowed

async def serve_beside_a_stubborn_task(config, store):
    asyncio.get_running_loop().create_task(stubborn(), name="stubborn")
    await real_serve(config, store)

command.serve = serve_beside_a_stubborn_task
sys.exit(command.main(sys.argv[1:]))
"""


async def test_a_stopped_server_exits_though_a_task_will_not_end_and_names_it() -> None:
    """A task that swallows its cancellation (seen: the bus's, in redis-py, reading a
    frozen Redis) kept a server that had stopped on SIGTERM alive for ever: asyncio's
    runner waits for every task it cancels as the loop closes."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        STUBBORN_TASK_BESIDE_THE_SERVER,
        "--port",
        "0",
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        async with asyncio.timeout(20):
            # Said once SIGTERM stops the server: before, it would end the process.
            while b"garbage collector" not in await proc.stderr.readline():
                pass
        proc.send_signal(signal.SIGTERM)
        async with asyncio.timeout(60):
            said = (await proc.stderr.read()).decode()
            status = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert status == 0
    warning = next(json.loads(line) for line in said.splitlines() if "did not end" in line)
    assert warning["level"] == "WARNING"
    assert warning["message"].startswith("1 tasks did not end when cancelled; exiting without")
    assert len(warning["tasks"]) == 1
    assert warning["tasks"][0].startswith("stubborn in stubborn at <string>:10, waiting in sleep")
