"""``--loop``: the server plays on each event loop installed here, and says which it runs."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import sys

import pytest
from websockets.asyncio.client import connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server import loops
from qiuqiu.server.config import parse_config

LISTENING = re.compile(rb"listening on (ws://\S+) \(event loop: (\w+);")

INSTALLED = [
    "asyncio",
    pytest.param(
        "uvloop",
        marks=pytest.mark.skipif(not loops.uvloop_installed(), reason="uvloop is not installed"),
    ),
]


async def play_one_hand(url: str) -> dict[str, object]:
    """Sit against the dealer bot, check or call every turn, and return the hand_ended."""
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "hello", "version": PROTOCOL_VERSION, "name": "Ann"}))
        await ws.send(json.dumps({"type": "create_table", "buy_in": 500}))
        async with asyncio.timeout(20):
            async for frame in ws:
                message = json.loads(frame)
                if message["type"] == "turn_started" and "legal" in message:
                    action = "check" if message["legal"]["check"] else "call"
                    move = {"table_id": message["table_id"], "hand_id": message["hand_id"]}
                    await ws.send(json.dumps({"type": action, **move}))
                if message["type"] == "hand_ended":
                    ended: dict[str, object] = message
                    return ended
    raise AssertionError("the connection ended before the hand did")


@pytest.mark.parametrize("choice", ["auto", *INSTALLED])
async def test_the_server_plays_a_hand_on_each_installed_loop_and_names_it(
    choice: loops.LoopChoice,
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "qiuqiu.server", "--port", "0", "--loop", choice),
        *("--bot-delay", "0", "--hand-pause", "0", "--log-format", "text"),
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        async with asyncio.timeout(20):
            while not (found := LISTENING.search(line := await proc.stderr.readline())):
                assert line, "the server exited before it listened"
        # Read from the running loop itself, not from the setting.
        assert found.group(2).decode() == loops.resolve(choice)
        ended = await play_one_hand(found.group(1).decode())
        assert ended["hand_id"] == 1
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 10) == 0
        assert b"Traceback" not in await proc.stderr.read()
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


def test_uvloop_asked_for_but_not_installed_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # None in sys.modules makes `import uvloop` raise ImportError, as when it is absent.
    monkeypatch.setitem(sys.modules, "uvloop", None)
    with pytest.raises(SystemExit) as exit:
        parse_config(["--loop", "uvloop"])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert "--loop 'uvloop'" in err
    assert "uvloop is not installed" in err
    assert "qiuqiu-server[uvloop]" in err
    assert parse_config(["--loop", "auto"]).loop == "auto"
    assert loops.resolve("auto") == "asyncio"


async def test_a_task_that_will_not_end_when_cancelled_is_named_not_waited_for() -> None:
    """asyncio's runner waits for every task it cancels as the loop closes: one that
    swallows its cancellation kept a stopped server's process alive for ever."""
    let_go = asyncio.Event()

    async def stubborn() -> None:
        while not let_go.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(3600)

    async def polite() -> None:
        await asyncio.sleep(3600)

    kept = asyncio.create_task(stubborn(), name="stubborn")
    ended = asyncio.create_task(polite(), name="polite")
    await asyncio.sleep(0)
    try:
        running = await loops.end_other_tasks(0.2)
        assert [name.split(" ")[0] for name in running] == ["stubborn"]
        assert f"in stubborn at {__file__}:" in running[0]  # where it waits, to find it by
        assert ended.cancelled()
    finally:
        let_go.set()
        kept.cancel()
        await asyncio.wait([kept])
