"""The servers' own account of their event loop's lag and the collector's pauses, per window.

``qiuqiu-server`` keeps both as histograms in ``/metrics``
(:mod:`qiuqiu.server.pauses`); :mod:`bench.load` scrapes every server just
before and just after its measured window, and the difference is the window's.
A histogram keeps counts per bucket, not each pause, so a quantile or the
largest pause is given as its bucket's upper bound ("at most"); the buckets have
a bound at exactly 20 ms, the target, so whether any pause went over it is exact.
The scrapes fall outside the CPU window, but the loop they hold up (a few
milliseconds) can show as lag at the window's first edge.
"""

from __future__ import annotations

import math
import urllib.request
from collections import defaultdict
from collections.abc import Sequence

from prometheus_client.parser import text_string_to_metric_families

Buckets = dict[float, float]
"""Cumulative count of observations at most each bound (``le``), +inf included."""

LAG = "qiuqiu_loop_lag_seconds"
GC = "qiuqiu_gc_pause_seconds"
GENERATIONS = ("0", "1", "2")


class Scrape:
    """One reading of every server's lag and collector histograms, summed over servers."""

    def __init__(self) -> None:
        self.buckets: dict[str, Buckets] = defaultdict(lambda: defaultdict(float))
        self.sums: dict[str, float] = defaultdict(float)
        self.counts: dict[str, float] = defaultdict(float)
        self.loops: set[str] = set()
        self.round_trips = 0.0
        """Requests the servers have sent Redis (``qiuqiu_store_round_trips_total``)."""

    @classmethod
    def of(cls, ports: Sequence[int]) -> Scrape:
        scrape = cls()
        for port in ports:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as page:
                scrape._read(page.read().decode())
        return scrape

    def _read(self, text: str) -> None:
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                if s.name == "qiuqiu_event_loop" and s.value == 1:
                    self.loops.add(s.labels["loop"])
                if s.name == "qiuqiu_store_round_trips_total":
                    self.round_trips += s.value
                if not s.name.startswith((LAG, GC)):
                    continue
                key = LAG if s.name.startswith(LAG) else f"gc{s.labels['generation']}"
                if s.name.endswith("_bucket"):
                    self.buckets[key][float(s.labels["le"])] += s.value
                elif s.name.endswith("_sum"):
                    self.sums[key] += s.value
                elif s.name.endswith("_count"):
                    self.counts[key] += s.value


def _bound(buckets: Buckets, share: float) -> float:
    """Seconds: the least bound under which ``share`` of the observations fall."""
    total = buckets.get(math.inf, 0.0)
    if total <= 0:
        return 0.0
    for bound in sorted(buckets):
        if buckets[bound] >= share * total:
            return bound
    return math.inf


def pauses_in(before: Scrape, after: Scrape) -> dict[str, float]:
    """The window's figures, in milliseconds: lag p99 and max (bucket bounds), the
    collector's longest pause (bound) and total time and collections per generation."""

    def delta(key: str) -> Buckets:
        was = before.buckets.get(key, {})
        return {b: n - was.get(b, 0.0) for b, n in after.buckets.get(key, {}).items()}

    lag = delta(LAG)
    figures = {
        "loop_lag_p99_ms": 1e3 * _bound(lag, 0.99),
        "loop_lag_max_ms": 1e3 * _bound(lag, 1.0),
        "loop_lag_over_20ms": lag.get(math.inf, 0.0) - lag.get(0.02, 0.0),
    }
    longest = 0.0
    over = 0.0
    for g in GENERATIONS:
        key = f"gc{g}"
        pauses = delta(key)
        longest = max(longest, _bound(pauses, 1.0))
        over += pauses.get(math.inf, 0.0) - pauses.get(0.02, 0.0)
        figures[f"gc{g}_count"] = after.counts[key] - before.counts[key]
        figures[f"gc{g}_total_ms"] = 1e3 * (after.sums[key] - before.sums[key])
    figures["gc_max_ms"] = 1e3 * longest
    figures["gc_over_20ms"] = over
    return figures
