"""What :mod:`bench.load` prints and draws: the targets, the text report and its grids, the charts.

Kept apart from the runs so that a report read back from ``docs/bench/load.json``
can be printed or charted again without measuring anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.text_grid import grid

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


PAUSE_TABLES = 1000
"""From this many tables on, the event loop may pause at most :data:`PAUSE_LIMIT_MS`."""
PAUSE_LIMIT_MS = 20.0


def describe(result: dict[str, Any]) -> str:
    s = result["server"]
    text = (
        f"{s['hands_per_s']:,.0f} hands/s, {s['cpu_us_per_msg']:.0f} us/msg,"
        f" p99 {s['p99_ms']:.1f} ms"
    )
    if "echo" in result:
        e = result["echo"]
        text += f" (echo {e['cpu_us_per_msg']:.0f} us/msg, p99 {e['p99_ms']:.1f} ms)"
    return text


def targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets, each as a limit on a ratio and what this run measured."""
    out: list[dict[str, Any]] = []

    def check(
        what: str, measured: float, limit: float, at_least: bool = False, unit: str = "x"
    ) -> None:
        met = measured >= limit if at_least else measured <= limit
        out.append({"target": what, "measured": measured, "limit": limit, "met": met, "unit": unit})

    rows = {r["name"]: r for r in report.get("throughput", ())}
    if "duel, memory" in rows:
        check("CPU/msg vs echo, memory", rows["duel, memory"]["ratio"]["cpu_per_msg"], 2.0)
    if "duel, Redis" in rows:
        check("CPU/msg vs echo, Redis", rows["duel, Redis"]["ratio"]["cpu_per_msg"], 3.0)
    if "4-player, memory" in rows:
        four = rows["4-player, memory"]["ratio"]["cpu_per_msg"]
        check("CPU/msg vs echo, 4-player, memory", four, 2.0)
    if "4-player, Redis" in rows:
        check(
            "CPU/msg vs echo, 4-player, Redis", rows["4-player, Redis"]["ratio"]["cpu_per_msg"], 3.0
        )
    for row in report.get("latency", ()):
        check(f"p99 vs echo, {row['name']}", row["ratio"]["p99"], 3.0)
    for row in report.get("latency", ()):
        if row["tables"] >= PAUSE_TABLES and "loop_lag_max_ms" in row["server"]:
            s = row["server"]
            longest = max(s["loop_lag_max_ms"], s["gc_max_ms"])
            check(f"longest loop pause, {row['name']}", longest, PAUSE_LIMIT_MS, unit=" ms")
    for row in report.get("memory", {}).get("rows", ()):
        if row["state"] == "idle":
            check(f"memory/client vs echo, {row['clients']:,} idle", row["ratio"], 1.5)
    if "connections" in report:
        idle, players = report["connections"]["idle"], report["connections"]["players"]
        check(f"memory/client vs echo, {idle['clients']:,} idle", idle["ratio"], 1.5)
        check(f"p99 vs echo, {players['clients']:,} players", players["p99_ratio"], 3.0)
    if "duel, Redis, 2 processes" in rows:
        two = rows["duel, Redis, 2 processes"]["server"]["hands_per_s"]
        one = rows["duel, Redis"]["server"]["hands_per_s"]
        check("hands/s, 2 processes over 1", two / one if one else 0.0, 1.6, at_least=True)
        each = rows["duel, Redis, 2 processes"]["server"]["cpu_us_per_hand"]
        alone = rows["duel, Redis"]["server"]["cpu_us_per_hand"]
        check("CPU/hand, 2 processes over 1", each / alone if alone else 0.0, 1.05)
    return out


PINNED = "; servers, echo and Redis on one core, clients on the rest"
"""What the report's first line says of a run with ``--pin``."""


def text_report(report: dict[str, Any]) -> str:
    plan, m = report["plan"], report["machine"]
    out = [
        f"qiuqiu server benchmark: medians of {plan['runs']} runs of {plan['duration']:g} s;"
        f" {m['cpu']}, {m['cores']} cores, Python {m['python']};"
        f" event loop {plan.get('loop', 'asyncio')} (servers, echo and clients alike)"
        + (f"; server flags {' '.join(plan['server_flags'])}" if plan.get("server_flags") else "")
        + (
            "; servers, echo and Redis on one core, clients on the rest"
            if plan.get("pinned")
            else ""
        )
        + f"; in C: {' and '.join(m.get('compiled', ())) or 'nothing (no C module built)'}",
    ]
    if "throughput" in report:
        out += ["", "throughput: every player acts the moment its turn comes"]
        out.append(throughput_grid(report["throughput"]))
    if "latency" in report:
        out += [
            "",
            f"latency: action to its first event, paced at {plan['action_rate']:g} actions/s"
            " across all tables",
            latency_grid(report["latency"]),
            "end p99: from a player's action that ended its hand to its hand_ended, which"
            " waits for the hand's end to be written",
        ]
        paused = [r for r in report["latency"] if "loop_lag_max_ms" in r["server"]]
        if paused:
            out += [
                "",
                "event-loop pauses in the window (the servers' own histograms; a bound is its"
                f" bucket's; limit {PAUSE_LIMIT_MS:g} ms from {PAUSE_TABLES:,} tables)",
                pauses_grid(paused),
            ]
    if "memory" in report:
        out += ["", "memory: server RSS growth per connected client (KiB)"]
        out.append(
            grid(
                ("clients", "state", "server", "echo", "ratio"),
                [
                    (
                        f"{r['clients']:,}",
                        r["state"],
                        f"{r['server_kib']:.1f}",
                        f"{r['echo_kib']:.1f}",
                        f"{r['ratio']:.2f}x",
                    )
                    for r in report["memory"]["rows"]
                ],
            )
        )
    if "connections" in report:
        out += ["", *connections_lines(report["connections"])]
    if "curve" in report:
        out += ["", f"latency against pace, {plan['tables']} tables", latency_grid(report["curve"])]
    out += [
        "",
        "targets",
        grid(
            ("target", "measured", "limit", ""),
            [
                (
                    t["target"],
                    f"{t['measured']:.2f}{t.get('unit', 'x')}",
                    f"{'>=' if t['target'].startswith('hands') else '<='}"
                    f" {t['limit']:g}{t.get('unit', 'x')}",
                    "met" if t["met"] else "MISSED",
                )
                for t in report["targets"]
            ],
        ),
        "",
        "A message is one WebSocket frame the server received or sent; the echo's are counted"
        " the same way.",
    ]
    return "\n".join(out)


def throughput_grid(rows: Sequence[dict[str, Any]]) -> str:
    return grid(
        (
            "scenario",
            "tables",
            "hands/s",
            "us/hand",
            "us/msg",
            "echo",
            "ratio",
            "p99 ms",
            "echo",
            "ratio",
            "redis cmds/trips a hand",
            "cores srv/gen",
        ),
        [
            (
                r["name"],
                f"{r['tables']:,}",
                f"{r['server']['hands_per_s']:,.0f}",
                f"{r['server']['cpu_us_per_hand']:,.0f}",
                f"{r['server']['cpu_us_per_msg']:.1f}",
                f"{r['echo']['cpu_us_per_msg']:.1f}",
                f"{r['ratio']['cpu_per_msg']:.2f}x",
                f"{r['server']['p99_ms']:.1f}",
                f"{r['echo']['p99_ms']:.1f}",
                f"{r['ratio']['p99']:.2f}x",
                (
                    f"{r['server']['redis_cmds_per_hand']:.1f}"
                    f" / {r['server']['redis_round_trips_per_hand']:.2f}"
                )
                if r["store"] == "redis"
                else "-",
                f"{r['server']['server_cores']:.2f}/{r['server']['client_cores']:.2f}",
            )
            for r in rows
        ],
    )


def connections_lines(section: dict[str, Any]) -> list[str]:
    idle, play = section["idle"], section["players"]
    lines = [
        f"connections: {idle['clients']:,} idle clients on one process"
        + (
            f" (of {idle['wanted']:,} asked: the open-file hard limit is {idle['hard_limit']:,})"
            if idle["clients"] < idle["wanted"]
            else ""
        ),
        grid(
            ("clients", "server KiB/client", "echo KiB/client", "ratio", "connect s srv/echo"),
            [
                (
                    f"{idle['clients']:,}",
                    f"{idle['server_kib']:.1f}",
                    f"{idle['echo_kib']:.1f}",
                    f"{idle['ratio']:.2f}x",
                    f"{idle['server_connect_s']:.0f}/{idle['echo_connect_s']:.0f}",
                )
            ],
        ),
        "",
        f"{play['clients']:,} players at {play['tables']:,} four-player tables, thinking"
        f" {play['think']:g} s on average before each action",
    ]
    rows = []
    for who in ("server", "echo"):
        f = play[who]
        rows.append(
            (
                who,
                f"{f['actions_per_s']:,.0f}",
                f"{f['p50_ms']:.2f}",
                f"{f['p99_ms']:.2f}",
                f"{f['max_ms']:.1f}",
                f"{f['cpu_us_per_msg']:.1f}",
                f"{f['server_cores']:.2f}/{f['client_cores']:.2f}",
            )
        )
    lines.append(
        grid(
            ("", "actions/s", "p50 ms", "p99 ms", "max ms", "us/msg", "cores srv/clients"),
            rows,
        )
    )
    lines.append(
        f"p99 ratio {play['p99_ratio']:.2f}x, CPU/msg ratio {play['cpu_per_msg_ratio']:.2f}x;"
        f" loop lag max <= {play['server']['loop_lag_max_ms']:g} ms,"
        f" collector's longest pause <= {play['server']['gc_max_ms']:g} ms"
    )
    return lines


def pauses_grid(rows: Sequence[dict[str, Any]]) -> str:
    def ms(value: float) -> str:
        return "-" if value == 0 else f"<= {value:g}" if value != float("inf") else "> 1000"

    return grid(
        (
            "run",
            "lag p99 ms",
            "lag max ms",
            "lags > 20 ms",
            "gc max ms",
            "gc > 20 ms",
            "gc ms gen 0/1/2",
            "collections 0/1/2",
        ),
        [
            (
                r["name"],
                ms(s["loop_lag_p99_ms"]),
                ms(s["loop_lag_max_ms"]),
                f"{s['loop_lag_over_20ms']:.0f}",
                ms(s["gc_max_ms"]),
                f"{s['gc_over_20ms']:.0f}",
                "/".join(f"{s[f'gc{g}_total_ms']:.0f}" for g in range(3)),
                "/".join(f"{s[f'gc{g}_count']:.0f}" for g in range(3)),
            )
            for r in rows
            for s in [r["server"]]
        ],
    )


def latency_grid(rows: Sequence[dict[str, Any]]) -> str:
    return grid(
        (
            "run",
            "actions/s",
            "p50 ms",
            "p99 ms",
            "max ms",
            "echo p50",
            "p99",
            "max",
            "p99 ratio",
            "us/msg ratio",
            "end p99 ms",
        ),
        [
            (
                r["name"],
                f"{r['server']['actions'] / r['server']['seconds']:,.0f}",
                f"{r['server']['p50_ms']:.2f}",
                f"{r['server']['p99_ms']:.2f}",
                f"{r['server']['max_ms']:.1f}",
                f"{r['echo']['p50_ms']:.2f}",
                f"{r['echo']['p99_ms']:.2f}",
                f"{r['echo']['max_ms']:.1f}",
                f"{r['ratio']['p99']:.2f}x",
                f"{r['ratio']['cpu_per_msg']:.2f}x",
                f"{r['server']['end_p99_ms']:.2f}",
            )
            for r in rows
        ],
    )


def charts(report: dict[str, Any], folder: Path) -> list[Path]:
    """PNGs of latency against concurrency and, if measured, against pace."""
    import matplotlib

    matplotlib.use("Agg")  # no display: files only

    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if "latency" in report:
        written.append(latency_chart(report, folder / "latency.png"))
    if "curve" in report:
        written.append(curve_chart(report, folder / "throughput.png"))
    return written


def latency_chart(report: dict[str, Any], path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    # A colour for each server, a line style for each quantile.
    for store, colour in (("memory", "C0"), ("redis", "C3")):
        rows = [r for r in report["latency"] if r["store"] == store]
        if not rows:
            continue
        tables = [r["tables"] for r in rows]
        for q, style in (("p50", "--"), ("p99", "-")):
            ax.plot(
                tables,
                [r["server"][f"{q}_ms"] for r in rows],
                style,
                marker="o",
                color=colour,
                label=f"qiuqiu {store} {q}",
            )
            if store == "memory":
                ax.plot(
                    tables,
                    [r["echo"][f"{q}_ms"] for r in rows],
                    style,
                    marker="s",
                    color="grey",
                    label=f"echo floor {q}",
                )
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="concurrent tables",
        ylabel="action to event (ms)",
        title=f"Latency at {report['plan']['action_rate']:g} actions/s in all",
    )
    return _save(fig, ax, path)


def curve_chart(report: dict[str, Any], path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for who, colour in (("server", "C0"), ("echo", "grey")):
        rate = [r[who]["actions"] / r[who]["seconds"] for r in report["curve"]]
        for q, style in (("p50", "--"), ("p99", "-")):
            ax.plot(
                rate,
                [r[who][f"{q}_ms"] for r in report["curve"]],
                style,
                marker="o",
                color=colour,
                label=f"{'qiuqiu' if who == 'server' else 'echo floor'} {q}",
            )
    ax.set(
        yscale="log",
        xlabel="actions answered per second",
        ylabel="action to event (ms)",
        title=f"Latency against throughput, {report['plan']['tables']} tables",
    )
    return _save(fig, ax, path)


def _save(fig: Figure, ax: Axes, path: Path) -> Path:
    """Both charts end alike: a light grid, a small legend, 110 dpi."""
    import matplotlib.pyplot as plt

    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
