"""A connection's outbox: frames written straight into its ``websockets`` protocol
object and sent together, and the one rule that closes a client that does not read."""

from __future__ import annotations

import asyncio

from websockets.asyncio.server import ServerConnection
from websockets.frames import CloseCode
from websockets.protocol import State

UNREAD_BYTES = 512 * 1024
"""Bytes waiting to be written to one client (beyond what its socket holds, and
beyond the largest message among them) before it counts as not reading."""


class Outbox:
    """Frames for one connection, written straight into its ``websockets`` protocol
    object, and sent together in one write once the loop's current callback is done:
    a table's input makes several frames for each viewer, and a queue and a writer
    task per connection cost a hand more than the writes themselves."""

    def __init__(self, connection: ServerConnection) -> None:
        self.connection = connection
        self.protocol, self.transport = connection.protocol, connection.transport
        self.loop = asyncio.get_running_loop()
        self.closing: asyncio.Task[None] | None = None
        self.is_shut = False
        self._due = False
        """Whether a flush is scheduled for what is waiting in the protocol object."""
        self._largest = 0
        """The largest message that may still be waiting: a reply bigger than the limit
        (a lobby of a thousand tables) waits while a client that reads takes it in, on
        a link slower than the server; it is what comes on top that counts as unread."""

    def send(self, frame: str) -> None:
        if self.is_shut or self.protocol.state is not State.OPEN:
            return  # the connection is going or gone: there is nobody to write to
        data = frame.encode()
        self._largest = max(self._largest, len(data))
        self.protocol.send_text(data)
        if not self._due:
            self._due = True
            self.loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write what is waiting, in one system call. ``websockets`` writes whatever
        it adds itself (a pong, a close) at once, so only frames from here wait."""
        self._due = False
        data = self.protocol.data_to_send()
        if not data or self.is_shut or self.transport.is_closing():
            return
        self.transport.write(b"".join(data))
        waiting = self.transport.get_write_buffer_size()
        # What waits is less than the largest message once that one is being read.
        self._largest = min(self._largest, waiting)
        if waiting - self._largest > UNREAD_BYTES:
            self.close(CloseCode.POLICY_VIOLATION, "too many unread messages")

    def close(self, code: int, reason: str) -> None:
        if self.closing is None:
            self.flush()
            self.closing = self.loop.create_task(self.connection.close(code, reason))

    def shut(self) -> None:
        """Stop writing: the connection is gone."""
        self.is_shut = True
