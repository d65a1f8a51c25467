"""Each benchmark's ``--help`` shows its docstring as written: the command it gives keeps
a line of its own, where argparse's default reflow ran it into the prose around it, and
its cross-references and literals read as words, without their markup."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def help_of(module: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", f"bench.{module}", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


@pytest.mark.parametrize(
    "module", ["dealer", "decision", "multiway", "echo", "load_profile", "table"]
)
def test_the_command_a_benchmarks_help_gives_is_a_line_of_its_own(module: str) -> None:
    shown = help_of(module)
    # Indented as in the docstring; a reflowed line starts at the margin.
    command = (f"    uv run python -m bench.{module} ", f"    python -m bench.{module} ")
    assert any(line.startswith(command) for line in shown.splitlines()), shown


@pytest.mark.parametrize(
    "module",
    ["dealer", "decision", "echo", "engine", "load", "load_profile", "multiway", "soak", "table"],
)
def test_a_benchmarks_help_says_its_docstrings_references_in_words_without_markup(
    module: str,
) -> None:
    shown = help_of(module)
    for markup in ("`", ":class:", "::\n"):
        assert markup not in shown, shown
