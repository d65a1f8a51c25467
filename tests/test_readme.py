"""The README's examples are run, so a newcomer's first minutes never meet a stale one."""

import doctest
import itertools
import re
from pathlib import Path

from qiuqiu.cli.__main__ import parser
from qiuqiu.cli.bot import Summary
from qiuqiu.protocol import PROTOCOL_VERSION, decode_client
from qiuqiu.protocol import client as cmd

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_interactive_examples_print_what_they_say() -> None:
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_the_readme_python_blocks_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert blocks
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})


def test_the_readme_gives_the_test_command_ci_runs() -> None:
    ci = (README.parent / ".ci" / "run").read_text()
    assert "uv run pytest" in README.read_text()
    assert "uv run pytest\n" in ci


def test_the_messages_the_readme_types_by_hand_are_ones_this_server_takes() -> None:
    typed = re.findall(r"^> (\{.*\})$", README.read_text(), flags=re.MULTILINE)
    assert typed
    # A placeholder stands for what the server said before: any table id will do.
    messages = [decode_client(re.sub(r"<[^>]*>", "t0", line)) for line in typed]
    hellos = [m for m in messages if isinstance(m, cmd.Hello)]
    assert hellos
    assert all(hello.version == PROTOCOL_VERSION for hello in hellos)


def test_every_flag_of_qiuqiu_play_is_a_row_of_the_readmes_table() -> None:
    lines = README.read_text().splitlines()
    start = lines.index("| `qiuqiu play` flag | what it does |")
    rows = "\n".join(itertools.takewhile(lambda line: line.startswith("|"), lines[start:]))
    (play,) = [
        command
        for action in parser()._subparsers._group_actions  # type: ignore[union-attr]
        for name, command in action.choices.items()  # type: ignore[union-attr]
        if name == "play"
    ]
    flags = [flag for action in play._actions for flag in action.option_strings]
    missing = [f for f in flags if f.startswith("--") and f"`{f}" not in rows and f != "--help"]
    assert not missing


def test_the_readme_names_every_field_of_the_json_summary() -> None:
    (row,) = [line for line in README.read_text().splitlines() if line.startswith("| `--json` |")]
    named = re.findall(r"`(\w+)`", row.split("JSON object", 1)[1])
    assert named == list(Summary().as_dict())
