"""The gateway's WebSocket connections: one that frees itself once its socket is
gone and counts the pings and pongs its client sends, and what the gateway logs and
counts of how each connection ended."""

from __future__ import annotations

import asyncio
import inspect
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.frames import CloseCode, Frame, Opcode
from websockets.protocol import Event

from qiuqiu.server.accounts import TAKEN_OVER
from qiuqiu.server.limits import AddressCounts, address_of


class GatewayConnection(ServerConnection):
    """A connection that, once its socket is gone, breaks the reference cycles
    ``websockets`` leaves in its protocol, so that reference counting frees it at
    once, without the collector (and, with ``--gc-freeze``, at all: a frozen cycle is
    never freed). The protocol's parser is a generator suspended for good after the
    end of the stream, whose frame holds the protocol; and the exceptions it keeps
    about how the connection ended (the one that stopped its parser, an EOFError
    when it dropped, and the one that failed its opening handshake, as a TCP probe
    that connects and hangs up makes) have tracebacks that hold the parser's frame
    too, and from Python 3.12 so do the frames that ran the parser, linked from its
    own. The parser is closed and those frames cleared: the exceptions and their
    tracebacks stay, without the frames' variables. docs/upstream/websockets.md is
    the report for ``websockets``."""

    control_frame: Callable[[], bool] | None = None
    """Asked, at each ping and pong the client sends, whether the connection may send
    one more message: ``websockets`` answers a ping by itself, read or not, so a flood
    of them must count like any other message, or it would cost the server without
    limit."""

    def __init__(self, *args: Any, handshakes: AddressCounts | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._handshakes = handshakes
        """The opening handshakes under way from each address, at most so many each."""
        self._shaking: str | None = None
        """The address this connection counts against in them, until its handshake ends."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if self._handshakes is None:
            return
        address = address_of(self)
        if self._handshakes.admit(address):
            self._shaking = address
        else:
            # Sockets that send no request hold a descriptor each until the handshake
            # times out, and count as no connection before it: an honest client has
            # one or two handshakes under way, never hundreds.
            self.transport.abort()

    def handshaken(self) -> None:
        """The opening handshake is over: this connection no longer counts as one."""
        if self._handshakes is not None and self._shaking is not None:
            self._handshakes.release(self._shaking)
            self._shaking = None

    def process_event(self, event: Event) -> None:
        if (
            isinstance(event, Frame)
            and event.opcode in (Opcode.PING, Opcode.PONG)
            and self.control_frame is not None
            and not self.control_frame()
        ):
            # websockets answers pings until the close times out: read no more of them.
            self.transport.pause_reading()
        super().process_event(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self.handshaken()
        super().connection_lost(exc)
        self.control_frame = None  # the gateway's closure holds this connection
        protocol = self.protocol
        # At the end of the stream (fed by the call above) nothing steps it again.
        protocol.parser.close()
        kept: tuple[BaseException | None, ...] = (protocol.parser_exc, protocol.handshake_exc)
        for ended in kept:
            while ended is not None:
                traceback.clear_frames(ended.__traceback__)
                _clear_callers(ended.__traceback__)
                ended = ended.__cause__ or ended.__context__


_GENERATOR_CODE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _clear_callers(trace: TracebackType | None) -> None:
    """Clear the frames that called a traceback's generators and have since returned.

    From Python 3.12 a generator's frame that outlives its run keeps a link to the
    frame that last ran it (``receive_eof``, say), and that frame holds the protocol.
    The walk stops at the first frame still running (``clear`` refuses it, and its
    callers run too) and at any generator's, which ``clear`` would close."""
    while trace is not None:
        caller = trace.tb_frame.f_back
        while caller is not None and not caller.f_code.co_flags & _GENERATOR_CODE:
            try:
                caller.clear()
            except RuntimeError:
                break
            caller = caller.f_back
        trace = trace.tb_next


def peer_of(connection: ServerConnection) -> str:
    address = connection.remote_address
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) else "?"


KNOWN_CLOSES = frozenset({*CloseCode, TAKEN_OVER})
"""The close codes the metrics count one by one: RFC 6455's and the server's own."""


def close_label(code: int) -> str:
    """A client may close with any code from 3000 to 4999: counted each under its own
    label, a client could add two thousand series to the metrics."""
    return str(code) if code in KNOWN_CLOSES else "other"


def first_close_code(connection: ServerConnection) -> int:
    """Why a connection ended: the code of the first close frame, whichever side sent
    it, or 1006 when it dropped without one. Known before the closing handshake ends."""
    protocol = connection.protocol
    sent, received = protocol.close_sent, protocol.close_rcvd
    first = received if protocol.close_rcvd_then_sent else sent or received
    return CloseCode.ABNORMAL_CLOSURE if first is None else first.code
