"""What another server process does to a table's lease as it adopts the table, done by a
test to the table's host: its next renewal finds the lease taken, and the table moves."""

from __future__ import annotations

from redis.asyncio import Redis


async def lease_taken(redis_url: str, table_id: str, for_ms: int = 500) -> None:
    """Take ``table_id``'s lease, with the next fence, for ``for_ms``: by default long
    enough for its host to see it gone, short enough for that host to adopt it again."""
    async with Redis.from_url(redis_url) as raw:
        fence = await raw.incr(f"qiuqiu:fence:{table_id}")
        await raw.set(f"qiuqiu:lease:{table_id}", f"other:{fence}", px=for_ms)
