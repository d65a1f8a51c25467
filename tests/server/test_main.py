"""``qiuqiu-server`` as an operator runs it: a real process, flags, env and SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig, parse_config

LISTENING = re.compile(rb"listening on (ws://\S+)")


def test_flags_beat_environment_variables_which_beat_defaults() -> None:
    assert parse_config([], {}) == ServerConfig()
    from_env = parse_config([], {"QIUQIU_PORT": "9100", "QIUQIU_HOST": "0.0.0.0"})
    assert (from_env.host, from_env.port) == ("0.0.0.0", 9100)
    assert parse_config(["--port", "9200"], {"QIUQIU_PORT": "9100"}).port == 9200


def test_a_bad_environment_variable_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_config([], {"QIUQIU_PORT": "eighty"})
    assert "QIUQIU_PORT='eighty' is not a valid int" in capsys.readouterr().err


@pytest.fixture
async def process() -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "qiuqiu.server",
        "--port",
        "0",
        "--bot-delay",
        "30",
        env={**os.environ, "QIUQIU_HAND_PAUSE": "0"},
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    async with asyncio.timeout(20):
        while not (found := LISTENING.search(await proc.stderr.readline())):
            pass
    yield proc, found.group(1).decode()
    if proc.returncode is None:
        proc.kill()
    await proc.wait()


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


def test_the_qiuqiu_server_command_is_installed_and_documents_its_flags() -> None:
    command = Path(sys.executable).parent / "qiuqiu-server"
    out = subprocess.run([command, "--help"], check=True, capture_output=True, text=True).stdout
    for flag in ("--host", "--port", "--starting-balance", "--grace", "QIUQIU_PORT"):
        assert flag in out
