"""The ``qiuqiu`` command's entry point: Ctrl-C while the client loads is an
interruption (status 130), however Python reports it. The whole command,
interrupted as it loads, is in test_terminal.py. On Windows, where it cannot run,
it says where to play instead."""

from __future__ import annotations

import sys

import pytest

from qiuqiu.cli.start import interrupted, main


def test_ctrl_c_while_a_class_is_made_counts_as_ctrl_c() -> None:
    """Python 3.11 reports a Ctrl-C that lands in a field's ``__set_name__`` as a
    RuntimeError (caused by it): the command printed that traceback (a full run here)."""

    class Interrupting:
        def __set_name__(self, owner: type, name: str) -> None:
            raise KeyboardInterrupt

    with pytest.raises((KeyboardInterrupt, RuntimeError)) as raised:

        class Made:
            field = Interrupting()

    assert interrupted(raised.value)


def test_another_error_is_not_ctrl_c() -> None:
    assert not interrupted(RuntimeError("a class could not be made"))
    assert not interrupted(ImportError("no module named rich"))


def test_on_windows_the_command_says_where_to_play_instead(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its first import needs termios: without the check, a traceback."""
    monkeypatch.setattr(sys, "platform", "win32")
    assert main() == 1
    said = capsys.readouterr().err
    assert "not on Windows" in said
    assert "WSL" in said
    assert "docker compose up" in said
