"""An outage of the store in the log: one line as it starts, one as it ends."""

from __future__ import annotations

import logging

import pytest

from qiuqiu.server.health import StoreHealth


def test_the_end_of_an_outage_gives_its_failed_calls_as_a_field_of_the_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # An operator counts them across processes from the JSON fields, not the message.
    health = StoreHealth()
    with caplog.at_level(logging.WARNING, logger="qiuqiu.server.health"):
        for _ in range(3):
            health.failed(TimeoutError("Timeout reading from redis:6379"))
        health.answered()
    began, ended = caplog.records
    assert began.getMessage() == "the store is unreachable: Timeout reading from redis:6379"
    assert getattr(ended, "failed_calls", None) == 3
    assert hasattr(ended, "outage_seconds")
