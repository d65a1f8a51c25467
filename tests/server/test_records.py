"""Records as the store keeps them: a hand's JSON read back as it was written, and
one written by an older server read as far as it goes."""

from __future__ import annotations

import json

from qiuqiu.server.history import played
from qiuqiu.server.records import hand_from_json, hand_json
from qiuqiu.server.store import HOUSE, HandRecord


def test_a_hand_recorded_before_names_were_kept_is_listed_without_them() -> None:
    hand = HandRecord(
        table_id="t1",
        hand_id=1,
        accounts=((0, "a1"), (1, HOUSE)),
        stacks_before=((0, 500), (1, 500)),
        stacks_after=((0, 490), (1, 510)),
        events=(),
        names=((0, "Ann"), (1, "Dealer")),
    )
    assert hand_from_json(hand_json(hand)) == hand
    old = json.loads(hand_json(hand))
    del old["names"]
    listed = played(hand_from_json(json.dumps(old)))
    assert [(s.seat, s.name) for s in listed.seats] == [(0, None), (1, None)]
    assert [(s.seat, s.name) for s in played(hand).seats] == [(0, "Ann"), (1, "Dealer")]
