"""``python -m tests.server.faulty_server``: ``qiuqiu-server`` on a :class:`FaultyStore`.

The same flags as ``qiuqiu-server`` (``--redis-url`` is required); the plan comes as
JSON in ``QIUQIU_TEST_FAULT_PLAN``, the journal goes to the file named by
``QIUQIU_TEST_FAULT_JOURNAL``, and ``QIUQIU_TEST_FAULT_OUTAGE`` names the file that
switches Redis off (see :mod:`tests.server.faulty_store`). The server itself is the real one,
:func:`qiuqiu.server.__main__.serve`, so the faults reach a real process.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

from qiuqiu.server import logs
from qiuqiu.server.__main__ import serve
from qiuqiu.server.config import ServerConfig, parse_config
from tests.server.faulty_store import (
    JOURNAL_VARIABLE,
    OUTAGE_VARIABLE,
    PLAN_VARIABLE,
    FaultPlan,
    FaultyStore,
)


async def run(
    config: ServerConfig, plan: FaultPlan, journal: Path | None, outage: Path | None
) -> None:
    assert config.redis_url is not None, "a faulty store wraps Redis: pass --redis-url"
    store = await FaultyStore.open(config.redis_url, plan, journal, outage)
    try:
        await serve(config, store)
    finally:
        await store.close()


def main(argv: Sequence[str] | None = None) -> int:
    config = parse_config(argv)
    logs.configure(config.log_level, config.log_format)
    plan = FaultPlan.from_json(os.environ.get(PLAN_VARIABLE, "[]"))
    journal, outage = (os.environ.get(v) for v in (JOURNAL_VARIABLE, OUTAGE_VARIABLE))
    asyncio.run(
        run(config, plan, Path(journal) if journal else None, Path(outage) if outage else None)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
