"""One client connection's conversation, without the I/O.

A :class:`Session` is given frames and produces messages through the ``send``
and ``close`` callables it was made with, so the same code runs under the
WebSocket gateway and in tests. Its rules:

1. Decode (a bad frame is answered with an ``error``, and the connection stays),
   then check it is allowed (``hello`` first, once; an ``id`` not used before),
   then hand it to the lobby or the table, which alone change anything.
2. Every refusal is an ``error`` naming the message's ``id`` in ``ref``;
   nothing has changed when one is sent.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from qiuqiu.protocol import PROTOCOL_VERSION, BadMessage, decode_client, encode, message_id
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId
from qiuqiu.server.errors import LeaseLost, Refused
from qiuqiu.server.lobby import Lobby
from qiuqiu.server.store import Account
from qiuqiu.server.table import MOVED, Table, verify_buy_in

RECENT_IDS = 1024


class Session:
    """One connection: who it is (after ``hello``), what it watches, the ids it used."""

    def __init__(
        self, lobby: Lobby, send: Callable[[str], None], close: Callable[[int, str], None]
    ) -> None:
        self.lobby = lobby
        self._send = send
        self._close = close
        self.account: Account | None = None
        self._watching: set[Table] = set()
        self._recent_ids: OrderedDict[MessageId, None] = OrderedDict()

    # -- the Viewer and Connection protocols -----------------------------------------

    def deliver(self, message: wire.Reply) -> None:
        self._send(encode(message))

    def close(self, code: int, reason: str) -> None:
        self._close(code, reason)

    # -- frames in -------------------------------------------------------------------

    async def receive(self, frame: str | bytes) -> None:
        if isinstance(frame, bytes):
            self.deliver(wire.Error(code="binary_frame", message="send JSON in text frames"))
            return
        try:
            message = decode_client(frame)
        except BadMessage as bad:
            self.deliver(wire.Error(ref=message_id(frame), code=bad.code, message=bad.message))
            return
        try:
            await self._dispatch(message)
        except Refused as refused:
            self.deliver(wire.Error(ref=message.id, code=refused.code, message=refused.message))
        except LeaseLost as lost:
            self.lobby.abandon(lost.table_id)
            self.deliver(wire.Error(ref=message.id, code="table_moved", message=MOVED))

    async def disconnected(self) -> None:
        """The connection is gone: seats keep their grace period, watching stops."""
        for table in self._watching:
            table.forget(self)
        if self.account is None or not self.lobby.detach(self.account.account_id, self):
            return
        for table in self.lobby.seated_at(self.account.account_id):
            await table.disconnect(self.account.account_id)

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
                self.deliver(wire.TableList(ref=message.id, tables=self.lobby.summaries()))
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
            case cmd.JoinTable(table_id=table_id, buy_in=buy_in, seat=seat):
                table = self.lobby.table(table_id)
                await table.sit(account_id, self.account.name, self, buy_in, seat, message.id)
            case cmd.LeaveTable(table_id=table_id):
                table = self.lobby.table(table_id)
                await table.leave(account_id, self, message.id)
                self._watching.discard(table)
            case cmd.WatchTable(table_id=table_id):
                table = self.lobby.table(table_id)
                await table.watch(self, message.id)
                self._watching.add(table)
            case cmd.RequestSnapshot(table_id=table_id):
                self.deliver(self.lobby.table(table_id).snapshot(self, message.id))
            case _:
                await self.lobby.table(message.table_id).act(account_id, message)

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
        self.account = account
        self.lobby.attach(account.account_id, self)
        tables = self.lobby.seated_at(account.account_id)
        self.deliver(
            wire.Welcome(
                ref=hello.id,
                version=PROTOCOL_VERSION,
                account_id=account.account_id,
                name=account.name,
                balance=account.balance,
                token=token,
                resumed=token is None,
                tables=tuple(t.table_id for t in tables),
            )
        )
        for table in tables:
            await table.reconnect(account.account_id, self)
