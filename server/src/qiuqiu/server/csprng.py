"""The server's CSPRNG: ``secrets.SystemRandom``, with its floats drawn in batches.

``SystemRandom.random`` asks the kernel for 7 bytes at every call (0.6 µs here), and
the dealer bot draws at each of its turns; this asks for 4 KiB at a time and makes
512 floats of them (0.15 µs a draw). Each float is 53 of the kernel's bits, as
``SystemRandom``'s are; nothing is seeded or derived. Everything else
(``getrandbits`` for a table's seed, ``_randbelow``) is ``SystemRandom``'s own.
"""

from __future__ import annotations

import os
import random
import struct

_WORDS = struct.Struct("<512Q")
_SCALE = 2.0**-53


class BatchedSystemRandom(random.SystemRandom):
    def __init__(self) -> None:
        super().__init__()
        self._floats: list[float] = []

    def random(self) -> float:
        try:
            return self._floats.pop()
        except IndexError:
            self._floats = [(w >> 11) * _SCALE for w in _WORDS.unpack(os.urandom(_WORDS.size))]
            return self._floats.pop()
