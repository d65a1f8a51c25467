"""What the server counts for its operator, in Prometheus' text format at ``/metrics``.

Each server has its own registry rather than the ``prometheus_client`` global
one, so that several servers in one process (the tests run many) count apart.
Gauges that describe the present (connections, tables, tasks) are read when
scraped, from the objects themselves, so they cannot drift from the truth;
counters and the latency histogram are fed where the thing happens.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from qiuqiu.protocol import client as cmd

# prometheus-client adds a *_created series beside each counter and histogram (and
# each of their labels): the time it was made, which here is the process's start or
# a label's first use. Prometheus needs none of them to see a counter reset, and
# process_start_time_seconds already says when the process started. The setting is
# the library's, for the whole process, where the server's metrics are the only ones.
disable_created_metrics()  # type: ignore[no-untyped-call]

ACTION_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
"""Seconds: an action is a few hundred microseconds of work, a slow store tens of ms."""


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        self.connections = Gauge(
            "qiuqiu_connections", "Open WebSocket connections.", registry=self.registry
        )
        self.tables = Gauge("qiuqiu_tables", "Tables this process hosts.", registry=self.registry)
        self.tasks = Gauge(
            "qiuqiu_tasks", "asyncio tasks alive in this process.", registry=self.registry
        )
        self.tasks.set_function(lambda: len(asyncio.all_tasks()))
        self.hands = Counter(
            "qiuqiu_hands", "Hands played to their end on this process.", registry=self.registry
        )
        self.store_round_trips = RoundTrips(self.registry)
        self.errors = Counter(
            "qiuqiu_errors",
            "Errors sent to clients, by code (PROTOCOL.md lists them).",
            ["code"],
            registry=self.registry,
        )
        self.closes = Counter(
            "qiuqiu_connections_closed",
            "Connections ended, by the first close code (1000: closed normally, 1001: going "
            "away, a browser page closed or this server stopped with no other beside it, "
            "1008: flood, not reading, no hello in time or too many from one address, "
            "1009: frame too big, 1011: no answer to pings, "
            "1012: a table moved away or this server stopped beside others, 4000: taken over, "
            "1006: dropped without a close frame; other: a code of the client's own, 3000 to "
            "4999).",
            ["code"],
            registry=self.registry,
        )
        self.action_seconds = Histogram(
            "qiuqiu_action_seconds",
            "From an action's frame arriving to its events being sent to every viewer "
            "(after a hand's last action, once the hand's end is written).",
            buckets=ACTION_BUCKETS,
            registry=self.registry,
        )

    def watch(self, connections: Callable[[], int], tables: Callable[[], int]) -> None:
        """Read the connection and table gauges from the server's own collections."""
        self.connections.set_function(connections)
        self.tables.set_function(tables)

    def served(self, message: cmd.TableMessage, arrived: float) -> None:
        """A table has done what ``message`` (arrived at ``arrived``) asked and sent what
        came of it: time it if it was an action. On the table's host, whoever the
        client's process is."""
        if isinstance(message, cmd.TableAction):
            self.action_seconds.observe(time.perf_counter() - arrived)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class RoundTrips(Collector):
    """The store's own count of its round trips, read when scraped: a counter, which
    ``prometheus_client``'s ``Counter`` cannot be, as it is fed, never read."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.count: Callable[[], int] = lambda: 0
        registry.register(self)

    def collect(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily(
            "qiuqiu_store_round_trips",
            "Requests this process has sent the shared store (Redis) since it started, "
            "each one round trip: a command, a script run or a pipeline; 0 in memory.",
            value=self.count(),
        )
