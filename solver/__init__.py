"""The dealer bot's solver (docs/dealer-bot.md, "The solver"), in numpy.

numpy is in the ``solver`` dependency group, which ``uv run`` alone does not
install (README, "Development"): say so, rather than fail on an import.

OpenBLAS picks a kernel for the CPU it runs on (or the one ``OPENBLAS_CORETYPE``
names), and kernels and thread counts sum in different orders: the same solve on
two AVX-512 machines wrote weights a 255th apart where one used the Haswell
kernel. The shipped files were solved with the SkylakeX kernel on two threads, so
both are set here, before numpy loads OpenBLAS and whatever the environment says,
where the CPU has AVX-512: the same command then writes the shipped files byte for
byte. Elsewhere OpenBLAS's own choice stands, and a few weights may differ.
"""

import importlib.util
import os
from pathlib import Path

if importlib.util.find_spec("numpy") is None:
    raise SystemExit(
        "the solver needs numpy, in the solver dependency group: "
        "uv run --group solver python -m solver"
    )

SKYLAKE_X = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})
"""What OpenBLAS's SkylakeX kernel needs of the CPU (Linux's names for the flags)."""


def cpu_flags() -> set[str]:
    """The CPU's feature flags, as Linux names them; none known elsewhere."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return set()
    for line in cpuinfo.read_text().splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


if SKYLAKE_X.issubset(cpu_flags()):
    os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    os.environ["OPENBLAS_NUM_THREADS"] = "2"
