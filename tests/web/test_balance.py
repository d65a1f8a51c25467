"""A balance past the 10^12 chips one table holds, as the page shows it (PROTOCOL.md,
"Conventions"): read from the welcome as a JavaScript number, every chip of it exact."""

from __future__ import annotations

from dataclasses import replace

import pytest
from playwright.async_api import expect

from qiuqiu.protocol import MAX_BALANCE, MAX_CHIPS
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from tests.web.conftest import PHONE
from tests.web.test_browser import OpenPlayer, frames_of, no_sideways_scroll, sign_in

pytestmark = pytest.mark.asyncio(loop_scope="session")

RICH = MAX_BALANCE - MAX_CHIPS
"""9,006,199,254,740,991: odd, so a number rounded to a double's even neighbours shows."""


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
async def test_a_balance_near_the_most_one_holds_is_shown_to_the_chip(
    server: QiuQiuServer, open_player: OpenPlayer, phone: bool
) -> None:
    ann = await open_player(PHONE, phone=True) if phone else await open_player()
    page = ann.page
    await sign_in(page, "Ann")
    account_id = frames_of(ann, "welcome")[0]["account_id"]
    store = server.store
    assert isinstance(store, MemoryStore)
    store._accounts[account_id] = replace(store._accounts[account_id], balance=RICH)

    await page.reload()

    await expect(page.locator(".balance-amount")).to_have_text(f"{RICH:,}")
    assert frames_of(ann, "welcome")[-1]["balance"] == RICH
    assert await page.evaluate("window.qiuqiu.balance") == RICH
    await no_sideways_scroll(page)
