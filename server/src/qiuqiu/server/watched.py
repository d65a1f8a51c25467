"""The tables one connection watches, and the most it may (``--max-watched-tables``).

A table takes a few spectators at once (``--max-spectators``), each sent every event:
with no cap, a few connections could take every place of every table's audience. A
watch counts from its request until the connection leaves the table, sits down there,
or the table refuses the watch or closes, wherever the table is hosted: a watch sent to
another process counts as soon as it is sent. A new connection (a client's after a
reconnect) counts from none, so it watches again whatever the old one watched.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from qiuqiu.protocol import ErrorCode
from qiuqiu.protocol import client as cmd
from qiuqiu.server.errors import Refused

if TYPE_CHECKING:
    from qiuqiu.server.session import Session


async def verify_room(session: Session, table_id: str) -> None:
    """Refuse ``session`` a watch of ``table_id`` past the cap; watching a table again
    takes no more room."""
    cap, watching = session.lobby.watched_per_connection, session.watching
    if not cap or table_id in watching or len(watching) < cap:
        return
    # Not told of every end of a watch (a refusal or a close after the request was
    # served): the count is made sure of only at the cap.
    for watched in list(watching):
        if not await _still_watched(session, watched):
            watching.discard(watched)
            session.asked_to_watch.discard(watched)
    if len(watching) >= cap:
        raise Refused(
            ErrorCode.TOO_MANY_WATCHED,
            f"you watch {cap} tables already, the most one connection may: leave one first",
        )


async def _still_watched(session: Session, table_id: str) -> bool:
    table = session.lobby.tables.get(table_id)
    if table is not None:
        return table.core.watches(session)
    if table_id not in session.remote_tables:
        return False  # a table here that has closed
    return await session.lobby.store.table(table_id) is not None


def track(session: Session, message: cmd.TableMessage, elsewhere: bool) -> Callable[[], None]:
    """``message`` was served (or, ``elsewhere``, sent to the table's process). Returns
    what takes it back, for a message sent elsewhere that was refused (by its host, or
    as no process got it): its client is told nothing changed, so a process adopting
    the table must find the watch as it was (watched on, or not at all)."""
    table_id = message.table_id
    if isinstance(message, cmd.WatchTable) and table_id not in session.watching:
        session.watching.add(table_id)
        if elsewhere:
            session.asked_to_watch.add(table_id)
        return partial(told, session, table_id, "error")
    if isinstance(message, cmd.LeaveTable) and table_id in session.watching:
        session.watching.discard(table_id)
        return partial(session.watching.add, table_id)
    return lambda: None


def told(session: Session, table_id: str, kind: str) -> None:
    """A reply of type ``kind`` from the process hosting ``table_id``: a watch there
    counts until a seat or ``table_left`` (as a process adopting the table makes a
    spectator of whoever watched it, ``table_watched`` counts one too), or an ``error``
    while the watch asked for is unanswered, the host's refusal of it."""
    refused = kind == "error" and table_id in session.asked_to_watch
    if kind == "table_watched":
        session.watching.add(table_id)
    elif kind in ("table_joined", "table_left") or refused:
        session.watching.discard(table_id)
    if kind in ("table_watched", "table_joined", "table_left", "error"):
        session.asked_to_watch.discard(table_id)
