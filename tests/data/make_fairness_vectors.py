"""Write tests/data/fairness-vectors.json from qiuqiu.protocol.fairness.

    uv run python tests/data/make_fairness_vectors.py

The vectors are data: tests/protocol/test_fairness.py holds the module to them,
so a change to the scheme shows as a changed file here, never silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qiuqiu.protocol import fairness as f

CASES: list[tuple[str, str, int, dict[int, str], int]] = [
    ("00" * 32, "t1", 1, {0: "", 1: ""}, 1),
    (
        "795b929e9a9a80fdea7b5bf55eb561a4216363698b529b4a97b750923ceb3ffd",
        "Ab_3-x",
        7,
        {0: "lucky7", 2: "", 5: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
        2,
    ),
    ("ff" * 32, "T", 2**53, {0: "a", 1: "b", 2: "c", 3: "d", 4: "e", 5: "-_Zz09"}, 5),
]
OUT = Path(__file__).with_name("fairness-vectors.json")


def case(table_seed: str, table_id: str, hand_id: int, seeds: dict[int, str], button: int) -> Any:
    hand_seed = f.hand_seed(table_seed, table_id, hand_id)
    key = f.deal_key(hand_seed, seeds)
    deck = f.derive_deck(hand_seed, seeds)
    positions = f.dealt_positions(tuple(seeds), button)
    return {
        "table_seed": table_seed,
        "seed_commitment": f.seed_commitment(table_seed),
        "table_id": table_id,
        "hand_id": hand_id,
        "hand_seed": hand_seed,
        "client_seeds": [{"seat": s, "client_seed": c} for s, c in sorted(seeds.items())],
        "deal_key": key.hex(),
        "stream_first_64_bytes": f.Stream(key).take(64).hex(),
        "button": button,
        "dealt_positions": {str(seat): list(p) for seat, p in positions.items()},
        "deck": list(deck.tiles),
        "salts": list(deck.salts),
        "leaves": list(deck.leaves),
        "commitment": deck.commitment,
    }


def main() -> None:
    document = {
        "about": "Test vectors for PROTOCOL.md, 'Fairness' (protocol version 2). Every field "
        "is derived from table_seed, table_id, hand_id and client_seeds; hex is lowercase.",
        "cases": [case(*c) for c in CASES],
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
