"""The commands the docs give work on a fresh clone, where ``uv run`` installs only the
default dependency groups: a module that needs another group is given with it."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NEEDS = {"solver": "solver", "solver.chart": "bench"}
"""Modules by the dependency group they import from (pyproject.toml)."""


def documented_commands() -> list[tuple[Path, str]]:
    found = []
    for doc in [*ROOT.glob("*.md"), *ROOT.glob("docs/**/*.md"), *ROOT.glob("clients/*.md")]:
        # Prose wraps a command over lines: read each doc as one line.
        text = " ".join(doc.read_text().split())
        found += [(doc, c) for c in re.findall(r"uv run [^`$|]*?python -m [\w.]+[^`$|]*", text)]
    return found


def test_the_docs_run_the_solver_and_the_charts_with_their_groups() -> None:
    commands = documented_commands()
    assert any(re.search(r"python -m solver\b(?!\.)", c) for _, c in commands)
    wrong = []
    for doc, command in commands:
        module = re.search(r"python -m ([\w.]+)", command)
        assert module is not None
        group = NEEDS.get(module[1])
        if module[1] == "bench.load" and "--chart" in command:
            group = "bench"
        if group is not None and f"--group {group}" not in command:
            wrong.append(f"{doc.relative_to(ROOT)}: {command}")
    assert not wrong, "\n".join(wrong)
