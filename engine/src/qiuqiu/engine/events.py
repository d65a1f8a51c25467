"""The facts a hand is made of.

A hand's event log is its whole history: :meth:`HandState.replay` rebuilds the
state from it, and a finished hand's log is its record. Some events hold
secrets (the deck, a seat's tiles); deciding who may see which is the
server's job, not the engine's.
"""

from __future__ import annotations

from dataclasses import dataclass

from qiuqiu.engine.ranking import Category, Cut
from qiuqiu.engine.rules import TableRules
from qiuqiu.engine.tiles import Tile


@dataclass(frozen=True, slots=True)
class HandStarted:
    """A hand begins: its rules, each seat's stack, the button and the deck it is dealt from."""

    rules: TableRules
    stacks: tuple[tuple[int, int], ...]
    button: int
    deck: tuple[Tile, ...]


@dataclass(frozen=True, slots=True)
class AnteTaken:
    seat: int
    amount: int
    all_in: bool


@dataclass(frozen=True, slots=True)
class TilesDealt:
    """A seat's first three tiles, face down."""

    seat: int
    tiles: tuple[Tile, Tile, Tile]


@dataclass(frozen=True, slots=True)
class BettingRoundStarted:
    round: int


@dataclass(frozen=True, slots=True)
class BettingRoundEnded:
    """Everyone still in has matched the bet or is all-in (or all but one folded)."""

    round: int


@dataclass(frozen=True, slots=True)
class TurnTimedOut:
    """The seat let its time run out; the event after this one is what was done for it."""

    seat: int


@dataclass(frozen=True, slots=True)
class Checked:
    seat: int


@dataclass(frozen=True, slots=True)
class BetPlaced:
    seat: int
    amount: int
    all_in: bool


@dataclass(frozen=True, slots=True)
class Called:
    seat: int
    amount: int
    all_in: bool


@dataclass(frozen=True, slots=True)
class Raised:
    """The seat raised its bet for this round to ``to``, adding ``amount`` chips."""

    seat: int
    to: int
    amount: int
    all_in: bool


@dataclass(frozen=True, slots=True)
class Folded:
    seat: int


@dataclass(frozen=True, slots=True)
class BetReturned:
    """The part of a bet nobody matched goes back to its owner when the round closes."""

    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class FourthTileDealt:
    seat: int
    tile: Tile


@dataclass(frozen=True, slots=True)
class CuttingStarted:
    """Under ``manual_split``, these seats must now declare their cuts."""

    seats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CutDeclared:
    seat: int
    cut: Cut


@dataclass(frozen=True, slots=True)
class ShownHand:
    seat: int
    tiles: tuple[Tile, Tile, Tile, Tile]
    cut: Cut
    category: Category
    pairs: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Showdown:
    """Every hand still in, face up, scored by the cut it is judged on."""

    hands: tuple[ShownHand, ...]


@dataclass(frozen=True, slots=True)
class PotAwarded:
    """One pot (the main pot first, then side pots) and who took how much of it."""

    amount: int
    eligible: tuple[int, ...]
    shares: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class HandVoided:
    """The hand was called off; every chip anyone put in went back to them."""

    refunds: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class HandEnded:
    stacks: tuple[tuple[int, int], ...]


Event = (
    HandStarted
    | AnteTaken
    | TilesDealt
    | BettingRoundStarted
    | BettingRoundEnded
    | TurnTimedOut
    | Checked
    | BetPlaced
    | Called
    | Raised
    | Folded
    | BetReturned
    | FourthTileDealt
    | CuttingStarted
    | CutDeclared
    | Showdown
    | PotAwarded
    | HandVoided
    | HandEnded
)
