"""The project layout the rest of the work relies on (docs/ARCHITECTURE.md, "Layers")."""

import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["qiuqiu.engine", "qiuqiu.protocol", "qiuqiu.server", "qiuqiu.cli"]


@pytest.mark.parametrize("name", PACKAGES)
def test_each_package_installs_under_the_shared_qiuqiu_namespace(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__doc__
    assert Path(module.__file__ or "").is_relative_to(ROOT)


def test_qiuqiu_itself_is_a_namespace_package() -> None:
    import qiuqiu

    assert getattr(qiuqiu, "__file__", None) is None
    assert not list(ROOT.glob("*/src/qiuqiu/__init__.py"))
    assert not list(ROOT.glob("clients/*/src/qiuqiu/__init__.py"))


def test_no_package_installs_a_bare_top_level_module(tmp_path: Path) -> None:
    # Run from elsewhere, so the repository's own folders are not on the path.
    code = (
        "import importlib.util; "
        "print([m for m in ('engine', 'protocol', 'server', 'cli', 'clients') "
        "if importlib.util.find_spec(m)])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=tmp_path
    ).stdout
    assert out.strip() == "[]"


def test_the_engine_imports_nothing_but_the_standard_library() -> None:
    code = (
        "import sys, qiuqiu.engine; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'asyncio', 'pydantic', 'websockets', 'random', 'secrets'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("folder", "module", "named"),
    [
        ("tests/web", "playwright", "tests/web: Playwright"),
        ("tests/solver", "numpy", "tests/solver: numpy"),
    ],
)
def test_a_folder_named_on_the_command_line_without_its_group_is_left_out_saying_why(
    folder: str, module: str, named: str
) -> None:
    # `uv run pytest tests/web` in a fresh clone, before `uv sync --all-groups` (the
    # browser page's README gives that command): it was an ImportError.
    argv = ["-n0", "-p", "no:cacheprovider", folder]
    code = f"import sys, pytest; sys.modules[{module!r}] = None; sys.exit(pytest.main({argv}))"
    env = {k: v for k, v in os.environ.items() if k != "CI" and not k.startswith("PYTEST")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    said = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, said
    assert f"skipped, not installed ({named}): uv sync --all-groups" in said
    assert "Error" not in said
