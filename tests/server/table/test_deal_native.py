"""The compiled deal against the protocol's Python: the same hand seeds and the same decks,
field for field, over thousands of random tables, hands and client seeds, and the same
shuffle where a draw is refused."""

from __future__ import annotations

import random
import shutil
import string
import subprocess
import sysconfig
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from qiuqiu.protocol import fairness
from qiuqiu.server.table import deal
from tests.protocol.test_fairness import VECTORS, Crafted, seeds_of

try:
    from qiuqiu.server.table import _deal
except ImportError:  # built without a C compiler or OpenSSL's headers
    _deal = None  # type: ignore[assignment]

compiled = pytest.mark.skipif(_deal is None, reason="built without a C compiler or OpenSSL")
SEED_ALPHABET = string.ascii_letters + string.digits + "_-"
REFUSABLE = [i for i in range(27, 0, -1) if 2**32 % (i + 1)]
"""The shuffle's steps (by the position they fill) that can refuse a draw."""


def test_the_deal_is_compiled_where_a_c_compiler_and_openssl_are(tmp_path: Path) -> None:
    # uv sync builds the extension wherever it compiles and links; a build that failed
    # there would only show as a slower deal.
    compiler = (sysconfig.get_config_var("CC") or "").split()
    if not compiler or shutil.which(compiler[0]) is None:
        pytest.skip("no C compiler here: the server deals in Python")
    program = "#include <openssl/sha.h>\nint main(void) { return SHA256_DIGEST_LENGTH != 32; }\n"
    (tmp_path / "sha.c").write_text(program)
    build = [*compiler, str(tmp_path / "sha.c"), "-lcrypto", "-o", str(tmp_path / "sha")]
    if subprocess.run(build, capture_output=True, check=False).returncode:
        pytest.skip("no OpenSSL headers or libcrypto here: the server deals in Python")
    assert _deal is not None
    assert (deal.hand_seed, deal.derive_deck) == (_deal.hand_seed, _deal.derive_deck)


def random_client_seeds(rng: random.Random) -> dict[int, str]:
    """Seeds for 0 to 6 seats, numbered as a table numbers them or anywhere in a byte,
    each empty, of the longest length or of any length between."""
    seats = rng.sample(range(6) if rng.random() < 0.8 else range(256), rng.randint(0, 6))
    lengths = [rng.choice([0, 0, 1, 64, rng.randint(1, 64)]) for _ in seats]
    return {
        n: "".join(rng.choices(SEED_ALPHABET, k=k)) for n, k in zip(seats, lengths, strict=True)
    }


@compiled
@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_deal_is_the_protocols_deal(seed: int) -> None:
    assert _deal is not None
    rng = random.Random(seed)
    for _ in range(1000):
        table_seed = rng.randbytes(32).hex()
        table_id = "".join(rng.choices(string.printable, k=rng.randint(0, 40)))
        hand_id = rng.choice([0, 1, 2**64 - 1, rng.getrandbits(rng.randint(1, 64))])
        hand_seed = _deal.hand_seed(table_seed, table_id, hand_id)
        assert hand_seed == fairness.hand_seed(table_seed, table_id, hand_id)
        seeds = random_client_seeds(rng)
        made = _deal.derive_deck(hand_seed, seeds)
        assert made == fairness.derive_deck(hand_seed, seeds)
        assert sorted(made.tiles) == sorted(fairness._CANONICAL)


@compiled
@pytest.mark.parametrize("case", VECTORS, ids=range(len(VECTORS)))
def test_the_compiled_deal_holds_the_protocols_vectors(case: dict[str, Any]) -> None:
    assert _deal is not None
    seed = _deal.hand_seed(case["table_seed"], case["table_id"], case["hand_id"])
    assert seed == case["hand_seed"]
    made = _deal.derive_deck(seed, MappingProxyType(seeds_of(case)))
    assert (list(made.tiles), list(made.salts), list(made.leaves), made.commitment) == (
        case["deck"],
        case["salts"],
        case["leaves"],
        case["commitment"],
    )


def draws(values: list[int]) -> bytes:
    return b"".join(u.to_bytes(4, "big") for u in values)


@compiled
def test_a_refused_first_draw_is_passed_over_for_the_next_four_bytes() -> None:
    assert _deal is not None
    rng = random.Random(1)
    accepted = [rng.getrandbits(31) for _ in range(27)]
    refused = draws([2**32 - 4, 2**32 - 1, *accepted])  # 28 positions: 2**32 - 4 is the limit
    assert _deal.shuffle(refused) == tuple(fairness.shuffled(Crafted(refused)))
    assert _deal.shuffle(refused) == _deal.shuffle(draws(accepted))
    at_the_limit = draws([2**32 - 5, *accepted[1:]])  # the highest draw 28 positions take
    assert _deal.shuffle(at_the_limit) == tuple(fairness.shuffled(Crafted(at_the_limit)))
    assert _deal.shuffle(at_the_limit) != _deal.shuffle(draws(accepted))


@compiled
@pytest.mark.parametrize("step", REFUSABLE)
def test_a_draw_refused_at_any_step_is_passed_over_as_in_python(step: int) -> None:
    assert _deal is not None
    rng = random.Random(step)
    limit = 2**32 - 2**32 % (step + 1)
    for _ in range(50):
        before = [rng.getrandbits(31) for _ in range(27 - step)]
        refusals = [rng.randint(limit, 2**32 - 1) for _ in range(rng.randint(1, 3))]
        given = draws(before + refusals + [rng.getrandbits(32) for _ in range(60)])
        assert _deal.shuffle(given) == tuple(fairness.shuffled(Crafted(given)))


@compiled
def test_draws_near_the_top_refused_and_not_shuffle_as_in_python() -> None:
    # Each step refuses the top 2**32 % n draws: draws among the top 40 are refused at
    # some steps and not at others, and fall on each step's limit and next to it.
    assert _deal is not None
    rng = random.Random(5)
    for _ in range(2000):
        given = draws([2**32 - 1 - rng.randint(0, 40) for _ in range(27 * 8)])
        assert _deal.shuffle(given) == tuple(fairness.shuffled(Crafted(given)))


@compiled
def test_draws_that_run_out_are_refused() -> None:
    assert _deal is not None
    with pytest.raises(ValueError, match="ran out"):
        _deal.shuffle(draws([0] * 26))


HEX, CLIENT_SEED, SEAT = "lowercase hex", "1 to 64 letters", r"range\(0, 256\)"
BAD_DEALS = [
    ("A" * 64, {}, HEX),
    ("a" * 63, {}, HEX),
    ("a" * 65, {}, HEX),
    ("g" * 64, {}, HEX),
    ("é" * 64, {}, HEX),
    ("a" * 64, {0: "x" * 65}, CLIENT_SEED),
    ("a" * 64, {0: "a b"}, CLIENT_SEED),
    ("a" * 64, {0: "é"}, CLIENT_SEED),
    ("a" * 64, {1: "", 256: ""}, SEAT),
    ("a" * 64, {-1: ""}, SEAT),
]


@compiled
@pytest.mark.parametrize(("hand_seed", "seeds", "says"), BAD_DEALS)
def test_a_seed_the_python_refuses_is_refused(
    hand_seed: str, seeds: dict[int, str], says: str
) -> None:
    assert _deal is not None
    with pytest.raises(ValueError, match=says):
        fairness.derive_deck(hand_seed, seeds)
    with pytest.raises(ValueError, match=says):
        _deal.derive_deck(hand_seed, seeds)


@compiled
@pytest.mark.parametrize(
    ("table_seed", "table_id", "hand_id", "error"),
    [
        ("0" * 63, "t1", 1, ValueError),
        ("0" * 64, "tablé", 1, UnicodeError),
        ("0" * 64, "t1", -1, OverflowError),
        ("0" * 64, "t1", 2**64, OverflowError),
    ],
)
def test_a_hand_the_python_refuses_is_refused(
    table_seed: str, table_id: str, hand_id: int, error: type[Exception]
) -> None:
    assert _deal is not None
    with pytest.raises(error):
        fairness.hand_seed(table_seed, table_id, hand_id)
    with pytest.raises(error):
        _deal.hand_seed(table_seed, table_id, hand_id)
