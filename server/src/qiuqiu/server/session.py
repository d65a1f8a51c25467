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

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from qiuqiu.protocol import (
    PROTOCOL_VERSION,
    BadMessage,
    ErrorCode,
    TableOptions,
    decode_client,
    message_id,
)
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId
from qiuqiu.server import watched
from qiuqiu.server.errors import LeaseLost, Refused, StoreUnavailable
from qiuqiu.server.frames import Frame
from qiuqiu.server.history import hand_list
from qiuqiu.server.lobby import Lobby, moving
from qiuqiu.server.store import Account
from qiuqiu.server.table import MOVED, UNAVAILABLE, Table, verify_buy_in

if TYPE_CHECKING:
    from qiuqiu.server.relay import Relay

RECENT_IDS = 1024


class Session:
    """One connection: who it is (after ``hello``), what it watches, the ids it used."""

    def __init__(
        self,
        lobby: Lobby,
        send: Callable[[str], None],
        close: Callable[[int, str], None],
        relay: Relay | None = None,
        may_open_account: Callable[[], str | None] = lambda: None,
        account_not_opened: Callable[[], None] = lambda: None,
    ) -> None:
        self.lobby = lobby
        self.relay = relay
        self._may_open_account = may_open_account
        """None if this connection may open one more account, counting it; else why not."""
        self._account_not_opened = account_not_opened
        """The account counted last was not opened after all."""
        self._send = send
        self._close = close
        self.session_id = secrets.token_hex(8)
        self.account: Account | None = None
        self.watching: set[str] = set()
        """The tables this session watches, here or elsewhere, by id (:mod:`.watched`)."""
        self.asked_to_watch: set[str] = set()
        """Tables elsewhere this session asked to watch, their host's answer not come yet:
        an ``error`` from there now refuses the watch."""
        self.remote_tables: dict[str, str] = {}
        """Tables hosted by another process that this session sits or watches at."""
        self.sitting_down: set[str] = set()
        """Tables hosted here this session asked for a seat at: the seat may be written
        after the connection is gone, and must then be away, not connected to nothing."""
        self.claim = 0
        """The number of this session's claim on its account's connection (0 without
        other processes): a table takes its seat back only from a newer claim."""
        self.owed_welcome = False
        """Whether the store may have made an account for this connection's hello: its
        welcome is then owed however long the store takes, past the hello's deadline."""
        self._recent_ids: OrderedDict[MessageId, None] = OrderedDict()
        self._seqs: dict[str, int] = {}
        """The last seq this connection was sent for each table."""
        self._arrived = 0.0
        """When the frame being handled arrived (``time.perf_counter``)."""

    @property
    def account_id(self) -> str | None:
        return None if self.account is None else self.account.account_id

    @property
    def name(self) -> str:
        return "" if self.account is None else self.account.name

    # -- the Viewer and Connection protocols -----------------------------------------

    def deliver(self, message: wire.Reply) -> None:
        self.deliver_frame(Frame.of(message))

    def deliver_frame(self, frame: Frame) -> None:
        table_id, seq = frame.table_id, frame.seq
        if (
            table_id is not None
            and seq is not None
            and not self._in_order(table_id, seq, frame.event)
        ):
            return
        self._send(frame.text)

    def send_frame(self, frame: str, table_id: str | None = None, seq: int | None = None) -> None:
        """A message made by the process hosting a table, sent on as it is; ``seq`` is an
        event's (with ``table_id``), ``None`` for anything else."""
        if table_id is not None and seq is not None and not self._in_order(table_id, seq, True):
            return
        self._send(frame)

    def _in_order(self, table_id: str, seq: int, event: bool) -> bool:
        """Whether a table's event is above every seq this connection was sent for that
        table (a snapshot always is the new start): a table that a new host adopted tells
        whoever comes back how its last hand ended, and one who saw it needs no repeat."""
        last = self._seqs.get(table_id, -1)
        if event and seq <= last:
            return False
        self._seqs[table_id] = max(seq, last)
        return True

    def close(self, code: int, reason: str) -> None:
        self._close(code, reason)

    # -- frames in -------------------------------------------------------------------

    async def receive(self, frame: str | bytes) -> bool:
        """Handle one frame; True if it was an action played on the seat's own turn,
        which the gateway does not count against the connection's rate limit."""
        self._arrived = time.perf_counter()
        if isinstance(frame, bytes):
            self.refuse(None, ErrorCode.BINARY_FRAME, "send JSON in text frames")
            return False
        try:
            message = decode_client(frame)
        except BadMessage as bad:
            self.refuse(message_id(frame), bad.code, bad.message)
            return False
        try:
            return await self._dispatch(message)
        except Refused as refused:
            self.refuse(message.id, refused.code, refused.message)
        except LeaseLost as lost:
            self.lobby.abandon(lost.table_id)
            self.refuse(message.id, ErrorCode.TABLE_MOVED, MOVED)
        except StoreUnavailable as error:
            self.lobby.health.failed(error)
            self.refuse(message.id, ErrorCode.STORE_UNAVAILABLE, UNAVAILABLE)
        return False

    def refuse(self, ref: MessageId | None, code: ErrorCode, text: str) -> None:
        self.deliver(self.lobby.refusal(ref, code, text))

    def disconnected(self) -> None:
        """The connection is gone: seats keep their grace period, watching stops.
        Nothing here waits on the store, so a store away changes none of it."""
        if self.relay is not None:
            self.relay.pending.forget(self.session_id)
        for table_id in self.watching:
            table = self.lobby.tables.get(table_id)
            if table is not None:
                table.forget(self)
        account_id = self.account_id
        if account_id is None:
            return
        if self.relay is not None:
            for table_id, host in self.remote_tables.items():
                if host:
                    self.relay.forward(host, self, table_id, "gone")
        self.lobby.accounts.detach(account_id, self)
        tables = {t.table_id: t for t in self.lobby.seated_at(account_id)}
        for table_id in self.sitting_down:
            if table_id in self.lobby.tables:
                tables.setdefault(table_id, self.lobby.tables[table_id])
        for table in tables.values():
            table.disconnect(account_id, self)

    # -- what each message does ------------------------------------------------------

    async def _dispatch(self, message: cmd.AnyClientMessage) -> bool:
        if isinstance(message, cmd.Hello):
            await self._hello(message)
            return False
        if self.account is None:
            raise Refused(ErrorCode.HELLO_REQUIRED, "say hello first")
        account_id = self.account.account_id
        if message.id is not None and not self._first_time(message.id):
            raise Refused(ErrorCode.DUPLICATE_ID, f"message {message.id!r} was already handled")
        match message:
            case cmd.ListTables():
                self.deliver_frame(await self.lobby.listing(message.id))
            case cmd.ListHands(table_id=table_id, limit=limit):
                self.deliver_frame(
                    await hand_list(self.lobby, message.id, account_id, table_id, limit)
                )
            case cmd.CreateTable(options=options, buy_in=buy_in):
                await self._create_table(message, options, buy_in)
            case cmd.JoinTable(table_id=table_id):
                await self.lobby.verify_seats(account_id, table_id)
                return await self._at_table(account_id, message)
            case _:
                return await self._at_table(account_id, message)
        return False

    async def _create_table(
        self, message: cmd.CreateTable, options: TableOptions, buy_in: int | None
    ) -> None:
        account_id = self.account_id or ""
        if buy_in is not None:
            # Checked first, so a refused buy-in leaves no empty table behind.
            try:
                verify_buy_in(options, buy_in)
            except Refused as refused:
                raise await self._with_balance(refused) from None
            await self.lobby.verify_balance(account_id, buy_in)
            await self.lobby.verify_seats(account_id)
        table = await self.lobby.create_table(options, account_id)
        self.deliver(wire.TableCreated(ref=message.id, table=table.summary()))
        if buy_in is not None:
            join = cmd.JoinTable(id=message.id, table_id=table.table_id, buy_in=buy_in)
            table.serve(account_id, self.name, self, join)
            self.sitting_down.add(table.table_id)

    async def _with_balance(self, refused: Refused) -> Refused:
        """A refused buy-in, saying what the balance is."""
        account = await self.lobby.store.account(self.account_id or "")
        balance = 0 if account is None else account.balance
        return Refused(refused.code, f"{refused.message}; your balance is {balance:,} chips")

    async def _at_table(self, account_id: str, message: cmd.TableMessage) -> bool:
        """Serve a message about one table here, or send it to the process hosting it."""
        table_id = message.table_id
        if isinstance(message, cmd.WatchTable):
            await watched.verify_room(self, table_id)
        table = self.lobby.tables.get(table_id)
        if table is None and self.relay is not None:
            host = await self.lobby.store.table_host(table_id)
            if host is not None and host != self.relay.owner:
                unsent = watched.track(self, message, elsewhere=True)
                self.relay.forward(host, self, table_id, "command", message, unsent=unsent)
                return False
            if host is None and await self.lobby.store.table(table_id) is not None:
                raise Refused(ErrorCode.TABLE_MOVING, moving(table_id))
        table = self.lobby.table(table_id)
        own_turn = isinstance(message, cmd.TableAction) and _on_turn(table, account_id)
        try:
            table.serve(account_id, self.name, self, message)
        except Refused as refused:
            if refused.code is ErrorCode.INVALID_BUY_IN:
                raise await self._with_balance(refused) from None
            raise
        table.when_sent(partial(self.lobby.metrics.served, message, self._arrived))
        watched.track(self, message, elsewhere=False)
        if isinstance(message, cmd.JoinTable):
            self.sitting_down.add(table_id)
        return own_turn

    def told(self, table_id: str, kind: str) -> None:
        """A reply of type ``kind`` from the process hosting ``table_id``."""
        watched.told(self, table_id, kind)

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
            raise Refused(ErrorCode.ALREADY_IDENTIFIED, f"you are {self.account.name} already")
        if hello.version != PROTOCOL_VERSION:
            raise Refused(
                ErrorCode.UNSUPPORTED_VERSION,
                f"this server speaks protocol version {PROTOCOL_VERSION}, not {hello.version}",
            )
        token: str | None = None
        if hello.token is not None:
            account = await self.lobby.accounts.resume_account(hello.token)
        elif hello.name is not None:
            self.lobby.accounts.verify_name(hello.name)
            refusal = self._may_open_account()
            if refusal is not None:
                raise Refused(ErrorCode.TOO_MANY_ACCOUNTS, refusal)
            self.owed_welcome = True
            try:
                account, token = await self.lobby.accounts.open_account(hello.name)
            except (Refused, StoreUnavailable):
                # No account was made: one whose write's answer was lost is found, not
                # refused (Accounts.open_account).
                self.owed_welcome = False
                self._account_not_opened()
                raise
        else:
            raise Refused(ErrorCode.NAME_REQUIRED, "say hello with a name, or with your token")
        async with self.lobby.accounts.arriving(account.account_id):
            if token is None:
                await self._arrive(account, token, hello.id)
            else:  # a new account, whose token only this welcome can give
                await self.lobby.accounts.until_answered(
                    lambda: self._arrive(account, token, hello.id)
                )

    async def _arrive(self, account: Account, token: str | None, ref: MessageId | None) -> None:
        store = self.lobby.store
        previous: tuple[str, ...] = ()
        if self.relay is not None:
            holder = f"{self.relay.owner}:{self.session_id}"
            previous, self.claim = await store.claim_connection(account.account_id, holder)
        elsewhere: dict[str, str | None] = {}
        if self.relay is not None:
            for table_id in await store.seated_tables(account.account_id):
                if table_id not in self.lobby.tables:
                    host = await store.table_host(table_id)
                    elsewhere[table_id] = None if host == self.relay.owner else host
        # Read again after the seats: a buy-in written since is then in both, never in
        # the tables with its chips still in the balance.
        account = await store.account(account.account_id) or account
        self.lobby.accounts.attach(account.account_id, self)
        self.account = account
        here = self.lobby.seated_at(account.account_id)
        for table in here:  # adopted here while this hello waited on the store
            elsewhere.pop(table.table_id, None)
        for table_id, host in elsewhere.items():
            if host is None:
                self.remote_tables[table_id] = ""  # reattached when its new host says so
        self.deliver(
            wire.Welcome(
                ref=ref,
                version=PROTOCOL_VERSION,
                account_id=account.account_id,
                name=account.name,
                balance=account.balance,
                token=token,
                resumed=token is None,
                tables=(*(t.table_id for t in here), *elsewhere),
                moving=tuple(t for t, host in elsewhere.items() if host is None),
            )
        )
        for table in here:
            table.reconnect(account.account_id, self, self.claim)
        if self.relay is not None:
            for table_id, host in elsewhere.items():
                if host is not None:
                    self.relay.forward(host, self, table_id, "reconnect")
            # Last, so the seats have moved to this connection before the old one goes.
            self.relay.take_over(previous)


def _on_turn(table: Table, account_id: str) -> bool:
    hand, seat = table.core.hand, table.seat_of(account_id)
    if hand is None or seat is None or not table.playing:
        return False
    return hand.actor == seat.seat or seat.seat in hand.pending_cuts
