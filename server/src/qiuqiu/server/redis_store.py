"""The store in Redis: durable, and shared by every process on the same Redis (DESIGN §4).

:class:`RedisStore` keeps the :class:`~qiuqiu.server.store.Store` contract with
Redis as the source of truth, so whatever opens the same Redis and prefix finds
every account, table and hand as it was left.

Every change that touches more than one key is one Lua script, which Redis runs
with nothing in between its commands: a buy-in cannot take the chips and then
fail to save the table that holds them, and two buy-ins racing for the last
chips of one balance cannot both pass the balance check. The scripts are
registered once and run by their SHA (EVALSHA), and use only commands that
Redis 6.2 has, so the same code runs on Redis 7 and Valkey.

The keys, each under a prefix (``qiuqiu:`` unless told otherwise):

- ``account:{id}``: a hash of ``name`` and ``balance``
- ``accounts``: the set of every account id, the house's included (for audits)
- ``token:{sha256 of the token}``: the id of the account the token opens
- ``table:{id}``: a table between hands, as JSON
- ``tables``: the set of the ids of the tables in the lobby
- ``hands:table:{id}`` and ``hands:account:{id}``: lists of finished hands as
  JSON, oldest first, trimmed to the last :data:`HISTORY_LENGTH`
- ``lease:{id}``: who hosts the table (``owner:fence``), expiring unless renewed
- ``fence:{id}``: the table's fencing counter, one up for each new lease
- ``version:{id}``: one up for each write to the table
- ``seats:{account id}``: the set of the tables where the account has a seat,
  kept with its buy-ins and cash-outs, so a returning player's tables are found
  without reading every table
- ``connection:{account id}``: the account's one connection
  (``owner:session``), the newest to say hello

Every write to a table checks, in the same script, that the writer still
holds the lease it took and that the version is the one it last wrote, so a
process that lost its table cannot write it again.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Coroutine
from functools import lru_cache
from typing import Any, Concatenate, ParamSpec, TypeVar

from redis.asyncio import BlockingConnectionPool, Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from qiuqiu.protocol import TableOptions
from qiuqiu.server.errors import LeaseLost, Refused, StoreUnavailable
from qiuqiu.server.store import (
    HISTORY_LENGTH,
    HOUSE,
    Account,
    HandRecord,
    SeatRecord,
    TableRecord,
)

PREFIX = "qiuqiu:"

# KEYS: the house's account, the accounts set. ARGV: the house's id.
_OPEN_HOUSE = """
redis.call('HSETNX', KEYS[1], 'name', 'House')
redis.call('HSETNX', KEYS[1], 'balance', 0)
redis.call('SADD', KEYS[2], ARGV[1])
"""

# KEYS: the account, its token, the house's account, the accounts set.
# ARGV: id, name, grant, minus the grant (negated by the caller: Lua would hand
# Redis a large number in exponent form, which HINCRBY refuses).
_CREATE_ACCOUNT = """
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'name', ARGV[2], 'balance', ARGV[3])
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('HINCRBY', KEYS[3], 'balance', ARGV[4])
return 1
"""

# Every write to a table starts with this guard. KEYS[1]: the table's lease,
# KEYS[2]: its version. ARGV[1]: the lease this store holds ('' for none: a
# write needs the lease, even one nobody else holds), ARGV[2]: the version it
# last wrote.
_GUARD = """
if ARGV[1] == '' or redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {'lease_lost'}
end
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[2] then
  return {'lease_lost'}
end
"""

# KEYS[3]: the account, [4]: the table, [5]: the tables set, [6]: the account's
# seats. ARGV[3]: amount, [4]: minus the amount, [5]: 1 if the balance may go
# below zero, [6]: table JSON, [7]: table id, [8]: 1 if the account sits at the
# table after the move. A refusal is a reply rather than an error, so that it
# carries the balance.
_MOVE_CHIPS = (
    _GUARD
    + """
local balance = redis.call('HGET', KEYS[3], 'balance')
if not balance then
  return {'unknown_account'}
end
if ARGV[5] == '0' and tonumber(balance) < tonumber(ARGV[3]) then
  return {'insufficient_balance', balance}
end
redis.call('SET', KEYS[4], ARGV[6])
redis.call('SADD', KEYS[5], ARGV[7])
if ARGV[8] == '1' then
  redis.call('SADD', KEYS[6], ARGV[7])
else
  redis.call('SREM', KEYS[6], ARGV[7])
end
local name = redis.call('HGET', KEYS[3], 'name')
local left = redis.call('HINCRBY', KEYS[3], 'balance', ARGV[4])
return {'ok', redis.call('INCR', KEYS[2]), name, left}
"""
)

# KEYS[3]: the table, [4]: the tables set, then the hands lists a finished hand
# goes to. ARGV[3]: table JSON, [4]: table id, [5]: hand JSON, [6]: minus
# HISTORY_LENGTH.
_SAVE_TABLE = (
    _GUARD
    + """
redis.call('SET', KEYS[3], ARGV[3])
redis.call('SADD', KEYS[4], ARGV[4])
for i = 5, #KEYS do
  redis.call('RPUSH', KEYS[i], ARGV[5])
  redis.call('LTRIM', KEYS[i], ARGV[6], -1)
end
return {'ok', redis.call('INCR', KEYS[2])}
"""
)

# KEYS[3]: the table, [4]: the tables set. ARGV[3]: table id.
_DROP_TABLE = (
    _GUARD
    + """
redis.call('DEL', KEYS[3], KEYS[1])
redis.call('SREM', KEYS[4], ARGV[3])
return {'ok', redis.call('INCR', KEYS[2])}
"""
)

# KEYS: the lease, its fencing counter, the table's version. ARGV: the lease this
# store holds or '', this store's owner id, the lease's length in milliseconds.
_ACQUIRE = """
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then
  return false
end
local holder = current
if not current then
  holder = ARGV[2] .. ':' .. redis.call('INCR', KEYS[2])
end
redis.call('SET', KEYS[1], holder, 'PX', ARGV[3])
return {holder, redis.call('GET', KEYS[3]) or '0'}
"""

# KEYS: leases. ARGV: the lease's length in milliseconds, then the holder of each.
# Returns 1 for each lease still held (and extended), 0 for each lost.
_RENEW = """
local kept = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i + 1] then
    redis.call('PEXPIRE', key, ARGV[1])
    kept[i] = 1
  else
    kept[i] = 0
  end
end
return kept
"""

# KEYS: the lease. ARGV: its holder.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
"""

# KEYS: the tables set. ARGV: the prefix of a lease's key.
_ORPHANED = """
local found = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[1] .. id) == 0 then
    found[#found + 1] = id
  end
end
return found
"""

# KEYS: the table's hands, then each account's. ARGV: hand JSON, minus HISTORY_LENGTH.
_RECORD_HAND = """
for _, key in ipairs(KEYS) do
  redis.call('RPUSH', key, ARGV[1])
  redis.call('LTRIM', key, ARGV[2], -1)
end
"""

# KEYS: the accounts set. ARGV: the prefix of an account's key.
# Reads keys it names itself, which a single Redis allows (a Cluster would not),
# so that an audit sees every balance at one moment.
_BALANCES = """
local found = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  found[#found + 1] = id
  found[#found + 1] = redis.call('HGET', ARGV[1] .. id, 'balance')
end
return found
"""


P = ParamSpec("P")
T = TypeVar("T")


def _reachable(
    method: Callable[Concatenate[RedisStore, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[RedisStore, P], Coroutine[Any, Any, T]]:
    """Redis out of reach is :class:`StoreUnavailable`, which the server answers with an
    error code: a write that could not reach Redis changed nothing."""

    async def reaching(self: RedisStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await method(self, *args, **kwargs)
        except (RedisConnectionError, RedisTimeoutError) as error:
            raise StoreUnavailable(str(error)) from error

    return reaching


class RedisStore:
    """Accounts, tables and hand histories in Redis. Open one with :meth:`from_url`."""

    def __init__(
        self,
        redis: Redis,
        prefix: str = PREFIX,
        owner: str | None = None,
        leases: Redis | None = None,
    ) -> None:
        self._redis = redis
        self._leases = leases or redis
        """Renewals go through their own connection when given one, so that they never
        queue behind table writes for a connection: a renewal late by a lease loses
        every table."""
        self._prefix = prefix
        self.owner = owner or secrets.token_hex(6)
        self._holding: dict[str, str] = {}
        """The lease this store holds on each table it hosts (``owner:fence``)."""
        self._versions: dict[str, int] = {}
        """The version of each of those tables this store last wrote."""
        self._acquire = redis.register_script(_ACQUIRE)
        self._renew = self._leases.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)
        self._orphaned = redis.register_script(_ORPHANED)
        self._open_house = redis.register_script(_OPEN_HOUSE)
        self._create_account = redis.register_script(_CREATE_ACCOUNT)
        self._move_chips = redis.register_script(_MOVE_CHIPS)
        self._save_table = redis.register_script(_SAVE_TABLE)
        self._drop_table = redis.register_script(_DROP_TABLE)
        self._record_hand = redis.register_script(_RECORD_HAND)
        self._balances = redis.register_script(_BALANCES)

    @classmethod
    async def from_url(cls, url: str, prefix: str = PREFIX) -> RedisStore:
        """Connect to ``url`` (``redis://host:port/db``) and open the house account
        at zero unless it is there already."""
        # A burst of callers beyond the pool's connections waits for one, not fails.
        pool = BlockingConnectionPool.from_url(url, decode_responses=True)
        leases = BlockingConnectionPool.from_url(url, max_connections=1, decode_responses=True)
        store = cls(Redis.from_pool(pool), prefix, leases=Redis.from_pool(leases))
        try:
            keys = [store._account_key(HOUSE), store._key("accounts")]
            await store._open_house(keys=keys, args=[HOUSE])
        except BaseException:
            await store.close()
            raise
        return store

    async def close(self) -> None:
        await self._redis.aclose()
        if self._leases is not self._redis:
            await self._leases.aclose()

    @_reachable
    async def ping(self) -> None:
        await self._redis.ping()

    @_reachable
    async def create_account(
        self, account_id: str, name: str, token_hash: str, grant: int
    ) -> Account:
        if grant < 0:
            raise ValueError(f"a grant is never negative, not {grant}")
        keys = [
            self._account_key(account_id),
            self._key("token", token_hash),
            self._account_key(HOUSE),
            self._key("accounts"),
        ]
        if not await self._create_account(keys=keys, args=[account_id, name, grant, -grant]):
            raise Refused("account_exists", f"account {account_id} or its token exists")
        return Account(account_id, name, grant)

    @_reachable
    async def account(self, account_id: str) -> Account | None:
        name, balance = await self._redis.hmget(self._account_key(account_id), ["name", "balance"])
        return None if name is None else Account(account_id, _text(name), int(_text(balance)))

    @_reachable
    async def account_for_token(self, token_hash: str) -> Account | None:
        account_id = await self._redis.get(self._key("token", token_hash))
        return None if account_id is None else await self.account(_text(account_id))

    # -- leases ----------------------------------------------------------------------

    @_reachable
    async def acquire_table(self, table_id: str, seconds: float) -> bool:
        keys = [self._key("lease", table_id), self._key("fence", table_id)]
        keys.append(self._key("version", table_id))
        held = self._holding.get(table_id, "")
        got = await self._acquire(keys=keys, args=[held, self.owner, _ms(seconds)])
        if not got:
            return False
        holder, version = got
        self._holding[table_id], self._versions[table_id] = holder, int(version)
        return True

    @_reachable
    async def renew_tables(self, seconds: float) -> tuple[str, ...]:
        if not self._holding:
            return ()
        table_ids = list(self._holding)
        keys = [self._key("lease", t) for t in table_ids]
        kept = await self._renew(
            keys=keys, args=[_ms(seconds), *(self._holding[t] for t in table_ids)]
        )
        lost = tuple(t for t, still in zip(table_ids, kept, strict=True) if not still)
        for table_id in lost:
            self._forget(table_id)
        return lost

    @_reachable
    async def release_table(self, table_id: str) -> None:
        holder = self._holding.get(table_id)
        if holder is not None:
            self._forget(table_id)
            await self._release(keys=[self._key("lease", table_id)], args=[holder])

    @_reachable
    async def orphaned_tables(self) -> tuple[str, ...]:
        found = await self._orphaned(keys=[self._key("tables")], args=[self._key("lease", "")])
        return tuple(sorted(found))

    @_reachable
    async def table_host(self, table_id: str) -> str | None:
        holder = await self._redis.get(self._key("lease", table_id))
        return None if holder is None else _text(holder).rsplit(":", 1)[0]

    # -- messages between processes -----------------------------------------------------

    @property
    def redis(self) -> Redis:
        """The client, for :class:`~qiuqiu.server.relay.Relay`'s channels."""
        return self._redis

    @_reachable
    async def claim_connection(self, account_id: str, holder: str) -> str | None:
        """Make ``holder`` the account's one connection; return the one it replaces.
        Redis orders the claims, so of two at once each process agrees on the last."""
        previous = await self._redis.set(self._key("connection", account_id), holder, get=True)
        return previous if isinstance(previous, str) else None

    def channel(self, *parts: str) -> str:
        return self._key("channel", *parts)

    # -- writes to a table, each behind the guard --------------------------------------

    @_reachable
    async def move_chips(self, account_id: str, amount: int, table: TableRecord) -> Account:
        keys = [
            *self._guard_keys(table.table_id),
            self._account_key(account_id),
            self._key("table", table.table_id),
            self._key("tables"),
            self._key("seats", account_id),
        ]
        args: list[int | str] = [
            *self._guard_args(table.table_id),
            amount,
            -amount,
            int(account_id == HOUSE),
            _table_json(table),
            table.table_id,
            int(any(seat.account_id == account_id for seat in table.seats)),
        ]
        outcome, *rest = await self._move_chips(keys=keys, args=args)
        if outcome == "unknown_account":
            raise Refused("unknown_account", f"there is no account {account_id}")
        if outcome == "insufficient_balance":
            raise Refused("insufficient_balance", f"you have {rest[0]} chips, not {amount}")
        name, balance = self._written(table.table_id, outcome, rest)
        return Account(account_id, name, balance)

    @_reachable
    async def save_table(self, table: TableRecord) -> None:
        await self._save(table)

    @_reachable
    async def record_hand(self, hand: HandRecord, table: TableRecord | None = None) -> None:
        account_ids = sorted({account for _, account in hand.accounts})
        hands = [
            self._key("hands", "table", hand.table_id),
            *(self._key("hands", "account", a) for a in account_ids),
        ]
        if table is None:
            await self._record_hand(keys=hands, args=[_hand_json(hand), -HISTORY_LENGTH])
        else:
            await self._save(table, hands, _hand_json(hand))

    @_reachable
    async def drop_table(self, table_id: str) -> None:
        keys = [*self._guard_keys(table_id), self._key("table", table_id), self._key("tables")]
        outcome, *rest = await self._drop_table(
            keys=keys, args=[*self._guard_args(table_id), table_id]
        )
        self._written(table_id, outcome, rest)
        self._forget(table_id)

    async def _save(
        self, table: TableRecord, hands: list[str] | None = None, hand: str = ""
    ) -> None:
        table_id = table.table_id
        keys = [
            *self._guard_keys(table_id),
            self._key("table", table_id),
            self._key("tables"),
            *(hands or ()),
        ]
        args: list[int | str] = [*self._guard_args(table_id), _table_json(table), table_id]
        args += [hand, -HISTORY_LENGTH]
        outcome, *rest = await self._save_table(keys=keys, args=args)
        self._written(table_id, outcome, rest)

    def _guard_keys(self, table_id: str) -> list[str]:
        return [self._key("lease", table_id), self._key("version", table_id)]

    def _guard_args(self, table_id: str) -> list[str]:
        held = self._holding.get(table_id)
        return ["", ""] if held is None else [held, str(self._versions[table_id])]

    def _written(self, table_id: str, outcome: str, rest: list[Any]) -> list[Any]:
        """What a guarded write returned past its version, which is kept; a lost lease
        is forgotten and raised."""
        if outcome == "lease_lost":
            self._forget(table_id)
            raise LeaseLost(table_id)
        if table_id in self._holding:
            self._versions[table_id] = int(rest[0])
        return rest[1:]

    def _forget(self, table_id: str) -> None:
        self._holding.pop(table_id, None)
        self._versions.pop(table_id, None)

    @_reachable
    async def seated_tables(self, account_id: str) -> tuple[str, ...]:
        found = await self._redis.smembers(self._key("seats", account_id))
        return tuple(sorted(map(_text, found)))

    @_reachable
    async def table(self, table_id: str) -> TableRecord | None:
        text = await self._redis.get(self._key("table", table_id))
        return None if text is None else _table(_text(text))

    @_reachable
    async def tables(self) -> tuple[TableRecord, ...]:
        """Every table in the lobby, by id."""
        table_ids = sorted(map(_text, await self._redis.smembers(self._key("tables"))))
        if not table_ids:
            return ()
        texts = await self._redis.mget([self._key("table", t) for t in table_ids])
        # A table dropped between the two reads is gone, and so left out.
        return tuple(_table(_text(text)) for text in texts if text is not None)

    @_reachable
    async def table_hands(
        self, table_id: str, limit: int = HISTORY_LENGTH
    ) -> tuple[HandRecord, ...]:
        return await self._last_hands(self._key("hands", "table", table_id), limit)

    @_reachable
    async def account_hands(
        self, account_id: str, limit: int = HISTORY_LENGTH
    ) -> tuple[HandRecord, ...]:
        return await self._last_hands(self._key("hands", "account", account_id), limit)

    @_reachable
    async def balances(self) -> dict[str, int]:
        """Every balance, the house's included, all at one moment: for audits."""
        found = await self._balances(keys=[self._key("accounts")], args=[self._account_key("")])
        return {found[i]: int(found[i + 1]) for i in range(0, len(found), 2)}

    async def _last_hands(self, key: str, limit: int) -> tuple[HandRecord, ...]:
        if limit <= 0:
            return ()
        return tuple(_hand(_text(text)) for text in await self._redis.lrange(key, -limit, -1))

    def _key(self, *parts: str) -> str:
        return self._prefix + ":".join(parts)

    def _account_key(self, account_id: str) -> str:
        return self._key("account", account_id)


def _text(reply: bytes | str | None) -> str:
    # The client decodes every reply (decode_responses=True); its types do not know.
    assert isinstance(reply, str), reply
    return reply


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


# The records are written by hand rather than with ``dataclasses.asdict``, whose deep
# copies were 8% of the CPU of a hand on Redis.


def _table_json(table: TableRecord) -> str:
    return json.dumps(
        {
            "table_id": table.table_id,
            "options": _options(table.options),
            "seats": [
                {
                    "seat": s.seat,
                    "account_id": s.account_id,
                    "name": s.name,
                    "stack": s.stack,
                    "is_bot": s.is_bot,
                }
                for s in table.seats
            ],
            "hand_id": table.hand_id,
            "hand_open": table.hand_open,
            "seq": table.seq,
            "created_by": table.created_by,
        }
    )


@lru_cache(maxsize=1024)
def _options(options: TableOptions) -> dict[str, Any]:
    """A table's options as JSON data: the same for the table's life, so made once."""
    return options.model_dump(mode="json")


def _hand_json(hand: HandRecord) -> str:
    return json.dumps(
        {
            "table_id": hand.table_id,
            "hand_id": hand.hand_id,
            "accounts": hand.accounts,
            "stacks_before": hand.stacks_before,
            "stacks_after": hand.stacks_after,
            "events": hand.events,
            "voided": hand.voided,
        }
    )


def _table(text: str) -> TableRecord:
    data = json.loads(text)
    return TableRecord(
        **{
            **data,
            "options": TableOptions.model_validate(data["options"]),
            "seats": tuple(SeatRecord(**seat) for seat in data["seats"]),
        }
    )


def _hand(text: str) -> HandRecord:
    data = json.loads(text)
    return HandRecord(
        table_id=data["table_id"],
        hand_id=data["hand_id"],
        accounts=_pairs(data["accounts"]),
        stacks_before=_pairs(data["stacks_before"]),
        stacks_after=_pairs(data["stacks_after"]),
        events=tuple(data["events"]),
        voided=data["voided"],
    )


def _pairs(rows: list[list[Any]]) -> tuple[Any, ...]:
    # JSON has no tuples: a pair comes back as a list and must compare equal again.
    return tuple((first, second) for first, second in rows)
