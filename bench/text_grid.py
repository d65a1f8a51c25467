"""Plain-text tables for the benchmarks' reports: a header, a rule, then the rows.

:mod:`bench.engine` and :mod:`bench.load_report` print alike, so the layout is here once:
the first column is a name, left-aligned; every other is a figure, right-aligned.
"""

from __future__ import annotations

from collections.abc import Sequence


def grid(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        )
        for row in (header, *rows)
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)
