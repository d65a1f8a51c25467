"""What a table holds until it settles is done in order once, or, should the table
move first, only what it owes."""

from __future__ import annotations

from qiuqiu.server.table.deferred import Deferred


def test_held_work_is_done_once_in_the_order_it_came_with_what_it_adds() -> None:
    done: list[str] = []
    deferred = Deferred()

    def second() -> None:
        done.append("second")
        deferred.add(lambda: done.append("added"))

    deferred.add(lambda: done.append("first"), moved=lambda: done.append("owed"))
    deferred.add(second)
    deferred.do()
    assert done == ["first", "second"]
    deferred.do()
    assert done == ["first", "second", "added"]
    deferred.do()
    assert done == ["first", "second", "added"]


def test_a_table_that_moved_does_only_what_is_owed_and_then_nothing() -> None:
    done: list[str] = []
    deferred = Deferred()
    deferred.add(lambda: done.append("snapshot"), moved=lambda: done.append("refused"))
    deferred.add(lambda: done.append("notice"))
    deferred.moved()
    deferred.do()
    assert done == ["refused"]
