"""``qiuqiu play --watch ID``, the real client in a pseudo-terminal, watching a table of
a server in the test's own process where a player (the SDK, which knows its own
tiles) plays against the dealer bot."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pexpect
import pytest

from qiuqiu.cli.bot import Action, Bot, Call, Check, HandResult, Turn, play
from qiuqiu.cli.connection import Connection
from qiuqiu.engine import compare
from qiuqiu.protocol import DealTampered, TableOptions
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from qiuqiu.server.redis_store import RedisStore
from tests.cli.conftest import CONFIG, cut_the_network
from tests.cli.test_terminal import (
    PATIENCE,
    STYLE,
    TAMPERED,
    TURN,
    _Collect,
    connect,
    finished,
    leave,
    spawn,
)
from tests.dealing import first_hands, known_table_seed
from tests.leases import lease_taken
from tests.server import cheats

SMALL = TableOptions(ante=1, min_bet=1, max_bet=2, max_raises=2)
DEALER = SMALL.seats - 1
"""The dealer bot's seat: the last."""
WATCHING = r"You are watching table (t\w+)\."
WATCHER_WELCOME = r"Welcome, Ann\.\r?\n"
"""It went on "Your balance is 1000 chips.": a watcher never bets."""
DOMINO_FACES = re.compile("[\U0001f031-\U0001f061]")


class CheckOrCall(Bot):
    """Never bets, so the dealer bot never faces a bet to fold to: every hand is shown down."""

    def __init__(self) -> None:
        self.results: list[HandResult] = []

    def decide(self, turn: Turn) -> Action:
        return Check() if turn.legal.check else Call()

    def hand_ended(self, result: HandResult) -> None:
        self.results.append(result)


@contextlib.asynccontextmanager
async def seated(server: QiuQiuServer) -> AsyncIterator[tuple[Connection, str]]:
    """Bo at a new table against the dealer bot: its first hand waits for his turn."""
    async with await Connection.open(server.url, name="Bo") as bo:
        table, _ = await bo.open_table(SMALL, buy_in=500)
        yield bo, table.table_id


async def watching(
    config_dir: Path, server: QiuQiuServer, table_id: str, screen: list[str] | None = None
) -> pexpect.spawn[str]:
    """The watcher, once it watches; everything it prints from its start into ``screen``."""
    child = spawn(config_dir, "--server", server.url, "--watch", table_id)
    if screen is not None:
        child.logfile_read = _Collect(screen)
    await child.expect(WATCHER_WELCOME, async_=True)
    await child.expect(WATCHING, async_=True)
    return child


async def one_hand_told(child: pexpect.spawn[str], bo: Connection, table_id: str) -> None:
    """Bo plays a hand, and the watcher tells it through to its showdown."""
    player = CheckOrCall()
    async with asyncio.timeout(PATIENCE):
        await play(player, bo, table_id, hands=1)
    (result,) = player.results
    await child.expect(f"Hand #{result.hand_id} ", async_=True)
    await child.expect("Showdown:", async_=True)


def hands_told(screen: str) -> dict[int, str]:
    """The watcher's screen cut at each hand's header, by hand id; without colours."""
    plain = re.sub(STYLE, "", screen)
    parts = re.split(r"Hand #(\d+) ", plain)
    return {int(hand_id): text for hand_id, text in zip(parts[1::2], parts[2::2], strict=True)}


async def test_the_watcher_sees_each_hand_and_no_tile_before_the_showdown(
    server: QiuQiuServer, config_dir: Path
) -> None:
    async with seated(server) as (bo, table_id):
        screen: list[str] = []
        child = await watching(config_dir, server, table_id, screen)
        player = CheckOrCall()
        await play(player, bo, table_id, hands=3)
        # Bo stood up: the table, with only the dealer bot, closes.
        await child.expect("The table closed", async_=True)
        await finished(child)
    told = hands_told("".join(screen))
    assert len(player.results) == 3
    for result in player.results:
        hand = told[result.hand_id]
        before, showdown, after = hand.partition("Showdown:")
        assert showdown, hand
        # The first hand was under way as the watch began: its deal was not seen.
        if "(under way)" not in before:
            assert "Bo was dealt three tiles, face down." in before
        assert "Bo was dealt a fourth tile, face down." in before
        assert DOMINO_FACES.search(before) is None, before
        for tiles in result.shown.values():
            assert not any(str(tile) in before for tile in tiles), before
        assert all(str(tile) in after for tile in result.tiles), after
        assert re.search(r"(Bo|Dealer) wins the pot of \d+", after), after
        assert re.search(r"Stacks: Bo [\d,]+, Dealer [\d,]+\.", after), after


async def test_a_table_that_does_not_exist_is_refused_with_the_servers_words(
    server: QiuQiuServer, config_dir: Path
) -> None:
    child = spawn(config_dir, "--server", server.url, "--watch", "t1234abcd")
    await child.expect(WATCHER_WELCOME, async_=True)
    # Said after the server's code ("qiuqiu: unknown_table: table ..."), which no
    # player needs to read.
    await child.expect(
        "qiuqiu: table t1234abcd cannot be watched: there is no table t1234abcd",
        async_=True,
    )
    await child.expect(pexpect.EOF, async_=True)
    child.close()
    assert child.exitstatus == 1


@pytest.mark.parametrize(
    "config", [pytest.param(CONFIG.model_copy(update={"max_spectators": 1}), id="one spectator")]
)
async def test_a_full_audience_is_refused_with_the_servers_words(
    server: QiuQiuServer, config_dir: Path
) -> None:
    async with (
        seated(server) as (_, table_id),
        await Connection.open(server.url, name="Cy") as cy,
    ):
        await cy.request(cmd.WatchTable(table_id=table_id), wire.TableWatched)
        child = spawn(config_dir, "--server", server.url, "--watch", table_id)
        await child.expect(f"qiuqiu: table {table_id} cannot be watched", async_=True)
        await child.expect(pexpect.EOF, async_=True)
        child.close()
        assert child.exitstatus == 1


async def test_a_watcher_takes_only_help_and_quit_and_quit_stops_the_watch(
    server: QiuQiuServer, config_dir: Path
) -> None:
    async with seated(server) as (_, table_id):
        child = await watching(config_dir, server, table_id)
        audience = server.lobby.tables[table_id].core.spectators
        assert len(audience) == 1
        child.sendline("call")
        await child.expect("call is for a seat: you are watching", async_=True)
        child.sendline("dance")
        await child.expect("unknown command 'dance': type help for the list", async_=True)
        child.sendline("help")
        await child.expect(r"quit, leave\s+stop watching", async_=True)
        child.sendline("quit")
        await child.expect(f"You stopped watching table {table_id}.", async_=True)
        await finished(child)
        assert len(audience) == 0


async def test_a_watcher_from_the_players_own_folder_leaves_the_player_playing(
    server: QiuQiuServer, config_dir: Path
) -> None:
    """The watcher has an account of its own: an account has one connection, so on the
    player's its hello would take over the connection that plays."""
    ann = await connect(config_dir, server)
    await ann.expect(TURN, async_=True)
    async with seated(server) as (_, table_id):
        child = await watching(config_dir, server, table_id)
        child.sendline("quit")
        await finished(child)
    await leave(ann)
    await finished(ann)


async def test_a_dropped_connection_watches_the_table_again(
    server: QiuQiuServer, config_dir: Path
) -> None:
    async with seated(server) as (bo, table_id):
        child = await watching(config_dir, server, table_id)
        cut_the_network(server)
        await child.expect("Reconnected.", async_=True)
        # Bo's connection dropped too: it comes back by itself as he plays.
        await one_hand_told(child, bo, table_id)
        child.sendline("quit")
        await finished(child)


async def test_a_watch_that_saw_a_deal_fail_its_check_ends_with_status_3(
    server: QiuQiuServer, config_dir: Path
) -> None:
    """The watcher goes on watching past the failure, said loudly as the hand ends, but
    its quitting does not end the watch as if every deal had checked."""
    with cheats.swapped_tile():
        async with seated(server) as (bo, table_id):
            child = await watching(config_dir, server, table_id)
            with pytest.raises(DealTampered):
                async with asyncio.timeout(PATIENCE):
                    await play(CheckOrCall(), bo, table_id, hands=1)
            await child.expect("DEAL CHECK FAILED", async_=True)
            child.sendline("quit")
            await finished(child, TAMPERED)


async def test_a_watch_its_server_stopped_ends_with_status_1(
    server: QiuQiuServer, config_dir: Path
) -> None:
    """The server stops: it closes the table with Bo still seated, then the connection.
    Not a watch run its course (a table closes by itself only once its last player has
    left, and that ends it with 0): 1, as for a player the stopping server stood up."""
    async with seated(server) as (_, table_id):
        child = await watching(config_dir, server, table_id)
        await server.stop()
        await child.expect("The table closed: the server is shutting down.", async_=True)
        await child.expect(pexpect.EOF, async_=True)
        child.close()
        assert child.exitstatus == 1


async def test_a_watch_whose_connection_is_lost_for_good_ends_with_status_1(
    server: QiuQiuServer, config: ServerConfig, config_dir: Path
) -> None:
    """The server dies, and another starts on its port with none of its accounts (an
    in-memory server restarted): the watcher's token resumes nothing, so it says the
    connection is closed, and ends with 1."""
    async with seated(server) as (_, table_id):
        child = await watching(config_dir, server, table_id)
        port = server.port
        cut_the_network(server)
        await server.stop()
        await child.expect("Connection lost", async_=True)
        again = QiuQiuServer(config.model_copy(update={"port": port}), store=MemoryStore())
        await again.start()
        try:
            await child.expect("The connection is closed", async_=True)
            await child.expect(pexpect.EOF, async_=True)
        finally:
            await again.stop()
        child.close()
        assert child.exitstatus == 1


BETWEEN_HANDS = CONFIG.model_copy(update={"hand_pause": 60.0})
"""A pause between hands long enough to start watching in it."""


async def bet_or_fold(conn: Connection, table_id: str) -> None:
    """Bets the least with nothing to call, folds to a bet, until the hand ends: of two
    such players, the second to act folds."""
    async for message in conn.messages():
        match message:
            case wire.TurnStarted(hand_id=hand_id, legal=legal) if legal and legal.call is None:
                assert legal.bet is not None
                await conn.send(cmd.Bet(table_id=table_id, hand_id=hand_id, amount=legal.bet.min))
            case wire.TurnStarted(hand_id=hand_id, legal=legal) if legal:
                await conn.send(cmd.Fold(table_id=table_id, hand_id=hand_id))
            case wire.HandEnded():
                return


@contextlib.asynccontextmanager
async def a_fold_just_played(server: QiuQiuServer) -> AsyncIterator[str]:
    """Bo and Cy at a table without the dealer bot, its first hand over (one of them
    folded), its next not yet dealt."""
    async with (
        await Connection.open(server.url, name="Bo") as bo,
        await Connection.open(server.url, name="Cy") as cy,
    ):
        table, _ = await bo.open_table(SMALL.model_copy(update={"dealer_bot": False}), 500)
        await cy.join_table(table.table_id, 500)
        await asyncio.gather(bet_or_fold(bo, table.table_id), bet_or_fold(cy, table.table_id))
        yield table.table_id


@pytest.mark.parametrize("config", [pytest.param(BETWEEN_HANDS, id="a long pause")])
async def test_a_watch_begun_between_hands_shows_no_one_folded_and_the_last_hand_over(
    server: QiuQiuServer, config_dir: Path
) -> None:
    async with a_fold_just_played(server) as table_id:
        screen: list[str] = []
        child = await watching(config_dir, server, table_id, screen)
        await child.expect("Hand #1 is over; the next is not dealt yet.", async_=True)
        child.sendline("quit")
        await finished(child)
    table = re.sub(STYLE, "", "".join(screen)).partition("Rules here")[2]
    assert re.search(r"seat 1\s+Bo( \(D\))?\s+stack \d+", table), table
    assert "folded" not in table, table


@contextlib.asynccontextmanager
async def seated_to_win(server: QiuQiuServer) -> AsyncIterator[tuple[Connection, str]]:
    """Bo at a new table against the dealer bot whose first hand deals him the better
    hand: tables are opened (and left) until one does, their seeds known to the test.
    Whatever the bot plays, it ends that hand below its buy-in, and the server tops it up
    before the next."""
    with known_table_seed():
        async with await Connection.open(server.url, name="Bo") as bo:
            for _ in range(40):
                table, _ = await bo.open_table(SMALL, buy_in=500)
                seed = bo.deals_of(table.table_id).seed
                assert seed is not None
                mine, the_bots = first_hands(table.table_id, seed)
                if compare(mine, the_bots) > 0:
                    yield bo, table.table_id
                    return
                await bo.request(cmd.LeaveTable(table_id=table.table_id), wire.TableLeft)
    raise AssertionError("no table of 40 dealt Bo the better first hand")


async def the_dealer_down(bo: Connection, table_id: str) -> int:
    """Bo checks or calls through the first hand, the better one (:func:`seated_to_win`);
    the dealer bot's chips at its end, below its buy-in. Not the SDK's ``play``: it
    stands up after its hands, and the table would close before the next one begins,
    which is where the top-up is said."""
    async for message in bo.messages():
        match message:
            case wire.TurnStarted(hand_id=hand_id, legal=legal) if legal and legal.check:
                await bo.send(cmd.Check(table_id=table_id, hand_id=hand_id))
            case wire.TurnStarted(hand_id=hand_id, legal=legal) if legal:
                await bo.send(cmd.Call(table_id=table_id, hand_id=hand_id))
            case wire.HandEnded(table_id=ended_at, stacks=stacks) if ended_at == table_id:
                (chips,) = (entry.amount for entry in stacks if entry.seat == DEALER)
                assert chips < SMALL.max_buy_in, "the dealer bot lost the hand, not its chips"
                return chips
    raise AssertionError("Bo's connection ended")


async def test_the_dealer_bots_top_up_between_hands_is_said_as_the_next_begins(
    server: QiuQiuServer, config_dir: Path
) -> None:
    async with seated_to_win(server) as (bo, table_id):
        child = await watching(config_dir, server, table_id)
        chips = await the_dealer_down(bo, table_id)
        topped_up = (
            f"The dealer bot topped up its stack to {SMALL.max_buy_in:,} (it had {chips:,})."
        )
        await child.expect_exact(topped_up, async_=True)
        child.sendline("quit")
        await finished(child)


class Link:
    """A TCP link to a server's port that a test can break, turning new connections away
    until it is mended: a network that fails for a while."""

    def __init__(self, port: int) -> None:
        self.port, self.up = port, True
        self._ends: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"ws://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    def cut(self) -> None:
        self.up = False
        for end in self._ends:
            end.transport.abort()

    async def close(self) -> None:
        assert self._server is not None
        self.cut()
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.up:
            writer.transport.abort()
            return
        from_server, to_server = await asyncio.open_connection("127.0.0.1", self.port)
        ends = {writer, to_server}
        self._ends |= ends
        try:
            await asyncio.gather(_relay(reader, to_server), _relay(from_server, writer))
        finally:
            self._ends -= ends
            for end in ends:
                end.transport.abort()


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.transport.abort()  # one way closed: the link is gone both ways


async def hands_played(bo: Connection, table_id: str, count: int) -> list[int]:
    """Bo checks or calls through ``count`` more hands, and stays seated; their ids."""
    ended: list[int] = []
    async for message in bo.messages():
        match message:
            case wire.TurnStarted(hand_id=hand_id, legal=legal) if legal and legal.check:
                await bo.send(cmd.Check(table_id=table_id, hand_id=hand_id))
            case wire.TurnStarted(hand_id=hand_id, legal=legal) if legal:
                await bo.send(cmd.Call(table_id=table_id, hand_id=hand_id))
            case wire.HandEnded(hand_id=hand_id):
                ended.append(hand_id)
                if len(ended) == count:
                    return ended
    raise AssertionError("Bo's connection ended")


@contextlib.asynccontextmanager
async def watching_through_a_link(
    config_dir: Path, server: QiuQiuServer, table_id: str
) -> AsyncIterator[tuple[pexpect.spawn[str], Link]]:
    """The watcher, once it watches, its connection through a :class:`Link`."""
    link = Link(server.port)
    url = await link.start()
    try:
        child = spawn(config_dir, "--server", url, "--watch", table_id)
        await child.expect(WATCHING, async_=True)
        yield child, link
    finally:
        await link.close()


async def cut_off(child: pexpect.spawn[str], link: Link) -> None:
    link.cut()
    await child.expect("Connection lost", async_=True)


async def back(child: pexpect.spawn[str], link: Link, unseen: list[int]) -> None:
    """The link mended, the watcher reconnects and names the hands it did not see."""
    link.up = True
    await child.expect("Reconnected.", async_=True)
    went_by = f"Hands #{unseen[0]} to #{unseen[1]} went by while the connection was down."
    await child.expect(went_by, async_=True)
    child.sendline("quit")
    await finished(child)


async def test_hands_played_while_the_connection_was_down_are_named(
    server: QiuQiuServer, config_dir: Path
) -> None:
    async with (
        seated(server) as (bo, table_id),
        watching_through_a_link(config_dir, server, table_id) as (child, link),
    ):
        (first,) = await hands_played(bo, table_id, 1)
        await child.expect(f"Hand #{first} ", async_=True)
        await child.expect("Showdown:", async_=True)
        await cut_off(child, link)
        await back(child, link, await hands_played(bo, table_id, 2))


async def test_hands_played_while_down_are_named_when_the_watch_began_before_any_hand(
    server: QiuQiuServer, config_dir: Path
) -> None:
    async with await Connection.open(server.url, name="Bo") as bo:
        table, _ = await bo.open_table(SMALL.model_copy(update={"dealer_bot": False}), 500)
        table_id = table.table_id
        async with watching_through_a_link(config_dir, server, table_id) as (child, link):
            await child.expect("Waiting for 1 more player", async_=True)
            await cut_off(child, link)
            async with await Connection.open(server.url, name="Cy") as cy:
                await cy.join_table(table_id, 500)
                played = asyncio.create_task(hands_played(cy, table_id, 2))
                unseen = await hands_played(bo, table_id, 2)
                await played
            await back(child, link, unseen)


async def test_a_table_that_closed_while_the_connection_was_down_is_said_and_checked(
    server: QiuQiuServer, config_dir: Path
) -> None:
    async with (
        seated(server) as (bo, table_id),
        watching_through_a_link(config_dir, server, table_id) as (child, link),
    ):
        await hands_played(bo, table_id, 1)
        await child.expect("Showdown:", async_=True)
        await cut_off(child, link)
        await bo.request(cmd.LeaveTable(table_id=table_id), wire.TableLeft)
        link.up = True
        await child.expect("Reconnected.", async_=True)
        await child.expect(f"Table {table_id} closed while the connection was down.", async_=True)
        await child.expect(rf"Table {table_id}'s shuffle verified: \d+ hands? rebuilt", async_=True)
        await finished(child)


async def test_a_table_that_moved_to_another_server_is_watched_there(
    redis_url: str, config_dir: Path
) -> None:
    """The watcher's server stalled past the table's lease (here its lease is taken at
    Redis, as an adopter does, and lapses for its server to adopt the table again): it
    says the table moved. The table goes on, so the watch does too, on the same
    connection; a watcher that stopped there would leave a table still being played."""
    store = await RedisStore.from_url(redis_url)
    server = QiuQiuServer(ServerConfig(port=0, lease=0.3, hand_pause=0.0), store=store)
    await server.start()
    try:
        async with seated(server) as (bo, table_id):
            screen: list[str] = []
            child = await watching(config_dir, server, table_id, screen)
            await lease_taken(redis_url, table_id)
            await child.expect("The table moved to another server: watching it there", async_=True)
            # Bo's connection was closed (1012) for the move: it comes back as he plays.
            await one_hand_told(child, bo, table_id)
            # Bo stood up: the table, with only the dealer bot, closes.
            await child.expect("The table closed", async_=True)
            await finished(child)
        # The table as it is on its new server is told once, though its snapshot comes
        # more than once (an answer to the watch sent again among them).
        after_the_move = re.sub(STYLE, "", "".join(screen)).partition("watching it there")[2]
        assert after_the_move.count("seat 1  Bo") == 1, after_the_move
    finally:
        await server.stop()
        await store.close()
