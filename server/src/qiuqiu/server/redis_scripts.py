"""The Lua scripts the Redis store runs, each one step that Redis runs with
nothing in between its commands (see :mod:`qiuqiu.server.redis_store`).

Only commands that Redis 6.2 has, so the same scripts run on Redis 7 and Valkey.

The keys, each under a prefix (``qiuqiu:`` unless told otherwise):

- ``account:{id}``: a hash of ``name`` and ``balance``
- ``accounts``: the set of every account id, the house's included (for audits)
- ``token:{sha256 of the token}``: the id of the account the token opens
- ``table:{id}``: a table between hands, as JSON
- ``tables``: the set of the ids of the tables in the lobby
- ``revealed``: a hash of each closed table's seed, given with its hands
- ``hands:table:{id}`` and ``hands:account:{id}``: lists of finished hands as
  JSON, oldest first, trimmed to the last :data:`~qiuqiu.server.store.HISTORY_LENGTH`
- ``lease:{id}``: who hosts the table (``owner:fence``), expiring unless renewed
- ``fence:{id}``: the table's fencing counter, one up for each new lease
- ``version:{id}``: one up for each write to the table
- ``commit:{id}``: the id of the table's last commit, so that a commit retried
  after its answer was lost is recognised as done (kept for a day)
- ``seats:{account id}``: the set of the tables where the account has a seat,
  kept with its buy-ins and cash-outs, so a returning player's tables are found
  without reading every table
- ``connection:{account id}``: a list of the account's last connections
  (``owner:session``), the newest to say hello last
- ``claims``: the number of the last claim on an account's connection, one up
  for each, so that a table seats a player again from the newest of two
- ``health``: the last process whose health check wrote it, for a minute
"""

from typing import Any

from qiuqiu.protocol import MAX_BALANCE, MAX_CHIPS, ErrorCode
from qiuqiu.server.errors import Refused, balance_limit, too_many_seats
from qiuqiu.server.redis_clients import reply_text
from qiuqiu.server.store import TableCommit

# KEYS: the house's account, the accounts set. ARGV: the house's id.
OPEN_HOUSE = """
redis.call('HSETNX', KEYS[1], 'name', 'House')
redis.call('HSETNX', KEYS[1], 'balance', 0)
redis.call('SADD', KEYS[2], ARGV[1])
"""

# KEYS: the account, its token, the house's account, the accounts set.
# ARGV: id, name, grant, minus the grant (negated by the caller: Lua would hand
# Redis a large number in exponent form, which HINCRBY refuses), the house's id.
# Returns 0 if the id or token is taken, 1 once made, 2 if the house had to be
# opened again first: every server opens it at start, so Redis lost its data since.
CREATE_ACCOUNT = """
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
local made = 1
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('HSET', KEYS[3], 'name', 'House', 'balance', 0)
  redis.call('SADD', KEYS[4], ARGV[5])
  made = 2
end
redis.call('HSET', KEYS[1], 'name', ARGV[2], 'balance', ARGV[3])
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('HINCRBY', KEYS[3], 'balance', ARGV[4])
return made
"""

# KEYS: the account's connections, the claims counter. ARGV: the new one (owner:session),
# how many to keep. Returns the claim's number and the connections before it, oldest
# first; each is kept until it falls off the list, so that one whose claim's answer was
# lost (it never served) cannot hide the live one before it from the next claim. A key
# from before this was a list (a string, the last connection alone) is taken as a list
# of one.
CLAIM_CONNECTION = """
local before = {}
if redis.call('TYPE', KEYS[1]).ok == 'string' then
  before[1] = redis.call('GET', KEYS[1])
  redis.call('DEL', KEYS[1])
  redis.call('RPUSH', KEYS[1], before[1])
else
  before = redis.call('LRANGE', KEYS[1], 0, -1)
end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
return {redis.call('INCR', KEYS[2]), before}
"""

# One table commit, all or nothing.
# KEYS: [1] lease, [2] version, [3] last commit's id, [4] table, [5] tables set, then
# for each move its account and that account's seat index, then the hand lists, then
# the hash of closed tables' seeds, then the lease's fencing counter.
# ARGV: [1] the lease this store holds ('' for none), [2] the version it last wrote,
# [3] this commit's id, [4] the table's JSON ('' drops the table), [5] table id,
# [6] the number of moves, then for each move: account id, amount, minus the
# amount, 1 if the balance may go below zero, 1 if the account sits at the table
# after; then the hand's JSON ('' for none), minus HISTORY_LENGTH, the most tables an
# account may sit at (0: no limit), and the seed of the table it drops ('' for none).
# A refusal is a reply rather than an error, so that it carries the balance. The
# balance limit is verify_room's (store.py): Lua's numbers are doubles, exact up to
# MAX_BALANCE, and a sum past it rounds to no less than 2^53, so the test holds.
COMMIT = """
local moves = tonumber(ARGV[6])
if redis.call('GET', KEYS[3]) == ARGV[3] then
  local done = {'ok', redis.call('GET', KEYS[2]) or '0'}
  for i = 1, moves do
    done[#done + 1] = redis.call('HGET', KEYS[4 + 2 * i], 'balance') or '0'
  end
  return done
end
if ARGV[1] == '' then
  return {'lease_lost'}
end
local holder = redis.call('GET', KEYS[1])
if holder ~= ARGV[1] then
  -- Run out with nobody taking it since (the fence is still ours): a renewal takes it
  -- back, and then this commit may be made.
  if not holder and redis.call('GET', KEYS[#KEYS]) == string.match(ARGV[1], ':(%d+)$') then
    return {'lease_expired'}
  end
  return {'lease_lost'}
end
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[2] then
  return {'lease_lost'}
end
local owed = {}
for i = 1, moves do
  local a = 2 + 5 * i
  local balance = redis.call('HGET', KEYS[4 + 2 * i], 'balance')
  if not balance then
    return {'unknown_account', ARGV[a]}
  end
  owed[ARGV[a]] = (owed[ARGV[a]] or 0) + tonumber(ARGV[a + 1])
  if ARGV[a + 3] == '0' and tonumber(balance) < owed[ARGV[a]] then
    return {'insufficient_balance', ARGV[a], balance}
  end
  local limit = tonumber(ARGV[#ARGV - 1])
  if limit > 0 and ARGV[a + 4] == '1'
      and redis.call('SISMEMBER', KEYS[5 + 2 * i], ARGV[5]) == 0
      and redis.call('SCARD', KEYS[5 + 2 * i]) >= limit then
    return {'too_many_tables'}
  end
end
for i = 1, moves do
  local a = 2 + 5 * i
  if ARGV[a + 3] == '0' then
    local before = redis.call('HGET', KEYS[4 + 2 * i], 'balance')
    local tables = 0
    if owed[ARGV[a]] > 0 then
      tables = 1 + redis.call('SCARD', KEYS[5 + 2 * i])
        - redis.call('SISMEMBER', KEYS[5 + 2 * i], ARGV[5])
    end
    if tonumber(before) - owed[ARGV[a]] + tables * MAX_CHIPS > MAX_BALANCE then
      return {'balance_limit', ARGV[a], before, tables}
    end
  end
end
local done = {'ok', redis.call('INCR', KEYS[2])}
for i = 1, moves do
  local a = 2 + 5 * i
  done[#done + 1] = redis.call('HINCRBY', KEYS[4 + 2 * i], 'balance', ARGV[a + 2])
  if ARGV[a + 4] == '1' then
    redis.call('SADD', KEYS[5 + 2 * i], ARGV[5])
  else
    redis.call('SREM', KEYS[5 + 2 * i], ARGV[5])
  end
end
if ARGV[4] == '' then
  redis.call('DEL', KEYS[4], KEYS[1])
  redis.call('SREM', KEYS[5], ARGV[5])
  if ARGV[#ARGV] ~= '' then
    redis.call('HSET', KEYS[#KEYS - 1], ARGV[5], ARGV[#ARGV])
  end
else
  redis.call('SET', KEYS[4], ARGV[4])
  redis.call('SADD', KEYS[5], ARGV[5])
end
local h = 7 + 5 * moves
if ARGV[h] ~= '' then
  for i = 6 + 2 * moves, #KEYS - 2 do
    redis.call('RPUSH', KEYS[i], ARGV[h])
    redis.call('LTRIM', KEYS[i], ARGV[h + 1], -1)
  end
end
redis.call('SET', KEYS[3], ARGV[3], 'EX', 86400)
return done
"""

COMMIT = COMMIT.replace("MAX_CHIPS", str(MAX_CHIPS)).replace("MAX_BALANCE", str(MAX_BALANCE))


def commit_refusal(outcome: str, rest: list[Any], commit: TableCommit) -> Refused:
    """What COMMIT's refusal ``outcome`` (with the rest of its reply) says."""
    match outcome:
        case ErrorCode.TOO_MANY_TABLES:
            return too_many_seats(commit.seat_limit)
        case ErrorCode.UNKNOWN_ACCOUNT:
            return Refused(ErrorCode.UNKNOWN_ACCOUNT, f"there is no account {reply_text(rest[0])}")
    account_id, balance = reply_text(rest[0]), int(rest[1])
    amount = sum(n for a, n in commit.moves if a == account_id)
    if outcome == ErrorCode.INSUFFICIENT_BALANCE:
        return Refused(
            ErrorCode.INSUFFICIENT_BALANCE,
            f"your balance is {balance:,} chips, not enough for {amount:,}",
        )
    assert outcome == ErrorCode.BALANCE_LIMIT, outcome
    return balance_limit(balance - amount, int(rest[2]))


# KEYS: the lease, its fencing counter, the table's version. ARGV: the lease this
# store holds or '', this store's owner id, the lease's length in milliseconds, '1' for
# a new table (refused where a fencing counter says a table had the id before).
ACQUIRE = """
if ARGV[4] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then
  return false
end
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

# KEYS: each lease, then each lease's fencing counter. ARGV: the lease's length in
# milliseconds, then the holder of each (owner:fence). A lease that ran out is taken
# back if nobody took it since: its fencing counter is still the holder's.
# Returns 1 for each lease still held (and extended), 0 for each lost.
RENEW = """
local kept = {}
local n = #KEYS / 2
for i = 1, n do
  local holder = ARGV[i + 1]
  local current = redis.call('GET', KEYS[i])
  if current == holder then
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
    kept[i] = 1
  elseif not current and redis.call('GET', KEYS[n + i]) == string.match(holder, ':(%d+)$') then
    redis.call('SET', KEYS[i], holder, 'PX', ARGV[1])
    kept[i] = 1
  else
    kept[i] = 0
  end
end
return kept
"""

# KEYS: the lease. ARGV: its holder.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
"""

# KEYS: the tables set. ARGV: the prefix of a lease's key.
ORPHANED = """
local found = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[1] .. id) == 0 then
    found[#found + 1] = id
  end
end
return found
"""

# KEYS: the accounts set. ARGV: the prefix of an account's key.
# Reads keys it names itself, which a single Redis allows (a Cluster would not),
# so that an audit sees every balance at one moment.
BALANCES = """
local found = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  found[#found + 1] = id
  found[#found + 1] = redis.call('HGET', ARGV[1] .. id, 'balance')
end
return found
"""

# KEYS: the accounts set, the tables set. ARGV: the prefix of an account's key, then
# of a table's. Every balance and every table's stacks, read in one step, so that no
# commit falls between them: the two add up to zero while no chip is lost. A table's
# record keeps the stacks as they were when its hand in play began. The balances go
# back as Redis keeps them, to be summed by the caller: Lua's numbers are doubles, and
# a sum of balances near MAX_BALANCE (the house's is minus all of them) would round.
# One table's stacks are at most MAX_CHIPS, which a double holds exactly.
AUDIT = """
local balances, stacks = {}, {}
local accounts = redis.call('SMEMBERS', KEYS[1])
for _, id in ipairs(accounts) do
  balances[#balances + 1] = redis.call('HGET', ARGV[1] .. id, 'balance') or '0'
end
local tables = redis.call('SMEMBERS', KEYS[2])
for _, id in ipairs(tables) do
  local text = redis.call('GET', ARGV[2] .. id)
  if text then
    local chips = 0
    for _, seat in ipairs(cjson.decode(text)['seats']) do
      chips = chips + seat['stack']
    end
    stacks[#stacks + 1] = string.format('%d', chips)
  end
end
return {balances, stacks, #accounts, #tables}
"""
