"""One client connection's conversation, without the I/O.

A :class:`Session` is given frames and produces messages through the ``send``
and ``close`` callables it was made with, so the same code runs under the
WebSocket gateway and in tests. Its rules:

1. Decode (a bad frame is answered with an ``error``, and the connection stays),
   then check it is allowed (``hello`` first, once; an ``id`` not used before),
   then hand it to the lobby or the table, which alone change anything. A
   message about a table another process hosts goes there through the relay
   (:mod:`qiuqiu.server.relay`), and its answers come back the same way.
2. Every refusal is an ``error`` naming the message's ``id`` in ``ref``;
   nothing has changed when one is sent.
"""

from __future__ import annotations

import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from qiuqiu.protocol import PROTOCOL_VERSION, BadMessage, decode_client, message_id
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId
from qiuqiu.server.errors import LeaseLost, Refused, StoreUnavailable
from qiuqiu.server.lobby import Lobby
from qiuqiu.server.seat import verify_buy_in
from qiuqiu.server.store import Account, HandRecord
from qiuqiu.server.table import MOVED, Table

if TYPE_CHECKING:
    from qiuqiu.server.relay import Relay

RECENT_IDS = 1024

UNAVAILABLE = "the server cannot reach its storage just now; nothing changed: try again shortly"


class Session:
    """One connection: who it is (after ``hello``), what it watches, the ids it used."""

    def __init__(
        self,
        lobby: Lobby,
        send: Callable[[str], None],
        close: Callable[[int, str], None],
        relay: Relay | None = None,
    ) -> None:
        self.lobby = lobby
        self.relay = relay
        self._send = send
        self._close = close
        self.session_id = secrets.token_hex(8)
        self.account: Account | None = None
        self._watching: set[Table] = set()
        self.remote_tables: set[str] = set()
        """Tables hosted by another process that this session sits or watches at."""
        self._recent_ids: OrderedDict[MessageId, None] = OrderedDict()
        self._arrived = 0.0
        """When the frame being handled arrived (``time.perf_counter``)."""

    @property
    def account_id(self) -> str | None:
        return None if self.account is None else self.account.account_id

    # -- the Viewer and Connection protocols -----------------------------------------

    def deliver(self, message: wire.Reply) -> None:
        self._send(self.lobby.frames.encode(message))

    def send_frame(self, frame: str) -> None:
        """A message made by the process hosting a table, sent on as it is."""
        self._send(frame)

    def close(self, code: int, reason: str) -> None:
        self._close(code, reason)

    # -- frames in -------------------------------------------------------------------

    async def receive(self, frame: str | bytes) -> None:
        self._arrived = time.perf_counter()
        if isinstance(frame, bytes):
            self._refuse(None, "binary_frame", "send JSON in text frames")
            return
        try:
            message = decode_client(frame)
        except BadMessage as bad:
            self._refuse(message_id(frame), bad.code, bad.message)
            return
        try:
            await self._dispatch(message)
        except Refused as refused:
            self._refuse(message.id, refused.code, refused.message)
        except LeaseLost as lost:
            self.lobby.abandon(lost.table_id)
            self._refuse(message.id, "table_moved", MOVED)
        except StoreUnavailable:
            self._refuse(message.id, "store_unavailable", UNAVAILABLE)

    def _refuse(self, ref: MessageId | None, code: str, text: str) -> None:
        self.deliver(self.lobby.refusal(ref, code, text))

    async def disconnected(self) -> None:
        """The connection is gone: seats keep their grace period, watching stops."""
        for table in self._watching:
            table.forget(self)
        if self.account is None:
            return
        account_id = self.account.account_id
        if self.relay is not None:
            for table_id in self.remote_tables:
                host = await self.lobby.store.table_host(table_id)
                if host is not None:
                    self.relay.forward(host, self, account_id, table_id, "gone")
        if not self.lobby.detach(account_id, self):
            return
        for table in self.lobby.seated_at(account_id):
            await table.disconnect(account_id)

    # -- what each message does ------------------------------------------------------

    async def _dispatch(self, message: cmd.AnyClientMessage) -> None:
        if isinstance(message, cmd.Hello):
            await self._hello(message)
            return
        if self.account is None:
            raise Refused("hello_required", "say hello first")
        account_id = self.account.account_id
        if message.id is not None and not self._first_time(message.id):
            raise Refused("duplicate_id", f"message {message.id!r} was already handled")
        match message:
            case cmd.ListTables():
                tables = await self.lobby.summaries()
                self.deliver(wire.TableList(ref=message.id, tables=tables))
            case cmd.ListHands(table_id=table_id, limit=limit):
                store = self.lobby.store
                if table_id is None:
                    hands = await store.account_hands(account_id, limit)
                else:
                    hands = await store.table_hands(table_id, limit)
                self.deliver(wire.HandList(ref=message.id, hands=tuple(map(played, hands))))
            case cmd.CreateTable(options=options, buy_in=buy_in):
                if buy_in is not None:
                    # Checked first, so a refused buy-in leaves no empty table behind.
                    verify_buy_in(options, buy_in)
                    await self.lobby.verify_balance(account_id, buy_in)
                table = await self.lobby.create_table(options, account_id)
                self.deliver(wire.TableCreated(ref=message.id, table=table.summary()))
                if buy_in is not None:
                    try:
                        await table.sit(
                            account_id, self.account.name, self, buy_in, None, message.id
                        )
                    except Refused:
                        await self.lobby.discard(table)
                        raise
            case _:
                await self._at_table(account_id, self.account.name, message)

    async def _at_table(self, account_id: str, name: str, message: cmd.TableMessage) -> None:
        """Serve a message about one table here, or send it to the process hosting it."""
        table = self.lobby.tables.get(message.table_id)
        if table is None:
            host = await self._host_elsewhere(message.table_id)
            if host is not None:
                assert self.relay is not None
                self.relay.forward(host, self, account_id, message.table_id, "command", message)
                return
        table = self.lobby.table(message.table_id)
        await table.serve(account_id, name, self, message)
        self.lobby.metrics.served(message, self._arrived)
        if isinstance(message, cmd.WatchTable):
            self._watching.add(table)
        elif isinstance(message, cmd.LeaveTable):
            self._watching.discard(table)

    async def _host_elsewhere(self, table_id: str) -> str | None:
        """The process hosting ``table_id``, when it is another one this one can reach."""
        if self.relay is None:
            return None
        host = await self.lobby.store.table_host(table_id)
        return host if host is not None and host != self.relay.owner else None

    def _first_time(self, message_id: MessageId) -> bool:
        """True the first time this connection uses ``message_id`` (of its last 1,024):
        a client that resends a message it is unsure of gets an error, not a double bet."""
        if message_id in self._recent_ids:
            return False
        self._recent_ids[message_id] = None
        if len(self._recent_ids) > RECENT_IDS:
            self._recent_ids.popitem(last=False)
        return True

    async def _hello(self, hello: cmd.Hello) -> None:
        if self.account is not None:
            raise Refused("already_identified", f"you are {self.account.name} already")
        if hello.version != PROTOCOL_VERSION:
            raise Refused(
                "unsupported_version",
                f"this server speaks protocol version {PROTOCOL_VERSION}, not {hello.version}",
            )
        token: str | None = None
        if hello.token is not None:
            account = await self.lobby.resume_account(hello.token)
        elif hello.name is not None:
            account, token = await self.lobby.open_account(hello.name)
        else:
            raise Refused("name_required", "say hello with a name, or with your token")
        self.lobby.attach(account.account_id, self)
        if self.relay is not None:
            try:
                await self.relay.take_over(account.account_id, self)
            except StoreUnavailable:
                self.lobby.detach(account.account_id, self)
                raise
        self.account = account
        tables = self.lobby.seated_at(account.account_id)
        elsewhere = {}
        if self.relay is not None:
            for table_id in await self.lobby.seated_elsewhere(account.account_id):
                host = await self._host_elsewhere(table_id)
                if host is not None:
                    elsewhere[table_id] = host
        self.deliver(
            wire.Welcome(
                ref=hello.id,
                version=PROTOCOL_VERSION,
                account_id=account.account_id,
                name=account.name,
                balance=account.balance,
                token=token,
                resumed=token is None,
                tables=(*(t.table_id for t in tables), *elsewhere),
            )
        )
        for table in tables:
            await table.reconnect(account.account_id, self)
        for table_id, host in elsewhere.items():
            assert self.relay is not None
            self.relay.forward(host, self, account.account_id, table_id, "reconnect")


def played(hand: HandRecord) -> wire.PlayedHand:
    after = dict(hand.stacks_after)
    return wire.PlayedHand(
        table_id=hand.table_id,
        hand_id=hand.hand_id,
        voided=hand.voided,
        seats=tuple(
            wire.SeatResult(seat=seat, account_id=account, before=before, after=after[seat])
            for (seat, account), (_, before) in zip(hand.accounts, hand.stacks_before, strict=True)
        ),
        events=tuple(json.loads(frame) for frame in hand.events),
    )
