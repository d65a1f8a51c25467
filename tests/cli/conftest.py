"""A real server on a free port for the client to play against, and the real ``qiuqiu``."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

from qiuqiu.cli.arena.seats import load_bot
from qiuqiu.server.config import ServerConfig

QIUQIU = Path(sys.executable).with_name("qiuqiu")
"""The ``qiuqiu`` command as ``uv sync`` installed it."""

CONFIG = ServerConfig(port=0, hand_pause=0.05, bot_delay=0.0, grace=5.0, rate=1e6, burst=10**6)
"""Quick, but with a pause between hands, so a client that asks to leave when a hand
ends is gone before the next one is dealt."""


@pytest.fixture
def config() -> ServerConfig:
    return CONFIG


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where ``qiuqiu`` keeps its tokens in this test (never the user's own folder)."""
    folder = tmp_path / "config"
    monkeypatch.setenv("QIUQIU_CONFIG_DIR", str(folder))
    return folder


def bot_module(spec: str) -> ModuleType:
    """The module the arena loaded a bot file into, to read what its bots recorded."""
    return sys.modules[type(load_bot(spec)).__module__]
