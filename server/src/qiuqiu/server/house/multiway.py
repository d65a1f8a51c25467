"""The house against two or more opponents: equity against the ranges the betting implies.

No equilibrium is solved for three or more seats, so the bot plays this policy,
from its seat's :class:`~qiuqiu.server.house.record.Situation` only (its own
tiles, the public moves, the pot and its legal actions). It is pure: the only
randomness is the ``rng`` it is given, the server's CSPRNG when serving.

**Ranges.** Each live opponent's holding is a weight over 16 strength buckets
of the 3,276 three-tile holdings (equal-sized, by the holding's mean strength
over its possible 4th tiles, a strength being the fraction of all 4-tile hands
a hand beats). It starts as the buckets' share of the holdings that share no
tile with the bot's (card removal, exact by inclusion-exclusion), and each of
that opponent's moves multiplies it by a likelihood of the bucket's strength
``s`` (its percentile, 0 to 1):

- a **bet or raise** of ``f`` pots (a raise measured above the call, against
  the pot after the call): ``s**k + r * (1 - s)**k + 0.02`` with
  ``k = 1 + 2 * min(f, 3)``: weight toward the strongest holdings and, in the
  proportion ``r = f / (1 + f)`` a balanced bettor of that size would bluff,
  toward the weakest. A bigger bet is read as more polar, not only as
  stronger (a bet of half the pot moves a range's mean strength up most, one
  of three pots or more leaves it near the middle), so an opponent cannot fold
  the bot out of a pot by betting big;
- a **call** that got pot odds ``q``: a logistic step up at ``s = q`` (hands
  too weak to call fold), times ``1 - 0.5 * s**8`` (the very best would often
  have raised), plus 0.05;
- a **check**: ``1 - 0.7 * s**3``, a cap (strong hands mostly bet);
- a fold leaves the hand, and its range with it.

With four tiles (the second round of a two-round table) each range is carried
over to 16 buckets of the 20,475 four-tile hands, by how a bucket's holdings
become hands with each 4th tile, and the second round's moves narrow that.

**Equity.** The chance that the bot's hand beats every live opponent: for each
4th tile it may get (with three tiles), the product over the opponents of its
chance against that opponent's range (a split counts half), averaged over the
4th tiles. Card removal is exact in the starting weights and ignored within
the showdown (an opponent's 4th tile may be one the bot holds, two opponents
may share a tile): heads-up, against a uniform range, this differs from the
exact chance of :func:`~qiuqiu.server.strategy.win_chance` by at most 0.016
(0.003 on average) over every three-tile holding, and treating the opponents as
independent is the approximation ``win_chance`` makes too. The tables behind it
are built once per tie rule (:func:`prepare`); a decision is a few hundred
multiplications per opponent.

**The decision**, with ``n`` live opponents, a fair share ``e0 = 1 / (n + 1)``,
a value bar ``V = e0 + (1 - e0) / 4`` and a strong bar ``G = e0 + (1 - e0) / 2``:

- **nobody has bet**: at or above ``G`` it bets the pot, at or above ``V`` half
  the pot, each nine times in ten (the tenth it checks, so a check is not a
  capped range); below ``e0 / 3``, when every live opponent has checked this
  round, it bluffs half the pot with probability ``0.2 / n`` (never against
  three or more); otherwise it checks;
- **facing a bet** (pot odds ``q``): at or above ``G`` it raises by the pot;
  otherwise it calls when its equity beats ``q + 0.02 * (n - 1)`` (more
  opponents, more chances of a raise behind), mixing over a band of 0.04 either
  side of that bar so a bet sized at the bar does not find a fixed answer, and
  folds below it.

Every amount is clamped into the legal range, so it only does what the engine allows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from qiuqiu.engine import ALL_TILES, TIE_RULES, TieRule
from qiuqiu.server.house.holdings import HOLDING_SIZE, HOLDINGS
from qiuqiu.server.house.record import Move, Situation
from qiuqiu.server.strategy import Decision, clamp, showdown_index

if TYPE_CHECKING:
    from qiuqiu.server.house.record import Random

BUCKETS = 16
TRAP = 0.1
"""How often a value hand checks instead."""
BLUFF = 0.2
"""Bluffing frequency heads-up, divided by the opponents."""
CALL_MARGIN = 0.02
CALL_BAND = 0.04

Weights = list[float]


@dataclass(frozen=True, slots=True)
class Tables:
    """What a decision reads, built once per tie rule by :func:`tables`."""

    key: dict[int, int]
    """Each 4-tile hand's dense showdown key (from :mod:`qiuqiu.server.strategy`)."""
    bucket3: dict[int, int]
    """Each 3-tile holding's strength bucket."""
    bucket4: dict[int, int]
    """Each 4-tile hand's strength bucket."""
    holding_counts: dict[int, tuple[int, ...]]
    """For every set of 0 to 3 tiles, how many holdings of each bucket contain it."""
    beat3: tuple[tuple[float, ...], ...]
    """``beat3[k][b]``: the chance a hand of key ``k`` beats a holding of bucket ``b``
    once it has its 4th tile, a split counting half."""
    beat4: tuple[tuple[float, ...], ...]
    """``beat4[k][c]``: the same against a 4-tile hand of bucket ``c``."""
    carry: tuple[tuple[float, ...], ...]
    """``carry[b][c]``: the chance a holding of bucket ``b`` becomes a hand of bucket ``c``."""


def prepare() -> None:
    """Build both tie rules' tables now (about 0.3 s), so no turn waits for them."""
    for tie_rule in TIE_RULES:
        tables(tie_rule)


@cache
def tables(tie_rule: TieRule) -> Tables:
    key = showdown_index(tie_rule)[0]
    hands = sorted(key, key=key.__getitem__)
    keys = max(key.values()) + 1
    # A hand's strength: the share of all hands it beats, a split counting half.
    count = [0] * keys
    for k in key.values():
        count[k] += 1
    below = [0] * keys
    for k in range(1, keys):
        below[k] = below[k - 1] + count[k - 1]
    strength = {m: (below[k] + count[k] / 2) / len(key) for m, k in key.items()}
    bucket4 = {m: i * BUCKETS // len(hands) for i, m in enumerate(hands)}

    masks = [sum(1 << t.index for t in h) for h in HOLDINGS]
    fourths = {m: [m | 1 << t.index for t in ALL_TILES if not m >> t.index & 1] for m in masks}
    mean = {m: sum(strength[h] for h in fourths[m]) / len(fourths[m]) for m in masks}
    by_mean = sorted(masks, key=mean.__getitem__)
    bucket3 = {m: i * BUCKETS // len(masks) for i, m in enumerate(by_mean)}

    holding_counts: dict[int, list[int]] = {}
    for m in masks:
        for sub in _submasks(m):
            holding_counts.setdefault(sub, [0] * BUCKETS)[bucket3[m]] += 1

    seen3 = [[0.0] * keys for _ in range(BUCKETS)]
    carry = [[0.0] * BUCKETS for _ in range(BUCKETS)]
    for m in masks:
        b = bucket3[m]
        for h in fourths[m]:
            seen3[b][key[h]] += 1
            carry[b][bucket4[h]] += 1
    seen4 = [[0.0] * keys for _ in range(BUCKETS)]
    for h, k in key.items():
        seen4[bucket4[h]][k] += 1
    return Tables(
        key=key,
        bucket3=bucket3,
        bucket4=bucket4,
        holding_counts={s: tuple(c) for s, c in holding_counts.items()},
        beat3=_beat(seen3),
        beat4=_beat(seen4),
        carry=tuple(tuple(x / sum(row) for x in row) for row in carry),
    )


def _beat(seen: list[list[float]]) -> tuple[tuple[float, ...], ...]:
    """From each bucket's count of hands by key, the chance of each key against each bucket."""
    columns = []
    for row in seen:
        total, below, column = sum(row), 0.0, []
        for n in row:
            column.append((below + n / 2) / total)
            below += n
        columns.append(column)
    return tuple(zip(*columns, strict=True))


def _submasks(mask: int) -> list[int]:
    """Every subset of ``mask`` with at most 3 tiles, the empty one included."""
    subs, sub = [0], mask
    while sub:
        if sub.bit_count() <= HOLDING_SIZE:
            subs.append(sub)
        sub = (sub - 1) & mask
    return subs


def decide(situation: Situation, rng: Random) -> Decision:
    """What the house does at ``situation``, its turn in a betting round (see the module)."""
    chance, checked_round = equity(situation)
    legal = situation.legal
    n = max(len(situation.opponents), 1)
    fair = 1 / (n + 1)
    value, strong = fair + (1 - fair) / 4, fair + (1 - fair) / 2
    pot = situation.pot
    if legal.check:
        if legal.bet is None:
            return Decision("check")
        if chance >= value and rng.random() >= TRAP:
            size = pot if chance >= strong else pot // 2
            return Decision("bet", clamp(size, legal.bet))
        if chance < fair / 3 and checked_round and n < 3 and rng.random() < BLUFF / n:
            return Decision("bet", clamp(pot // 2, legal.bet))
        return Decision("check")
    to_call = legal.call or 0
    if chance >= strong and legal.raise_to is not None:
        current = max((m.to for m in _this_round(situation)), default=0)
        return Decision("raise", clamp(current + pot + to_call, legal.raise_to))
    bar = to_call / (pot + to_call) + CALL_MARGIN * (n - 1)
    call_chance = (chance - bar + CALL_BAND) / (2 * CALL_BAND)
    if call_chance >= 1 or (call_chance > 0 and rng.random() < call_chance):
        return Decision("call")
    return Decision("fold")


def equity(situation: Situation) -> tuple[float, bool]:
    """The bot's chance to beat every live opponent's range, and whether all of them
    have checked in the round being played."""
    t = tables(situation.rules.tie_rule)
    mine = sum(1 << tile.index for tile in situation.tiles)
    normed = list(ranges(situation).values())
    if len(situation.tiles) > HOLDING_SIZE:
        chance = _against(t.beat4[t.key[mine]], normed)
    else:
        fourths = [mine | 1 << i for i in range(len(ALL_TILES)) if not mine >> i & 1]
        chance = sum(_against(t.beat3[t.key[h]], normed) for h in fourths) / len(fourths)
    played = _this_round(situation)
    opponents = situation.opponents
    checked = all(any(m.seat == s and m.kind == "check" for m in played) for s in opponents)
    return chance, checked


def ranges(situation: Situation) -> dict[int, Weights]:
    """Each live opponent's range as the bot reads it: weights summing to 1 over the
    strength buckets, weakest first (of 3-tile holdings, or of 4-tile hands once the
    bot has its 4th tile)."""
    t = tables(situation.rules.tie_rule)
    prior = _prior(t, sum(1 << tile.index for tile in situation.tiles))
    weights = {seat: list(prior) for seat in situation.opponents}
    _narrow(situation, weights, rounds=(1,))
    if len(situation.tiles) > HOLDING_SIZE:
        for seat, held in weights.items():
            weights[seat] = [
                sum(w * row[c] for w, row in zip(held, t.carry, strict=True))
                for c in range(BUCKETS)
            ]
        _narrow(situation, weights, rounds=(2,))
    return {seat: _normed(w) for seat, w in weights.items()}


def _prior(t: Tables, mine: int) -> Weights:
    """Each bucket's count of the holdings that share no tile with ``mine``."""
    counts = [0] * BUCKETS
    for sub in _submasks(mine):
        row = t.holding_counts.get(sub)
        if row is not None:
            sign = -1 if sub.bit_count() % 2 else 1
            for b in range(BUCKETS):
                counts[b] += sign * row[b]
    return [float(c) for c in counts]


def _narrow(situation: Situation, ranges: dict[int, Weights], rounds: Sequence[int]) -> None:
    """Multiply each opponent's range by the likelihood of each of its moves in ``rounds``."""
    pot = sum(situation.antes.values())
    bets: dict[int, int] = {}
    round_ = 0
    for move in situation.moves:
        if move.round != round_:
            round_, bets = move.round, {}
        current = max(bets.values(), default=0)
        to_call = current - bets.get(move.seat, 0)
        weights = ranges.get(move.seat)
        if weights is not None and move.round in rounds:
            likelihood = _likelihood(move, pot, current, to_call)
            if likelihood is not None:
                for b in range(BUCKETS):
                    weights[b] *= likelihood((b + 0.5) / BUCKETS)
        pot += move.added
        bets[move.seat] = move.to


def _likelihood(
    move: Move, pot: int, current: int, to_call: int
) -> Callable[[float], float] | None:
    match move.kind:
        case "bet" | "raise":
            above = move.to - current
            return _Aggressive(above / max(pot + to_call, 1))
        case "call":
            return _Called(move.added / max(pot + move.added, 1))
        case "check":
            return _checked
    return None


class _Aggressive:
    def __init__(self, fraction: float) -> None:
        self.k = 1 + 2 * min(fraction, 3.0)
        self.bluffs = fraction / (1 + fraction)

    def __call__(self, s: float) -> float:
        return math.pow(s, self.k) + self.bluffs * math.pow(1 - s, self.k) + 0.02


class _Called:
    def __init__(self, odds: float) -> None:
        self.odds = odds

    def __call__(self, s: float) -> float:
        return 0.05 + (1 - 0.5 * s**8) / (1 + math.exp((self.odds - s) / 0.08))


def _checked(s: float) -> float:
    return 1 - 0.7 * s**3


def _normed(weights: Weights) -> Weights:
    total = sum(weights)
    return [w / total for w in weights] if total > 0 else [1 / BUCKETS] * BUCKETS


def _against(beat: Sequence[float], ranges: list[Weights]) -> float:
    chance = 1.0
    for weights in ranges:
        chance *= sum(w * p for w, p in zip(weights, beat, strict=True))
    return chance


def _this_round(situation: Situation) -> list[Move]:
    return [m for m in situation.moves if m.round == situation.round]
