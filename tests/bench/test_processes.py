"""The benchmarks' processes: where they run."""

from __future__ import annotations

import os
import sys

import pytest

from bench.processes import Service, free_port


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_services_run_on_the_cores_a_pinned_benchmark_gives_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = min(os.sched_getaffinity(0))
    monkeypatch.setattr(Service, "cpus", frozenset({first}))
    service = Service([sys.executable, "-c", "import time; time.sleep(60)"], free_port())
    try:
        assert os.sched_getaffinity(service.pid) == {first}
    finally:
        service.kill()


def test_services_run_where_the_benchmark_does_unless_pinned() -> None:
    service = Service([sys.executable, "-c", "import time; time.sleep(60)"], free_port())
    try:
        assert os.sched_getaffinity(service.pid) == os.sched_getaffinity(0)
    finally:
        service.kill()
