"""A bot's turn: what it is shown (:class:`Turn`, :class:`HandResult`), what it may
answer (:data:`Action`, :class:`Split`), and the :class:`Bot` it writes.

Pure: the same :class:`Turn` is made from a table's state by :func:`turn_of`
whether the table is on a server (:mod:`qiuqiu.cli.bot`) or in the arena
(:mod:`qiuqiu.cli.arena`), so a bot cannot tell them apart; and a bot's answer
is checked (:func:`answer`) and made a wire message (:func:`action_message`)
here for both. A bot imports all of it from :mod:`qiuqiu.cli.bot`.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pydantic_core import ErrorDetails

from qiuqiu.cli.errors import BotFailed
from qiuqiu.cli.game import Move, TableState
from qiuqiu.engine import Hand, Tile, parse_tiles, rank
from qiuqiu.protocol import LegalActions, TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire


@dataclass(frozen=True, slots=True)
class Check:
    pass


@dataclass(frozen=True, slots=True)
class Call:
    pass


@dataclass(frozen=True, slots=True)
class Fold:
    pass


@dataclass(frozen=True, slots=True)
class Bet:
    amount: int


@dataclass(frozen=True, slots=True)
class Raise:
    to: int
    """The round total the raise reaches, not the chips it adds."""


@dataclass(frozen=True, slots=True)
class Split:
    """A declared cut: two pairs of tiles, written like ``("6-3", "2-1")``."""

    first: tuple[str, str]
    second: tuple[str, str]


Action = Check | Call | Fold | Bet | Raise


@dataclass(frozen=True, slots=True)
class Turn:
    """What the seat knows when it is its turn (or its time to cut)."""

    table_id: str
    hand_id: int
    seat: int
    tiles: tuple[Tile, ...]
    stack: int
    to_call: int
    pot: int
    round: int
    legal: LegalActions
    options: TableOptions
    stacks: Mapping[int, int]
    bets: Mapping[int, int]
    opponents: int
    """Seats still in the hand besides this one."""
    history: tuple[Move, ...] = ()
    """Every betting action of the hand before this turn, the bot's own too, in order,
    after a reconnect in the middle of the hand too: the server's snapshot carries
    the hand's events so far."""

    @property
    def hand(self) -> Hand | None:
        """The four tiles as a hand, once the fourth is dealt."""
        return Hand(self.tiles) if len(self.tiles) == 4 else None


@dataclass(frozen=True, slots=True)
class HandResult:
    """How a hand the seat was dealt into ended, as the seat saw it."""

    table_id: str
    hand_id: int
    seat: int
    tiles: tuple[Tile, ...]
    """The seat's own tiles: three if the hand ended before the fourth was dealt."""
    net: Mapping[int, int]
    """Chips each seat dealt in won (below zero: lost) in the hand, by seat."""
    shown: Mapping[int, tuple[Tile, ...]]
    """The tiles of each seat shown down, by seat: none when the hand ended on a fold."""
    history: tuple[Move, ...]
    """Every betting action of the hand, as :attr:`Turn.history`."""


class Bot:
    """Subclass and write :meth:`decide`; the rest has sensible defaults."""

    def decide(self, turn: Turn) -> Action:
        raise NotImplementedError(
            f"{type(self).__name__} has no decide(self, turn) of its own: a bot writes one"
        )

    def cut(self, turn: Turn) -> Split:
        """How to cut the four tiles when the table lets players choose: the best cut."""
        assert turn.hand is not None
        best = rank(turn.hand).cut
        high, low = best.high_pair, best.low_pair
        return Split((str(high[0]), str(high[1])), (str(low[0]), str(low[1])))

    def hand_ended(self, result: HandResult) -> None:
        """Told as each hand the seat was dealt into ends (in the thread that asks
        :meth:`decide`): what it learns there, it keeps in ``self``. Nothing by default."""


def check_is_a_bot(bot: object) -> None:
    """Refuse, with a :class:`TypeError`, a bot's class given for the bot, or a bot
    without a ``decide`` of its own (misspelt, say), before it sits down to fail at
    its first turn."""
    if isinstance(bot, type) and issubclass(bot, Bot):
        raise TypeError(f"{bot.__name__} is a bot's class: give a bot, {bot.__name__}()")
    if isinstance(bot, Bot) and getattr(bot.decide, "__func__", None) is Bot.decide:
        raise TypeError(
            f"{type(bot).__name__} has no decide(self, turn) of its own: a bot writes one"
        )


def turn_of(state: TableState) -> Turn | None:
    """The :class:`Turn` if ``state`` says this client must act now, else ``None``."""
    hand, me, legal = state.hand, state.me, state.legal
    if hand is None or me is None or legal is None:
        return None
    return Turn(
        table_id=state.table_id,
        hand_id=hand.hand_id,
        seat=me.seat,
        tiles=parse_tiles(" ".join(me.tiles)),
        stack=me.stack,
        to_call=hand.to_call,
        pot=hand.pot,
        round=hand.round,
        legal=legal,
        options=state.options,
        stacks=MappingProxyType({s.seat: s.stack for s in state.seats.values()}),
        bets=MappingProxyType({s.seat: s.bet for s in state.seats.values()}),
        opponents=sum(
            1 for s in state.seats.values() if s.in_hand and not s.folded and s.seat != me.seat
        ),
        history=tuple(hand.moves),
    )


def result_of(state: TableState, ended: wire.HandEnded) -> HandResult | None:
    """The :class:`HandResult` of the hand ``ended`` ends, once ``state`` has taken it in;
    ``None`` if this client was not dealt into it (or is not seated), or if the state
    is another hand's (a snapshot after a gap has moved on)."""
    hand, me = state.hand, state.me
    if hand is None or me is None or hand.hand_id != ended.hand_id or hand.phase != "ended":
        return None
    before = hand.stacks_before
    if me.seat not in before:
        return None
    return HandResult(
        table_id=state.table_id,
        hand_id=hand.hand_id,
        seat=me.seat,
        tiles=parse_tiles(" ".join(me.tiles)),
        net=MappingProxyType(
            {e.seat: e.amount - before[e.seat] for e in ended.stacks if e.seat in before}
        ),
        shown=MappingProxyType({s.seat: parse_tiles(" ".join(s.tiles)) for s in hand.shown}),
        history=tuple(hand.moves),
    )


def listens(bot: Bot) -> bool:
    """Whether ``bot`` has a :meth:`Bot.hand_ended` of its own, worth a result to tell."""
    return type(bot).hand_ended is not Bot.hand_ended


def tell(bot: Bot, result: HandResult, name: str) -> None:
    """Give ``bot`` ``result``. Raises :class:`~qiuqiu.cli.errors.BotFailed`, naming the
    bot ``name``, where its :meth:`Bot.hand_ended` raises."""
    try:
        bot.hand_ended(result)
    except (Exception, SystemExit) as error:  # sys.exit() in a bot is its failure too
        raise BotFailed(name, error, result.hand_id) from error


def answer(bot: Bot, turn: Turn, name: str) -> Action | Split:
    """``bot``'s answer to ``turn``: its cut where the turn asks for one, else its
    decision. Raises :class:`~qiuqiu.cli.errors.BotFailed`, naming the bot ``name``,
    where the bot's own code raises or answers with something that is no answer
    (whether an answer is legal is the table's to judge)."""
    try:
        given = bot.cut(turn) if turn.legal.declare_cut else bot.decide(turn)
    except (Exception, SystemExit) as error:
        raise BotFailed(name, error, turn.hand_id) from error
    try:
        return _shaped(given)
    except TypeError as error:
        # Without the frames that judged the answer: none of them is the bot's code.
        raise BotFailed(name, error.with_traceback(None), turn.hand_id) from None


def _shaped(given: object) -> Action | Split:
    """``given`` as an answer, its tiles as text (a turn gives them as ``Tile``)."""
    if inspect.iscoroutine(given):
        given.close()  # never to be awaited: closed, or Python warns of it at exit
        raise TypeError(
            "its answer was a coroutine (decide is async def): write def decide, which"
            " runs in a thread of its own and may take its time"
        )
    match given:
        case Check() | Call() | Fold():
            return given
        case Bet(amount=amount) | Raise(to=amount) if type(amount) is int:
            return given
        case Bet() | Raise():
            raise TypeError(f"{given!r}: chips are a whole number (an int)")
        case Split(first=first, second=second):
            pairs = [
                tuple(map(str, pair)) if isinstance(pair, tuple | list) else ()
                for pair in (first, second)
            ]
            if any(len(pair) != 2 for pair in pairs):
                raise TypeError(f"{given!r}: a cut is two pairs of two tiles")
            return Split((pairs[0][0], pairs[0][1]), (pairs[1][0], pairs[1][1]))
    raise TypeError(
        f"its answer was {given!r}, not Check(), Call(), Fold(), Bet(amount), Raise(to)"
        " or Split(first, second)"
    )


def action_message(
    action: Action | Split, table_id: str, hand_id: int, ref: int | None = None
) -> cmd.TableAction:
    """The wire message for ``action`` at ``table_id`` in hand ``hand_id``, with the id
    ``ref`` if given (the server's refusal of it then names it)."""
    t, h = table_id, hand_id
    match action:
        case Check():
            return cmd.Check(id=ref, table_id=t, hand_id=h)
        case Call():
            return cmd.Call(id=ref, table_id=t, hand_id=h)
        case Fold():
            return cmd.Fold(id=ref, table_id=t, hand_id=h)
        case Bet(amount=amount):
            return cmd.Bet(id=ref, table_id=t, hand_id=h, amount=amount)
        case Raise(to=to):
            return cmd.Raise(id=ref, table_id=t, hand_id=h, to=to)
        case Split(first=first, second=second):
            return cmd.DeclareCut(id=ref, table_id=t, hand_id=h, pairs=(first, second))


TurnKey = tuple[int, str, int, int, int | None]
"""A turn told apart from the seat's others: hand, round, pot and deadline."""


def turn_key(state: TableState) -> TurnKey | None:
    """The key of the turn ``state`` says is this seat's now, if one is.

    A snapshot (after a gap or a reconnect) may repeat a turn already answered; each
    turn has its own deadline, so that tells them apart. Not the deadline alone: an
    opponent who answers within the same millisecond (the dealer bot with no delay)
    gives this seat's next turn the same one, but never the same pot and round,
    since someone must have bet in between. Nor the phase: a cutting phase that
    opens the millisecond this seat checked the last betting turn has its deadline,
    its pot and its round."""
    hand = state.hand
    if hand is None or state.me is None or state.legal is None:
        return None
    return (hand.hand_id, hand.phase, hand.round, hand.pot, hand.deadline_ms)


def unsendable_reason(error: ErrorDetails) -> str:
    """One reason an answer cannot be sent, after the field it is of: a check of the
    whole cut (a tile twice) is of no one field, and says so in its own words."""
    said = str(error.get("ctx", {}).get("error", error["msg"]))
    field = ".".join(map(str, error["loc"]))
    return f"{field}: {said}" if field else said
