"""The bot SDK: write ``decide(turn) -> action``, and :func:`play` does the rest.

A bot sees exactly what a person at the seat sees: its own tiles, every
stack and bet, the pot, and the actions the server says are legal, with their
amounts (:class:`Turn`). It answers with one of :class:`Check`, :class:`Call`,
:class:`Fold`, :class:`Bet` or :class:`Raise`. At tables where players cut
their own hands, :meth:`Bot.cut` is asked too; by default it takes the best cut.
Each turn carries the moves of the hand so far (:attr:`Turn.history`), and
:meth:`Bot.hand_ended` is told how each hand ended (:class:`HandResult`).

Everything else (the connection, ``hello`` and resuming, snapshots after a gap,
reconnecting, leaving the table at the end) is :func:`play` and
:class:`~qiuqiu.cli.connection.Connection`'s job, and so is holding the server
to its deals: every hand's tiles are checked against what the server committed
to when it ends, and every deck of the table is rebuilt once its seed is out;
a deal that fails raises :class:`~qiuqiu.protocol.DealTampered`. A whole bot::

    class AlwaysCall(Bot):
        def decide(self, turn: Turn) -> Action:
            return Check() if turn.legal.check else Call()

    asyncio.run(run(AlwaysCall(), "ws://127.0.0.1:8765", name="Caller", hands=100))
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import logging
import signal
import sys
import threading
from collections.abc import Awaitable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from qiuqiu.cli.arguments import (
    add_table_options,
    check_buy_in,
    check_joining,
    chips,
    hand_count,
    player_name,
    server_url,
    table_id,
    table_options,
)
from qiuqiu.cli.connection import HISTORY_LIMIT, Closed, Connection, Reconnected, check_balance
from qiuqiu.cli.deals import DealChecked
from qiuqiu.cli.errors import (
    BotFailed,
    ClientError,
    ConnectionLost,
    ServerRefused,
    ShuffleNotRevealed,
)
from qiuqiu.cli.game import Move as Move  # a bot's to import from here, with the rest
from qiuqiu.cli.leaving import LeaveRequest, stand_up
from qiuqiu.cli.leaving import leave as leave
from qiuqiu.cli.start import ELSEWHERE
from qiuqiu.cli.thinker import Thinker
from qiuqiu.cli.tokens import TokenFile
from qiuqiu.cli.turns import Action as Action
from qiuqiu.cli.turns import Bet as Bet
from qiuqiu.cli.turns import Bot as Bot
from qiuqiu.cli.turns import Call as Call
from qiuqiu.cli.turns import Check as Check
from qiuqiu.cli.turns import Fold as Fold
from qiuqiu.cli.turns import HandResult as HandResult
from qiuqiu.cli.turns import Raise as Raise
from qiuqiu.cli.turns import Split as Split
from qiuqiu.cli.turns import Turn as Turn
from qiuqiu.cli.turns import (
    TurnKey,
    action_message,
    check_is_a_bot,
    result_of,
    turn_key,
    turn_of,
    unsendable_reason,
)
from qiuqiu.protocol import DealTampered, ErrorCode, TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire

log = logging.getLogger(__name__)
Outcome = TypeVar("Outcome")
waiting_log = logging.getLogger(f"{__name__}.waiting")
"""Where :func:`play` says the seat waits for another player: ``qiuqiu play --auto``
shows it, since nothing else happens meanwhile."""

SHUFFLE_PATIENCE = 3.0
"""Seconds :func:`run` waits, after leaving, for the table to close and reveal its seed."""
LEAVE_PATIENCE = 10.0
"""Seconds to wait for the seat to stand up after a deal failed its check."""


TURN_MESSAGES = (wire.TurnStarted, wire.CuttingStarted, wire.TableSnapshot)
"""The messages that can make it this seat's turn."""
_SEND_AGAIN = frozenset({ErrorCode.TABLE_MOVING, ErrorCode.STORE_UNAVAILABLE})
"""Refusals of an action that reached no table: the turn is still to be answered."""


@dataclass
class Summary:
    """How a run went for this account: hands played to their end, won, lost, chips
    won (below zero: lost), the balance after leaving the table, how many hands'
    deals were checked, how many the table's revealed seed rebuilt, and how many
    hands the server called off."""

    hands: int = 0
    """Hands dealt in and played to their end; not a voided one."""
    won: int = 0
    lost: int = 0
    net: int = 0
    balance: int | None = None
    verified: int = 0
    """Hands whose every tile seen opened at its committed position."""
    shuffle_verified: int | None = None
    """Hands rebuilt from the table's seed; ``None`` while the table is open."""
    per_hand: dict[int, int] = field(default_factory=dict)
    """Chips won or lost in each hand played to its end, by ``hand_id``."""
    voided_hands: set[int] = field(default_factory=set)
    """The ``hand_id`` of each hand dealt in that the server voided (every chip back):
    its table moved to another server, the server stopped or its store failed."""

    @property
    def voided(self) -> int:
        return len(self.voided_hands)

    def record(self, hand_id: int, net: int) -> None:
        self.per_hand[hand_id] = net
        self.hands += 1
        self.won += net > 0
        self.lost += net < 0
        self.net += net

    def record_voided(self, hand_id: int) -> None:
        self.voided_hands.add(hand_id)

    def counted(self, hand_id: int) -> bool:
        return hand_id in self.per_hand or hand_id in self.voided_hands

    def as_dict(self) -> dict[str, int | None]:
        return {
            "hands": self.hands,
            "voided": self.voided,
            "won": self.won,
            "lost": self.lost,
            "net": self.net,
            "balance": self.balance,
            "verified": self.verified,
            "shuffle_verified": self.shuffle_verified,
        }


async def play(
    bot: Bot,
    conn: Connection,
    table_id: str,
    hands: int | None = None,
    *,
    summary: Summary | None = None,
) -> Summary:
    """Play ``bot`` at ``table_id`` (where ``conn`` is seated) until ``hands`` hands have
    been played to their end, then stand up; or until the seat or the table is gone.

    The summary counts every hand the seat was dealt into before it stood up: those
    played to their end in ``hands``, those the server voided in ``voided``. Only
    the first count toward ``hands``: a voided hand is dealt again, as it were. The
    seat asks to stand up as its last hand begins (``after_hand``): it plays that
    hand out, and is not dealt the next, however soon the table deals it. It is ``summary``
    if one is given, filled in as the hands end: its caller still has the hands
    played when this raises.

    Raises :class:`~qiuqiu.cli.errors.ConnectionLost` when the connection drops for
    good (no server took it back within the grace period, or the server no longer
    knows the account), and :class:`~qiuqiu.protocol.DealTampered` when a deal at
    the table fails its check (a hand's tiles as it ends, or every deck when ``table_closed``
    reveals the seed), after standing the seat up: a bot plays on at a server
    caught cheating only if its writer catches the exception and sits down again.
    Raises :class:`RuntimeError` if ``conn`` is playing another table."""
    check_is_a_bot(bot)
    if conn.played is not None:
        raise RuntimeError(
            f"this connection is already playing table {conn.played}: one table a "
            "connection, since its messages go to one reader; to play several tables at "
            "once, open a connection for each (a run each)"
        )
    conn.played = table_id
    thinker = Thinker(bot)
    request = LeaveRequest(conn, table_id)
    try:
        return await _play(thinker, request, conn, hands, Summary() if summary is None else summary)
    finally:
        conn.played = None
        thinker.stop()
        request.stop()


async def _play(
    thinker: Thinker,
    request: LeaveRequest,
    conn: Connection,
    hands: int | None,
    summary: Summary,
) -> Summary:
    table_id = request.table_id
    acted: set[TurnKey] = set()
    held: tuple[TurnKey, cmd.TableAction] | None = None
    """An answer given after the server had said more: sent if its turn is still open."""
    answering: dict[str | int, tuple[TurnKey, Action | Split]] = {}
    """The turn each action sent answers, and the bot's answer, by the action's id."""
    stacks_before: dict[int, int] = {}
    seen_through: int | None = None
    """The last hand the seat was seen dealt into: any after it, before the one a
    snapshot shows, were dealt while the connection was down."""
    leaving = False
    last_hand: int | None = None
    """The hand the seat asked to stand up after, as it began (``after_hand``)."""
    alone = False
    turn_due = False
    state = conn.tables.get(table_id)
    if state is not None and state.hand is not None and state.you in state.hand.stacks_before:
        # Dealt into a hand whose messages another reader took (a play at another table
        # of the connection): its snapshot, as after a reconnect, counts the hand and
        # asks the turn open now, which else only its timer would answer.
        await _sent(conn, cmd.RequestSnapshot(table_id=table_id))
    async for message in conn.messages():
        if isinstance(message, Closed):
            raise ConnectionLost(f"the connection is gone for good: {message.reason}")
        if isinstance(message, Reconnected):
            welcome = message.welcome
            if table_id not in welcome.tables and table_id not in welcome.moving:
                # Back after the grace period: the server stood the seat up meanwhile,
                # and nothing more will come of the table but its history.
                summary.balance = welcome.balance
                if seen_through is not None:
                    missed = sorted(i for i in stacks_before if i not in summary.per_hand)
                    await _count_missed(conn, table_id, hands, missed, summary, since=seen_through)
                log.info(
                    "the seat at table %s was given up while the connection was down "
                    "(longer than the server's grace period): its chips are back in the "
                    "balance",
                    table_id,
                )
                break
            # An action sent as the connection dropped may be lost: the snapshot that
            # follows says whether the turn is still open.
            acted.clear()
            held = None
        if isinstance(message, wire.TableLeft) and message.table_id == table_id:
            summary.balance = message.balance
            if message.cashed_out == 0 or not (leaving or last_hand is not None):
                # Not asked for (or asked, and busted in the hand it was leaving after):
                # the server stands a seat up when its stack runs out, or as it stops.
                log.info(
                    "stood up from table %s after %d hands, cashing out %d: %s",
                    table_id,
                    summary.hands,
                    message.cashed_out,
                    "out of chips" if message.cashed_out == 0 else "by the server",
                )
            break
        if isinstance(message, wire.Error) and request.refused_by(message):
            again = "; asking again in a moment" if request.again_later(message) else ""
            log.info("leaving table %s was refused: %s%s", table_id, message.message, again)
            continue
        if isinstance(message, wire.Error):
            refused = answering.pop(message.ref, None) if message.ref is not None else None
            if refused is None:
                log.info("the server refused a message: %s %s", message.code, message.message)
                continue
            refused_turn, refused_answer = refused
            log.info(
                "the server refused the bot's %r in hand %d: %s %s",
                refused_answer,
                refused_turn[0],
                message.code,
                message.message,
            )
            if message.code in _SEND_AGAIN:
                # The action reached no table: the snapshot that follows may repeat
                # the very same turn, and it must be answered again.
                acted.discard(refused_turn)
            continue
        deals = conn.deals.get(table_id)
        if deals is not None and deals.tampered is not None:
            await _stand_up(conn, table_id, summary, stacks_before)
            raise deals.tampered
        state = conn.tables.get(table_id)
        if state is None or getattr(message, "table_id", table_id) != table_id:
            continue
        others = len(state.seats) - (state.you is not None)
        between_hands = state.hand is None or state.hand.phase == "ended"
        if others == 0 and between_hands and not alone and not leaving:
            # Said, since nothing else is: a table whose other players have all left
            # or gone bust deals no hand until someone sits down, however long it takes.
            waiting_log.info(
                "waiting at table %s for another player to sit down: nobody else is "
                "seated, and no hand is dealt until someone is (others join it with "
                "--table %s)",
                table_id,
                table_id,
            )
        alone = others == 0
        if (
            isinstance(message, wire.HandEnded)
            and message.hand_id in stacks_before
            and state.hand is not None
        ):
            # Of the hands it counts: not one in play as it sat down, dealt without it.
            summary.verified += isinstance(state.hand.deal_check, DealChecked)
        # Kept here by hand rather than read from the state, which holds only the hand
        # in play: a snapshot may have moved on from one the seat was dealt into.
        if isinstance(message, wire.HandVoided) and message.hand_id in stacks_before:
            # Counted here: a hand its dead server was playing is voided by the table's
            # new host with no hand_ended after it.
            stacks_before.pop(message.hand_id)
            summary.record_voided(message.hand_id)
            log.info("a hand was called off, every chip back: %s", message.reason)
            if message.hand_id == last_hand:
                # Not played to its end: one more is, and the request to stand up after
                # it may have gone with the server that voided it.
                last_hand = None
        if isinstance(message, wire.TableSnapshot) and state.hand is not None:
            # After a reconnect (or a gap): the hands dealt meanwhile, and the one
            # in play if it began unseen, are the seat's all the same.
            hand = state.hand
            stack = hand.stacks_before.get(state.you) if state.you is not None else None
            if stack is not None and not summary.counted(hand.hand_id):
                ended = hand.phase == "ended"
                if not ended:
                    stacks_before.setdefault(hand.hand_id, stack)
                if seen_through is not None:
                    missed = [i for i in stacks_before if i < hand.hand_id or ended]
                    missed += range(seen_through + 1, hand.hand_id + ended)
                    await _count_missed(conn, table_id, hands, sorted(set(missed)), summary)
                    for hand_id in missed:
                        stacks_before.pop(hand_id, None)
                seen_through = max(seen_through or 0, hand.hand_id)
        if isinstance(message, wire.HandStarted | wire.HandEnded) and state.you is not None:
            stack = next((s.amount for s in message.stacks if s.seat == state.you), None)
            if isinstance(message, wire.HandStarted) and stack is not None:
                stacks_before[message.hand_id] = stack
                seen_through = message.hand_id
                last = hands is not None and last_hand is None and summary.hands + 1 >= hands
                # The last hand: played out, then the seat stands up before the next is
                # dealt, however soon that comes.
                if last and await request.send(after_hand=True):
                    last_hand = message.hand_id
            elif message.hand_id in stacks_before and stack is not None:
                net = stack - stacks_before.pop(message.hand_id)
                summary.record(message.hand_id, net)
                log.info(
                    "hand %d%s: %+d (net %+d, stack %d)",
                    summary.hands,
                    "" if hands is None else f" of {hands}",
                    net,
                    summary.net,
                    stack,
                )
                result = result_of(state, message) if isinstance(message, wire.HandEnded) else None
                if result is not None:
                    try:
                        await thinker.tell(result)
                    except BotFailed:
                        await _stand_up(conn, table_id, summary, stacks_before)
                        raise
        dealt_after_last = last_hand is None or (
            state.hand is not None and state.hand.hand_id > last_hand
        )  # the request went unheard (its table moved to another server meanwhile)
        if not leaving and hands is not None and summary.hands >= hands and dealt_after_last:
            leaving = await request.send(after_hand=False)
        if held is not None and not conn.behind(table_id):
            late_key, late = held
            held = None
            if turn_key(state) == late_key:
                await _sent(conn, late)
            else:
                log.info("the bot answered hand %d's turn after it was over: not sent", late_key[0])
        turn_due = (turn_due or isinstance(message, TURN_MESSAGES)) and not leaving
        turn, key = None, None
        # Asked once the state has caught up with what the server has said: a bot that
        # thought past its time finds the turns it was given meanwhile over, and is
        # asked about the one open now, not about each of those in turn, too late.
        if turn_due and not conn.behind(table_id):
            turn_due = False
            turn, key = turn_of(state), turn_key(state)
        if turn is not None and key is not None and key not in acted:
            acted.add(key)
            try:
                action = await thinker.answer(turn)
            except BotFailed:
                await _stand_up(conn, table_id, summary, stacks_before)
                raise
            ref = conn.next_id()
            try:
                sent = action_message(action, table_id, turn.hand_id, ref)
            except ValidationError as unsendable:
                # An amount or a tile no table could take: illegal, as the server
                # would say of one it could read; the turn's timer plays it.
                log.info(
                    "the bot's answer %r cannot be sent (%s): the turn's timer will check "
                    "or fold for it",
                    action,
                    "; ".join(map(unsendable_reason, unsendable.errors())),
                )
                continue
            answering = {ref: (key, action)}
            if conn.behind(table_id):
                # The server said more while the bot thought: its turn may be over,
                # and the answer would land on its next turn in the hand.
                held = (key, sent)
            else:
                await _sent(conn, sent)
    return summary


async def _count_missed(
    conn: Connection,
    table_id: str,
    hands: int | None,
    missed: list[int],
    summary: Summary,
    *,
    since: int | None = None,
) -> None:
    """Count into ``summary`` the hands ``missed`` (the seat was dealt into them while
    the connection was down, or their end went by unseen), and with ``since`` every
    hand after that one the seat was dealt into (it was given up meanwhile: no
    snapshot says how far the table got), as the table's history has them; those it
    no longer keeps, or that it cannot give now, are not counted."""
    if not missed and since is None:
        return
    try:
        listed = await conn.request(
            cmd.ListHands(table_id=table_id, limit=HISTORY_LIMIT), wire.HandList
        )
    except ClientError as error:
        log.info("hands %s went by unseen and are not counted: %s", missed, error)
        return
    played = {hand.hand_id: hand for hand in listed.hands}
    if since is not None:
        mine = (
            hand.hand_id
            for hand in listed.hands
            if hand.hand_id > since
            and hand.hand_id not in summary.per_hand
            and any(s.account_id == conn.account_id for s in hand.seats)
        )
        missed = sorted({*missed, *mine})
    for hand_id in missed:
        hand = played.get(hand_id)
        seat = next(
            (s for s in hand.seats if s.account_id == conn.account_id) if hand else iter(()),
            None,
        )
        if seat is None:
            log.info("hand %d went by unseen, and the history no longer has it", hand_id)
            continue
        if hand is not None and hand.voided:
            summary.record_voided(hand_id)
            log.info("a hand was called off while the connection was down, every chip back")
            continue
        summary.record(hand_id, seat.after - seat.before)
        log.info(
            "hand %d%s: %+d (net %+d, stack %d), played while the connection was down",
            summary.hands,
            "" if hands is None else f" of {hands}",
            seat.after - seat.before,
            summary.net,
            seat.after,
        )


async def _sent(conn: Connection, message: cmd.ClientMessage) -> bool:
    """Send ``message``; ``False`` if the connection has just dropped. Not an error:
    the connection comes back by itself (or closes for good), and the snapshot after
    it says what is still to do, as the turn still open or the seat not yet left."""
    try:
        await conn.send(message)
    except ConnectionLost as lost:
        log.info("%s not sent, the connection dropped: %s", type(message).__name__, lost)
        return False
    return True


async def _stand_up(
    conn: Connection, table_id: str, summary: Summary, stacks_before: dict[int, int]
) -> None:
    """Leave a table caught cheating, or where the bot failed, waiting a little for the
    seat to stand up (its chips go back to its balance, which ``summary`` then has,
    and the hand the server's timer played out meanwhile with them)."""
    state = conn.tables.get(table_id)
    me = None if state is None else state.me
    if state is None or me is None:
        return
    uncounted = [hand_id for hand_id in stacks_before if not summary.counted(hand_id)]
    if uncounted:
        hand_id = max(uncounted)
        stack = stacks_before[hand_id]
    else:  # between hands: one may have been dealt it as it was leaving
        hand_id = (0 if state.hand is None else state.hand.hand_id) + 1
        stack = me.stack
    # A hand whose deal failed its check as it ended was played to its end by the bot.
    ended = state.hand is not None and state.hand.hand_id == hand_id and state.hand.phase == "ended"
    left: wire.TableLeft | None = None
    with contextlib.suppress(ClientError, TimeoutError):
        async with asyncio.timeout(LEAVE_PATIENCE):
            left = await stand_up(conn, table_id)
    if left is None:
        return
    summary.balance = left.balance
    if uncounted or left.cashed_out != stack:
        # Played to its end, its turns checked or folded: the balance has its chips, so
        # the net has them too (the stack is the one cashed out: a payout that failed
        # its check said another).
        summary.record(hand_id, left.cashed_out - stack)
        log.info(
            "hand %d: %+d (net %+d, stack %d)%s",
            summary.hands,
            left.cashed_out - stack,
            summary.net,
            left.cashed_out,
            "" if ended else ", played out by the server as the seat stood up",
        )


async def run(
    bot: Bot,
    url: str,
    *,
    name: str,
    hands: int | None = None,
    table_id: str | None = None,
    options: TableOptions | None = None,
    buy_in: int = 500,
    summary: Summary | None = None,
    tokens: TokenFile | None = None,
) -> Summary:
    """Connect to ``url`` as ``name``, join ``table_id`` (or open a table with
    ``options``, against the dealer bot by default), :func:`play` ``hands`` hands,
    then check the table's whole shuffle if it has closed (as a table does when
    its last player leaves), into ``summary`` if one is given (as :func:`play`).
    With ``tokens``, the account whose token they keep for ``url`` plays on, and a
    new account's token is kept there. Raises :class:`~qiuqiu.protocol.DealTampered`
    if a deal fails its check."""
    check_is_a_bot(bot)
    async with await _connect(url, name, tokens) as conn:
        assert conn.welcome is not None
        for elsewhere in conn.welcome.tables:
            if elsewhere != table_id:
                # Said, since the run plays one table: the seat left at another plays on
                # by the server's timer, its stack in neither the net nor the balance.
                log.warning(
                    "the account still sits at table %s from an earlier run: the server "
                    "checks or folds its turns there, and its stack is in no figure of this "
                    "run (a run given --table %s plays on at it)",
                    elsewhere,
                    elsewhere,
                )
        if table_id is None:
            check_balance(conn.welcome, buy_in)
            table, _ = await conn.open_table(options or TableOptions(), buy_in)
            table_id = table.table_id
            log.info("opened table %s: others join it with --table %s", table_id, table_id)
        elif table_id in conn.welcome.tables:
            # Resumed by its token, the account still sits there (a run stopped within
            # the seat's grace period): the seat, and its stack, play on.
            log.info("the account sits at table %s already: it plays on at its seat", table_id)
        else:
            await conn.join_table(table_id, buy_in)
        summary = await play(bot, conn, table_id, hands, summary=summary)
        await check_shuffle(conn, table_id, summary)
        return summary


async def _connect(url: str, name: str, tokens: TokenFile | None) -> Connection:
    if tokens is None:
        return await Connection.open(url, name=name)
    saved = tokens.load(url)

    def keep(token: str) -> None:
        assert tokens is not None
        aside = tokens.save(url, token)
        if aside is not None:
            log.warning("%s could not be read: it is kept as %s", tokens.path, aside)
        log.info("the new account's token is kept in %s", tokens.path)

    conn = await Connection.open(url, name=name, token=saved, on_token=keep)
    welcome = conn.welcome
    assert welcome is not None
    if welcome.resumed:
        log.info(
            "resumed the account in %s: %s, balance %s",
            tokens.path,
            welcome.name,
            f"{welcome.balance:,}",
        )
    elif saved is not None:
        # Else its name and its balance would be gone unsaid.
        log.warning(
            "the server does not know the account kept in %s for %s (one that keeps its "
            "accounts in memory forgets them when it restarts): this is a new one",
            tokens.path,
            url,
        )
    return conn


async def check_shuffle(conn: Connection, table_id: str, summary: Summary) -> None:
    """Having left ``table_id``, rebuild its every deck into ``summary`` if it has closed
    within :data:`SHUFFLE_PATIENCE` seconds. Raises :class:`~qiuqiu.protocol.DealTampered`."""
    try:
        summary.shuffle_verified = await conn.verify_table(table_id, SHUFFLE_PATIENCE)
    except ShuffleNotRevealed as open_still:
        log.info("%s: check it with verify_table once it closes", open_still)
    except ConnectionLost as lost:
        # A stopping server stands every seat up and then closes the connection: the
        # hands played are still the run's, only the history is out of reach.
        log.info("table %s's shuffle not checked: %s", table_id, lost)
    else:
        rebuilt = summary.shuffle_verified
        log.info(
            "table %s's shuffle verified: %d hand%s rebuilt from the revealed seed",
            table_id,
            rebuilt,
            "s" * (rebuilt != 1),
        )


LOADING: ContextVar[str | None] = ContextVar("qiuqiu_bot_file_loading", default=None)
"""The bot file the arena is loading, while it runs the file: :func:`main` must not
play then, with the arena's command line for its own."""


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""Ctrl-C, and what `kill`, `timeout` or a container's stop sends: each ends a bot's
command line with the summary of the hands played."""


class Stopped(Exception):
    """One of :data:`STOP_SIGNALS` stopped the command."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


async def _stoppable(work: Awaitable[Outcome]) -> Outcome:
    """``work``, cancelled by any of :data:`STOP_SIGNALS` and then raising
    :class:`Stopped`. Taken through the loop's own handlers, which the signal wakes on
    whichever of the process's threads it lands: a handler set with ``signal.signal``
    runs in this thread only once the loop wakes for something else, and with the bot
    thinking in its thread, the loop may wait for nothing else."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    caught: list[int] = []

    def stop(signum: int) -> None:
        caught.append(signum)
        task.cancel()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop, signum)
    try:
        return await work
    except asyncio.CancelledError:
        if not caught:
            raise
        raise Stopped(caught[0]) from None
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)


class MainRunOnLoad(ValueError):
    """A bot file calls :func:`main` as it is loaded, not under ``__main__``."""


def main(bot: Bot, argv: Sequence[str] | None = None) -> int:
    """Run ``bot`` from the command line and print its :class:`Summary` as JSON:
    what an example bot's ``if __name__ == "__main__"`` calls."""
    if sys.platform == "win32":  # its Ctrl-C is the event loop's signal handler
        print(f"{Path(sys.argv[0]).name}: {ELSEWHERE}", file=sys.stderr)
        return 1
    loading = LOADING.get()
    if loading is not None:
        raise MainRunOnLoad(
            f"{loading} runs main() as it is loaded: call it under "
            '`if __name__ == "__main__":`, as clients/examples/ do, so that the arena can '
            "load the bot without playing it on a server"
        )
    # The docstring's first paragraph, as one line: its first line alone stops mid-sentence.
    first_paragraph = inspect.cleandoc(type(bot).__doc__ or "").split("\n\n")[0]
    parser = argparse.ArgumentParser(
        description=" ".join(first_paragraph.split()), allow_abbrev=False
    )
    parser.add_argument(
        "--server",
        type=server_url,
        default="ws://127.0.0.1:8765",
        help="the server to play on (%(default)s)",
    )
    parser.add_argument(
        "--name",
        type=player_name,
        default=type(bot).__name__,
        help="the bot's name at the table (%(default)s)",
    )
    parser.add_argument("--hands", type=hand_count, default=100, help="hands to play (%(default)s)")
    parser.add_argument("--table", type=table_id, help="join this table (default: open one)")
    parser.add_argument(
        "--buy-in", type=chips, default=500, help="chips to sit down with (%(default)s)"
    )
    parser.add_argument(
        "--tokens",
        type=Path,
        metavar="FILE",
        help="keep the bot's account between runs: FILE keeps its token for each server "
        "(readable by you only), and a run given the same FILE plays on with that "
        "account and its chips (default: a new account each run)",
    )
    add_table_options(parser)
    args = parser.parse_args(argv)
    try:
        check_is_a_bot(bot)
    except TypeError as not_a_bot:
        print(f"{parser.prog}: {not_a_bot}", file=sys.stderr)
        return 2
    try:
        options = table_options(args)
        if args.table is None:
            check_buy_in(args.buy_in, options)
        else:
            check_joining(options)
    except ValueError as error:
        parser.error(str(error))
    if args.tokens is not None and args.tokens.is_dir():
        parser.error(
            f"--tokens {args.tokens} is a folder: give a file, such as "
            f"{args.tokens / 'tokens.json'}"
        )
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    # Filled in as the hands end: a run that stops on an error still reports those played.
    summary = Summary()
    status = 0
    playing = run(
        bot,
        args.server,
        name=args.name,
        hands=args.hands,
        table_id=args.table,
        options=options,
        buy_in=args.buy_in,
        summary=summary,
        tokens=None if args.tokens is None else TokenFile(args.tokens.parent, args.tokens.name),
    )
    try:
        # Signals reach only the main thread's loop (a test may run this in another).
        in_main = threading.current_thread() is threading.main_thread()
        asyncio.run(_stoppable(playing) if in_main else playing)
    except BotFailed as failed:
        print(f"{parser.prog}: {failed}{failed.bot_traceback()}", file=sys.stderr)
        status = 1
    except ClientError as error:
        # The server's advice for a new account refused is the protocol's (its token in
        # hello): a bot's command line keeps one with --tokens.
        refused = isinstance(error, ServerRefused) and error.code is ErrorCode.TOO_MANY_ACCOUNTS
        keep = "; a bot keeps its account from run to run with --tokens FILE" if refused else ""
        print(f"{parser.prog}: {error}{keep}", file=sys.stderr)
        status = 1
    except DealTampered as tampered:
        print(f"{parser.prog}: DEAL CHECK FAILED at {tampered}", file=sys.stderr)
        status = 3
    except (Stopped, KeyboardInterrupt) as stopped:
        # The seat's connection is dropped, as any client's, and the server treats it so.
        # KeyboardInterrupt: a Ctrl-C before the loop took the signals.
        terminated = isinstance(stopped, Stopped) and stopped.signum == signal.SIGTERM
        print(f"{parser.prog}: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        status = 143 if terminated else 130
    if status == 0 or summary.hands or summary.voided:
        print(json.dumps(summary.as_dict()))
    return status
