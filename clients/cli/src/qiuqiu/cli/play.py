"""``qiuqiu play`` from start to finish: find a server, sit down, play, leave.

Without ``--server`` the real server runs inside this process, on a free
loopback port, with its accounts in memory, and the client talks to it over a
real WebSocket like any other: the embedded game is the same game.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from qiuqiu.cli import render
from qiuqiu.cli.arguments import check_buy_in, check_joining, new_table_flags, table_options
from qiuqiu.cli.bot import Summary, check_shuffle, waiting_log
from qiuqiu.cli.bot import play as play_bot
from qiuqiu.cli.connection import Connection, check_balance
from qiuqiu.cli.live import LiveView, key_lines
from qiuqiu.cli.render import chips
from qiuqiu.cli.terminal import INTERRUPT, Terminal, stdin_lines
from qiuqiu.cli.tokens import TokenFile, config_dir
from qiuqiu.cli.turns import Action, Bet, Bot, Call, Check, Turn
from qiuqiu.cli.watch import Spectator, start_watching
from qiuqiu.engine import rank
from qiuqiu.protocol import TableOptions

DEFAULT_BUY_IN = 500


@dataclass(frozen=True)
class PlayOptions:
    server: str | None
    name: str
    name_given: bool
    """``--name`` was typed: a saved account with another name is worth a word."""
    table_id: str | None
    watch: str | None
    """The table to watch, seated nowhere (``--watch``)."""
    buy_in: int
    table: TableOptions
    auto: int | None
    unicode: bool
    resume: bool
    live: bool
    """Draw the live table view (a terminal on both ends, and not ``--plain``)."""

    @classmethod
    def from_args(cls, args: argparse.Namespace, console: Console) -> PlayOptions:
        """Raises ``ValueError`` with a readable reason for options that cannot work."""
        table = table_options(args)
        if args.no_bot and args.server is None and args.table is None:
            raise ValueError("--no-bot needs --server: at the embedded server you would sit alone")
        if args.table is not None and args.server is None:
            raise ValueError(
                "--table needs --server: the embedded server has no table but the one it opens"
            )
        if args.json and args.auto is None:
            raise ValueError("--json needs --auto: it is the summary of the hands the bot plays")
        if args.watch is not None:
            _check_watching(args, table)
        buy_in = DEFAULT_BUY_IN if args.buy_in is None else args.buy_in
        if args.table is None:
            check_buy_in(buy_in, table)
        else:
            check_joining(table)
        encoding = (console.encoding or "").lower().replace("-", "")
        return cls(
            server=args.server,
            name=args.name,
            name_given=args.name_given,
            table_id=args.table,
            watch=args.watch,
            buy_in=buy_in,
            table=table,
            auto=args.auto,
            unicode=not args.ascii and encoding.startswith("utf"),
            resume=not args.new_account,
            # A terminal that cannot move its cursor (TERM=dumb) would show rich's live
            # view not at all: it gets the plain lines instead.
            live=console.is_interactive and sys.stdin.isatty() and not args.plain,
        )


def _check_watching(args: argparse.Namespace, table: TableOptions) -> None:
    """``ValueError`` naming what ``--watch`` cannot go with: what sits down or plays."""
    if args.server is None:
        raise ValueError(
            "--watch needs --server: the embedded server has no table but the one it opens"
        )
    for flag, given in (("--table", args.table), ("--buy-in", args.buy_in), ("--auto", args.auto)):
        if given is not None:
            raise ValueError(f"{flag} is for sitting down at a table; --watch only watches one")
    check_joining(table, "--watch watches one")


class Steady(Bot):
    """``--auto``'s strategy: bet the minimum with a hand worth 9 on its better pair
    once all four tiles are out, otherwise check when it can and call when it must."""

    def decide(self, turn: Turn) -> Action:
        hand = turn.hand
        if hand is not None and turn.legal.bet is not None and rank(hand).pairs[0] == 9:
            return Bet(turn.legal.bet.min)
        return Check() if turn.legal.check else Call()


async def play(options: PlayOptions, console: Console, summary: Summary) -> None:
    """Play as ``options`` say; with ``--auto``, fill ``summary`` in as the hands end, so
    that a run stopped early still has those played."""
    async with contextlib.AsyncExitStack() as stack:
        url = options.server
        if url is None:
            url = await stack.enter_async_context(embedded_server(fast=options.auto is not None))
            tokens = None
        else:
            tokens = TokenFile(config_dir())
        # A watcher keeps an account of its own beside the player's: an account has one
        # connection, so on the player's it would take over the connection that plays.
        key = url if options.watch is None else f"{url} watching"
        watching = "" if options.watch is None else " to watch with"
        account = f"the account saved for {url}{watching}"
        saved = tokens.load(key) if tokens else None
        token = saved if options.resume else None
        if tokens and saved and not options.resume:
            # One token a server: the new account's takes the saved one's place.
            say(
                console,
                options,
                Text(
                    f"--new-account: {account} will no longer be resumed from here; its "
                    f"token in {tokens.path} is replaced by the new one's.",
                    "yellow",
                ),
            )
        conn = await Connection.open(
            url,
            name=options.name,
            token=token,
            on_token=(lambda t: keep_token(tokens, key, t, console, options)) if tokens else None,
        )
        stack.push_async_callback(conn.close)
        assert conn.welcome is not None
        if tokens and token is not None and not conn.welcome.resumed:
            # Else the saved account, its name and its balance, would be gone unsaid.
            say(
                console,
                options,
                Text(
                    f"The server does not know {account} (one that keeps its accounts in "
                    "memory forgets them when it restarts): this is a new account, and its "
                    f"token replaces the saved one in {tokens.path}.",
                    "yellow",
                ),
            )
        if options.watch is not None:
            await look_on(conn, options.watch, options, console)
            raise_first_failure(conn)
            return
        table_id = await sit_down(conn, options, console)
        if options.auto is not None:
            with waiting_said(console, options):
                await play_bot(Steady(), conn, table_id, options.auto, summary=summary)
            await check_shuffle(conn, table_id, summary)
            return
        scripted = not sys.stdin.isatty()
        terminal = Terminal(conn, table_id, console, options.unicode, scripted=scripted)
        await shown(terminal, console, options)
        raise_first_failure(conn)


def raise_first_failure(conn: Connection) -> None:
    """A session that saw a deal fail its check goes on to its end (a person reads the
    failure as it is found), but does not end as if every deal had checked: the exit
    status tells a script that ran it (3, as ``--auto``'s)."""
    for deals in conn.deals.values():
        if deals.tampered is not None:
            raise deals.tampered


def keep_token(
    tokens: TokenFile, server: str, token: str, console: Console, options: PlayOptions
) -> None:
    aside = tokens.save(server, token)
    if aside is not None:
        say(
            console,
            options,
            Text(
                f"{tokens.path} could not be read: it is kept as {aside}, and a new "
                f"{tokens.path.name} holds this account's token.",
                "yellow",
            ),
        )


async def look_on(conn: Connection, table_id: str, options: PlayOptions, console: Console) -> None:
    """Watch ``table_id`` (an account that never sits down: see :func:`play`)."""
    greet(conn, options, console, seated=False)
    spectator = Spectator(conn, table_id, console, options.unicode)
    spectator.ended_told = await start_watching(conn, table_id)
    await shown(spectator, console, options)


async def shown(narrator: Terminal | Spectator, console: Console, options: PlayOptions) -> None:
    """Run ``narrator`` on the live table view, or line by line."""
    if not options.live:
        await narrator.run(typed_lines(stdin_lines()))
        return
    with LiveView(console, options.unicode, lambda: narrator.state) as screen:
        narrator.screen = screen
        await narrator.run(typed_lines(key_lines(screen)))


def greet(conn: Connection, options: PlayOptions, console: Console, *, seated: bool = True) -> None:
    """The welcome, with the name of an account resumed that ``--name`` did not open,
    and the balance for a player (a watcher's account never bets)."""
    assert conn.welcome is not None
    welcome = conn.welcome
    greeting = "Welcome back" if welcome.resumed else "Welcome"
    balance = f" Your balance is {chips(welcome.balance)} chips." if seated else ""
    say(console, options, Text(f"{greeting}, {welcome.name}.{balance}"))
    if welcome.resumed and options.name_given and welcome.name != options.name:
        # A token resumes an account as it is: the server has no renaming.
        say(
            console,
            options,
            Text(
                f"--name {options.name} is not used: this is the account saved for "
                f"{options.server}, named {welcome.name} (--new-account opens one named "
                f"{options.name}).",
                "yellow",
            ),
        )


async def sit_down(conn: Connection, options: PlayOptions, console: Console) -> str:
    """Go back to the table this account already sits at, join ``--table``, or open a
    table with the options given."""
    assert conn.welcome is not None
    welcome = conn.welcome
    greet(conn, options, console)
    if options.table_id in welcome.tables or (options.table_id is None and welcome.tables):
        table_id = options.table_id or welcome.tables[0]
        say(
            console, options, Text(f"You are still seated at table {table_id}: carrying on.", "dim")
        )
        unused = new_table_flags(options.table) if options.table_id is None else []
        if unused:
            they_are = "they are" if len(unused) > 1 else "it is"
            say(
                console,
                options,
                Text(
                    f"{', '.join(unused)} not used: {they_are} for a new table, and table "
                    f"{table_id} keeps its own rules (below); quit it to open a new one.",
                    "yellow",
                ),
            )
        return table_id
    if options.table_id is not None:
        for elsewhere in welcome.tables:
            # This client plays one table: a seat left at another plays on by itself.
            say(
                console,
                options,
                Text(
                    f"You are still seated at table {elsewhere} from an earlier session: "
                    "its turns are checked or folded for you until you go back to it "
                    f"({command_name()} play --server {conn.url} --table {elsewhere}) "
                    "and quit.",
                    "yellow",
                ),
            )
        joined = await conn.join_table(options.table_id, options.buy_in)
        say(
            console,
            options,
            Text(f"You sat down at table {joined.table_id} with {chips(joined.buy_in)} chips."),
        )
        return joined.table_id
    check_balance(welcome, options.buy_in)
    table, _ = await conn.open_table(options.table, options.buy_in)
    say(
        console,
        options,
        Text(
            f"Table {table.table_id}: {table.options.seats} seats, "
            f"ante {chips(table.options.ante)}, {chips(options.buy_in)} chips to play with."
        ),
    )
    if table.free_seats > 1:  # counted before this player sat down
        joining = (f"{command_name()} play --server {conn.url}", f"--table {table.table_id}")
        say(console, options, Text(join_with(joining, console), "dim"))
    return table.table_id


def join_with(command: tuple[str, str], console: Console) -> str:
    """The line that tells others how to join, laid out to be copied whole: on one line
    where it fits (and always into a pipe), else the command on a line of its own, else
    broken before ``--table`` as a shell reads it still (a backslash at the line's end).
    Wrapped by rich where a space falls, it was copied as two commands."""
    whole = " ".join(command)
    if console.soft_wrap or cell_len(f"Others join with: {whole}") <= console.width:
        return f"Others join with: {whole}"
    if cell_len(f"  {whole}") <= console.width:
        return f"Others join with:\n  {whole}"
    return f"Others join with:\n  {command[0]} \\\n    {command[1]}"


@contextlib.contextmanager
def waiting_said(console: Console, options: PlayOptions) -> Iterator[None]:
    """While the bot plays, say so when its seat waits for another player: a table with
    nobody else seated deals nothing, and the run would look stuck."""

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            line = record.getMessage()
            say(console, options, Text(f"{line[:1].upper()}{line[1:]}.", "yellow"))

    handler = Said()
    level, propagate = waiting_log.level, waiting_log.propagate
    waiting_log.addHandler(handler)
    waiting_log.setLevel(logging.INFO)
    waiting_log.propagate = False  # said once, not again by the root logger's handler
    try:
        yield
    finally:
        waiting_log.removeHandler(handler)
        waiting_log.setLevel(level)
        waiting_log.propagate = propagate


def command_name() -> str:
    """``qiuqiu`` as this process was started: through ``uv run`` (which puts the path
    of uv in ``UV``, as the README starts it), the command a friend's checkout needs
    too; else as installed."""
    return "uv run qiuqiu" if os.environ.get("UV") else "qiuqiu"


def say(console: Console, options: PlayOptions, text: Text) -> None:
    """A line before the game, in ASCII where the terminal cannot take more (a name, a
    folder, an address may hold anything), as the game's own lines are."""
    console.print(text if options.unicode else render.ascii_only(text))


@contextlib.asynccontextmanager
async def embedded_server(*, fast: bool) -> AsyncIterator[str]:
    """A real server on a free loopback port for as long as the game lasts. A bot
    playing ``--auto`` needs no pauses, nor a limit on how fast it may act."""
    # Imported here: a client of another server has no use for one, and it is a fifth of
    # the client's start.
    from qiuqiu.server.config import ServerConfig
    from qiuqiu.server.gateway import QiuQiuServer

    config = ServerConfig(host="127.0.0.1", port=0, log_level="WARNING", bot_delay=0.6)
    if fast:
        config = config.model_copy(
            update={"hand_pause": 0.05, "bot_delay": 0.0, "rate": 1e6, "burst": 10**6}
        )
    server = QiuQiuServer(config, timing_pauses=False)
    await server.start()
    try:
        yield server.url
    finally:
        await server.stop()


async def typed_lines(source: AsyncIterator[str]) -> AsyncIterator[str]:
    """``source``'s lines, with Ctrl-C read as a line of its own, so leaving is always
    clean and comes before whatever a script still holds."""
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, queue.put_nowait, INTERRUPT + "\n")

    async def pump() -> None:
        async for line in source:
            queue.put_nowait(line)
        queue.put_nowait(None)

    reader = asyncio.create_task(pump())
    try:
        while (line := await queue.get()) is not None:
            yield line
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        reader.cancel()
