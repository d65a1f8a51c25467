"""The browser client in a real headless Chromium, against a real server on a free port.

The page is loaded from the server's own ``/`` and speaks only the public
protocol. Chromium is Debian's ``chromium`` package driven by Playwright (never
``playwright install``: its downloads are not used here). Without it the tests
are skipped, unless ``CI`` is set, where a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

try:
    from playwright.async_api import (
        Browser,
        BrowserContext,
        Page,
        ViewportSize,
        WebSocket,
        async_playwright,
    )
except ModuleNotFoundError:
    # tests/conftest.py leaves this folder out of a whole run without the browser group,
    # and says so in the header; named on the command line (`pytest tests/web`), this
    # file is loaded all the same, and its tests are left out here.
    if os.environ.get("CI"):
        raise
    collect_ignore_glob = ["test_*.py"]

from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # Without these Chromium phones home, and this machine's closed network refuses it.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(
    os.environ.get("QIUQIU_SCREENSHOTS") or Path(tempfile.gettempdir()) / "qiuqiu-screenshots"
)
"""Where the tests' screenshots go: a temporary folder, so a test run leaves the checkout
as it was; ``QIUQIU_SCREENSHOTS=docs/screenshots`` rewrites the documentation's."""
WAIT_MS = 10_000
"""How long a test waits for something to appear before it fails (not a timing assertion)."""

DESKTOP: ViewportSize = {"width": 1280, "height": 800}
LAPTOP: ViewportSize = {"width": 1366, "height": 768}
PHONE: ViewportSize = {"width": 390, "height": 844}
SCREENS = {"desktop": DESKTOP, "laptop": LAPTOP, "phone": PHONE}
"""The sizes every layout is checked at."""


QUICK = ServerConfig(port=0, hand_pause=1.0, bot_delay=0.05, grace=30.0)
"""For tests that play hand after hand and never look at a showdown on the felt: a
second between hands."""


SHOWN = ServerConfig(port=0, hand_pause=5.0, bot_delay=0.05, grace=30.0)
"""The tests' server unless they say otherwise: the pause after a hand keeps its showdown
on the felt while the test looks at it; the grace period outlasts any reconnect a test
makes."""


@asynccontextmanager
async def shows_why_on_timeout(waited_for: str, *pages: Page) -> AsyncIterator[None]:
    """Turn a wait that ran out into a failure that shows each page's result box and its
    log's last lines: a hand that never verified says why (a failed check, a hand called
    off, a seat away)."""
    try:
        yield
    except TimeoutError:
        shown = []
        for page in pages:
            # Read as they are, without waiting: the page may be in the lobby by now.
            result = await page.locator(".result").all_inner_texts()
            log = await page.locator(".log li").all_inner_texts()
            toasts = await page.locator("#toast .toast-item").all_inner_texts()
            shown.append(
                f"at {page.url}, the result box: {result!r}; the log's end: {log[-8:]!r};"
                f" toasts: {toasts!r}"
            )
        raise AssertionError(f"{waited_for}; " + "; ".join(shown)) from None


@pytest.fixture
def config() -> ServerConfig:
    return SHOWN


def cut_every_connection(server: QiuQiuServer) -> None:
    """Every connection to ``server`` dropped with no closing handshake, as a network or
    a killed server drops it."""
    assert server._server is not None
    for connection in list(server._server.connections):
        connection.transport.abort()


@asynccontextmanager
async def restarted_on(port: int, **settings: Any) -> AsyncIterator[QiuQiuServer]:
    """A server in memory on ``port`` that knows nothing, as one restarted without Redis
    (its predecessor there stopped first): :data:`SHOWN`, but for ``settings``."""
    config = SHOWN.model_copy(update={"port": port, **settings})
    again = QiuQiuServer(config, store=MemoryStore(), rng=random.Random(1))
    await again.start()
    try:
        yield again
    finally:
        await again.stop()


# One browser serves every test here (launching Chromium is most of a test's cost),
# so these tests, and the server each of them starts, run in the session's event loop.


@pytest_asyncio.fixture(loop_scope="session")
async def server(config: ServerConfig) -> AsyncIterator[QiuQiuServer]:
    """As tests/conftest.py's, in the session's loop: a server on a free port, in memory,
    its deals the same every run."""
    server = QiuQiuServer(config, store=MemoryStore(), rng=random.Random(2026))
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def page_url(server: QiuQiuServer) -> str:
    """The page, served by the QiuQiu server itself at ``/``."""
    return f"http://{server.config.host}:{server.port}/"


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser() -> AsyncIterator[Browser]:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium package")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium); the browser tests need it")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


@dataclass
class Player:
    """One browser context (its own localStorage, so its own account) with its page,
    the frames its socket received and sent, and any script error the page raised."""

    context: BrowserContext
    page: Page
    frames: list[dict[str, Any]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    sockets: list[WebSocket] = field(default_factory=list)


@pytest_asyncio.fixture(loop_scope="session")
async def open_player(browser: Browser, page_url: str) -> AsyncIterator[Any]:
    players: list[Player] = []

    async def make(
        viewport: ViewportSize = DESKTOP, *, phone: bool = False, reduced_motion: bool = False
    ) -> Player:
        context = await browser.new_context(
            viewport=viewport,
            is_mobile=phone,
            has_touch=phone,
            device_scale_factor=2 if phone else 1,
            reduced_motion="reduce" if reduced_motion else "no-preference",
        )
        context.set_default_timeout(WAIT_MS)
        page = await context.new_page()
        player = Player(context, page)
        page.on("pageerror", lambda error: player.errors.append(str(error)))
        page.on("websocket", lambda ws: _record(player, ws))
        await page.goto(page_url)
        players.append(player)
        return player

    yield make
    for player in players:
        await player.context.close()
    errors = [error for player in players for error in player.errors]
    assert not errors, f"the page raised: {errors}"


def _record(player: Player, ws: WebSocket) -> None:
    player.sockets.append(ws)

    def keep(payload: str | bytes) -> None:
        if isinstance(payload, str):
            player.frames.append(json.loads(payload))

    ws.on("framereceived", keep)

    def sent(payload: str | bytes) -> None:
        if isinstance(payload, str):
            player.sent.append(json.loads(payload))

    ws.on("framesent", sent)


def screenshot(page_name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"{page_name}.png"
