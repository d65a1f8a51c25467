"""The server's CSPRNG draws floats from the kernel in batches, as good as SystemRandom's."""

from __future__ import annotations

from collections import Counter

from qiuqiu.server.csprng import BatchedSystemRandom
from qiuqiu.server.gateway import QiuQiuServer

DRAWS = 51_200  # a hundred batches


def test_draws_are_uniform_53_bit_floats_in_the_unit_interval_across_batches() -> None:
    rng = BatchedSystemRandom()
    draws = [rng.random() for _ in range(DRAWS)]
    assert all(0.0 <= d < 1.0 for d in draws)
    assert len(set(draws)) == DRAWS  # two equal 53-bit draws: about 1 in 6 million
    bins = Counter(int(d * 10) for d in draws)
    expected = DRAWS / 10
    chi2 = sum((bins[b] - expected) ** 2 / expected for b in range(10))
    assert chi2 < 60  # 9 degrees of freedom: a fair stream exceeds 60 about once in 10**8
    # Every one of the 53 bits is drawn: the lowest is set about half the time.
    lowest = sum(int(d * 2**53) & 1 for d in draws)
    assert abs(lowest - DRAWS / 2) < 6 * (DRAWS / 4) ** 0.5


def test_two_generators_draw_different_streams_and_nothing_seeds_them() -> None:
    a, b = BatchedSystemRandom(), BatchedSystemRandom()
    a.seed(1)
    b.seed(1)
    assert [a.random() for _ in range(8)] != [b.random() for _ in range(8)]


def test_the_server_deals_and_plays_its_dealer_bot_with_it_unless_given_another() -> None:
    assert isinstance(QiuQiuServer().lobby.rng, BatchedSystemRandom)
