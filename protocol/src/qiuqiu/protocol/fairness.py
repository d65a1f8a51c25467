"""The fair deal (PROTOCOL.md, "Fairness"): a deck nobody chose, checked tile by tile.

The rules it keeps:

1. **The server commits first.** A table opens with a secret ``table_seed``
   (32 random bytes) and publishes ``sha256(table_seed)``, its
   ``seed_commitment``, before any player can send it anything for that table.
   Hand ``k``'s seed is ``HMAC(table_seed, table_id || 0x00 || k)``, so every
   hand's server part is fixed from the table's first moment.
2. **Every player's entropy enters.** Each seat may send a ``client_seed``; the
   deck and the salts of hand ``k`` come from an HMAC-SHA256 stream keyed by
   the hand seed and every dealt seat's client seed. The server, committed
   before it saw them, cannot steer the deck without finding an HMAC collision.
3. **One commitment per position.** Position ``p`` of the deck (0 to 27, in
   dealing order) is committed as ``leaf_p = sha256(p || salt_p || tile)``;
   ``hand_started`` publishes the 28 leaves and their ``commitment``,
   ``sha256(leaf_0 || ... || leaf_27)``. The salts are 16 bytes each, so a leaf
   says nothing about its tile until it is opened.
4. **Openings, not the deck.** A seat receives the opening ``(position, tile,
   salt)`` of each of its own tiles; a showdown opens the positions shown.
   Nothing else is opened while the table lives: a folded hand, a walk-over
   winner's hand and the undealt tiles stay sealed.
5. **The full shuffle at the table's end.** ``table_closed`` reveals
   ``table_seed``; from it and the client seeds listed in each
   ``hand_started`` anyone recomputes every deck, salt and leaf of the table.

Everything here is a pure function of its arguments, in bytes a client in any
language can reproduce: ``tests/data/fairness-vectors.json`` holds the test
vectors PROTOCOL.md points to.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from qiuqiu.engine import ALL_TILES
from qiuqiu.protocol.common import CLIENT_SEED_PATTERN, Opening
from qiuqiu.protocol.errors import ProtocolError

DECK_SIZE = len(ALL_TILES)
SALT_BYTES = 16
FIRST_TILES = 3
_CLIENT_SEED = re.compile(CLIENT_SEED_PATTERN)
_HEX32 = re.compile(r"^[0-9a-f]{64}$")
_LEAVES = re.compile(rf"(?:[0-9a-f]{{64}}\n){{{DECK_SIZE}}}")
"""A deck's leaves, each followed by a newline: one match instead of one a leaf."""
_CANONICAL = tuple(str(tile) for tile in ALL_TILES)
_POSITION = tuple(bytes((p,)) for p in range(DECK_SIZE))
_TILE_ASCII = {tile: tile.encode("ascii") for tile in _CANONICAL}


class DealTampered(ProtocolError):
    """What a client saw of a hand disagrees with what the server committed to:
    a tile at a position that does not open to it, a tile dealt twice, a client
    seed the server did not use, or a revealed seed that does not make the deck.
    ``hand_id`` is the hand (``None`` for the table's seed itself)."""

    def __init__(self, table_id: str, hand_id: int | None, reason: str) -> None:
        where = f"table {table_id}" + (f", hand {hand_id}" if hand_id is not None else "")
        super().__init__(f"{where}: {reason}")
        self.table_id, self.hand_id, self.reason = table_id, hand_id, reason


@dataclass(frozen=True, slots=True)
class SealedDeck:
    """A hand's deck as the server holds it: the tiles in dealing order, their
    salts, the 28 leaves and their commitment."""

    tiles: tuple[str, ...]
    salts: tuple[str, ...]
    leaves: tuple[str, ...]
    commitment: str

    def opening(self, position: int) -> Opening:
        return Opening(position=position, tile=self.tiles[position], salt=self.salts[position])


# -- deriving -----------------------------------------------------------------------


def seed_commitment(table_seed: str) -> str:
    """``sha256(table_seed)`` in hex: what a table publishes before its first hand."""
    return hashlib.sha256(_seed_bytes(table_seed)).hexdigest()


def hand_seed(table_seed: str, table_id: str, hand_id: int) -> str:
    """``HMAC-SHA256(table_seed, table_id || 0x00 || hand_id as 8 bytes big-endian)``."""
    message = table_id.encode("ascii") + b"\x00" + hand_id.to_bytes(8, "big")
    return hmac.new(_seed_bytes(table_seed), message, hashlib.sha256).hexdigest()


def deal_key(hand_seed_hex: str, client_seeds: Mapping[int, str]) -> bytes:
    """``HMAC-SHA256(hand_seed, seeds)``, where ``seeds`` is, for every dealt seat in
    ascending order, its number (1 byte), the length of its client seed (1 byte)
    and the seed's ASCII bytes; a seat that sent none has the empty seed."""
    message = b"".join(
        bytes((seat, len(seed))) + _client_seed_bytes(seed)
        for seat, seed in sorted(client_seeds.items())
    )
    return hmac.new(_seed_bytes(hand_seed_hex), message, hashlib.sha256).digest()


class Stream:
    """The bytes ``HMAC-SHA256(key, 0) || HMAC-SHA256(key, 1) || ...``, counters as
    8 bytes big-endian: the one source of every salt and every shuffle draw."""

    __slots__ = ("_buffer", "_counter", "_inner", "_outer", "_taken")

    def __init__(self, key: bytes) -> None:
        # HMAC (RFC 2104) from its two padded hashes, each started once: a block is
        # then two copies and two digests, without the hmac module's object around them.
        if len(key) > _HMAC_BLOCK:
            key = hashlib.sha256(key).digest()
        padded = key.ljust(_HMAC_BLOCK, b"\x00")
        self._inner = hashlib.sha256(padded.translate(_IPAD))
        self._outer = hashlib.sha256(padded.translate(_OPAD))
        self._counter, self._buffer, self._taken = 0, b"", 0

    def take(self, n: int) -> bytes:
        start, end = self._taken, self._taken + n
        if len(self._buffer) < end:
            blocks = [self._buffer]
            have = len(self._buffer)
            while have < end:
                inner = self._inner.copy()
                inner.update(self._counter.to_bytes(8, "big"))
                outer = self._outer.copy()
                outer.update(inner.digest())
                blocks.append(outer.digest())
                self._counter += 1
                have += _BLOCK
            self._buffer = b"".join(blocks)
        self._taken = end
        return self._buffer[start:end]


_BLOCK = hashlib.sha256().digest_size
_HMAC_BLOCK = hashlib.sha256().block_size
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))
_DRAWS = struct.Struct(f">{DECK_SIZE - 1}I")
_LIMITS = tuple((i, 2**32 - 2**32 % (i + 1)) for i in range(DECK_SIZE - 1, 0, -1))
"""Each step of the shuffle: the position it fills and the first draw it refuses."""


def derive_deck(hand_seed_hex: str, client_seeds: Mapping[int, str]) -> SealedDeck:
    """The hand's deck: 28 salts of 16 bytes from the start of the stream, then a
    Fisher-Yates shuffle of the tiles in canonical order (``0-0, 1-0, 1-1, 2-0, ...,
    6-6``): for ``i`` from 27 down to 1, take 4 bytes as a big-endian number ``u``,
    take 4 more while ``u >= 2**32 - 2**32 % (i + 1)``, and swap positions ``i``
    and ``u % (i + 1)``."""
    source = Stream(deal_key(hand_seed_hex, client_seeds))
    salted = source.take(SALT_BYTES * DECK_SIZE)
    salts = [salted[p * SALT_BYTES : (p + 1) * SALT_BYTES] for p in range(DECK_SIZE)]
    return seal_salted(shuffled(source), salts)


def shuffled(source: Stream) -> list[str]:
    """The canonical tiles shuffled by draws from ``source`` (see :func:`derive_deck`)."""
    # One read for the 27 draws a shuffle takes unless one is refused, which is rarer
    # than one in 2**27 a draw; a refused draw's step reads on from the stream.
    draws = _DRAWS.unpack(source.take(_DRAWS.size))
    tiles = list(_CANONICAL)
    taken = 0
    for i, limit in _LIMITS:
        u = limit
        while u >= limit:
            u = draws[taken] if taken < len(draws) else int.from_bytes(source.take(4), "big")
            taken += 1
        j = u % (i + 1)
        tiles[i], tiles[j] = tiles[j], tiles[i]
    return tiles


def seal(tiles: Sequence[str], salts: Sequence[str]) -> SealedDeck:
    """Commit to ``tiles`` with ``salts`` (in hex): the leaves and their commitment."""
    return seal_salted(tiles, [bytes.fromhex(salt) for salt in salts])


def seal_salted(tiles: Sequence[str], salts: Sequence[bytes]) -> SealedDeck:
    """:func:`seal` from the salts' bytes, as a deal draws them."""
    sha256 = hashlib.sha256
    # Each leaf as leaf() makes it, its position's byte and its tile's text looked up:
    # the server seals a deck every hand, and making them each time costs a third of it.
    digests = [
        sha256(_POSITION[p] + salt + _TILE_ASCII[tile]).digest()
        for p, (salt, tile) in enumerate(zip(salts, tiles, strict=True))
    ]
    return SealedDeck(
        tuple(tiles),
        tuple(salt.hex() for salt in salts),
        tuple(d.hex() for d in digests),
        hashlib.sha256(b"".join(digests)).hexdigest(),
    )


def leaf(position: int, tile: str, salt: str) -> str:
    """``sha256(position as 1 byte || salt || tile's ASCII text)`` in hex."""
    return _leaf_digest(position, bytes.fromhex(salt), tile).hex()


def _leaf_digest(position: int, salt: bytes, tile: str) -> bytes:
    return hashlib.sha256(bytes((position,)) + salt + tile.encode("ascii")).digest()


def commitment(leaves: Sequence[str]) -> str:
    """``sha256`` of the 28 leaves' bytes, one after another, in hex."""
    return hashlib.sha256(bytes.fromhex("".join(leaves))).hexdigest()


def dealt_positions(dealt_seats: Sequence[int], button: int) -> dict[int, tuple[int, ...]]:
    """Each dealt seat's four positions: in acting order (the first seat after the
    button first), seat ``i`` gets ``3i, 3i+1, 3i+2`` and then ``3n+i``."""
    return dict(_positions(tuple(dealt_seats), button))


@lru_cache(maxsize=256)
def _positions(dealt_seats: tuple[int, ...], button: int) -> Mapping[int, tuple[int, ...]]:
    # Kept, and read-only: a client checks every hand it sees with the same few seatings.
    ordered = sorted(dealt_seats)
    order = [s for s in ordered if s > button] + [s for s in ordered if s <= button]
    n = len(order)
    return MappingProxyType(
        {
            seat: (FIRST_TILES * i, FIRST_TILES * i + 1, FIRST_TILES * i + 2, FIRST_TILES * n + i)
            for i, seat in enumerate(order)
        }
    )


# -- checking -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HandSeen:
    """What one client saw of a hand: the commitment and client seeds from
    ``hand_started``, and every opening it received (its own and the showdown's),
    by seat."""

    table_id: str
    hand_id: int
    button: int
    commitment: str
    leaves: tuple[str, ...]
    client_seeds: Mapping[int, str]
    openings: Mapping[int, Sequence[Opening]]


def verify_hand(
    hand: HandSeen,
    *,
    my_seat: int | None = None,
    my_seeds: Sequence[str] = (),
    bot_seat: int | None = None,
) -> int:
    """Check every tile a client saw against the commitment; raise
    :class:`DealTampered` on the first thing wrong. ``my_seeds`` are the client
    seeds this client may have played the hand with (its last one, and the one
    before while a change is on its way): the server must have listed one of them
    for ``my_seat``. ``bot_seat``, the dealer bot's, must list the empty seed (any
    other is one the server chose knowing the players' seeds) and be the button (or
    the server could give the bot whichever seat's positions hold the better hand).
    Returns how many openings were checked."""

    def fail(reason: str) -> DealTampered:
        return DealTampered(hand.table_id, hand.hand_id, reason)

    if not _LEAVES.fullmatch("\n".join(hand.leaves) + "\n"):
        raise fail(f"hand_started did not commit to {DECK_SIZE} positions")
    if commitment(hand.leaves) != hand.commitment:
        raise fail("the positions do not hash to the hand's commitment")
    if my_seat is not None and my_seeds and hand.client_seeds.get(my_seat) not in my_seeds:
        raise fail(f"the deal was not made with this client's seed for seat {my_seat}")
    if bot_seat is not None and hand.client_seeds.get(bot_seat, ""):
        raise fail(f"the dealer bot's seat {bot_seat} lists a seed, not the empty one")
    if bot_seat is not None and hand.button != bot_seat:
        raise fail(f"the dealer bot's seat {bot_seat} is not the button")
    where = _positions(tuple(hand.client_seeds), hand.button)
    tiles: dict[str, int] = {}
    checked = 0
    for seat, openings in hand.openings.items():
        if seat not in where:
            raise fail(f"seat {seat} was opened but never dealt in")
        for opening in openings:
            if opening.position not in where[seat]:
                raise fail(f"seat {seat} was dealt position {opening.position}, not its own")
            try:
                sealed = leaf(opening.position, opening.tile, opening.salt)
            except ValueError:
                raise fail(f"position {opening.position} was opened with a bad salt") from None
            if sealed != hand.leaves[opening.position]:
                raise fail(f"position {opening.position} does not open to {opening.tile}")
            if tiles.setdefault(opening.tile, opening.position) != opening.position:
                raise fail(f"tile {opening.tile} was dealt twice")
            checked += 1
    return checked


def verify_reveal(hand: HandSeen, table_seed: str, seed_commitment_hex: str) -> None:
    """Check the full shuffle once the table's seed is revealed: it is the seed the
    table committed to, and with the hand's client seeds it makes exactly the
    committed leaves. A hand seen without its leaves (a client keeps only the
    commitment of a hand it checked as it ended, since the leaves hash to it) is
    held to its commitment. Raises :class:`DealTampered`."""
    if not _HEX32.fullmatch(table_seed) or seed_commitment(table_seed) != seed_commitment_hex:
        raise DealTampered(hand.table_id, None, "the revealed seed is not the one committed to")
    seed = hand_seed(table_seed, hand.table_id, hand.hand_id)
    rebuilt = derive_deck(seed, hand.client_seeds)
    if rebuilt.commitment != hand.commitment or (
        hand.leaves and rebuilt.leaves != tuple(hand.leaves)
    ):
        raise DealTampered(
            hand.table_id,
            hand.hand_id,
            "the revealed seed and the client seeds do not make this deck",
        )


def valid_client_seed(seed: str) -> bool:
    return bool(_CLIENT_SEED.fullmatch(seed))


def _seed_bytes(seed: str) -> bytes:
    if not _HEX32.fullmatch(seed):
        raise ValueError("a seed is 32 bytes in lowercase hex")
    return bytes.fromhex(seed)


def _client_seed_bytes(seed: str) -> bytes:
    if seed and not _CLIENT_SEED.fullmatch(seed):
        raise ValueError("a client seed is 1 to 64 letters, digits, '_' or '-'")
    return seed.encode("ascii")
