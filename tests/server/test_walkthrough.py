"""PROTOCOL.md's whole hand, frame by frame, is what the server does today.

The walkthrough is a recording: a client that creates a table, sits down with
its own client seed, checks when it can and calls otherwise, against the dealer
bot of a server whose table seeds come from ``random.Random(3)`` and whose table
is named ``t3de8cab1``. This test plays it again and compares every frame, but
for what differs from run to run (ids, tokens, deadlines). After changing a
message, rewrite the recording with::

    uv run python tests/server/test_walkthrough.py --write
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any
from unittest import mock

from websockets.asyncio.client import connect

from qiuqiu.protocol import PROTOCOL_VERSION
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore

PROTOCOL_MD = Path(__file__).resolve().parents[2] / "PROTOCOL.md"
SECTION = "## A whole hand, frame by frame"
SEED = 3
TABLE_ID = "t3de8cab1"
CLIENT_SEED = "8c0d5f2a61b7e94d"
VOLATILE = ("account_id", "token", "deadline_ms")
"""Fields that differ from run to run: compared by presence, not by value."""

Line = tuple[str, str]
"""``(">" or "<", frame)``: a frame the client sent or received."""


async def record() -> list[Line]:
    """Play the walkthrough's hand against a fresh server and return its frames."""
    config = ServerConfig(port=0, hand_pause=0, bot_delay=0)
    server = QiuQiuServer(config, store=MemoryStore(), rng=random.Random(SEED))
    # The table's name goes into every deck it deals: fixed, so the recording is too.
    patched = mock.patch("qiuqiu.server.lobby.new_table_id", return_value=TABLE_ID)
    patched.start()
    await server.start()
    lines: list[Line] = []
    try:
        async with connect(server.url) as ws:

            async def send(message: dict[str, Any]) -> None:
                frame = json.dumps(message, separators=(",", ":"))
                lines.append((">", frame))
                await ws.send(frame)

            await send({"type": "hello", "id": 1, "version": PROTOCOL_VERSION, "name": "Ann"})
            ids = 1
            async with asyncio.timeout(10):
                async for frame in ws:
                    assert isinstance(frame, str)
                    lines.append(("<", frame))
                    message = json.loads(frame)
                    if message["type"] == "hand_ended":
                        break
                    if message["type"] == "welcome":
                        ids += 1
                        await send({"type": "create_table", "id": ids})
                    if message["type"] == "table_created":
                        ids += 1
                        join = {"type": "join_table", "id": ids, "table_id": TABLE_ID}
                        await send({**join, "buy_in": 500, "client_seed": CLIENT_SEED})
                    if message["type"] == "turn_started" and "legal" in message:
                        ids += 1
                        action = "check" if message["legal"].get("check") else "call"
                        await send(
                            {
                                "type": action,
                                "table_id": message["table_id"],
                                "hand_id": message["hand_id"],
                                "id": ids,
                            }
                        )
    finally:
        await server.stop()
        patched.stop()
    return lines


def recorded_lines(text: str) -> list[str]:
    """The frame lines of the walkthrough section, in order."""
    section = text[text.index(SECTION) :]
    return [line for line in section.splitlines() if line[:2] in ("> ", "< ")]


def comparable(line: Line) -> tuple[str, Any]:
    direction, frame = line
    return direction, _blank(json.loads(frame))


def _blank(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "…" if k in VOLATILE else _blank(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_blank(v) for v in value]
    return value


async def test_the_protocol_walkthrough_is_what_the_server_does_today() -> None:
    documented = [(line[0], line[2:]) for line in recorded_lines(PROTOCOL_MD.read_text())]
    played = await record()
    assert [comparable(line) for line in played] == [comparable(line) for line in documented], (
        "PROTOCOL.md's walkthrough is stale: uv run python tests/server/test_walkthrough.py --write"
    )


def write(lines: list[Line]) -> None:
    """Put ``lines`` in place of the walkthrough's frames, block by block, keeping the prose."""
    text = PROTOCOL_MD.read_text()
    head, section = text[: text.index(SECTION)], text[text.index(SECTION) :]
    old = recorded_lines(text)
    if len(old) != len(lines):
        raise SystemExit(
            f"the hand now has {len(lines)} frames, not {len(old)}: "
            "split them into the section's blocks by hand"
        )
    fresh = iter(f"{direction} {frame}" for direction, frame in lines)
    section = re.sub(r"^[<>] .*$", lambda _: next(fresh), section, flags=re.MULTILINE)
    PROTOCOL_MD.write_text(head + section)
    print(f"rewrote {len(lines)} frames in {PROTOCOL_MD}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite PROTOCOL.md's walkthrough")
    if parser.parse_args().write:
        write(asyncio.run(record()))
    else:
        print("\n".join(" ".join(line) for line in asyncio.run(record())))
