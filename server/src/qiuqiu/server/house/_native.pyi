from collections.abc import Callable

from qiuqiu.server.house.book import Book, Solved
from qiuqiu.server.house.record import Random, Situation
from qiuqiu.server.strategy import Decision

def decide(
    chosen: Callable[[Book, Situation, int], Solved | None],
    unsized: tuple[Decision, Decision, Decision],
    sized: Callable[[str, int], Decision],
    situation: Situation,
    strategies: Book,
    rng: Random,
    /,
) -> Decision | None: ...
