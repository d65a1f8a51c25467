"""Smoke test of the soak: a tiny run of it goes through every check, and they pass.

The real soak runs for minutes with hundreds of tables (BENCHMARKS.md); this
one runs six table places for a few seconds, with disconnects far more often,
so that every part of it (the server process, Redis, the SDK bots, aborts,
absences, the samples and the final audit) is exercised by the default suite.
It asserts no time or speed.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from bench import soak


# A real run of the benchmark, a quarter of a minute: with the long suites.
@pytest.mark.long
def test_a_tiny_soak_runs_every_check_and_passes(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--tables", "6", "--minutes", "0.15", "--seed", "7", "--json"]
    # No pause between hands, and disconnects every few seconds per player, so a few
    # seconds see dozens of hands and several drops and absences.
    argv += ["--hand-pause", "0.05", "--abort-every", "4", "--away-every", "8"]
    argv += ["--stuck-window", "6"]

    status = soak.main(argv)

    captured = capsys.readouterr()
    report = json.loads(captured.out)
    checks = report["checks"]
    failed = {name: c["detail"] for name, c in checks.items() if c["ok"] is False}
    assert status == 0, failed
    assert report["ok"]
    assert set(checks) == {"memory", "tasks", "stuck tables", "chips", "clients", "exit"}
    # The server has /metrics, so the task count is measured and nothing is left unjudged
    # but, in a run this short, maybe the stuck-table windows.
    assert report["metrics_endpoint"]
    for name in ("memory", "tasks", "chips", "clients", "exit"):
        assert checks[name]["ok"] is True, (name, checks[name]["detail"])
    assert report["hands"] > 0
    assert report["accounts"] >= 6
    assert report["disconnects"]["aborted"] + report["disconnects"]["away_and_back"] > 0
    assert report["tasks"]["idle_end"] <= report["tasks"]["idle_start"]


async def test_stopping_a_bot_ends_its_play_and_lets_the_waiters_own_cancellation_through() -> None:
    play = asyncio.create_task(asyncio.Event().wait())
    await soak.stop_playing(play)
    assert play.cancelled()

    stubborn_started = asyncio.Event()

    async def stubborn() -> None:
        # A bot that takes its time to stop: the slot that waits for it is cancelled
        # meanwhile, and must not carry on as if only the bot had been.
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            stubborn_started.set()
            await asyncio.sleep(0.05)
            raise

    slow = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    waiter = asyncio.create_task(soak.stop_playing(slow))
    await stubborn_started.wait()
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert slow.cancelled()
