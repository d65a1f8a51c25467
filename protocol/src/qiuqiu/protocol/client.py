"""What a client may send: imperatives, one model per message, one union.

A connection opens with :class:`Hello`; everything else is refused until then.
Every message may carry an ``id``: the reply or the error names it in ``ref``,
and a repeated ``id`` is answered with an error instead of being applied twice.
Actions at a table carry the ``hand_id`` they mean, so an action meant for a
hand that is over is refused rather than applied to the next one.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter, model_validator

from qiuqiu.protocol.common import (
    ClientSeed,
    HandId,
    Message,
    MessageId,
    PlayerName,
    PositiveChips,
    SeatNumber,
    TableId,
    TableOptions,
    TileInput,
)


class ClientMessage(Message):
    id: MessageId | None = None


class Hello(ClientMessage):
    """Open a session: a new account from a ``name``, or the same account again
    from the ``token`` a previous ``welcome`` gave."""

    type: Literal["hello"] = "hello"
    version: int
    name: PlayerName | None = None
    token: Annotated[str, Field(min_length=1, max_length=128)] | None = None

    @model_validator(mode="after")
    def _one_way_in(self) -> Hello:
        if self.name is not None and self.token is not None:
            raise ValueError("say hello with a name (a new account) or a token (yours), not both")
        return self


class ListTables(ClientMessage):
    type: Literal["list_tables"] = "list_tables"


class ListHands(ClientMessage):
    """Ask for finished hands, oldest first: your own last ones at every table, or
    the last ones of the table ``table_id``. Answer: ``hand_list``."""

    type: Literal["list_hands"] = "list_hands"
    table_id: TableId | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 20


class CreateTable(ClientMessage):
    """Open a table. With ``buy_in`` the sender also sits down at it, so one
    message starts a game against the dealer bot."""

    type: Literal["create_table"] = "create_table"
    options: TableOptions = TableOptions()
    buy_in: PositiveChips | None = None


class JoinTable(ClientMessage):
    """Sit down with ``buy_in`` chips from the balance, at ``seat`` or the first free
    one, with ``client_seed`` as this seat's part of every shuffle (see :class:`SetSeed`)."""

    type: Literal["join_table"] = "join_table"
    table_id: TableId
    buy_in: PositiveChips
    seat: SeatNumber | None = None
    client_seed: ClientSeed | None = None


class SetSeed(ClientMessage):
    """Put ``client_seed`` into every shuffle of this seat's hands from the next hand
    on (PROTOCOL.md, "Fairness"). Answer: ``seed_set``."""

    type: Literal["set_seed"] = "set_seed"
    table_id: TableId
    client_seed: ClientSeed


class LeaveTable(ClientMessage):
    """Stand up (the stack goes back to the balance once the seat is out of the
    hand) or stop watching. In a hand the server plays the seat's turns at once
    (check, else fold), unless ``after_hand``: then the seat plays the hand out
    itself, and stands up as it ends, before the next is dealt."""

    type: Literal["leave_table"] = "leave_table"
    table_id: TableId
    after_hand: bool = False


class WatchTable(ClientMessage):
    type: Literal["watch_table"] = "watch_table"
    table_id: TableId


class RequestSnapshot(ClientMessage):
    """Ask for the whole table as this client may see it: after a gap in ``seq``."""

    type: Literal["request_snapshot"] = "request_snapshot"
    table_id: TableId


class Check(ClientMessage):
    type: Literal["check"] = "check"
    table_id: TableId
    hand_id: HandId


class Bet(ClientMessage):
    type: Literal["bet"] = "bet"
    table_id: TableId
    hand_id: HandId
    amount: PositiveChips


class Call(ClientMessage):
    type: Literal["call"] = "call"
    table_id: TableId
    hand_id: HandId


class Raise(ClientMessage):
    """Raise this round's bet to ``to`` (a round total, not the chips added)."""

    type: Literal["raise"] = "raise"
    table_id: TableId
    hand_id: HandId
    to: PositiveChips


class Fold(ClientMessage):
    type: Literal["fold"] = "fold"
    table_id: TableId
    hand_id: HandId


class DeclareCut(ClientMessage):
    """At a ``manual_split`` table, cut the four tiles into two pairs (binding)."""

    type: Literal["declare_cut"] = "declare_cut"
    table_id: TableId
    hand_id: HandId
    pairs: tuple[tuple[TileInput, TileInput], tuple[TileInput, TileInput]]

    @model_validator(mode="after")
    def _four_tiles(self) -> DeclareCut:
        tiles = {tile for pair in self.pairs for tile in pair}
        if len(tiles) != 4:
            raise ValueError("a cut is four different tiles in two pairs")
        return self


AnyClientMessage = Annotated[
    Hello
    | ListTables
    | ListHands
    | CreateTable
    | JoinTable
    | LeaveTable
    | WatchTable
    | RequestSnapshot
    | SetSeed
    | Check
    | Bet
    | Call
    | Raise
    | Fold
    | DeclareCut,
    Field(discriminator="type"),
]
TableAction = Check | Bet | Call | Raise | Fold | DeclareCut
"""The messages a seat plays a hand with."""
TableMessage = JoinTable | LeaveTable | WatchTable | RequestSnapshot | SetSeed | TableAction
"""The messages about one table (``table_id``), which the process hosting it serves."""

CLIENT_MESSAGES: TypeAdapter[AnyClientMessage] = TypeAdapter(AnyClientMessage)
