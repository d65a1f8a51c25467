"""The command-line flags for a new table's options, and the checks of a name and a
buy-in, shared by ``qiuqiu play``, ``qiuqiu arena`` and bots."""

from __future__ import annotations

import argparse
import re
from collections.abc import Container

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails
from websockets.exceptions import InvalidURI
from websockets.uri import parse_uri

from qiuqiu.protocol import TableOptions
from qiuqiu.protocol.common import MAX_CHIPS, PlayerName, TableId

_NAME: TypeAdapter[str] = TypeAdapter(PlayerName)
_TABLE_ID: TypeAdapter[str] = TypeAdapter(TableId)

# The flags that set a field under another name; the rest are the field with dashes.
_FLAGS = {"dealer_bot": "--no-bot", "betting_rounds": "--rounds", "manual_split": "--split"}
_FIELD = re.compile(r"\b([a-z_]+) \(")
_ADDRESSED_TABLE = re.compile(r"#/table/([A-Za-z0-9_-]{1,32})")


def add_table_options(parser: argparse.ArgumentParser, *, served: bool = True) -> None:
    """The flags of a table's options; without ``served`` (the arena, where contestants
    fill every seat) no ``--no-bot``, and ``--turn-seconds`` only times the answers."""
    defaults = TableOptions()
    table = parser.add_argument_group("a new table's options")
    table.add_argument(
        "--seats", type=int, default=defaults.seats, help="seats at the table, 2-6 (2)"
    )
    if served:
        table.add_argument(
            "--no-bot",
            action="store_true",
            help="no dealer bot: a table for others to join with --table",
        )
    table.add_argument(
        "--ante", type=int, default=defaults.ante, help="chips each seat puts in (%(default)s)"
    )
    table.add_argument(
        "--min-bet",
        type=int,
        default=defaults.min_bet,
        help="least a bet or raise may add (%(default)s)",
    )
    table.add_argument("--max-bet", type=int, help="most a bet or raise may add (no limit)")
    table.add_argument("--max-raises", type=int, help="raises a betting round allows (no limit)")
    table.add_argument("--rounds", type=int, choices=(1, 2), default=1, help="betting rounds (1)")
    table.add_argument(
        "--tie-rule",
        choices=("highest_tile", "split"),
        default=defaults.tie_rule,
        help="equal hands: the highest tile wins, or the pot is split (%(default)s)",
    )
    table.add_argument("--split", action="store_true", help="players cut their own hands")
    table.add_argument(
        "--turn-seconds",
        type=float,
        default=defaults.turn_seconds,
        help=f"seconds a turn lasts; then the server checks or folds ({defaults.turn_seconds:g})"
        if served
        else "the turn clock: an answer slower than this is played, and counted as late, "
        f"since a server would have checked or folded for the bot ({defaults.turn_seconds:g})",
    )
    if not served:
        parser.set_defaults(no_bot=False)


def table_options(args: argparse.Namespace) -> TableOptions:
    """The options the flags ask for; ``ValueError`` saying why if they cannot work."""
    flagged = {
        "seats": args.seats,
        "dealer_bot": not args.no_bot,
        "ante": args.ante,
        "min_bet": args.min_bet,
        "max_bet": args.max_bet,
        "max_raises": args.max_raises,
        "betting_rounds": args.rounds,
        "tie_rule": args.tie_rule,
        "manual_split": args.split,
        "turn_seconds": args.turn_seconds,
    }
    try:
        return TableOptions(**flagged)
    except ValidationError as error:
        reasons = "; ".join(_reason(detail, flagged) for detail in error.errors())
        raise ValueError(f"bad table options: {reasons}") from None


def _reason(detail: ErrorDetails, flagged: Container[str]) -> str:
    """One of pydantic's errors in the flags' words: ``--max-raises must be ... (got -1)``."""
    cause = detail.get("ctx", {}).get("error")
    said = str(cause) if cause is not None else detail["msg"].removeprefix("Input should be ")
    if not detail["loc"]:
        # A check of the options together names fields: "max_bet (5) is below min_bet
        # (10)". Those set by a flag are named by it; the rest (max_buy_in) keep theirs.
        return _FIELD.sub(lambda m: _flag(m[1]) + " (" if m[1] in flagged else m[0], said)
    field = str(detail["loc"][0])
    return f"{_flag(field)} must be {said} (got {detail['input']!r})"


def _flag(field: str) -> str:
    return _FLAGS.get(field, "--" + field.replace("_", "-"))


def player_name(text: str) -> str:
    """``--name``'s type: a name the server takes, or argparse's one-line error."""
    return _valid(_NAME, text)


def table_id(text: str) -> str:
    """``--table``'s type: an id a table can have, or argparse's one-line error in words,
    not pydantic's pattern. The page's address of a table (``...#/table/ID``), the one a
    player may have at hand, is answered with the id in it."""
    try:
        return _TABLE_ID.validate_python(text)
    except ValidationError:
        addressed = _ADDRESSED_TABLE.search(text)
        example = addressed[1] if addressed else "t3c41b5e0"
        raise argparse.ArgumentTypeError(
            f"a table id is 1 to 32 letters, digits, _ or -, such as {example} (got {text!r})"
        ) from None


def _valid(adapter: TypeAdapter[str], text: str) -> str:
    try:
        return adapter.validate_python(text)
    except ValidationError as error:
        said = error.errors()[0]["msg"].removeprefix("Value error, ")
        raise argparse.ArgumentTypeError(f"{said[:1].lower()}{said[1:]} (got {text!r})") from None


def server_url(text: str) -> str:
    """``--server``'s type: a WebSocket address. The page's address (``http://``), or
    the host and port alone, is the one a player has at hand, so the error names the
    one to use instead."""
    if not _is_websocket_address(text):
        raise argparse.ArgumentTypeError(
            f"must be a ws:// or wss:// address, such as {_address_meant(text)} (got {text!r})"
        )
    return text


def _address_meant(text: str) -> str:
    """The WebSocket address ``text``, which is none, most likely means; else an example."""
    scheme, colon, rest = text.partition("://")
    web = {"http": "ws", "https": "wss"}.get(scheme.lower())
    if colon:
        meant = f"{web}://{rest}" if web else ""
    else:
        meant = f"ws://{text}" if text.split() == [text] else ""
    return meant if _is_websocket_address(meant) else "ws://127.0.0.1:8765"


def _is_websocket_address(text: str) -> bool:
    if any(c.isspace() for c in text):
        return False  # websockets takes "ws://hello world" and fails only on connecting
    try:
        parse_uri(text)
    except (InvalidURI, ValueError):
        # ValueError: urllib's, of an address it cannot split ("ws://[::1").
        return False
    return True


def whole_number(text: str) -> int:
    """``int(text)``, refused in words rather than in argparse's, which name the function
    that read it ("invalid hand_count value")."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def chips(text: str) -> int:
    """``--buy-in``'s type: a whole number of chips, 1 or more, that a stack can hold."""
    amount = whole_number(text)
    if not 1 <= amount <= MAX_CHIPS:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_CHIPS:,} chips (got {amount})")
    return amount


def hand_count(text: str) -> int:
    """A number of hands to play: 1 or more."""
    hands = whole_number(text)
    if hands < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more (got {hands})")
    return hands


def new_table_flags(options: TableOptions) -> list[str]:
    """The flags that set ``options`` apart from a new table's defaults."""
    defaults = TableOptions()
    return [
        _FLAGS.get(field, "--" + field.replace("_", "-"))
        for field in TableOptions.model_fields
        if getattr(options, field) != getattr(defaults, field)
    ]


def check_joining(options: TableOptions, joins: str = "--table joins one") -> None:
    """``ValueError`` naming a new table's options that ``--table`` (or what ``joins``
    says) would leave unused: it takes a table as it is."""
    given = new_table_flags(options)
    if given:
        sets = "sets" if len(given) == 1 else "set"
        raise ValueError(
            f"{', '.join(given)} {sets} the options of a table this opens; {joins} with its own"
        )


def check_buy_in(buy_in: int, options: TableOptions) -> None:
    """``ValueError`` unless a table with ``options`` takes ``buy_in``: said before the
    table is opened, rather than refused once it is."""
    if not options.min_buy_in <= buy_in <= options.max_buy_in:
        raise ValueError(
            f"--buy-in must be {options.min_buy_in:,} to {options.max_buy_in:,}"
            f" (the table's buy-ins), not {buy_in:,}"
        )
