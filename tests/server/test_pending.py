"""The relayed commands waiting for their host, without sockets: each is answered
once, by its host or by the process it was sent from, and never told that nothing
changed unless nobody could have it."""

from __future__ import annotations

import asyncio
from functools import partial

from qiuqiu.protocol import ErrorCode
from qiuqiu.protocol.common import MessageId
from qiuqiu.server.pending import PendingCommands

TIMEOUT = 0.02
"""A short deadline, so that the tests see it pass."""

PAST_IT = TIMEOUT * 4
"""Seconds to wait for a deadline that must have passed by then (never an assertion)."""


class Asker:
    def __init__(self, session_id: str = "s1") -> None:
        self.session_id = session_id
        self.refusals: list[tuple[MessageId | None, ErrorCode]] = []

    def refuse(self, ref: MessageId | None, code: ErrorCode, text: str) -> None:
        assert text, "every refusal says why"
        self.refusals.append((ref, code))


async def test_an_answered_command_is_never_refused() -> None:
    pending, ann = PendingCommands(TIMEOUT), Asker()
    pending.sent(ann, 1, "t1", "x")
    pending.answered("s1", 1, refused=False)
    await asyncio.sleep(PAST_IT)
    pending.moved("t1", "y")
    pending.unheard("s1", 1)
    assert ann.refusals == []


async def test_a_command_nobody_heard_is_moving_at_once_and_only_once() -> None:
    pending, ann = PendingCommands(TIMEOUT), Asker()
    pending.sent(ann, 1, "t1", "x")
    pending.unheard("s1", 1)
    assert ann.refusals == [(1, ErrorCode.TABLE_MOVING)]
    await asyncio.sleep(PAST_IT)
    assert ann.refusals == [(1, ErrorCode.TABLE_MOVING)], "the deadline was called off"


async def test_a_command_whose_publish_failed_meets_the_store_away() -> None:
    pending, ann = PendingCommands(TIMEOUT), Asker()
    pending.sent(ann, "a", "t1", "x")
    pending.lost("s1", "a")
    await asyncio.sleep(PAST_IT)
    assert ann.refusals == [("a", ErrorCode.STORE_UNAVAILABLE)]


async def test_a_silent_host_leaves_the_outcome_unknown_at_the_deadline() -> None:
    pending, ann = PendingCommands(TIMEOUT), Asker()
    pending.sent(ann, 1, "t1", "x")
    assert ann.refusals == []
    async with asyncio.timeout(5):
        while not ann.refusals:
            await asyncio.sleep(TIMEOUT / 5)
    assert ann.refusals == [(1, ErrorCode.OUTCOME_UNKNOWN)]
    # The host answers after all: its answer goes on as it is, and nothing more.
    pending.answered("s1", 1, refused=False)
    pending.moved("t1", "y")
    assert ann.refusals == [(1, ErrorCode.OUTCOME_UNKNOWN)]


async def test_a_host_that_has_the_command_has_no_deadline_until_the_table_moves() -> None:
    pending, ann = PendingCommands(TIMEOUT), Asker()
    pending.sent(ann, 1, "t1", "x")
    pending.received("s1", 1)
    await asyncio.sleep(PAST_IT)
    assert ann.refusals == []
    pending.moved("t1", "x")
    assert ann.refusals == [], "the same host: nothing moved"
    pending.moved("t1", "y")
    assert ann.refusals == [(1, ErrorCode.OUTCOME_UNKNOWN)]


async def test_a_table_moving_settles_its_own_commands_of_every_session_alone() -> None:
    pending, ann, bo = PendingCommands(TIMEOUT * 100), Asker("s1"), Asker("s2")
    pending.sent(ann, 1, "t1", "x")
    pending.sent(ann, 2, "t2", "x")
    pending.sent(bo, 1, "t1", "x")
    pending.moved("t1", "y")
    assert ann.refusals == [(1, ErrorCode.OUTCOME_UNKNOWN)]
    assert bo.refusals == [(1, ErrorCode.OUTCOME_UNKNOWN)]
    pending.answered("s1", 2, refused=False)
    pending.moved("t2", "y")
    assert ann.refusals == [(1, ErrorCode.OUTCOME_UNKNOWN)]


async def test_a_session_gone_is_answered_nothing() -> None:
    pending, ann = PendingCommands(TIMEOUT), Asker()
    pending.sent(ann, 1, "t1", "x")
    pending.forget("s1")
    await asyncio.sleep(PAST_IT)
    pending.moved("t1", "y")
    assert ann.refusals == []


async def test_what_a_session_counted_is_taken_back_only_for_a_command_that_changed_nothing() -> (
    None
):
    pending, ann = PendingCommands(TIMEOUT * 100), Asker()
    taken_back: list[MessageId] = []
    for ref in (1, 2, 3, 4, 5):
        pending.sent(ann, ref, "t1", "x", partial(taken_back.append, ref))
    pending.unheard("s1", 1)
    pending.lost("s1", 2)
    pending.answered("s1", 3, refused=True)
    pending.answered("s1", 4, refused=False)
    pending.moved("t1", "y")  # 5 may have been applied
    assert taken_back == [1, 2, 3]
