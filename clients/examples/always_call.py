"""A bot that never folds: it checks when it can and calls when it must.

uv run python clients/examples/always_call.py --server ws://127.0.0.1:8765 --hands 50
"""

from __future__ import annotations

from qiuqiu.cli.bot import Action, Bot, Call, Check, Turn, main


class AlwaysCall(Bot):
    """Checks when it can, calls when it must, never bets and never folds."""

    def decide(self, turn: Turn) -> Action:
        return Check() if turn.legal.check else Call()


if __name__ == "__main__":
    raise SystemExit(main(AlwaysCall()))
