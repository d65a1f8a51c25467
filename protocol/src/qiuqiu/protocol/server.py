"""What the server sends: facts, one model per message, one union.

Two kinds of message:

- Replies to one client (``welcome``, ``table_list``, ``table_joined``, ...,
  ``error``). ``ref`` names the client message they answer.
- Table events (everything with ``table_id`` and ``seq``): what happened at a
  table, sent to every seat and spectator, each in its own view. ``seq`` is
  the table's counter, the same for every viewer, and goes up by exactly one
  per event; a client that sees a gap sends ``request_snapshot``. The copies
  sent to the client whose action the engine turned into events (``checked``,
  ``bet_placed``, ... up to ``pot_awarded``) carry that action's ``ref``.

Hidden information stays hidden: ``tiles_dealt``, ``fourth_tile_dealt`` and
``cut_declared`` carry tiles only in the copy for the seat they belong to; the
other copies leave the field out (it is ``null``), and so do the ``openings``
that prove where each tile lay in the committed deck. Tiles and their openings
are shown to all at ``showdown``; a folded hand, a walk-over winner's hand and
the undealt tiles never are. The table's seed, from which every deck of the
table can be rebuilt, comes with ``table_closed`` (PROTOCOL.md, "Fairness").
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from qiuqiu.engine import Category
from qiuqiu.protocol.common import (
    Balance,
    Chips,
    ClientSeed,
    CutView,
    HandId,
    Hex32,
    LegalActions,
    Message,
    MessageId,
    Opening,
    SeatAmount,
    SeatNumber,
    SeatSeed,
    TableId,
    TableOptions,
    TileText,
)
from qiuqiu.protocol.errors import ErrorCode

# -- the views a snapshot is made of ----------------------------------------------


class SeatView(Message):
    """One seat as a given viewer sees it. ``tiles`` is set only for the viewer's
    own seat (and for everyone once shown down); ``tile_count`` always. ``cut`` is
    the cut the seat declared at a ``manual_split`` table, seen as its tiles are."""

    seat: SeatNumber
    name: str
    is_bot: bool
    connected: bool
    stack: Chips
    bet: Chips = 0
    in_hand: bool = False
    folded: bool = False
    all_in: bool = False
    tile_count: int = 0
    tiles: tuple[TileText, ...] | None = None
    openings: tuple[Opening, ...] | None = None
    cut: CutView | None = None


class HandView(Message):
    hand_id: HandId
    button: SeatNumber
    stacks: tuple[SeatAmount, ...]
    """Every dealt seat's chips as the hand began, as in its ``hand_started``."""
    commitment: Hex32
    leaves: tuple[Hex32, ...]
    client_seeds: tuple[SeatSeed, ...]
    phase: Literal["betting", "cutting", "ended"]
    round: int
    pot: Chips
    current_bet: Chips
    actor: SeatNumber | None = None
    deadline_ms: int | None = None
    events: tuple[dict[str, Any], ...] = ()
    """Every message a spectator got of the hand so far, ``hand_started`` first, as a
    hand's ``events`` in ``hand_list``: how it was bet, for a client that was not there."""


class TableView(Message):
    """The whole table as one viewer may see it. ``you`` is the viewer's seat
    (``null`` for a spectator); ``legal`` what that seat may do right now."""

    table_id: TableId
    options: TableOptions
    seed_commitment: Hex32
    seats: tuple[SeatView, ...]
    hand: HandView | None = None
    you: SeatNumber | None = None
    legal: LegalActions | None = None


class SeatSummary(Message):
    seat: SeatNumber
    name: str
    is_bot: bool
    stack: Chips


class TableSummary(Message):
    """A table as the lobby lists it. ``seed_commitment`` is ``null`` only for a table
    recorded by a server older than protocol 2 that no server has reopened since."""

    table_id: TableId
    options: TableOptions
    seed_commitment: Hex32 | None = None
    seats: tuple[SeatSummary, ...]
    free_seats: int
    playing: bool


class ShownHand(Message):
    seat: SeatNumber
    tiles: tuple[TileText, TileText, TileText, TileText]
    cut: CutView
    category: Category
    openings: tuple[Opening, Opening, Opening, Opening]


# -- replies to one client -----------------------------------------------------


class Reply(Message):
    ref: MessageId | None = None


class Welcome(Reply):
    """The session is open. ``token`` is sent once, when the account is made:
    keep it to resume the account later. ``tables`` are every table where the
    account has a seat; a ``table_snapshot`` of each follows. ``moving`` are those
    of them no server hosts right now (their host stopped and another is taking
    them over): their snapshot follows once one does."""

    type: Literal["welcome"] = "welcome"
    version: int
    account_id: str
    name: str
    balance: Balance
    token: str | None = None
    resumed: bool = False
    tables: tuple[TableId, ...] = ()
    moving: tuple[TableId, ...] = ()


class TableList(Reply):
    type: Literal["table_list"] = "table_list"
    tables: tuple[TableSummary, ...]


class SeatResult(Message):
    """One seat in a finished hand: whose it was (the player's name then, ``None`` in a
    hand recorded before names were kept), its chips before and after."""

    seat: SeatNumber
    account_id: str
    name: str | None = None
    before: Chips
    after: Chips


class PlayedHand(Message):
    """A finished hand as its history keeps it. ``events`` are the messages a
    spectator got, ``hand_started`` to ``hand_ended``: the tiles shown down and
    their openings, never a folded hand. A hand voided when its server stopped
    has no events. ``table_seed`` is set once the table has closed: with it the
    hand's whole shuffle can be checked (PROTOCOL.md, "Fairness")."""

    table_id: TableId
    hand_id: HandId
    voided: bool
    seats: tuple[SeatResult, ...]
    events: tuple[dict[str, Any], ...]
    table_seed: Hex32 | None = None


class HandList(Reply):
    type: Literal["hand_list"] = "hand_list"
    hands: tuple[PlayedHand, ...]


class TableCreated(Reply):
    type: Literal["table_created"] = "table_created"
    table: TableSummary


class TableJoined(Reply):
    """Seated with ``buy_in`` chips; a ``table_snapshot`` follows."""

    type: Literal["table_joined"] = "table_joined"
    table_id: TableId
    seat: SeatNumber
    buy_in: Chips
    balance: Balance


class TableLeft(Reply):
    """Stood up (``seat`` set, ``cashed_out`` back in the balance) or stopped watching."""

    type: Literal["table_left"] = "table_left"
    table_id: TableId
    seat: SeatNumber | None = None
    cashed_out: Chips = 0
    balance: Balance


class TableWatched(Reply):
    """Watching as a spectator; a ``table_snapshot`` follows."""

    type: Literal["table_watched"] = "table_watched"
    table_id: TableId


class SeedSet(Reply):
    """``client_seed`` is this seat's part of the shuffle from the next hand on."""

    type: Literal["seed_set"] = "seed_set"
    table_id: TableId
    client_seed: ClientSeed


class TableSnapshot(Reply):
    """The table as this client may see it, as of event ``seq``."""

    type: Literal["table_snapshot"] = "table_snapshot"
    seq: int
    table: TableView


class Error(Reply):
    """A message was refused and nothing changed. ``code`` is for programs,
    ``message`` for people."""

    type: Literal["error"] = "error"
    code: ErrorCode
    message: str


# -- table events ----------------------------------------------------------------


class TableEvent(Reply):
    table_id: TableId
    seq: int


class HandEvent(TableEvent):
    hand_id: HandId


class PlayerSeated(TableEvent):
    type: Literal["player_seated"] = "player_seated"
    seat: SeatNumber
    name: str
    is_bot: bool
    stack: Chips


class PlayerLeft(TableEvent):
    type: Literal["player_left"] = "player_left"
    seat: SeatNumber
    name: str
    cashed_out: Chips


class PlayerDisconnected(TableEvent):
    """The seat's connection dropped; it keeps the seat until ``grace_ms`` runs out."""

    type: Literal["player_disconnected"] = "player_disconnected"
    seat: SeatNumber
    grace_ms: int


class PlayerReconnected(TableEvent):
    type: Literal["player_reconnected"] = "player_reconnected"
    seat: SeatNumber


class TableClosed(TableEvent):
    """The table is gone (``reason``): its last player left, or the server is stopping.
    Every seat was cashed out first; no more events come from it. ``table_seed`` is
    the secret behind ``seed_commitment``: with it every hand's shuffle can be
    checked, and every deck of the table rebuilt, folded hands included. ``null``
    when the table moves to another server process, which goes on with it."""

    type: Literal["table_closed"] = "table_closed"
    reason: str
    table_seed: Hex32 | None = None


class HandStarted(HandEvent):
    """A hand begins with its deck sealed: ``leaves`` are the 28 positions'
    commitments in dealing order and ``commitment`` their hash; ``client_seeds``
    are what every dealt seat put into the shuffle (PROTOCOL.md, "Fairness")."""

    type: Literal["hand_started"] = "hand_started"
    button: SeatNumber
    stacks: tuple[SeatAmount, ...]
    commitment: Hex32
    leaves: tuple[Hex32, ...]
    client_seeds: tuple[SeatSeed, ...]


class AnteTaken(HandEvent):
    type: Literal["ante_taken"] = "ante_taken"
    seat: SeatNumber
    amount: Chips
    all_in: bool


class TilesDealt(HandEvent):
    """Three tiles to ``seat``, face down: ``tiles`` and their ``openings`` only in
    that seat's own copy."""

    type: Literal["tiles_dealt"] = "tiles_dealt"
    seat: SeatNumber
    tiles: tuple[TileText, TileText, TileText] | None = None
    openings: tuple[Opening, Opening, Opening] | None = None


class BettingRoundStarted(HandEvent):
    type: Literal["betting_round_started"] = "betting_round_started"
    round: int


class SeatChips(Message):
    """One seat's chips in the hand: ``stack`` behind, ``bet`` in this round."""

    seat: SeatNumber
    stack: Chips
    bet: Chips
    folded: bool = False
    all_in: bool = False


class TurnStarted(HandEvent):
    """``seat`` is to act by ``deadline_ms`` (Unix time in milliseconds), else the
    server checks for it if it can and folds it otherwise. It carries the whole
    betting picture (the pot, every seat's stack and bet), so a bot can decide
    from this message and its own tiles alone. ``legal`` is set only in that
    seat's own copy."""

    type: Literal["turn_started"] = "turn_started"
    seat: SeatNumber
    to_call: Chips
    deadline_ms: int
    pot: Chips
    seats: tuple[SeatChips, ...]
    legal: LegalActions | None = None


class Checked(HandEvent):
    type: Literal["checked"] = "checked"
    seat: SeatNumber


class BetPlaced(HandEvent):
    type: Literal["bet_placed"] = "bet_placed"
    seat: SeatNumber
    amount: Chips
    all_in: bool


class Called(HandEvent):
    type: Literal["called"] = "called"
    seat: SeatNumber
    amount: Chips
    all_in: bool


class Raised(HandEvent):
    """``seat`` raised this round's bet to ``to``, adding ``amount`` chips."""

    type: Literal["raised"] = "raised"
    seat: SeatNumber
    to: Chips
    amount: Chips
    all_in: bool


class Folded(HandEvent):
    type: Literal["folded"] = "folded"
    seat: SeatNumber


class TurnTimedOut(HandEvent):
    """``seat`` ran out of time; the next event is what the server did for it."""

    type: Literal["turn_timed_out"] = "turn_timed_out"
    seat: SeatNumber


class BetReturned(HandEvent):
    """The part of a bet nobody matched went back to its owner."""

    type: Literal["bet_returned"] = "bet_returned"
    seat: SeatNumber
    amount: Chips


class BettingRoundEnded(HandEvent):
    type: Literal["betting_round_ended"] = "betting_round_ended"
    round: int
    pot: Chips


class FourthTileDealt(HandEvent):
    """The 4th tile to ``seat``: ``tile`` and its ``opening`` only in that seat's own copy."""

    type: Literal["fourth_tile_dealt"] = "fourth_tile_dealt"
    seat: SeatNumber
    tile: TileText | None = None
    opening: Opening | None = None


class CuttingStarted(HandEvent):
    """``manual_split``: these seats declare their cuts by ``deadline_ms``, or get their best."""

    type: Literal["cutting_started"] = "cutting_started"
    seats: tuple[SeatNumber, ...]
    deadline_ms: int


class CutDeclared(HandEvent):
    """``seat`` has cut its hand: the cut is in that seat's own copy, and at showdown."""

    type: Literal["cut_declared"] = "cut_declared"
    seat: SeatNumber
    cut: CutView | None = None


class Showdown(HandEvent):
    """Every hand still in, face up, with the cut it is judged on."""

    type: Literal["showdown"] = "showdown"
    hands: tuple[ShownHand, ...]


class PotAwarded(HandEvent):
    """One pot (the main pot first, then side pots): who could win it, and who took how much."""

    type: Literal["pot_awarded"] = "pot_awarded"
    amount: Chips
    eligible: tuple[SeatNumber, ...]
    shares: tuple[SeatAmount, ...]


class HandVoided(HandEvent):
    """The hand was called off (``reason``) and every chip went back to whoever put it in."""

    type: Literal["hand_voided"] = "hand_voided"
    reason: str
    refunds: tuple[SeatAmount, ...]


class HandEnded(HandEvent):
    """The hand is over: check every tile seen against ``hand_started``'s leaves."""

    type: Literal["hand_ended"] = "hand_ended"
    stacks: tuple[SeatAmount, ...]


AnyServerMessage = Annotated[
    Welcome
    | TableList
    | HandList
    | TableCreated
    | TableJoined
    | TableLeft
    | TableWatched
    | SeedSet
    | TableSnapshot
    | Error
    | PlayerSeated
    | PlayerLeft
    | PlayerDisconnected
    | PlayerReconnected
    | TableClosed
    | HandStarted
    | AnteTaken
    | TilesDealt
    | BettingRoundStarted
    | TurnStarted
    | Checked
    | BetPlaced
    | Called
    | Raised
    | Folded
    | TurnTimedOut
    | BetReturned
    | BettingRoundEnded
    | FourthTileDealt
    | CuttingStarted
    | CutDeclared
    | Showdown
    | PotAwarded
    | HandVoided
    | HandEnded,
    Field(discriminator="type"),
]

SERVER_MESSAGES: TypeAdapter[AnyServerMessage] = TypeAdapter(AnyServerMessage)
