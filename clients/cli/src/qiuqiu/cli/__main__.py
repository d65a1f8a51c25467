"""``qiuqiu``: play QiuQiu in the terminal.

``qiuqiu play`` starts a server inside this process and seats you against the
dealer bot; ``qiuqiu play --server ws://host:port`` plays on a running server;
``--auto N`` lets a simple bot play N hands and prints a summary; ``--watch ID``
watches a table of that server, seated nowhere.
``qiuqiu arena BOT BOT ...`` plays bots against each other or the dealer bot
in this process, without a server (see :mod:`qiuqiu.cli.arena`).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import logging
import signal
import sys
import threading
from collections.abc import Sequence

from rich.console import Console

from qiuqiu.cli import render
from qiuqiu.cli.arena.command import add_arena, run_arena
from qiuqiu.cli.arguments import (
    add_table_options,
    chips,
    hand_count,
    player_name,
    server_url,
    table_id,
)
from qiuqiu.cli.bot import Summary
from qiuqiu.cli.errors import BotFailed, ClientError, CutShort
from qiuqiu.cli.play import PlayOptions, play
from qiuqiu.protocol import DealTampered


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="qiuqiu", description="Play QiuQiu (KiuKiu) in the terminal.", allow_abbrev=False
    )
    commands = top.add_subparsers(dest="command", required=True)
    cmd = commands.add_parser(
        "play",
        allow_abbrev=False,
        help="play at a table against the dealer bot",
        description="Play QiuQiu, or watch a table of a server with --watch. Without "
        "--server, a server runs inside this process (its accounts last as long as it does).",
    )
    cmd.add_argument(
        "--server",
        type=server_url,
        metavar="URL",
        help="a running server, e.g. ws://127.0.0.1:8765",
    )
    cmd.add_argument("--name", type=player_name, help="your name at the table (your login name)")
    cmd.add_argument(
        "--table", type=table_id, metavar="ID", help="join this table instead of opening one"
    )
    cmd.add_argument(
        "--watch",
        type=table_id,
        metavar="ID",
        help="watch this table on --server as a spectator, without a seat (no tile is "
        "shown before the showdown); help and quit are its commands",
    )
    cmd.add_argument("--buy-in", type=chips, help="chips to sit down with (500)")
    add_table_options(cmd)
    cmd.add_argument("--auto", type=hand_count, metavar="N", help="let a simple bot play N hands")
    cmd.add_argument("--json", action="store_true", help="with --auto: the summary as JSON")
    cmd.add_argument("--ascii", action="store_true", help="ASCII only: tiles as [6|1], not U+1F031")
    cmd.add_argument("--plain", action="store_true", help="one line per event, no live table view")
    cmd.add_argument(
        "--new-account", action="store_true", help="do not resume the account saved for --server"
    )
    cmd.set_defaults(command_parser=cmd)
    add_arena(commands)
    return top


def _default_name() -> str:
    """The login name, from the environment or else the user database."""
    try:
        login = getpass.getuser()
    except (OSError, KeyError):  # no name anywhere, as in some containers
        login = ""
    return (login or "Player").capitalize()[:24]


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill`, `timeout`), which the arena takes as Ctrl-C."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    args, unknown = parser().parse_known_args(argv)
    if unknown:
        # Said by the command's own parser: its usage, not the top one's, names the
        # flags it has.
        args.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command == "arena":
        # The arena runs its bots in this thread, without a loop: a handler set here runs
        # between two of their lines, as Ctrl-C's does.
        in_main = threading.current_thread() is threading.main_thread()
        was = signal.signal(signal.SIGTERM, _terminate) if in_main else None
        try:
            return run_arena(args)
        except ValueError as error:
            print(f"qiuqiu arena: {error}", file=sys.stderr)
            return 2
        except BotFailed as failed:
            print(f"qiuqiu arena: {failed}{failed.bot_traceback()}", file=sys.stderr)
            return 1
        except KeyboardInterrupt as stopped:
            # The matches played to their end were printed as each ended.
            terminated = isinstance(stopped, Terminated)
            how = "terminated" if terminated else "interrupted"
            print(f"qiuqiu arena: {how}; the match in play is not reported", file=sys.stderr)
            return 143 if terminated else 130
        finally:
            if was is not None:
                signal.signal(signal.SIGTERM, was)
    # With --json, standard output carries the summary alone: everything else goes to stderr.
    console = Console(highlight=False, emoji=False, stderr=args.json)
    # Piped, an event is one line however long, not cut at rich's 80 columns: a file or
    # a program reads lines, and a terminal wraps them itself. So does a dumb terminal,
    # whose width rich does not read (it takes 80 columns).
    console.soft_wrap = not console.is_interactive
    args.name_given, args.name = args.name is not None, args.name or _default_name()
    # Why the command stopped goes where argparse's own refusals go, and not into a file
    # that standard output was sent to.
    errors = Console(highlight=False, emoji=False, stderr=True)
    errors.soft_wrap = not errors.is_interactive
    try:
        options = PlayOptions.from_args(args, console)
    except ValueError as error:
        errors.print(f"qiuqiu: {error}", style="red")
        return 2
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("websockets").setLevel(logging.ERROR)
    # Filled in as --auto's hands end: a run stopped early still reports those played.
    summary = Summary()
    status = 0
    try:
        asyncio.run(play(options, console, summary))
    except CutShort:
        # Said in the game's own words already; the status tells a script.
        status = 1
    except ClientError as error:
        errors.print(f"qiuqiu: {error}", style="bold red")
        status = 1
    except DealTampered as tampered:
        errors.print(render.tampered(tampered))
        status = 3
    except KeyboardInterrupt:
        if options.auto is not None:
            # The seat's connection is dropped, as any client's, and the server treats it so.
            errors.print("qiuqiu: interrupted", style="bold red")
        status = 130
    if options.auto is not None and (status == 0 or summary.hands or summary.voided):
        print_summary(summary, console, as_json=args.json)
    return status


def print_summary(summary: Summary, console: Console, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary.as_dict()))
        return
    # No balance when the run stopped before it left the table: part of it is still there.
    balance = "" if summary.balance is None else f" Balance: {render.chips(summary.balance)}."
    console.print(
        f"Played {summary.hands} hand{'s' * (summary.hands != 1)}: "
        f"won {summary.won}, lost {summary.lost}, net {summary.net:+,} chips.{balance}"
    )
    if summary.voided:
        console.print(
            f"{summary.voided} more hand{'s were' if summary.voided != 1 else ' was'} "
            "called off by the server, every chip back."
        )
    console.print(f"Deals verified: {summary.verified} of {summary.hands}.", style="green")
    if (rebuilt := summary.shuffle_verified) is not None:
        console.print(
            f"The table's shuffle verified: {rebuilt} hand{'s' * (rebuilt != 1)} "
            "rebuilt from the revealed seed.",
            style="green",
        )


if __name__ == "__main__":
    sys.exit(main())
