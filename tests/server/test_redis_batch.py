"""Script runs batched into pipelines (:mod:`qiuqiu.server.redis_batch`), on a real Redis."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from qiuqiu.server.redis_batch import ScriptBatch
from tests.conftest import free_port

# Sets KEYS[1] to ARGV[1] and answers the key's count of sets; fails on 'boom'.
SET_AND_COUNT = """
if ARGV[1] == 'boom' then
  return redis.error_reply('ERR boom')
end
redis.call('SET', KEYS[1], ARGV[1])
return redis.call('INCR', KEYS[1] .. ':sets')
"""


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url, decode_responses=True)
    yield client
    await client.aclose()


async def test_runs_asked_for_in_one_turn_go_in_one_pipeline_each_with_its_own_reply(
    redis: Redis,
) -> None:
    batch = ScriptBatch(redis)
    script = redis.register_script(SET_AND_COUNT)
    await redis.script_load(SET_AND_COUNT)
    replies = await asyncio.gather(*(batch.run(script, [f"k{i % 3}"], [f"v{i}"]) for i in range(9)))
    assert batch.round_trips == 1
    # Redis ran them in the order asked: each key's count climbs 1, 2, 3.
    assert list(replies) == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert await redis.mget(["k0", "k1", "k2"]) == ["v6", "v7", "v8"]
    await batch.run(script, ["k0"], ["again"])
    assert batch.round_trips == 2, "a later turn, a pipeline of its own"


async def test_one_runs_error_is_its_own(redis: Redis) -> None:
    batch = ScriptBatch(redis)
    script = redis.register_script(SET_AND_COUNT)
    before, failing, after = await asyncio.gather(
        *(
            batch.run(script, [key], [value])
            for key, value in [("a", "x"), ("b", "boom"), ("c", "y")]
        ),
        return_exceptions=True,
    )
    assert (before, after) == (1, 1)
    assert isinstance(failing, ResponseError)
    assert "boom" in str(failing)
    assert await redis.mget(["a", "b", "c"]) == ["x", None, "y"]


async def test_a_script_redis_forgot_is_loaded_and_its_runs_sent_again_in_order(
    redis: Redis,
) -> None:
    batch = ScriptBatch(redis)
    script = redis.register_script(SET_AND_COUNT)
    assert await batch.run(script, ["a"], ["w"]) == 1
    await redis.script_flush()  # what a restarted Redis without the script looks like
    replies = await asyncio.gather(*(batch.run(script, ["a"], [v]) for v in ("x", "y", "z")))
    assert list(replies) == [2, 3, 4], "each run once, in the order asked"
    assert await redis.get("a") == "z"
    assert batch.round_trips == 3, "the three sent again together, once the script was loaded"
    assert await redis.script_exists(script.sha) == [True]


async def test_a_run_given_up_before_it_was_sent_is_never_sent(redis: Redis) -> None:
    batch = ScriptBatch(redis)
    script = redis.register_script(SET_AND_COUNT)
    given_up = asyncio.create_task(batch.run(script, ["gone"], ["x"]))
    await asyncio.sleep(0)  # it is waiting for the batch now
    given_up.cancel()
    assert await batch.run(script, ["kept"], ["y"]) == 1
    with pytest.raises(asyncio.CancelledError):
        await given_up
    assert await redis.exists("gone") == 0


async def test_a_pipeline_that_cannot_be_sent_fails_every_run_in_it() -> None:
    nowhere = Redis.from_url(f"redis://127.0.0.1:{free_port()}", socket_connect_timeout=1)
    try:
        batch = ScriptBatch(nowhere)
        script = nowhere.register_script(SET_AND_COUNT)
        failures = await asyncio.gather(
            *(batch.run(script, [f"k{i}"], ["x"]) for i in range(3)), return_exceptions=True
        )
    finally:
        await nowhere.aclose()
    assert all(isinstance(f, RedisConnectionError) for f in failures), failures
    assert len({id(f) for f in failures}) == 3, "an exception of its own for each run"
    assert all(" connecting to " in str(f) for f in failures), "still says nothing was sent"


async def test_closing_fails_the_runs_in_flight_and_leaves_no_task(redis: Redis) -> None:
    batch = ScriptBatch(redis)
    script = redis.register_script("redis.call('SET', KEYS[1], '1') return 1")
    # A pipeline waiting on a blocked Redis: it is in flight when the batch closes.
    await redis.client_pause(1000)
    try:
        running = asyncio.create_task(batch.run(script, ["k"], []))
        await asyncio.sleep(0.05)
        await batch.close()
        with pytest.raises(RedisConnectionError, match="closed"):
            await running
    finally:
        await redis.execute_command("CLIENT", "UNPAUSE")  # type: ignore[no-untyped-call]
    assert not batch._sending
