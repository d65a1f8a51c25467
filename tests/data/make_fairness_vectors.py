"""Writes tests/data/fairness-vectors.json from qiuqiu.protocol.fairness: `uv run python tests/data/make_fairness_vectors.py`."""
import json
from qiuqiu.protocol import fairness as f

cases = []
for table_seed, table_id, hand_id, seeds, button in [
    ("00" * 32, "t1", 1, {0: "", 1: ""}, 1),
    ("795b929e9a9a80fdea7b5bf55eb561a4216363698b529b4a97b750923ceb3ffd", "Ab_3-x", 7,
     {0: "lucky7", 2: "", 5: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}, 2),
    ("ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", "T", 2**53,
     {0: "a", 1: "b", 2: "c", 3: "d", 4: "e", 5: "-_Zz09"}, 5),
]:
    hs = f.hand_seed(table_seed, table_id, hand_id)
    deck = f.derive_deck(hs, seeds)
    cases.append({
        "table_seed": table_seed,
        "seed_commitment": f.seed_commitment(table_seed),
        "table_id": table_id,
        "hand_id": hand_id,
        "hand_seed": hs,
        "client_seeds": [{"seat": s, "client_seed": c} for s, c in sorted(seeds.items())],
        "deal_key": f.deal_key(hs, seeds).hex(),
        "stream_first_64_bytes": f.Stream(f.deal_key(hs, seeds)).take(64).hex(),
        "button": button,
        "dealt_positions": {str(k): list(v) for k, v in f.dealt_positions(tuple(seeds), button).items()},
        "deck": list(deck.tiles),
        "salts": list(deck.salts),
        "leaves": list(deck.leaves),
        "commitment": deck.commitment,
    })
doc = {
    "about": "Test vectors for PROTOCOL.md, 'Fairness' (protocol version 2). Every field is "
    "derived from table_seed, table_id, hand_id and client_seeds; hex is lowercase.",
    "cases": cases,
}
with open("tests/data/fairness-vectors.json", "w") as out:
    json.dump(doc, out, indent=1)
    out.write("\n")
