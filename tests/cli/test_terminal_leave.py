"""``quit`` (or ``leave``) in the real ``qiuqiu play``, in a pseudo-terminal: in a hand
the player plays it out and stands up as it ends; typed again, or ``quit now``, the
seat stands up at once, the rest of its hand checked or folded for it.

The servers run in the test's own process, their records checked against what was
typed; the screen is read without blocking their event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pexpect

from qiuqiu.cli.bot import Action, Bet, Bot, Call, Check, Turn, play, run
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.play import Steady
from qiuqiu.cli.tokens import TokenFile
from qiuqiu.server.accounts import token_hash
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import HandRecord
from tests.cli.proxy import proxy, refusing
from tests.cli.test_terminal import (
    CHIPS,
    PATIENCE,
    SMALL,
    TURN,
    WELCOME,
    _Collect,
    finish,
    finished,
    matched,
    spawn,
    start,
)
from tests.leases import lease_taken

AFTER_HAND = "You will leave after this hand"
AT_ONCE = "Leaving: your seat plays out this hand (check or fold)"
LEFT = rf"You left the table\. Your balance is ({CHIPS})\."

QUICK = ServerConfig(port=0, hand_pause=0.0, bot_delay=0.0, rate=1e6, burst=10**6)
"""The next hand is dealt as the last ends: a seat that stood up late is dealt into it."""


@contextlib.asynccontextmanager
async def running(server: QiuQiuServer) -> AsyncIterator[QiuQiuServer]:
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def answer(child: pexpect.spawn[str], legal: str | None = None) -> None:
    """Check, or call, at the turn the screen has just shown (whose actions are ``legal``)."""
    child.sendline("check" if "check" in (legal or matched(child)) else "call")


async def account_id(config_dir: Path, server: QiuQiuServer) -> str:
    token = TokenFile(config_dir).load(server.url)
    assert token is not None
    account = await server.store.account_for_token(token_hash(token))
    assert account is not None
    return account.account_id


async def hands_after(server: QiuQiuServer, table_id: str, hand_id: int) -> list[HandRecord]:
    return [h for h in await server.store.table_hands(table_id) if h.hand_id > hand_id]


def moves_of(hand: HandRecord, seat: int) -> list[str]:
    """The types of the events of ``seat`` in ``hand``, as a spectator saw them."""
    events = [json.loads(event) for event in hand.events]
    return [e["type"] for e in events if e.get("seat") == seat]


async def test_quit_mid_hand_plays_it_out_and_the_seat_is_not_dealt_the_next(
    config_dir: Path,
) -> None:
    """Bo plays on with the dealer bot, so the table deals its next hand as Ann's ends."""
    async with running(QiuQiuServer(QUICK)) as server:
        child = spawn(config_dir, "--server", server.url, "--seats", "3", *SMALL)
        said: list[str] = []
        child.logfile_read = _Collect(said)
        await child.expect(r"Table (t\w+): 3 seats", async_=True)
        table_id = matched(child)
        bo = asyncio.create_task(run(Steady(), server.url, name="Bo", table_id=table_id))
        # Bo seated first: the table plays on once Ann stands up, and does not close.
        while await child.expect([TURN, "Bo sat down"], async_=True) == 0:
            answer(child)
        await child.expect(TURN, async_=True)
        legal = matched(child)
        child.sendline("quit")
        await child.expect(AFTER_HAND, async_=True)
        answer(child, legal)  # the turn the quit was typed at is still the player's
        while await child.expect([TURN, LEFT], async_=True) == 0:
            answer(child)
        assert "Traceback" not in await finished(child)
        ann = await account_id(config_dir, server)
        played = (await server.store.account_hands(ann))[-1]
        async with asyncio.timeout(PATIENCE):
            while not await hands_after(server, table_id, played.hand_id):
                await asyncio.sleep(0.05)
        bo.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await bo
    # The next hand was dealt without her; in hers, every move of her seat was her own.
    later = await hands_after(server, table_id, played.hand_id)
    assert all(ann not in dict(h.accounts).values() for h in later)
    seat = next(seat for seat, account in played.accounts if account == ann)
    moves = moves_of(played, seat)
    assert "turn_timed_out" not in moves
    assert {"checked", "called"} & set(moves), moves
    text = "".join(said)
    assert AT_ONCE not in text
    # Nor was it shown seated in the next: the hand it left is the last it saw.
    after = text.split(AFTER_HAND)[1]
    assert set(re.findall(r"Hand #(\d+)", after)) <= {str(played.hand_id)}


async def test_ctrl_c_again_while_the_hand_waits_for_another_stops_waiting(
    config_dir: Path,
) -> None:
    """Bo takes his time: leaving at once, Ann's seat stands up only as the hand ends.
    A second Ctrl-C went unread, and the client sat there until then."""
    async with running(QiuQiuServer(QUICK)) as server:
        child = spawn(config_dir, "--server", server.url, "--no-bot", "--turn-seconds", "300")
        await child.expect(r"Table (t\w+): 2 seats", async_=True)
        table_id = matched(child)
        async with await Connection.open(server.url, name="Bo") as bo:
            await bo.join_table(table_id, 500)
            await child.expect(TURN, async_=True)
            answer(child)  # Bo's turn now, for five minutes
            await child.expect(r"Bo to act", async_=True)
            child.kill(signal.SIGINT)
            await child.expect(re.escape(AT_ONCE), async_=True)
            await child.expect(re.escape("(Ctrl-C: stop waiting)"), async_=True)
            child.kill(signal.SIGINT)
            await child.expect(
                "Stopped waiting: your seat stands up as this hand ends", async_=True
            )
            await child.expect(rf"Balance: 500 \(and {CHIPS} still at the table\)\.", async_=True)
            assert "Traceback" not in await finished(child)
            # The server has the request: Bo plays the hand out, and Ann's seat stands up.
            bo_plays = asyncio.create_task(play(Steady(), bo, table_id))
            ann = await account_id(config_dir, server)
            async with asyncio.timeout(PATIENCE):
                while True:
                    hands = await server.store.account_hands(ann)
                    account = await server.store.account(ann)
                    assert account is not None
                    if hands and account.balance == 1000 + sum(h.net(ann) for h in hands):
                        break
                    await asyncio.sleep(0.05)
            bo_plays.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await bo_plays


def test_quit_typed_again_mid_hand_leaves_at_once(config_dir: Path) -> None:
    child = start(config_dir)
    child.expect(TURN)
    child.sendline("quit")
    child.expect(AFTER_HAND)
    child.sendline("quit")
    child.expect(re.escape(AT_ONCE))
    # Checked through to a showdown, it may still lose the ante, split or win.
    child.expect(r"You left the table\. Your balance is (990|1,000|1,010)\.")
    finish(child)


async def test_quit_between_hands_leaves_at_once(config_dir: Path) -> None:
    pause = QUICK.model_copy(update={"hand_pause": 60.0})
    async with running(QiuQiuServer(pause)) as server:
        child = spawn(config_dir, "--server", server.url, *SMALL)
        said: list[str] = []
        child.logfile_read = _Collect(said)
        while await child.expect([TURN, "Deal verified"], async_=True) == 0:
            answer(child)
        child.sendline("quit")
        await child.expect(LEFT, async_=True)
        assert "Traceback" not in await finished(child)
    assert AFTER_HAND not in "".join(said)


class Bets(Bot):
    """Bets whenever it may: the others face a bet in every hand."""

    def decide(self, turn: Turn) -> Action:
        if turn.legal.bet is not None:
            return Bet(turn.legal.bet.min)
        return Check() if turn.legal.check else Call()


async def test_quit_once_folded_leaves_without_playing_on(config_dir: Path) -> None:
    """Folded in the first of two rounds, the seat has nothing left to play: it is
    not told it plays the hand out, while the others play the second round."""
    pause = QUICK.model_copy(update={"hand_pause": 60.0})
    async with running(QiuQiuServer(pause)) as server:
        flags = ("--no-bot", "--seats", "3", "--rounds", "2", *SMALL)
        child = spawn(config_dir, "--server", server.url, *flags)
        said: list[str] = []
        child.logfile_read = _Collect(said)
        await child.expect(r"Table (t\w+): 3 seats", async_=True)
        table_id = matched(child)
        others = [
            asyncio.create_task(run(bot, server.url, name=name, table_id=table_id))
            for bot, name in ((Bets(), "Bo"), (Steady(), "Cy"))
        ]
        await child.expect("Cy sat down", async_=True)
        betting_round, dealt_three = 0, False
        while True:
            found = await child.expect([TURN, r"Betting round (\d)\.", "── Hand #"], async_=True)
            if found == 2:
                dealt_three = True  # a hand dealt after Cy sat down
            elif found == 1:
                betting_round = int(matched(child))
            elif "fold" in matched(child) and betting_round == 1 and dealt_three:
                break
            else:
                answer(child)
        child.sendline("fold")
        await child.expect("You folded", async_=True)
        child.sendline("quit")
        await child.expect(LEFT, async_=True)
        assert "Traceback" not in await finished(child)
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
    text = "".join(said)
    assert AFTER_HAND not in text
    assert AT_ONCE not in text
    # The hand went on after the quit: the seat stood up as it ended.
    assert "Betting round 2." in text.split("You folded")[-1]


async def test_a_request_to_leave_after_the_hand_is_made_again_once_the_table_moved(
    redis_url: str, config_dir: Path
) -> None:
    """The table's lease is taken at Redis, as an adopter does, and lapses for Ann's
    server to adopt it again: the request went with the table as it was, its hand is
    voided, and the seat would be dealt hand after hand unless it asks again."""
    store = await RedisStore.from_url(redis_url)
    server = QiuQiuServer(ServerConfig(port=0, lease=0.3, hand_pause=0.0), store=store)
    await server.start()
    try:
        child = spawn(config_dir, "--server", server.url, *SMALL)
        await child.expect(WELCOME, async_=True)
        await child.expect(TURN, async_=True)
        child.sendline("quit")
        await child.expect(AFTER_HAND, async_=True)
        (table_id,) = server.lobby.tables
        await lease_taken(redis_url, table_id)
        await child.expect("The table moved to another server: reconnecting", async_=True)
        # At most the hand dealt as the table came back is played out; not one more.
        hands = 0
        while await child.expect([TURN, LEFT, r"── Hand #"], async_=True) != 1:
            if "Your turn" in str(child.after):
                answer(child)
            else:
                hands += 1
                assert hands <= 1, "dealt in again and again: the request was not made again"
        assert "Traceback" not in await finished(child)
    finally:
        await server.stop()
        await store.close()


async def test_quit_now_refused_store_unavailable_is_asked_again_and_the_seat_stands_up(
    config_dir: Path,
) -> None:
    """A table whose host lost touch with Redis past its lease refuses what it is sent,
    ``store_unavailable``, until it is sure it still hosts the table: nothing changed,
    send it again in a moment. ``quit now`` refused so ended the client, its seat left
    behind to play on (a full run here, the host's loop stalled). A proxy in front of a
    real server refuses the first ``leave_table`` so; the client must ask again."""
    refused: list[int] = []
    async with (
        running(QiuQiuServer(QUICK)) as server,
        proxy(server.url, up=refusing("leave_table", 1, refused)) as url,
    ):
        child = spawn(config_dir, "--server", url, *SMALL)
        await child.expect(TURN, async_=True)
        child.sendline("quit now")
        await child.expect("Not left yet: the server is making sure", async_=True)
        await child.expect(LEFT, async_=True)
        assert isinstance(child.match, re.Match)
        balance = int(child.match.group(1).replace(",", ""))
        assert "Traceback" not in await finished(child)
        assert refused, "the proxy refused no leave_table"
        token = TokenFile(config_dir).load(url)
        assert token is not None
        account = await server.store.account_for_token(token_hash(token))
        assert account is not None
        assert account.balance == balance
        assert not await server.store.seated_tables(account.account_id)
