"""The WebSocket gateway: connections in, sessions out, and a clean stop.

Each connection gets a :class:`~qiuqiu.server.session.Session`, an outbox
that writes without waiting (so a table never waits on a slow client), and a
token bucket. The gateway alone decides when a connection must go:

- a frame over ``max_frame`` bytes: closed with 1009 by ``websockets`` itself;
- more messages than the rate limit allows: closed with 1008 (a ping or a pong
  counts as a message: each one costs the server a frame read and a pong written);
- a client that does not read its messages (:class:`~qiuqiu.server.outbox.Outbox`):
  closed with 1008;
- a connection that has not said ``hello`` within ``hello_timeout``: closed with 1008
  (an idle connection costs the server a file descriptor, of which it has a limit);
- a connection from an address that holds ``max_connections_per_address`` already:
  closed with 1008 at once; one from an address with as many opening handshakes
  under way, dropped as it connects;
- the server stopping: hands in play are voided with every chip refunded,
  the last messages are flushed, then every connection is closed with 1001.
  Stopping has a deadline (``stop_timeout``): with the store away, what could
  not be written is left as it is in the store, for the next start to void.

It also counts the accounts each address opens (``new_accounts_per_address`` an
hour): one ``hello`` more is refused with ``too_many_accounts``, and the
connection stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from functools import partial
from typing import cast

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode

from qiuqiu.server import logs, loops, strategy
from qiuqiu.server.accounts import Accounts
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.connections import (
    GatewayConnection,
    close_label,
    first_close_code,
    peer_of,
)
from qiuqiu.server.csprng import BatchedSystemRandom
from qiuqiu.server.health import StoreHealth
from qiuqiu.server.http import Routes
from qiuqiu.server.leases import LeaseKeeper
from qiuqiu.server.limits import (
    AccountAllowance,
    AddressCounts,
    TokenBucket,
    address_of,
    no_hello_within,
    too_many_accounts_from,
    too_many_from,
)
from qiuqiu.server.lobby import RESTART, RESTARTING, Lobby
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.metrics import Metrics
from qiuqiu.server.outbox import Outbox
from qiuqiu.server.pauses import PauseWatch
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.relay import Relay
from qiuqiu.server.session import Session
from qiuqiu.server.store import Store
from qiuqiu.server.table import Random, Table, TableTimings

log = logging.getLogger(__name__)

FLUSH_TIMEOUT = 2.0
"""At most, seconds a stopping server gives clients to take their last messages."""

TABLES_SHARE = 0.7
"""The part of the stop deadline the tables may take to close."""


class QiuQiuServer:
    """The whole server: ``await start()``, then ``await stop()`` (SIGTERM does)."""

    def __init__(
        self,
        config: ServerConfig | None = None,
        *,
        store: Store | None = None,
        rng: Random | None = None,
        timing_pauses: bool = True,
    ) -> None:
        self.config = config or ServerConfig()
        self.store = store or MemoryStore()
        self.metrics = Metrics()
        # The lag's timer fires a hundred times a second, which a loop with nothing else
        # to do pays in full (2% of a core on this project's hosts): the terminal
        # client's server, in its own process, has nobody to read /metrics.
        self.pauses = PauseWatch(self.metrics.registry, self._busy) if timing_pauses else None
        self.health = StoreHealth()
        c = self.config
        self.lobby = Lobby(
            self.store,
            rng or BatchedSystemRandom(),
            Accounts(self.store, self.health, c.starting_balance),
            TableTimings(hand_pause=c.hand_pause, grace=c.grace, bot_delay=c.bot_delay),
            c.lease,
            seats_per_account=c.max_seats_per_account,
            spectators_per_table=c.max_spectators,
            watched_per_connection=c.max_watched_tables,
            metrics=self.metrics,
            health=self.health,
        )
        self._keeper: asyncio.Task[None] | None = None
        self.leases = LeaseKeeper(
            self.store,
            c.lease,
            self.health,
            lost=self.lobby.abandon,
            renewed=self._renewed,
            adopt=self.lobby.adopt,
            hosted=lambda: self.lobby.tables,
        )
        self.relay: Relay | None = None
        bus = self.store.bus()
        if bus is not None:
            # Other processes share the store: they may host tables this one's clients play at.
            self.relay = Relay(bus, self.lobby, c.relay_timeout)
            self.lobby.on_adopted = self.relay.announce_adopted
        self._server: Server | None = None
        self._outboxes: set[Outbox] = set()
        self._addresses = AddressCounts(c.max_connections_per_address)
        self._handshakes = AddressCounts(c.max_connections_per_address)
        self._new_accounts = AccountAllowance(c.new_accounts_per_address)
        self._stopping = False
        self._stopped = asyncio.Event()
        self.metrics.watch(lambda: len(self._outboxes), lambda: len(self.lobby.tables))
        if isinstance(store := self.store, RedisStore):
            self.metrics.store_round_trips.count = lambda: store.round_trips
        self._routes = Routes(self.metrics, self.store.ping, c.store_timeout, c.allowed_origins)

    @property
    def port(self) -> int:
        assert self._server is not None, "start the server first"
        port: int = next(iter(self._server.sockets)).getsockname()[1]
        return port

    @property
    def url(self) -> str:
        host = self.config.host
        return f"ws://[{host}]:{self.port}" if ":" in host else f"ws://{host}:{self.port}"

    async def start(self) -> None:
        strategy.prepare(self.config.strategies)
        if self.relay is not None:
            # Before the port opens: a server that answers there is wholly started, so a
            # Redis lost just after is an outage, not a start-up that fails half done.
            await self.relay.start()
        c = self.config
        self._server = await serve(
            self._handle,
            c.host,
            c.port,
            max_size=c.max_frame,
            open_timeout=c.open_timeout,
            compression=None,
            close_timeout=FLUSH_TIMEOUT,
            process_request=self._routes.respond,
            # A factory, which websockets takes ("a wrapper or a subclass"), though its
            # annotation names a class.
            create_connection=cast(
                "type[ServerConnection]",
                partial(GatewayConnection, handshakes=self._handshakes),
            ),
        )
        loop = loops.running_loop_name()
        logging.getLogger(logs.START).info(
            "QiuQiu server listening on %s (event loop: %s; accounts and tables %s)",
            self.url,
            loop,
            self.store.where,
            extra={"url": self.url, "loop": loop, "store": self.store.where},
        )
        self._keeper = asyncio.create_task(self.leases.run())
        if self.pauses is not None:
            self.pauses.start()

    def _busy(self) -> bool:
        """Someone a pause of the loop keeps waiting: a connection here, or a table's
        players (they may be connected to other processes)."""
        return bool(self._outboxes or self.lobby.tables)

    async def serve_until_stopped(self) -> None:
        await self._stopped.wait()

    def _renewed(self) -> None:
        """The leases were renewed (every third of one): the tables here look at theirs
        again, and the processes whose sessions sit or watch here are asked whether
        they still listen."""
        self.lobby.recheck_leases()
        if self.relay is not None:
            self.relay.probe()

    async def stop(self) -> None:
        """Void every hand in play (each chip back to who put it in), cash every seat
        out, let clients take their last messages, then close every connection."""
        if self._server is None:
            return
        if self._stopping:
            # A second SIGTERM, say (a supervisor and a process group both send one):
            # the stop under way finishes the job.
            await self._stopped.wait()
            return
        self._stopping = True
        self._server.close(close_connections=False)
        # The whole stop keeps to the deadline: the tables get most of it, and what
        # follows (messages flushed, connections closed) the rest, each step cut short
        # rather than waited for.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.stop_timeout

        def left(share: float = 1.0) -> float:
            return max(0.0, (deadline - loop.time()) * share)

        others = await self._others_listening(left(0.1))
        left_open: list[str] = []
        if others:
            # Redis may not have said whether any other server listens: then the tables
            # wait in it for whichever server starts or adopts them first.
            log.info(
                "stopping: leaving the tables in the store to the other servers (or the "
                "next to start), closing connections"
            )
            await self._hand_over_tables(left(TABLES_SHARE))
        else:
            log.info("stopping: voiding hands in play and closing connections")
            # The leases are kept until every table is closed: closing them writes to them.
            left_open = await self._close_tables(left(TABLES_SHARE))
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
        if self.relay is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.relay.stop(), left(0.5))
        for outbox in self._outboxes:
            outbox.flush()
        # Beside other processes every client plays on, its tables hosted or adopted
        # there: it is told to reconnect, not that the server is gone. So is it when a
        # table could not be closed: its seats are kept in the store for the next server.
        code, reason = (
            (RESTART, RESTARTING)
            if others or left_open
            else (CloseCode.GOING_AWAY, "the server is shutting down")
        )
        closing = [c.close(code, reason) for c in self._server.connections]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*closing), left())
        for connection in self._server.connections:
            connection.transport.abort()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._server.wait_closed(), max(left(), 0.5))
        if self.pauses is not None:
            self.pauses.stop()
        self._stopped.set()
        log.info("stopped")

    async def _others_listening(self, seconds: float) -> bool:
        """Whether other processes may share the store and hear this one now. Redis
        that does not say (away, or too slow) may have them: the tables are left to
        them then, every seat kept, rather than closed with their seats stood up."""
        if self.relay is None:
            return False
        try:
            async with asyncio.timeout(seconds):
                return await self.relay.bus.listening() != 1
        except TimeoutError:
            return True

    async def _hand_over_tables(self, seconds: float) -> None:
        """Leave every table for the other processes, as the store has it: one adopts
        each, voiding a hand in play with every chip back and keeping every seat, and
        the players seated here reconnect to it (1012). The leases are let go at once,
        so that nobody waits for them to run out."""
        tables = list(self.lobby.tables.values())
        for table in tables:
            table.hand_over()
            await table.wait_tasks()
        releasing = (self.store.release_table(t.table_id) for t in tables)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await asyncio.gather(*releasing, return_exceptions=True)

    async def _close_tables(self, seconds: float) -> list[str]:
        """Close every table within the stop deadline. One that cannot be written (the
        store away, the lease lost) is left as the store has it: the next host reopens
        it, voiding a hand in play with every chip back. Returns the ids of those left."""
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        tables: dict[str, Table] = {}
        # A message read before the stop may still be opening a table: each round
        # closes those the one before it did not see.
        while loop.time() < until and (
            fresh := [t for t in self.lobby.tables.values() if t.table_id not in tables]
        ):
            tables.update((t.table_id, t) for t in fresh)
            closing = [asyncio.ensure_future(t.close()) for t in fresh]
            _, pending = await asyncio.wait(closing, timeout=until - loop.time())
            for task in pending:
                task.cancel()
        left = [t.table_id for t in tables.values() if not t.closed]
        if left:
            log.warning(
                "stopped with %d %s not closed (the store did not answer, or refused a write); "
                "the next start voids their hands with every chip back",
                len(left),
                "table" if len(left) == 1 else "tables",
                extra={"tables": left},
            )
        for table in tables.values():
            table.stop_work()
            await table.wait_tasks()
        return left

    async def _handle(self, connection: ServerConnection) -> None:
        if isinstance(connection, GatewayConnection):
            connection.handshaken()
        address = address_of(connection)
        if not self._addresses.admit(address):
            log.info("connection from %s refused: too many open from it", peer_of(connection))
            reason = too_many_from(self.config.max_connections_per_address)
            await connection.close(CloseCode.POLICY_VIOLATION, reason)
            self.metrics.closes.labels(close_label(first_close_code(connection))).inc()
            return
        try:
            await self._serve(connection, address)
        finally:
            self._addresses.release(address)

    async def _serve(self, connection: ServerConnection, address: str) -> None:
        outbox = Outbox(connection)
        self._outboxes.add(outbox)
        if self.pauses is not None:
            self.pauses.wake()

        def may_open_account() -> str | None:
            if self._new_accounts.take(address):
                return None
            return too_many_accounts_from(self.config.new_accounts_per_address)

        session = Session(
            self.lobby,
            outbox.send,
            outbox.close,
            self.relay,
            may_open_account,
            partial(self._new_accounts.give_back, address),
        )
        if self.relay is not None:
            self.relay.sessions[session.session_id] = session
        bucket = TokenBucket(self.config.rate, self.config.burst)
        flooded = False

        def allowed() -> bool:
            nonlocal flooded
            if not flooded and not bucket.take():
                flooded = True
                outbox.close(CloseCode.POLICY_VIOLATION, "too many messages")
            return not flooded

        if isinstance(connection, GatewayConnection):
            connection.control_frame = allowed

        def unheard() -> None:
            if session.account is None and not session.owed_welcome:
                outbox.close(CloseCode.POLICY_VIOLATION, no_hello_within(self.config.hello_timeout))

        deadline = asyncio.get_running_loop().call_later(self.config.hello_timeout, unheard)
        peer = peer_of(connection)
        log.info("connection opened from %s", peer, extra={"peer": peer})
        try:
            async for frame in connection:
                if self._stopping or outbox.closing is not None or not allowed():
                    # Read on, so the closing handshake is not stuck behind the frames;
                    # but a connection being closed, or a stopping server, begins nothing
                    # more: its client hears of none of it (a client that did not read
                    # had each of its thousands of snapshots built, then dropped).
                    continue
                if await session.receive(frame):
                    bucket.refund()
        except ConnectionClosed:
            pass
        finally:
            deadline.cancel()
            code = first_close_code(connection)
            log.info(
                "connection from %s closed (%d)", peer, code, extra={"peer": peer, "code": code}
            )
            self.metrics.closes.labels(close_label(code)).inc()
            self._outboxes.discard(outbox)
            outbox.shut()
            if self.relay is not None:
                self.relay.sessions.pop(session.session_id, None)
            session.disconnected()
