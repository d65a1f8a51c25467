"""Types both directions share: tiles, amounts, ids, table options, legal actions.

Every model is frozen, forbids unknown fields and is strict (``"10"`` is not a
number, ``1.0`` is not a whole amount), so a message means exactly one thing.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from qiuqiu.engine import MAX_SEATS, MIN_SEATS, TableRules, TieRule, Tile

PROTOCOL_VERSION = 2
"""Bumped whenever a message changes in a way an older client would misread."""

MAX_CHIPS = 10**12
"""No amount at a table (a bet, a stack, a buy-in, every chip at one table together) is
larger; bigger numbers are refused before they reach the engine."""

MAX_BALANCE = 2**53 - 1
"""The most chips an account's balance holds: the largest whole number a JavaScript
number (the browser page's) holds exactly. A balance sums what was won at every table,
so it may pass :data:`MAX_CHIPS`; the store refuses a commit that would take it past
this rather than let it wrap or round."""

NAME_LENGTH = 24


def _type_is_required(schema: dict[str, Any]) -> None:
    # ``type`` has a default so Python code need not repeat it, but on the wire it is
    # the tag every message must carry: say so to code generators in other languages.
    if "type" in schema.get("properties", {}):
        required = schema.setdefault("required", [])
        if "type" not in required:
            required.insert(0, "type")


class Message(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", strict=True, json_schema_extra=_type_is_required
    )


TILE_PATTERN = r"^(?:0-0|1-[01]|2-[0-2]|3-[0-3]|4-[0-4]|5-[0-5]|6-[0-6])$"
"""The 28 dominoes, high end first: as the server writes every tile."""

TileText = Annotated[
    str,
    StringConstraints(pattern=TILE_PATTERN),
    Field(description='A domino, high end first: "6-1".'),
]
"""A tile in a server message. Checked by its pattern alone, without a Python
validator: a hand's messages carry dozens of tiles, and every client reads them."""

_HIGH_FIRST = {f"{a}-{b}": str(Tile.parse(f"{a}-{b}")) for a in range(7) for b in range(7)}


def _high_first(text: str) -> str:
    return _HIGH_FIRST[text]


TILE_INPUT_PATTERN = r"^[0-6]-[0-6]$"
TileInput = Annotated[
    str,
    StringConstraints(pattern=TILE_INPUT_PATTERN),
    AfterValidator(_high_first),
    Field(description='A domino, either end first: "6-1" or "1-6".'),
]
"""A tile in a client message: read high end first, whichever end the client wrote first."""
Chips = Annotated[int, Field(ge=0, le=MAX_CHIPS)]
Balance = Annotated[int, Field(ge=0, le=MAX_BALANCE)]
PositiveChips = Annotated[int, Field(ge=1, le=MAX_CHIPS)]
SeatNumber = Annotated[int, Field(ge=0, lt=MAX_SEATS)]
HandId = Annotated[int, Field(ge=1, le=2**53)]
TABLE_ID_PATTERN = r"^[A-Za-z0-9_-]+$"
TableId = Annotated[str, StringConstraints(min_length=1, max_length=32, pattern=TABLE_ID_PATTERN)]
MessageId = (
    Annotated[str, StringConstraints(min_length=1, max_length=64)]
    | Annotated[int, Field(ge=0, le=2**53)]
)
"""What a client calls its message; the reply, or the error, names it in ``ref``."""


INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)
"""The characters Unicode says to show as nothing (Default_Ignorable_Code_Point) that
are not control or format characters: variation selectors, fillers, a joiner. Kept,
"Dealer" followed by one of them would pass for the dealer bot."""


def clean_name(text: str) -> str:
    """Display names reach every other client: no control, formatting or invisible
    characters, no leading, trailing or repeated spaces."""
    text = INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or unicodedata.category(ch)[0] not in "CZ"
    )
    name = " ".join(kept.split())[:NAME_LENGTH].rstrip()
    if not name:
        raise ValueError("a name needs at least one visible character")
    return name


PlayerName = Annotated[str, StringConstraints(max_length=64), AfterValidator(clean_name)]


class TableOptions(Message):
    """How a table plays (README, "The rules"). The defaults are the classic web version:
    one player against the dealer bot, one betting round."""

    seats: Annotated[int, Field(ge=MIN_SEATS, le=MAX_SEATS)] = 2
    dealer_bot: bool = True
    min_players: Annotated[int, Field(ge=MIN_SEATS, le=MAX_SEATS)] = 2
    """Seats (the bot's included) that must be ready before a hand starts."""
    ante: Annotated[int, Field(ge=0, le=MAX_CHIPS)] = 10
    min_bet: PositiveChips = 10
    max_bet: PositiveChips | None = None
    max_raises: Annotated[int, Field(ge=0, le=100)] | None = None
    betting_rounds: Annotated[int, Field(ge=1, le=2)] = 1
    """1 or 2. A range, not ``Literal[1, 2]``: a literal takes ``true`` and ``2.0`` as
    the numbers they equal, even in strict mode."""
    tie_rule: TieRule = "highest_tile"
    manual_split: bool = False
    turn_seconds: Annotated[float, Field(ge=0.05, le=600, allow_inf_nan=False)] = 30.0
    min_buy_in: PositiveChips = 100
    max_buy_in: PositiveChips = 10_000

    def rules(self) -> TableRules:
        """The rules the engine plays a hand of this table under."""
        return TableRules(
            ante=self.ante,
            min_bet=self.min_bet,
            max_bet=self.max_bet,
            max_raises=self.max_raises,
            betting_rounds=self.betting_rounds,
            tie_rule=self.tie_rule,
            manual_split=self.manual_split,
        )

    @model_validator(mode="after")
    def _consistent(self) -> TableOptions:
        if self.min_players > self.seats:
            raise ValueError(f"min_players ({self.min_players}) exceeds seats ({self.seats})")
        if self.min_buy_in > self.max_buy_in:
            raise ValueError(
                f"min_buy_in ({self.min_buy_in}) exceeds max_buy_in ({self.max_buy_in})"
            )
        if self.max_buy_in * self.seats > MAX_CHIPS:
            # A stack can win every other stack at the table (the dealer bot's is
            # topped up to max_buy_in): all of them together must still be an amount.
            raise ValueError(
                f"max_buy_in ({self.max_buy_in}) times seats ({self.seats}) exceeds {MAX_CHIPS}"
            )
        if self.ante > self.max_buy_in:
            raise ValueError(f"ante ({self.ante}) exceeds max_buy_in ({self.max_buy_in})")
        if self.max_bet is not None and self.max_bet < self.min_bet:
            raise ValueError(f"max_bet ({self.max_bet}) is below min_bet ({self.min_bet})")
        return self


class ChipRange(Message):
    """Every whole amount from ``min`` to ``max`` is allowed."""

    min: Chips
    max: Chips


class LegalActions(Message):
    """What a seat may do now. ``call`` is the chips a call adds; ``bet`` the range of
    a bet; ``raise_to`` the range of the round total a raise reaches."""

    check: bool = False
    fold: bool = False
    call: Chips | None = None
    bet: ChipRange | None = None
    raise_to: ChipRange | None = None
    declare_cut: bool = False


class SeatAmount(Message):
    seat: SeatNumber
    amount: Chips


Hex32 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
"""32 bytes in lowercase hex: a seed, a commitment, a leaf."""
CLIENT_SEED_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
ClientSeed = Annotated[
    str,
    StringConstraints(pattern=CLIENT_SEED_PATTERN),
    Field(description="A player's own entropy for the shuffle: 1 to 64 letters, digits, _ or -."),
]


class Opening(Message):
    """One position of a hand's deck opened: the tile dealt there and the salt that
    sealed it (PROTOCOL.md, "Fairness")."""

    position: Annotated[int, Field(ge=0, lt=28)]
    tile: TileText
    salt: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")]


class SeatSeed(Message):
    """The client seed a seat was dealt in with; empty when it sent none."""

    seat: SeatNumber
    client_seed: ClientSeed | Literal[""]


class CutView(Message):
    """A hand cut into two pairs, the higher pair first, with each pair's value."""

    pairs: tuple[tuple[TileText, TileText], tuple[TileText, TileText]]
    values: tuple[int, int]
