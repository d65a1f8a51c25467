"""The dealer bot's solver (docs/dealer-bot.md, "The solver"), in numpy.

numpy is in the ``solver`` dependency group, which ``uv run`` alone does not
install (README, "Development"): say so, rather than fail on an import.
"""

import importlib.util

if importlib.util.find_spec("numpy") is None:
    raise SystemExit(
        "the solver needs numpy, in the solver dependency group: "
        "uv run --group solver python -m solver"
    )
