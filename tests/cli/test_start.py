"""The ``qiuqiu`` command's entry point: Ctrl-C while the client loads is an
interruption (status 130), however Python reports it. The whole command,
interrupted as it loads, is in test_terminal.py."""

from __future__ import annotations

import pytest

from qiuqiu.cli.start import interrupted


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
