"""Commit-reveal (PROTOCOL.md, "Fairness"): how a client checks that a deal was fixed in advance.

At ``hand_started`` the server publishes ``commitment(seed, deck)``; at
``hand_ended`` it reveals ``seed`` and ``deck``. The seed is 32 random bytes, so
the commitment cannot be reversed by trying decks, and the deck is the order
the tiles were dealt in, so the tiles a seat got can be checked against it too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def commitment(seed: str, deck: Sequence[str]) -> str:
    """``sha256(seed || deck)`` in hex: the seed's bytes, then the tiles joined by commas."""
    return hashlib.sha256(bytes.fromhex(seed) + ",".join(deck).encode("ascii")).hexdigest()


def verify_deal(commitment_hex: str, seed: str, deck: Sequence[str]) -> bool:
    """True when ``seed`` and ``deck`` are what ``commitment_hex`` committed to."""
    try:
        return commitment(seed, deck) == commitment_hex
    except ValueError:
        return False
