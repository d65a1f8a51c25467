"""The store in Redis: durable, and shared by every process on the same Redis
(docs/ARCHITECTURE.md, "Storage").

:class:`RedisStore` keeps the :class:`~qiuqiu.server.store.Store` contract with
Redis as the source of truth, so whatever opens the same Redis and prefix finds
every account, table and hand as it was left.

Every change that touches more than one key is one Lua script, which Redis runs
with nothing in between its commands (:mod:`qiuqiu.server.redis_scripts`, which
also lists the keys): a table's commit saves its record, moves the chips, keeps
the hand and updates the seat index, or does none of it, and two buy-ins racing
for the last chips of one balance cannot both pass the balance check. The
scripts are registered once and run by their SHA (EVALSHA), and use only
commands that Redis 6.2 has, so the same code runs on Redis 7 and Valkey.
Tables' commits go through a :class:`~qiuqiu.server.redis_batch.ScriptBatch`:
those asked for in one turn of the event loop share one pipeline.

Every commit checks, in the same script, that the writer still holds the
lease it took and that the version is the one it last wrote, so a process that
lost its table cannot write it again.

Every call has a timeout (the pool's ``socket_timeout``): a Redis that freezes
is an outage the server sees, not a call that never returns. The channels
between processes (:mod:`qiuqiu.server.bus`) have a connection of their own,
which may stay quiet for as long as it likes.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Container
from functools import partial

from redis.asyncio import Redis
from redis.exceptions import AuthenticationError, InvalidResponse, ResponseError

from qiuqiu.protocol import MAX_BALANCE, ErrorCode
from qiuqiu.server import redis_scripts as scripts
from qiuqiu.server.bus import RedisBus
from qiuqiu.server.errors import LeaseExpired, LeaseLost, Refused
from qiuqiu.server.records import hand_from_json, hand_json, table_from_json, table_json
from qiuqiu.server.redis_batch import ScriptBatch
from qiuqiu.server.redis_clients import CountedRedis, address, clients, reply_text
from qiuqiu.server.redis_errors import reachable, refuse_evicting, refused_at_start
from qiuqiu.server.store import (
    CLAIMS_KEPT,
    HISTORY_LENGTH,
    HOUSE,
    Account,
    HandRecord,
    TableCommit,
    TableRecord,
    with_seeds,
)

log = logging.getLogger(__name__)

PREFIX = "qiuqiu:"

HOUSE_REOPENED = 2
"""What creating an account answers when it had to open the house's account again."""

TIMEOUT = 2.0
"""Seconds a call to Redis may take before it counts as Redis being away."""

HEALTH_KEPT_MS = 60_000
"""How long the key a health check writes stays: it says nothing once the checks stop."""

RENEWED_AT_ONCE = 250
"""Leases renewed by one script run. One run over every lease of a process with ten
thousand tables holds its event loop 30 ms and more at a stretch (making and packing
30,000 arguments, reading 10,000 answers); a few hundred at a time, under 2 ms."""


class RedisStore:
    """Accounts, tables and hand histories in Redis. Open one with :meth:`from_url`."""

    def __init__(
        self,
        redis: Redis,
        prefix: str = PREFIX,
        owner: str | None = None,
        leases: Redis | None = None,
        channels: Redis | None = None,
    ) -> None:
        self._redis = redis
        self._leases = leases or redis
        """Renewals go through their own connection when given one, so that they never
        queue behind table writes for a connection: a renewal late by a lease loses
        every table."""
        self._channels = channels or redis
        self._prefix = prefix
        self.owner = owner or secrets.token_hex(6)
        self._holding: dict[str, str] = {}
        """The lease this store holds on each table it hosts (``owner:fence``)."""
        self._versions: dict[str, int] = {}
        """The version of each of those tables this store last wrote."""
        self._sure_until: dict[str, float] = {}
        """Until when (``time.monotonic``) each of those leases is certainly this
        store's: its length after it was last asked for."""
        self._bus: RedisBus | None = None
        self._read_tables: dict[str, TableRecord] = {}
        """The tables :meth:`tables` read last, by their text: each ``list_tables``
        reads every table other processes host, and decoding a thousand again held the
        event loop some 20 ms."""
        self._acquire = redis.register_script(scripts.ACQUIRE)
        self._renew = self._leases.register_script(scripts.RENEW)
        self._release = redis.register_script(scripts.RELEASE)
        self._orphaned = redis.register_script(scripts.ORPHANED)
        self._open_house = redis.register_script(scripts.OPEN_HOUSE)
        self._create_account = redis.register_script(scripts.CREATE_ACCOUNT)
        self._claim_connection = redis.register_script(scripts.CLAIM_CONNECTION)
        self._batch = ScriptBatch(redis)
        self._commit = partial(self._batch.run, redis.register_script(scripts.COMMIT))
        self._balances = redis.register_script(scripts.BALANCES)

    @classmethod
    async def from_url(cls, url: str, prefix: str = PREFIX, timeout: float = TIMEOUT) -> RedisStore:
        """Connect to ``url`` (``redis://host:port/db``) and open the house account
        at zero unless it is there already."""
        redis, leases, channels = clients(url, timeout)
        store = cls(redis, prefix, leases=leases, channels=channels)
        try:
            await store._open()
        except BaseException:
            await store.close()
            raise
        return store

    @reachable
    async def _open(self) -> None:
        """Open the house account at zero unless it is there already, on a Redis that
        never deletes an account to make room."""
        try:
            await refuse_evicting(self._redis)
            await self._open_house(
                keys=[self._account_key(HOUSE), self._key("accounts")], args=[HOUSE]
            )
        except (ResponseError, AuthenticationError, InvalidResponse) as error:
            password = bool(self._redis.connection_pool.connection_kwargs.get("password"))
            raise refused_at_start(error, password) from None

    @property
    def where(self) -> str:
        return f"in Redis at {address(self._redis.connection_pool.connection_kwargs)}"

    @property
    def round_trips(self) -> int:
        """Requests sent to Redis so far, by every client of this store (its own, made
        by :meth:`from_url`, count them)."""
        clients = {self._redis, self._leases, self._channels}
        counted = sum((c.round_trips for c in clients if isinstance(c, CountedRedis)), start=0)
        return counted + self._batch.round_trips

    async def close(self) -> None:
        await self._batch.close()
        for client in {self._redis, self._leases, self._channels}:
            await client.aclose()

    def bus(self) -> RedisBus:
        if self._bus is None:
            # Channels are shared by all of Redis's databases: another database's servers
            # are another deployment. Database 0's are unnumbered, as older servers had.
            db = int(self._channels.connection_pool.connection_kwargs.get("db") or 0)
            channel = self._key("channel", *([str(db)] if db else []), "")
            self._bus = RedisBus(self._channels, self.owner, channel)
        return self._bus

    @reachable
    async def ping(self) -> None:
        # A write, not PING: a full or read-only Redis answers PING but serves no player.
        await self._redis.set(self._key("health"), self.owner, px=HEALTH_KEPT_MS)

    @reachable
    async def create_account(
        self, account_id: str, name: str, token_hash: str, grant: int
    ) -> Account:
        if not 0 <= grant <= MAX_BALANCE:
            raise ValueError(f"a grant is from 0 to {MAX_BALANCE}, not {grant}")
        keys = [
            self._account_key(account_id),
            self._key("token", token_hash),
            self._account_key(HOUSE),
            self._key("accounts"),
        ]
        made = await self._create_account(keys=keys, args=[account_id, name, grant, -grant, HOUSE])
        if not made:
            raise Refused(ErrorCode.ACCOUNT_EXISTS, f"account {account_id} or its token exists")
        if made == HOUSE_REOPENED:
            log.error(
                "Redis lost its data: the house's account, which every server opens at "
                "start, was gone (was Redis restarted without its append-only file?); "
                "every account, table and chip it held before is lost, and the house is "
                "open again at zero"
            )
        return Account(account_id, name, grant)

    @reachable
    async def account(self, account_id: str) -> Account | None:
        name, balance = await self._redis.hmget(self._account_key(account_id), ["name", "balance"])
        if name is None:
            return None
        return Account(account_id, reply_text(name), int(reply_text(balance)))

    @reachable
    async def account_for_token(self, token_hash: str) -> Account | None:
        account_id = await self._redis.get(self._key("token", token_hash))
        return None if account_id is None else await self.account(reply_text(account_id))

    @reachable
    async def claim_connection(self, account_id: str, holder: str) -> tuple[tuple[str, ...], int]:
        keys = [self._key("connection", account_id), self._key("claims")]
        number, before = await self._claim_connection(keys=keys, args=[holder, CLAIMS_KEPT])
        return tuple(reply_text(b) for b in before), int(number)

    # -- leases ----------------------------------------------------------------------

    @reachable
    async def acquire_table(self, table_id: str, seconds: float, *, new: bool = False) -> bool:
        keys = [self._key("lease", table_id), self._key("fence", table_id)]
        keys.append(self._key("version", table_id))
        held = self._holding.get(table_id, "")
        asked = time.monotonic()
        args: list[str | int] = [held, self.owner, _ms(seconds), int(new)]
        got = await self._acquire(keys=keys, args=args)
        if not got:
            return False
        holder, version = got
        self._holding[table_id], self._versions[table_id] = holder, int(version)
        self._sure_until[table_id] = asked + seconds
        return True

    @reachable
    async def renew_tables(self, seconds: float) -> tuple[str, ...]:
        held = list(self._holding)
        lost: list[str] = []
        for start in range(0, len(held), RENEWED_AT_ONCE):
            # Those released while an earlier batch was on its way are not renewed.
            table_ids = [t for t in held[start : start + RENEWED_AT_ONCE] if t in self._holding]
            if not table_ids:
                continue
            keys = [self._key("lease", t) for t in table_ids]
            keys += [self._key("fence", t) for t in table_ids]
            asked = time.monotonic()
            kept = await self._renew(
                keys=keys, args=[_ms(seconds), *(self._holding[t] for t in table_ids)]
            )
            for table_id, still in zip(table_ids, kept, strict=True):
                if still:
                    self._sure_until[table_id] = asked + seconds
                else:
                    lost.append(table_id)
        # Forgotten only once every batch has answered: if one fails, the next round
        # finds the same leases lost and says so then.
        for table_id in lost:
            self._forget(table_id)
        return tuple(lost)

    def holds(self, table_id: str) -> bool:
        return time.monotonic() < self._sure_until.get(table_id, 0.0)

    @reachable
    async def release_table(self, table_id: str) -> None:
        holder = self._holding.get(table_id)
        if holder is not None:
            self._forget(table_id)
            await self._release(keys=[self._key("lease", table_id)], args=[holder])

    @reachable
    async def orphaned_tables(self) -> tuple[str, ...]:
        found = await self._orphaned(keys=[self._key("tables")], args=[self._key("lease", "")])
        return tuple(sorted(found))

    @reachable
    async def table_host(self, table_id: str) -> str | None:
        holder = await self._redis.get(self._key("lease", table_id))
        return None if holder is None else reply_text(holder).rsplit(":", 1)[0]

    # -- the one write to a table --------------------------------------------------------

    @reachable
    async def commit(self, commit: TableCommit) -> dict[str, int]:
        table_id, table = commit.table_id, commit.table
        held = self._holding.get(table_id)
        keys = [
            self._key("lease", table_id),
            self._key("version", table_id),
            self._key("commit", table_id),
            self._key("table", table_id),
            self._key("tables"),
        ]
        args: list[int | str] = [
            "" if held is None else held,
            "" if held is None else str(self._versions[table_id]),
            commit.commit_id,
            "" if table is None else table_json(table),
            table_id,
            len(commit.moves),
        ]
        seated = set() if table is None else {s.account_id for s in table.seats}
        for account_id, amount in commit.moves:
            keys += [self._account_key(account_id), self._key("seats", account_id)]
            args += [account_id, amount, -amount, int(account_id == HOUSE)]
            args.append(int(account_id in seated and account_id != HOUSE))
        hand = commit.hand
        if hand is not None:
            keys.append(self._key("hands", "table", table_id))
            keys += [
                self._key("hands", "account", a)
                for a in sorted({account for _, account in hand.accounts})
            ]
        keys += [self._key("revealed"), self._key("fence", table_id)]
        args += ["" if hand is None else hand_json(hand), -HISTORY_LENGTH, commit.seat_limit]
        args.append(commit.revealed_seed)
        outcome, *rest = await self._commit(keys=keys, args=args)
        if outcome == "lease_lost":
            self._forget(table_id)
            raise LeaseLost(table_id)
        if outcome == "lease_expired":
            # Still held, for the next renewal to take back; not sure of until then.
            self._sure_until.pop(table_id, None)
            raise LeaseExpired(table_id)
        if outcome != "ok":
            raise scripts.commit_refusal(outcome, rest, commit)
        if table is None:
            self._forget(table_id)
        elif table_id in self._holding:
            self._versions[table_id] = int(rest[0])
        return {a: int(b) for (a, _), b in zip(commit.moves, rest[1:], strict=True)}

    def _forget(self, table_id: str) -> None:
        self._holding.pop(table_id, None)
        self._sure_until.pop(table_id, None)
        self._versions.pop(table_id, None)

    # -- reads -------------------------------------------------------------------------

    @reachable
    async def seated_tables(self, account_id: str) -> tuple[str, ...]:
        found = await self._redis.smembers(self._key("seats", account_id))
        return tuple(sorted(map(reply_text, found)))

    @reachable
    async def table(self, table_id: str) -> TableRecord | None:
        text = await self._redis.get(self._key("table", table_id))
        return None if text is None else table_from_json(reply_text(text))

    @reachable
    async def tables(self, skip: Container[str] = ()) -> tuple[TableRecord, ...]:
        """Every table in the lobby but those in ``skip``, by id."""
        members = map(reply_text, await self._redis.smembers(self._key("tables")))
        table_ids = sorted(t for t in members if t not in skip)
        if not table_ids:
            return ()
        texts = await self._redis.mget([self._key("table", t) for t in table_ids])
        # A table dropped between the two reads is gone, and so left out.
        known, self._read_tables = self._read_tables, {}
        for reply in texts:
            if reply is None:
                continue
            text = reply_text(reply)
            found = known.get(text)
            self._read_tables[text] = table_from_json(text) if found is None else found
        return tuple(self._read_tables.values())

    @reachable
    async def table_hands(
        self, table_id: str, limit: int = HISTORY_LENGTH
    ) -> tuple[HandRecord, ...]:
        return await self._last_hands(self._key("hands", "table", table_id), limit)

    @reachable
    async def account_hands(
        self, account_id: str, limit: int = HISTORY_LENGTH
    ) -> tuple[HandRecord, ...]:
        return await self._last_hands(self._key("hands", "account", account_id), limit)

    @reachable
    async def balances(self) -> dict[str, int]:
        """Every balance, the house's included, all at one moment: for audits."""
        found = await self._balances(keys=[self._key("accounts")], args=[self._account_key("")])
        return {found[i]: int(found[i + 1]) for i in range(0, len(found), 2)}

    async def _last_hands(self, key: str, limit: int) -> tuple[HandRecord, ...]:
        if limit <= 0:
            return ()
        texts = await self._redis.lrange(key, -limit, -1)
        hands = tuple(hand_from_json(reply_text(text)) for text in texts)
        tables = sorted({hand.table_id for hand in hands})
        if not tables:
            return hands
        seeds = await self._redis.hmget(self._key("revealed"), tables)
        revealed = {t: reply_text(seed) for t, seed in zip(tables, seeds, strict=True) if seed}
        return with_seeds(hands, revealed)

    def _key(self, *parts: str) -> str:
        return self._prefix + ":".join(parts)

    def _account_key(self, account_id: str) -> str:
        return self._key("account", account_id)


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))
