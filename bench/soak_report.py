"""The soak's verdicts: what :mod:`bench.soak` samples, the checks it judges by, and the report.

The criteria of the checks are stated in :mod:`bench.soak`'s docstring and, each
with what it measured, in the report itself; the samples and table lives are the
evidence they are judged on.
"""

from __future__ import annotations

import os
import platform
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.soak import Soak

STUCK_WINDOW = 15.0
"""A table with players seated for this long must have dealt a hand: room for
the pause, an absent player's two turns played by the timer, and a slow moment."""
STUCK_SLACK = 2.0
"""A table's window is judged only if its players were still seated this long
after it: a table whose bot went broke is noticed within one poll."""
MEMORY_TOLERANCE = 0.03
MEMORY_SLACK = 4 * 2**20
"""Bytes of RSS growth from the middle to the last third that always pass: the
allocator's arenas move by a few MiB either way under a steady load."""

# -- what is measured ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    t: float
    """Seconds since the first bot came."""
    phase: str
    """``idle`` before the bots, ``load``, ``drain`` while they leave, ``settled`` after."""
    rss: int
    fds: int
    chips: int
    table_hands: dict[str, int]
    tasks: int | None = None
    connections: int | None = None
    tables: int | None = None
    hands: int | None = None
    scrape_seconds: float = 0.0
    """How long ``/metrics`` took to answer: a stalled event loop shows here first."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "t": round(self.t, 2),
            "scrape_seconds": round(self.scrape_seconds, 3),
            "phase": self.phase,
            "rss_mib": round(self.rss / 2**20, 2),
            "fds": self.fds,
            "chips": self.chips,
            "tables": self.tables if self.tables is not None else len(self.table_hands),
            "tasks": self.tasks,
            "connections": self.connections,
            "hands": self.hands,
        }


@dataclass(slots=True)
class TableLife:
    """One table from the moment its players were all seated until they began to leave."""

    table_id: str
    seats: int
    seated_at: float
    leaving_at: float | None = None
    last_hand: int = 0
    ended_by: str = ""
    events: list[tuple[float, str]] = field(default_factory=list)
    """What the soak did to the table's players, and when: the story of a stuck window."""


@dataclass
class Counts:
    tables_opened: int = 0
    accounts: int = 0
    aborted: int = 0
    away: int = 0
    drops: int = 0
    comebacks: int = 0
    gave_up: int = 0
    went_broke: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Verdict:
    name: str
    ok: bool | None
    """``None``: could not be measured (the server has no ``/metrics``)."""
    detail: str


# -- the checks ----------------------------------------------------------------


def median_rss(samples: Sequence[Sample]) -> float:
    return statistics.median(s.rss for s in samples) if samples else float("nan")


def thirds(samples: Sequence[Sample], start: float, end: float) -> list[list[Sample]]:
    span = (end - start) / 3
    return [
        [s for s in samples if start + k * span <= s.t < start + (k + 1) * span] for k in range(3)
    ]


def slope_mib_per_minute(samples: Sequence[Sample]) -> float | None:
    if len(samples) < 2:
        return None
    ts = [s.t for s in samples]
    return statistics.linear_regression(ts, [s.rss / 2**20 for s in samples]).slope * 60


def stuck_windows(
    samples: Sequence[Sample], lives: dict[str, TableLife], window: float
) -> tuple[int, list[str]]:
    """Windows of ``window`` seconds or more (between two load samples) over which a
    table's players were seated throughout and its hand id did not move."""
    load = [s for s in samples if s.phase in ("load", "drain")]
    judged, stuck = 0, []
    first = 0
    for later in load:
        while first + 1 < len(load) and load[first + 1].t <= later.t - window:
            first += 1
        earlier = load[first]
        if later.t - earlier.t < window:
            continue
        for table_id, hand in later.table_hands.items():
            life = lives.get(table_id)
            if life is None or table_id not in earlier.table_hands or life.seated_at > earlier.t:
                continue
            if life.leaving_at is not None and life.leaving_at < later.t + STUCK_SLACK:
                continue
            judged += 1
            if hand <= earlier.table_hands[table_id]:
                story = ", ".join(
                    f"{what} at {t:.1f}s"
                    for t, what in life.events
                    if earlier.t - STUCK_WINDOW <= t <= later.t
                )
                stuck.append(
                    f"{table_id}: hand {hand} from t={earlier.t:.1f}s to t={later.t:.1f}s"
                    f" ({story or 'no disconnects'})"
                )
    return judged, stuck


def labelled(metrics: dict[str, float], name: str, label: str) -> dict[str, int]:
    """One labelled counter from a scrape, as ``{label value: count}``."""
    prefix = f"{name}{{{label}="
    return {k[len(prefix) : -1]: int(v) for k, v in metrics.items() if k.startswith(prefix)}


@dataclass
class Report:
    figures: dict[str, Any]
    checks: list[Verdict]

    @property
    def ok(self) -> bool:
        return all(c.ok is not False for c in self.checks)


def report(
    soak: Soak,
    *,
    command: str,
    exit_code: int,
    log_problems: list[str],
    final_chips: int,
    tables_left: int,
    accounts_checked: int,
    accounts_wrong: list[str],
    server_cpu: float,
    client_cpu: float,
    client_tasks: tuple[int, int],
    load_average: tuple[float, float],
) -> Report:
    samples = soak.samples
    idle = [s for s in samples if s.phase == "idle"]
    load = [s for s in samples if s.phase == "load"]
    settled = [s for s in samples if s.phase == "settled"]
    first, middle, last = thirds(load, 0.0, soak.load_seconds)
    m1, m2, m3 = median_rss(first), median_rss(middle), median_rss(last)
    allowed = max(MEMORY_TOLERANCE * m2, MEMORY_SLACK)
    mid = min(load, key=lambda s: abs(s.t - soak.load_seconds / 2)) if load else None
    half = [s for s in load if s.t >= soak.load_seconds / 2]
    checks: list[Verdict] = []

    mib = 2**20
    checks.append(
        Verdict(
            "memory",
            m3 - m2 <= allowed if middle and last else None,
            f"median RSS {m1 / mib:.1f} / {m2 / mib:.1f} / {m3 / mib:.1f} MiB over the three "
            f"thirds of the load; the last third may be at most {allowed / mib:.1f} MiB "
            f"({MEMORY_TOLERANCE:.0%}, at least {MEMORY_SLACK / mib:.0f} MiB) above the middle",
        )
    )

    idle_tasks = idle[-1].tasks if idle else None
    end_tasks = settled[-1].tasks if settled else None
    if idle_tasks is None or end_tasks is None:
        checks.append(
            Verdict("tasks", None, "not measured: the server has no /metrics with qiuqiu_tasks")
        )
    else:
        peak = max(s.tasks or 0 for s in samples)
        checks.append(
            Verdict(
                "tasks",
                end_tasks <= idle_tasks,
                f"{idle_tasks} asyncio tasks idle before the bots, {peak} at the peak, "
                f"{end_tasks} once every bot left and every table closed",
            )
        )

    judged, stuck = stuck_windows(samples, soak.lives, soak.stuck_window)
    end_tables = len(settled[-1].table_hands) if settled else -1
    checks.append(
        Verdict(
            "stuck tables",
            False if stuck or end_tables != 0 else (True if judged else None),
            f"{judged} windows of {soak.stuck_window:g} s judged (a table with its players "
            f"seated throughout), {len(stuck)} without a hand"
            + (f": {'; '.join(stuck[:5])}" if stuck else "")
            + f"; {end_tables} tables left open once the bots had gone",
        )
    )

    off = [s for s in samples if s.chips != 0]
    checks.append(
        Verdict(
            "chips",
            not off and final_chips == 0 and tables_left == 0 and not accounts_wrong,
            f"{len(samples)} samples, {len(off)} not summing to zero"
            + (f" (first: {off[0].chips} at t={off[0].t:.0f}s)" if off else "")
            + f"; after SIGTERM the sum is {final_chips} with {tables_left} tables left; "
            f"{accounts_checked} accounts checked against their hand records, "
            f"{len(accounts_wrong)} wrong"
            + (f": {'; '.join(accounts_wrong[:5])}" if accounts_wrong else ""),
        )
    )

    c = soak.counts
    checks.append(
        Verdict(
            "clients",
            c.gave_up == 0 and not c.errors,
            f"{c.drops} drops noticed by the SDK, {c.comebacks} comebacks, {c.gave_up} gave up; "
            f"{len(c.errors)} requests refused or failed"
            + (f": {'; '.join(c.errors[:5])}" if c.errors else ""),
        )
    )

    checks.append(
        Verdict(
            "exit",
            exit_code == 0 and not log_problems,
            f"the server exited {exit_code} on SIGTERM; {len(log_problems)} error lines in its log"
            + (f": {log_problems[0][:300]}" if log_problems else ""),
        )
    )

    hands = sum(life.last_hand for life in soak.lives.values())
    metric_hands = [s.hands for s in samples if s.hands is not None]
    figures: dict[str, Any] = {
        "command": command,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "system": platform.platform(terse=True),
            # Other work on the machine takes CPU from the server and the bots.
            "load_average_1min": {"start": load_average[0], "end": load_average[1]},
        },
        "seed": soak.seed,
        "tables": soak.tables,
        "hand_pause": soak.server.hand_pause,
        "load_seconds": round(soak.load_seconds, 1),
        "tables_opened": c.tables_opened,
        "accounts": c.accounts,
        "hands": hands,
        "hands_metric": metric_hands[-1] if metric_hands else None,
        "hands_per_second": round(hands / max(soak.drained_at, 1e-9), 1),
        "disconnects": {
            "aborted": c.aborted,
            "away_and_back": c.away,
            "drops_seen": c.drops,
            "comebacks": c.comebacks,
            "gave_up": c.gave_up,
        },
        "went_broke": c.went_broke,
        "errors_sent": labelled(soak.last_metrics, "qiuqiu_errors_total", "code"),
        "closes": labelled(soak.last_metrics, "qiuqiu_connections_closed_total", "code"),
        "rss_mib": {
            "idle_start": round(idle[-1].rss / mib, 1) if idle else None,
            "middle": round(mid.rss / mib, 1) if mid else None,
            "end_of_load": round(load[-1].rss / mib, 1) if load else None,
            "idle_end": round(settled[-1].rss / mib, 1) if settled else None,
            "median_thirds": [round(m / mib, 1) for m in (m1, m2, m3)],
            "peak": round(max(s.rss for s in samples) / mib, 1),
            "slope_second_half_mib_per_min": (
                round(slope, 2) if (slope := slope_mib_per_minute(half)) is not None else None
            ),
        },
        "tasks": {
            "idle_start": idle_tasks,
            "peak": max((s.tasks for s in samples if s.tasks is not None), default=None),
            "idle_end": end_tasks,
        },
        "connections_end": settled[-1].connections if settled else None,
        "connections_peak": max(
            (s.connections for s in samples if s.connections is not None), default=None
        ),
        "tables_peak": max(len(s.table_hands) for s in samples),
        "scrape_seconds": {
            "median": round(statistics.median(s.scrape_seconds for s in samples), 3),
            "max": round(max(s.scrape_seconds for s in samples), 3),
        },
        "fds": {
            "idle_start": idle[-1].fds if idle else None,
            "peak": max(s.fds for s in samples),
            "idle_end": settled[-1].fds if settled else None,
        },
        "cpu_percent": {
            "server": round(100 * server_cpu / max(soak.drained_at, 1e-9), 1),
            "soak_clients": round(100 * client_cpu / max(soak.drained_at, 1e-9), 1),
        },
        "client_tasks": {"before": client_tasks[0], "after": client_tasks[1]},
        "metrics_endpoint": any(s.tasks is not None for s in samples),
        "samples": len(samples),
        "series": [s.as_dict() for s in samples],
        "checks": {ch.name: {"ok": ch.ok, "detail": ch.detail} for ch in checks},
        "ok": all(ch.ok is not False for ch in checks),
    }
    return Report(figures, checks)


def print_report(result: Report) -> None:
    f = result.figures
    d, rss, tasks = f["disconnects"], f["rss_mib"], f["tasks"]
    print(f"QiuQiu soak, seed {f['seed']}: {f['command']}")
    print(
        f"machine: {f['machine']['cpus']} CPUs, Python {f['machine']['python']}, "
        f"{f['machine']['system']}"
    )
    print(
        f"{f['tables']} table places for {f['load_seconds']:.0f} s: {f['tables_opened']} "
        f"tables opened, {f['accounts']} accounts, {f['hands']:,} hands "
        f"({f['hands_per_second']:,.0f} a second), at most {f['tables_peak']} tables at once"
    )
    print(
        f"disconnects: {d['aborted']} connections aborted, {d['away_and_back']} away and back "
        f"with the token; the SDK saw {d['drops_seen']} drops and came back {d['comebacks']} "
        f"times, gave up {d['gave_up']}"
    )
    print(
        f"server RSS (MiB): idle {rss['idle_start']}, middle {rss['middle']}, end of load "
        f"{rss['end_of_load']}, idle after {rss['idle_end']}; peak {rss['peak']}, "
        f"second-half slope {rss['slope_second_half_mib_per_min']} MiB/min"
    )
    print(
        f"server tasks: idle {tasks['idle_start']}, peak {tasks['peak']}, idle after "
        f"{tasks['idle_end']}; connections at most {f['connections_peak']}; "
        f"fds {f['fds']['idle_start']} -> {f['fds']['peak']} -> {f['fds']['idle_end']}"
    )
    print(
        f"CPU: server {f['cpu_percent']['server']}%, soak clients "
        f"{f['cpu_percent']['soak_clients']}% (of one core)"
    )
    print()
    for ch in result.checks:
        verdict = {True: "ok", False: "FAILED", None: "not measured"}[ch.ok]
        print(f"{ch.name:<13} {verdict:<12} {ch.detail}")
