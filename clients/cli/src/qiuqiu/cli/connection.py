"""A session with a QiuQiu server over WebSocket: the part every client needs.

:class:`Connection` says ``hello`` (resuming with a token when it has one),
sends requests and waits for the reply that names them, keeps a
:class:`~qiuqiu.cli.game.TableState` per table (asking for a snapshot when a
``seq`` is missing), and reconnects by itself when the connection drops. Every
message the server sends, and a :class:`Disconnected` / :class:`Reconnected`
notice of its own, comes out of :meth:`Connection.messages` in order, after the
table state has taken it in, so whatever reads them sees a state that already
agrees with the message.

It also holds the server to its deals (:mod:`qiuqiu.cli.deals`): it sits down
with a client seed of its own (:meth:`Connection.join_table`,
:meth:`Connection.open_table`), sends a fresh one when it finds itself seated
without having sent one (a session resumed after a restart), keeps what it saw
of every table's hands in :attr:`Connection.deals`, and rebuilds them all once
the table's seed is out (``table_closed``, or :meth:`Connection.verify_table`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import ssl
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import TypeVar

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from qiuqiu.cli.deals import TableDeals, fresh_seed
from qiuqiu.cli.errors import BalanceTooLow, ConnectionLost, ServerRefused, ShuffleNotRevealed
from qiuqiu.cli.game import Applied, TableState
from qiuqiu.protocol import (
    PROTOCOL_VERSION,
    BadMessage,
    DealTampered,
    ErrorCode,
    TableOptions,
    decode_server,
    encode,
)
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire

OPEN_TIMEOUT = 10.0
"""Seconds the WebSocket handshake may take, and then again the welcome: a server that
accepts a connection and says nothing is as unreachable as one that refuses it."""
MAX_FRAME = 64 * 2**20
"""Bytes a message from the server may have: ``table_list`` names every table of the
lobby, half a kilobyte each, so a lobby of thousands is megabytes (websockets' own
bound, 1 MiB, would close the connection on it)."""
SNAPSHOT_PATIENCE = 2.0
"""Seconds to wait for a snapshot asked for after a gap before asking again."""

log = logging.getLogger(__name__)

RECONNECT_DELAYS = (0.1, 0.25, 0.5, 1.0, 2.0, 2.0, 2.0, 4.0)
"""Waits between reconnect attempts: quick at first, then the last one again and again
until the seat's grace period is over."""

DEFAULT_GRACE = 60.0
"""Seconds a server holds the seat of a connection that dropped, unless it was started
with another ``--grace`` (PROTOCOL.md, "The session"). A client hears the server's own
only from a ``player_disconnected`` about someone else."""
GRACE_MARGIN = 10.0
"""Seconds to go on trying past the grace period: the server counts it from when it saw
the drop, and a hand in play keeps the seat until the hand ends."""

TAKEN_OVER = 4000
"""The close of a connection whose account connected again elsewhere."""
FINAL_CLOSE_CODES = frozenset({1000, 1008, 1009, TAKEN_OVER})
"""Closes that reconnecting cannot mend: a clean close, a policy of the server's (a
flood, too many connections from this address), an oversize frame, or the account
taken over by another connection."""

MOVING_RETRIES = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Waits before sending again a ``join_table``, or a ``watch_table`` sent after a
reconnect or a move, refused one of :data:`WAITED_OUT`."""
WAITED_OUT = frozenset({ErrorCode.TABLE_MOVING, ErrorCode.STORE_UNAVAILABLE})
"""Refusals that say nothing changed and that a moment mends: the table's server
stopped and another adopts it once its lease runs out (5 s by default), or the
table's host is making sure it still holds the table after losing touch with Redis."""

REVEAL_PATIENCE = 5.0
"""Seconds :meth:`Connection.verify_table` waits for a table's seed by default: a
table closes just after its last player's ``table_left``."""
REVEAL_POLL = 0.1
HISTORY_LIMIT = 100
"""The most hands ``list_hands`` gives of one table."""

R = TypeVar("R", bound=wire.Reply)


@dataclass(frozen=True, slots=True)
class Disconnected:
    """The connection dropped (``reason``); the client is trying to reconnect, for as
    long as the server holds a seat: ``grace`` seconds, ``None`` when the server has not
    said (it holds it for :data:`DEFAULT_GRACE` unless started otherwise)."""

    reason: str
    grace: float | None = None


@dataclass(frozen=True, slots=True)
class Reconnected:
    """The session is back, on the same account; snapshots of its tables follow."""

    welcome: wire.Welcome


@dataclass(frozen=True, slots=True)
class Closed:
    """The connection is gone for good (``reason``); no more messages come."""

    reason: str
    seats_gone: bool = False
    """The server no longer knows the account: it holds no seat, and no chip, for it."""
    taken_over: bool = False
    """The account connected again elsewhere: its seats play on over that connection."""


Notice = wire.AnyServerMessage | Disconnected | Reconnected | Closed


class Connection:
    """One account's session with a server. Open it with :meth:`open`::

        async with await Connection.open("ws://127.0.0.1:8765", name="Ann") as conn:
            table, joined = await conn.open_table(TableOptions(), buy_in=500)
            async for message in conn.messages():
                ...

    ``on_token`` is called with the resume token when the server issues one, so
    the caller can keep it for next time.
    """

    def __init__(
        self,
        url: str,
        *,
        name: str | None = None,
        token: str | None = None,
        on_token: Callable[[str], None] | None = None,
        reconnect: bool = True,
    ) -> None:
        self.url = url
        self.name = name
        self.token = token
        self.on_token = on_token
        self.reconnect = reconnect
        self.tables: dict[str, TableState] = {}
        self.deals: dict[str, TableDeals] = {}
        """Every table's deals as this client saw them, kept after leaving it."""
        self.welcome: wire.Welcome | None = None
        self._ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[wire.Reply]] = {}
        self._messages: asyncio.Queue[Notice] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
        self._awaiting_snapshot: dict[str, float] = {}
        """The tables a snapshot was asked for after a gap, and when."""
        self._heard: dict[str, int] = {}
        """Each table's newest ``seq`` received, whether handed out yet or not."""
        self.grace: float | None = None
        """Seconds the server holds a seat whose connection dropped, once a
        ``player_disconnected`` has said; ``None`` until then."""
        self.played: str | None = None
        """The table a bot's :func:`~qiuqiu.cli.bot.play` reads this connection's messages
        for: they go to one reader, and a second play would take some of the first's,
        both then waiting for ever for what the other took."""
        self._closing = False
        self._closed_seeds: dict[str, str] = {}
        """The seed each ``table_closed`` revealed, noted as it was received: a server
        that stops closes the connection just after, and the message may never be read."""
        self._read_to_close = asyncio.Event()
        """Set once every message before the connection closed has been received."""
        self.watching: set[str] = set()
        """The tables this connection watches (from ``table_watched`` until it leaves,
        sits down there or the table closes): a new connection watches nothing, so each
        is watched again after a reconnect."""
        self._watched_again: dict[int, tuple[str, int]] = {}
        """The ids of those watches, with their table and how many times it was refused
        ``table_moving`` before: one refused otherwise (the table closed meanwhile), or
        once :data:`MOVING_RETRIES` are used up, is watched no more, and its state goes."""
        self._seeds_after_snapshot: dict[str, str] = {}
        """Seeds :meth:`set_seed` was given at a seat before its table's snapshot was
        handed out: each goes with that snapshot."""
        self._heard_hands: dict[str, int] = {}
        """The newest hand of each table heard of (a ``hand_started``, a snapshot's hand),
        as read from the socket: ahead of :meth:`messages`, which may hand out hands
        begun long before a seed it then sends."""
        self._seeds_sent: dict[int, str] = {}
        """The ids of the ``set_seed`` messages sent on this connection and not answered
        yet, with their table: a refusal of one says no ``seed_set`` comes for it."""
        self._watches_later: set[asyncio.Task[None]] = set()
        """The watches sent again beside the reader: of a table that moved to another
        server, or that had not finished moving and is given time to."""

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        name: str | None = None,
        token: str | None = None,
        on_token: Callable[[str], None] | None = None,
        reconnect: bool = True,
    ) -> Connection:
        """Connect and say hello. With a ``token`` the account is resumed; if the server
        does not know the token and a ``name`` is given, a new account is opened."""
        conn = cls(url, name=name, token=token, on_token=on_token, reconnect=reconnect)
        await conn._connect()
        conn._reader = asyncio.create_task(conn._read_forever())
        return conn

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def account_id(self) -> str:
        assert self.welcome is not None
        return self.welcome.account_id

    # -- sending -------------------------------------------------------------------

    def next_id(self) -> int:
        return next(self._ids)

    async def send(self, message: cmd.ClientMessage) -> None:
        """Send without waiting; an ``error`` naming it comes out of :meth:`messages`."""
        if self._ws is None:
            raise ConnectionLost("not connected")
        try:
            await self._ws.send(encode(message))
        except ConnectionClosed:
            # Said as the reader says it: websockets' own words repeat the close twice.
            raise ConnectionLost(f"connection closed: {self._close_reason()}") from None

    async def request(self, message: cmd.ClientMessage, expected: type[R]) -> R:
        """Send ``message`` with a fresh id and return the reply of type ``expected``
        that names it. An ``error`` is raised as :class:`ServerRefused`."""
        ref = self.next_id()
        future: asyncio.Future[wire.Reply] = asyncio.get_running_loop().create_future()
        self._pending[ref] = future
        try:
            await self.send(message.model_copy(update={"id": ref}))
            reply = await future
        finally:
            self._pending.pop(ref, None)
            if future.done() and not future.cancelled():
                # A send that waited on a closing connection raised its own error, the
                # reader having failed this future meanwhile: read, so that asyncio does
                # not log it as never retrieved.
                future.exception()
        if isinstance(reply, wire.Error):
            raise ServerRefused(reply.code, reply.message)
        if not isinstance(reply, expected):
            raise ConnectionLost(f"expected {expected.__name__}, got {type(reply).__name__}")
        return reply

    # -- the deal ---------------------------------------------------------------------

    def deals_of(self, table_id: str) -> TableDeals:
        return self.deals.setdefault(table_id, TableDeals(table_id))

    async def open_table(
        self, options: TableOptions, buy_in: int
    ) -> tuple[wire.TableSummary, wire.TableJoined]:
        """Open a table and sit down at it with a seed of this client's own. Two
        messages, since ``create_table`` takes no seed: the table's seed must be
        committed to before the server sees any player's."""
        created = await self.request(cmd.CreateTable(options=options), wire.TableCreated)
        self.deals_of(created.table.table_id).committed(created.table.seed_commitment)
        return created.table, await self.join_table(created.table.table_id, buy_in)

    async def join_table(
        self, table_id: str, buy_in: int, seat: int | None = None
    ) -> wire.TableJoined:
        """Sit down at ``table_id`` with a fresh client seed, having first read the
        table's seed commitment from the lobby when this client has not seen it. A
        table moving to another server is asked again, a few times, while it moves."""
        deals = self.deals_of(table_id)
        if deals.seed_commitment is None:
            listed = await self.request(cmd.ListTables(), wire.TableList)
            for summary in listed.tables:
                if summary.table_id == table_id:
                    deals.committed(summary.seed_commitment)
        seed = fresh_seed()
        deals.joined_with(seed)
        join = cmd.JoinTable(table_id=table_id, buy_in=buy_in, seat=seat, client_seed=seed)
        return await self.request_waiting_out(join, wire.TableJoined)

    async def request_waiting_out(self, message: cmd.TableMessage, expected: type[R]) -> R:
        """:meth:`request`, asked again after each of :data:`MOVING_RETRIES` while the
        refusal is one of :data:`WAITED_OUT` (nothing changed, and a moment mends it)."""
        for wait in MOVING_RETRIES:
            try:
                return await self.request(message, expected)
            except ServerRefused as refused:
                if refused.code not in WAITED_OUT:
                    raise
                log.info(
                    "%s at table %s: %s; trying again",
                    message.type,
                    message.table_id,
                    refused.message,
                )
            await asyncio.sleep(wait)
        return await self.request(message, expected)

    async def set_seed(self, table_id: str, client_seed: str) -> None:
        """Send ``set_seed`` without waiting: the ``seed_set`` (or an ``error``) comes
        out of :meth:`messages`, and the seed applies from the next hand. At a seat
        whose table's snapshot :meth:`messages` has not handed out yet (a session
        resumed by a new process), it goes once it has: sent before, the table's
        seed commitment would be seen only after it, and the hand in play, begun
        before, would count as one dealt without it (:class:`TableDeals`), both of
        which fail the table though the server is honest."""
        welcome = self.welcome
        if table_id not in self.tables and welcome is not None and table_id in welcome.tables:
            self._seeds_after_snapshot[table_id] = client_seed
            return
        await self._send_seed(table_id, client_seed)

    async def _send_seed(self, table_id: str, client_seed: str) -> None:
        ref = self.next_id()
        message = cmd.SetSeed(id=ref, table_id=table_id, client_seed=client_seed)
        self.deals_of(table_id).sent_seed(client_seed, self._heard_hands.get(table_id, 0))
        self._seeds_sent[ref] = table_id
        await self.send(message)

    async def verify_table(self, table_id: str, patience: float = REVEAL_PATIENCE) -> int:
        """Rebuild every deck of ``table_id`` from its revealed seed, once it has closed:
        the hands this client saw and those ``list_hands`` gives (its last 100).
        Returns how many hands were rebuilt. Raises :class:`DealTampered` if one
        was not the deck committed to, and :class:`ShuffleNotRevealed` if the table
        is still open after ``patience`` seconds (it closes when its last player
        leaves). Once the connection has closed, the seed a ``table_closed`` revealed
        before it (a stopping server's) rebuilds the hands this client saw."""
        deals = self.deals.get(table_id)
        if deals is None or deals.seed_commitment is None:
            raise ShuffleNotRevealed(f"this client never saw table {table_id}'s seed commitment")
        deadline = time.monotonic() + patience
        while True:
            try:
                listed = await self.request(
                    cmd.ListHands(table_id=table_id, limit=HISTORY_LIMIT), wire.HandList
                )
            except ConnectionLost:
                # A stopping server closes the table, reveals its seed, then closes the
                # connection: the history is out of reach, not the hands this client saw.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(OPEN_TIMEOUT):
                        await self._read_to_close.wait()
                seed = self._closed_seeds.get(table_id, deals.table_seed)
                if seed is None:
                    raise
                return deals.reveal(seed).hands
            revealed = next(
                (hand.table_seed for hand in listed.hands if hand.table_seed is not None),
                deals.table_seed,
            )
            if revealed is not None:
                return deals.reveal(revealed, listed.hands).hands
            if time.monotonic() >= deadline:
                raise ShuffleNotRevealed(f"table {table_id} is still open: its seed is not out")
            await asyncio.sleep(REVEAL_POLL)

    # -- receiving -----------------------------------------------------------------

    async def messages(self) -> AsyncIterator[Notice]:
        """Every server message and connection notice, in order, until :class:`Closed`.

        Each table message is folded into :attr:`tables` just before it is handed
        out, so the state read beside a message is the state as of that message."""
        while True:
            message = await self._messages.get()
            if isinstance(message, Reconnected):
                self._forget_seats_gone(message.welcome)
                # No answer comes to what was sent on the connection that closed.
                self._seeds_sent.clear()
                for deals in self.deals.values():
                    deals.seed_unanswered()
                # A snapshot of each comes unasked, after the ends of the hands dealt
                # meanwhile, whose seqs are far apart: those gaps ask for none.
                now = time.monotonic()
                for table_id in message.welcome.tables:
                    self._awaiting_snapshot[table_id] = now
            if isinstance(message, Disconnected | Reconnected | Closed) or await self._keep(
                message
            ):
                yield message
            if isinstance(message, Closed):
                return

    def _forget_seats_gone(self, welcome: wire.Welcome) -> None:
        """Drop the state of every table where this account sat and ``welcome`` finds
        no seat of it: it stood up while the connection was down (its grace period
        ran out, or a leave asked for went through), and no snapshot comes of it."""
        gone = [
            table_id
            for table_id, state in self.tables.items()
            if state.you is not None
            and table_id not in welcome.tables
            and table_id not in welcome.moving
        ]
        for table_id in gone:
            del self.tables[table_id]

    def behind(self, table_id: str) -> bool:
        """Whether the server has said more of ``table_id`` than its state holds: a
        newer event is received and waits to come out of :meth:`messages`."""
        state = self.tables.get(table_id)
        return state is not None and self._heard.get(table_id, 0) > state.seq

    async def close(self) -> None:
        """Close the connection (seats keep their grace period: leave tables first)."""
        self._closing = True
        self._cancel_watches_later()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            # The reader's own end, whatever it was, is not the caller's: a cancelled
            # caller still raises CancelledError.
            await asyncio.gather(self._reader, return_exceptions=True)

    # -- inside ----------------------------------------------------------------------

    async def _connect(self, *, resuming: bool = False) -> wire.Welcome:
        """Open the socket and say hello; ``resuming`` (a reconnect) with the token
        alone, since a new account there would hold none of this session's seats."""
        try:
            self._ws = await connect(
                self.url, compression=None, open_timeout=OPEN_TIMEOUT, max_size=MAX_FRAME
            )
        except ConnectionRefusedError:
            # Said as a person reads it: "[Errno 111] Connect call failed (...)" is not.
            raise ConnectionLost(
                f"cannot connect to {self.url}: nothing listens there (is the server running?)"
            ) from None
        except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as error:
            raise ConnectionLost(
                f"cannot connect to {self.url}: {_why_not(self.url, error)}"
            ) from None
        self._read_to_close.clear()
        try:
            async with asyncio.timeout(OPEN_TIMEOUT):
                welcome = await self._hello(resuming)
        except BaseException as error:
            # Refused, cut off or left waiting before the welcome: this socket is of no
            # more use.
            await self._ws.close()
            self._read_to_close.set()
            if isinstance(error, ConnectionClosed):
                raise ConnectionLost(f"connection closed before the welcome: {error}") from None
            if isinstance(error, TimeoutError):
                raise ConnectionLost(
                    f"no welcome from {self.url} in {OPEN_TIMEOUT:g} s after hello"
                ) from None
            raise
        self.welcome = welcome
        if welcome.token is not None:
            self.token = welcome.token
            if self.on_token is not None:
                self.on_token(welcome.token)
        return welcome

    async def _hello(self, resuming: bool) -> wire.Welcome:
        """Say hello before the reader runs: the welcome is the first reply."""
        assert self._ws is not None
        attempts = [cmd.Hello(version=PROTOCOL_VERSION, token=self.token)] if self.token else []
        if self.name is not None and not resuming:
            attempts.append(cmd.Hello(version=PROTOCOL_VERSION, name=self.name))
        if not attempts:
            raise ValueError("a connection needs a name or a token")
        for hello in attempts:
            await self._ws.send(encode(hello))
            try:
                reply = decode_server(await self._ws.recv())
            except BadMessage as bad:
                raise ConnectionLost(
                    f"cannot connect to {self.url}: what answers there is no QiuQiu server "
                    f"(its answer to hello: {bad})"
                ) from None
            if isinstance(reply, wire.Welcome):
                return reply
            if isinstance(reply, wire.Error) and reply.code != ErrorCode.UNKNOWN_TOKEN:
                raise ServerRefused(reply.code, reply.message)
        assert isinstance(reply, wire.Error)
        raise ServerRefused(reply.code, reply.message)

    async def _read_forever(self) -> None:
        while True:
            reason = await self._read_until_closed()
            self._fail_pending(reason)
            given_up = await self._come_back(reason)
            if given_up is not None:
                self._messages.put_nowait(given_up)
                return

    async def _read_until_closed(self) -> str:
        assert self._ws is not None
        try:
            async for frame in self._ws:
                try:
                    message = decode_server(frame)
                except BadMessage as bad:
                    log.warning("ignoring a message this client does not understand: %s", bad)
                    continue
                self._take(message)
        except ConnectionClosed:
            pass
        self._read_to_close.set()
        return self._close_reason()

    def _close_reason(self) -> str:
        assert self._ws is not None
        code = self._ws.close_code or 1006
        return f"{code} {self._ws.close_reason or 'connection lost'}"

    def _take(self, message: wire.AnyServerMessage) -> None:
        """Hand a reply to the request waiting for it, and queue every message but the
        errors a request raises."""
        if isinstance(message, wire.TableClosed) and message.table_seed is not None:
            self._closed_seeds[message.table_id] = message.table_seed
        self._follow_watching(message)
        if isinstance(message, wire.TableEvent):
            self._hear(message.table_id, message.seq)
            if isinstance(message, wire.HandStarted):
                self._hear_hand(message.table_id, message.hand_id)
        elif isinstance(message, wire.TableSnapshot):
            self._hear(message.table.table_id, message.seq)
            if message.table.hand is not None:
                self._hear_hand(message.table.table_id, message.table.hand.hand_id)
        answers_request = not isinstance(message, wire.TableEvent)
        future = self._pending.get(message.ref) if isinstance(message.ref, int) else None
        if answers_request and future is not None and not future.done():
            future.set_result(message)
            if isinstance(message, wire.Error):
                return
        self._messages.put_nowait(message)

    def _follow_watching(self, message: wire.AnyServerMessage) -> None:
        if isinstance(message, wire.TableWatched):
            self.watching.add(message.table_id)
            if isinstance(message.ref, int):
                self._watched_again.pop(message.ref, None)
        elif (
            isinstance(message, wire.TableClosed)
            and message.table_seed is None
            and message.table_id in self.watching
        ):
            # Moved to another server, not closed: a seat's connection is closed (1012)
            # for it to find the table there, a spectator's is not, so it asks again.
            self._in_background(self._watch(message.table_id, moving=0))
        elif isinstance(message, wire.TableJoined | wire.TableLeft | wire.TableClosed):
            self.watching.discard(message.table_id)
        elif isinstance(message, wire.Error) and isinstance(message.ref, int):
            refused = self._watched_again.pop(message.ref, None)
            if refused is None:
                return
            table_id, moving = refused
            if message.code in WAITED_OUT and moving < len(MOVING_RETRIES):
                # Nothing changed: the table's server stopped (as a reconnect follows
                # when a server hands its tables over) and another has not adopted it
                # yet, or its host is making sure of its lease.
                self._in_background(self._watch_later(table_id, moving))
                return
            self.watching.discard(table_id)
            self.tables.pop(table_id, None)

    def _hear(self, table_id: str, seq: int) -> None:
        self._heard[table_id] = max(seq, self._heard.get(table_id, 0))

    def _hear_hand(self, table_id: str, hand_id: int) -> None:
        self._heard_hands[table_id] = max(hand_id, self._heard_hands.get(table_id, 0))

    async def _keep(self, message: wire.AnyServerMessage) -> bool:
        """Fold ``message`` into the table state; ``False`` for an event already seen,
        or one that comes after a gap (a snapshot is on its way) but ``hand_voided``."""
        if isinstance(message, wire.TableClosed) and message.table_seed is not None:
            self._reveal(message.table_id, message.table_seed)
        if isinstance(message, wire.TableSnapshot):
            table_id = message.table.table_id
            deals = self.deals_of(table_id)
            self.tables[table_id] = TableState.from_snapshot(message, deals)
            self._awaiting_snapshot.pop(table_id, None)
            chosen = self._seeds_after_snapshot.pop(table_id, None)
            if message.table.you is not None and (
                chosen is not None or deals.seed is None or deals.pending_seed is not None
            ):
                # Seated, yet this process never sent a seed (a session resumed after a
                # restart), or its last one is not confirmed: a server that stopped with
                # it may never have written it. Sending it again changes nothing else.
                await self._send_seed(table_id, chosen or deals.pending_seed or fresh_seed())
        elif isinstance(message, wire.SeedSet):
            if isinstance(message.ref, int):
                self._seeds_sent.pop(message.ref, None)
            self.deals_of(message.table_id).seed_set(message.client_seed)
        elif isinstance(message, wire.Error) and isinstance(message.ref, int):
            refused = self._seeds_sent.pop(message.ref, None)
            if refused is not None:
                self.deals_of(refused).seed_unanswered()
        elif isinstance(message, wire.TableEvent) and message.table_id in self.tables:
            if isinstance(message, wire.PlayerDisconnected):
                self.grace = message.grace_ms / 1000
            applied = self.tables[message.table_id].apply(message)
            asked = self._awaiting_snapshot.get(message.table_id)
            now = time.monotonic()
            if applied is Applied.GAP and (asked is None or now - asked > SNAPSHOT_PATIENCE):
                # Asked again if it takes long: the request, or its answer, can be lost
                # between server processes while their Redis is away.
                log.info("missed events at table %s: asking for a snapshot", message.table_id)
                self._awaiting_snapshot[message.table_id] = now
                await self.send(cmd.RequestSnapshot(table_id=message.table_id))
            # A hand voided after a gap is handed out all the same: it is how the
            # player learns why the chips in the pot are back, which the snapshot
            # on its way shows but does not explain.
            return applied is Applied.APPLIED or (
                applied is Applied.GAP and isinstance(message, wire.HandVoided)
            )
        elif isinstance(message, wire.TableLeft):
            self.tables.pop(message.table_id, None)
        return True

    def _reveal(self, table_id: str, table_seed: str) -> None:
        """``table_closed`` revealed the seed: rebuild the hands kept of the table. A
        failure stays in its :class:`TableDeals` for whoever reads the messages."""
        deals = self.deals.get(table_id)
        if deals is None or deals.seed_commitment is None or deals.table_seed == table_seed:
            return
        with contextlib.suppress(DealTampered):
            deals.reveal(table_seed)

    def _fail_pending(self, reason: str) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionLost(f"connection closed: {reason}"))

    async def _come_back(self, reason: str) -> Closed | None:
        """Reconnect and resume after the connection closed for ``reason``: ``None``
        once back, else why not."""
        code = int(reason.split()[0])
        if self._closing or not self.reconnect or self.token is None:
            return Closed(reason)
        if code in FINAL_CLOSE_CODES:
            return Closed(reason, taken_over=code == TAKEN_OVER)
        self._messages.put_nowait(Disconnected(reason, self.grace))
        grace = DEFAULT_GRACE if self.grace is None else self.grace
        give_up = time.monotonic() + grace + GRACE_MARGIN
        delays = itertools.chain(RECONNECT_DELAYS, itertools.repeat(RECONNECT_DELAYS[-1]))
        said = ""
        """Why the last try failed, as logged: said once, not at every try."""
        told = False
        while True:
            delay = next(delays)
            if time.monotonic() + delay > give_up:
                return Closed(
                    f"{reason}; no server took the connection back within the grace period"
                )
            await asyncio.sleep(delay)
            if self._closing:
                return Closed(reason)
            if not told:
                # Said once the first try is due, not at the drop: a bot the stopping
                # server stood up closes by then, having nothing left to come back to.
                told = True
                log.info(
                    "the connection dropped (%s): reconnecting, for up to %g s",
                    reason,
                    grace + GRACE_MARGIN,
                )
            try:
                welcome = await self._connect(resuming=True)
            except ConnectionLost as lost:
                said = _say_once(said, str(lost))
                continue
            except ServerRefused as refused:
                if refused.code == ErrorCode.STORE_UNAVAILABLE:  # nothing changed: try again
                    said = _say_once(said, str(refused))
                    continue
                if refused.code == ErrorCode.UNKNOWN_TOKEN:
                    # Final: a server answers so only once its store has no such token (one
                    # whose store is away says store_unavailable), and none ever writes an
                    # account back.
                    return Closed(
                        f"{reason}; the server no longer knows this account (its accounts "
                        "were lost, as an in-memory server's are when it restarts), so "
                        "its seats and the tables it watched are gone",
                        seats_gone=True,
                    )
                return Closed(f"{reason}; the server refused to resume: {refused}")
            if self._closing:
                # close() ran while this reconnect was under way, and closed the socket
                # before it: close this one too, or the reader would read it for ever.
                assert self._ws is not None
                await self._ws.close()
                return Closed(reason)
            log.info("reconnected to %s: the session resumes", self.url)
            self._messages.put_nowait(Reconnected(welcome))
            await self._watch_again(welcome)
            return None

    async def _watch_again(self, welcome: wire.Welcome) -> None:
        """Watch again every table watched before the drop (the seats come back by
        themselves): its snapshot follows, as after the first ``watch_table``."""
        self._watched_again.clear()
        self._cancel_watches_later()
        for table_id in sorted(self.watching.difference(welcome.tables)):
            await self._watch(table_id, moving=0)

    async def _watch(self, table_id: str, *, moving: int) -> None:
        ref = self.next_id()
        self._watched_again[ref] = (table_id, moving)
        with contextlib.suppress(ConnectionLost):  # dropped again: back to the reader
            await self.send(cmd.WatchTable(id=ref, table_id=table_id))

    async def _watch_later(self, table_id: str, moving: int) -> None:
        """Watch ``table_id`` again, refused one of :data:`WAITED_OUT` ``moving`` times
        before, once the table has had a while more to move."""
        await asyncio.sleep(MOVING_RETRIES[moving])
        if table_id in self.watching:
            await self._watch(table_id, moving=moving + 1)

    def _in_background(self, watch: Coroutine[object, object, None]) -> None:
        task = asyncio.create_task(watch)
        self._watches_later.add(task)
        task.add_done_callback(self._watches_later.discard)

    def _cancel_watches_later(self) -> None:
        for later in self._watches_later:
            later.cancel()


def check_balance(welcome: wire.Welcome, buy_in: int) -> None:
    """Raise :class:`BalanceTooLow` unless the balance ``welcome`` gave pays ``buy_in``:
    for a table about to be opened on a connection just made, whose welcome is fresh."""
    if buy_in > welcome.balance:
        raise BalanceTooLow(
            f"your balance is {welcome.balance:,} chips, not enough for a buy-in of {buy_in:,}"
        )


def _why_not(url: str, error: Exception) -> str:
    """Why connecting to ``url`` failed, in words: a reset has none of its own, and a
    TLS handshake cut off is most often a wss:// address for a server without TLS,
    as qiuqiu-server is by itself."""
    why = str(error) or "the connection was reset"
    if url.startswith("wss://") and isinstance(error, ssl.SSLError | ConnectionResetError):
        why += f" (a server without TLS takes ws://: try ws://{url.removeprefix('wss://')})"
    return why


def _say_once(said: str, why: str) -> str:
    """Log why a reconnect failed, unless the last try failed the same way; ``why``."""
    if why != said:
        log.info("reconnecting: %s; trying again", why)
    return why
