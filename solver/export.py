"""The average strategy as a strategy file stores it: probabilities in 255ths."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from solver.cfr import Matrix, Solver

SCALE = 255


def quantised(solver: Solver) -> dict[int, Matrix]:
    """The average strategy rounded to 255ths per row, largest remainders first, so
    each row sums to exactly 255: the strategy the server plays, to measure it."""
    out: dict[int, Matrix] = {}
    for node in solver.decisions:
        out[node.index] = (_in_255ths(solver.average_strategy(node)) / SCALE).astype(np.float32)
    return out


def strategy_bytes(solver: Solver, strategy: dict[int, Matrix]) -> bytes:
    rows = [
        np.rint(strategy[node.index] * SCALE).astype(np.uint8).tobytes()
        for node in solver.decisions
    ]
    return b"".join(rows)


def _in_255ths(p: Matrix) -> npt.NDArray[np.int64]:
    scaled = p.astype(np.float64) * SCALE
    base = np.floor(scaled).astype(np.int64)
    missing = SCALE - base.sum(axis=1)
    order = np.argsort(-(scaled - base), axis=1, kind="stable")
    for k in range(p.shape[1]):
        base[np.arange(p.shape[0]), order[:, k]] += (missing > k).astype(np.int64)
    return base
