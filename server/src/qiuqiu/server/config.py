"""What an operator can set: flags, each with a ``QIUQIU_*`` environment variable.

A flag beats its environment variable, which beats the default. The defaults
are safe on a laptop: listen on localhost only. :class:`ServerConfig` is a
``pydantic-settings`` model, so the environment is read and every value checked
in one place; the flags are made from its fields, and the README's table of
settings is checked against them by a test.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal
from urllib.parse import parse_qs, urlsplit

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from qiuqiu.protocol import MAX_CHIPS
from qiuqiu.server import collector, loops

ENV_PREFIX = "QIUQIU_"
CLIENT_VARIABLES = frozenset({"QIUQIU_CONFIG_DIR"})
"""The clients' variables (``qiuqiu play`` keeps its tokens where one says)."""
QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*")
"""A password in a URL's query, as redis-py reads one from unix:///path?password=..."""


DAY = 86_400
"""The longest any duration setting may be: a longer one is surely a typo, which
would leave a table that never deals again or a seat that is never freed."""


class ServerConfig(BaseSettings):
    # No inf or nan: a lease or a timer that long cannot be sent to Redis or armed.
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, frozen=True, extra="forbid", allow_inf_nan=False
    )

    host: str = Field("127.0.0.1", description="address to listen on (0.0.0.0 for every interface)")
    port: int = Field(
        8765, ge=0, le=65535, description="TCP port (0 picks a free one; the log says which)"
    )
    # Far below MAX_BALANCE: a buy-in keeps room under it for what every table the
    # account sits at may pay back, 10^12 each.
    starting_balance: int = Field(
        1_000,
        ge=0,
        le=MAX_CHIPS,
        description="chips a new account is granted, at most 10^12",
    )
    max_seats_per_account: int = Field(
        8,
        ge=0,
        description="tables one account may sit at at once, on every server sharing the "
        "store; one more join_table or create_table with a buy_in is refused; 0 for no cap",
    )
    max_spectators: int = Field(
        50,
        ge=0,
        description="spectators one table takes at once (its players are none of them); "
        "one more watch_table is refused with too_many_spectators; 0 for no cap",
    )
    max_watched_tables: int = Field(
        10,
        ge=0,
        description="tables one connection may watch at once, on this server or another "
        "sharing the store; one more watch_table is refused with too_many_watched; 0 for "
        "no cap",
    )
    max_frame: int = Field(
        4096, ge=256, description="largest frame accepted in bytes; a bigger one closes with 1009"
    )
    open_timeout: float = Field(
        10.0, gt=0, le=DAY, description="seconds a connection may take to finish its handshake"
    )
    hello_timeout: float = Field(
        10.0,
        gt=0,
        le=DAY,
        description="seconds a connection may stay open without a successful hello; "
        "then it closes with 1008 (a hello whose new account the store has or may have "
        "made is waited for)",
    )
    max_connections_per_address: int = Field(
        256,
        ge=0,
        description="open connections one IP address may hold; one more is closed with 1008 "
        "at once (and one more socket while as many are in their handshake, dropped); 0 for "
        "no cap (behind a reverse proxy every client has the proxy's address)",
    )
    new_accounts_per_address: int = Field(
        100,
        ge=0,
        description="accounts one IP address may open an hour (hello with a name), and at "
        "once; one more is refused with too_many_accounts; 0 for no cap (behind a reverse "
        "proxy every client has the proxy's address)",
    )
    rate: float = Field(
        20.0, gt=0, description="messages per second a connection may send on average"
    )
    burst: int = Field(
        40, ge=1, description="messages a connection may send at once; more closes with 1008"
    )
    allowed_origins: Annotated[tuple[str, ...], NoDecode] = Field(
        (),
        description="comma-separated browser origins allowed to connect (https://example.com); "
        "empty allows any; the page this server serves and clients that send no Origin, "
        "such as bots, are always allowed",
    )
    # Not 0: on uvloop a timer of 0 s runs before the creator of a table sits down, so
    # every new table closed at once, its creator told table_closed.
    grace: float = Field(
        60.0,
        gt=0,
        le=DAY,
        description=(
            "seconds a disconnected player keeps the seat, and a table nobody sits at"
            " (or buys into again after a bust) stays open"
        ),
    )
    hand_pause: float = Field(2.0, ge=0, le=DAY, description="seconds between hands")
    bot_delay: float = Field(
        0.5,
        ge=0,
        le=DAY,
        description="seconds the dealer bot waits before acting, at most a quarter of its turn",
    )
    lease: float = Field(
        5.0,
        gt=0,
        le=DAY,
        description="seconds a table's lease lasts unless renewed: a dead server's tables "
        "move to another server after this",
    )
    relay_timeout: float = Field(
        2.0,
        gt=0,
        le=DAY,
        description="seconds a message for a table another server hosts waits for that "
        "server's first word; then the client is told the outcome is unknown",
    )
    stop_timeout: float = Field(
        10.0,
        gt=0,
        le=DAY,
        description="seconds a stopping server spends closing its tables; what is not "
        "written by then is left for the next start, which voids it with every chip back",
    )
    store_timeout: float = Field(
        2.0,
        gt=0,
        le=DAY,
        description="seconds a call to Redis may take before it counts as Redis being away",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="least severe log event written: DEBUG, INFO, WARNING or ERROR"
    )
    log_format: Literal["json", "text"] = Field(
        "json",
        description="json: one JSON object a line, naming table and hand; "
        "text: plain lines for a terminal",
    )
    gc_threshold: int | None = Field(
        None,
        ge=1,
        description="allocations the garbage collector lets pass before it collects its "
        "youngest generation; unset: 200 with young, else Python's own 700; with young a "
        "lower one keeps each collection short, with start or full a higher one makes "
        "fewer collections, and rarer full ones",
    )
    gc_freeze: collector.FreezeChoice = Field(
        "auto",
        description="what the garbage collector stops walking: young freezes what survives "
        "any collection, so that none walks more than what was made since the last; full "
        "freezes what survives each full collection, so the next is short; start only what "
        "start-up made; auto is young on uvloop and start on asyncio's loop, whose closed "
        "sockets keep themselves in reference cycles",
    )
    loop: loops.LoopChoice = Field(
        "auto",
        description="event loop: auto takes uvloop when it is installed (the uvloop extra), "
        "asyncio the standard library's; uvloop when it is not installed is an error",
    )
    strategies: str | None = Field(
        None,
        description="a folder of more solved strategies for the dealer bot, made with "
        "python -m solver --out; the package's own are always loaded; a folder without "
        "a .qqs file is a warning",
    )
    redis_url: str | None = Field(
        None,
        description="keep accounts, tables and hands in this Redis (redis://host:port/db, "
        "or unix:///path/to/redis.sock?db=N); "
        "unset keeps them in memory until the process stops",
    )

    @field_validator("allowed_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(origin.strip() for origin in value.split(",") if origin.strip())
        return value

    @field_validator("allowed_origins")
    @classmethod
    def _origins_as_browsers_send_them(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # The Origin header is compared as it comes, scheme://host[:port] and nothing
        # more: anything else would match no browser, and refuse them all.
        for origin in value:
            if origin == "*":
                raise ValueError("'*' is not an origin: leave it empty to allow any")
            url = urlsplit(origin)
            if not (url.scheme and url.netloc) or origin != f"{url.scheme}://{url.netloc}":
                raise ValueError(
                    f"{origin!r} is not an origin: a browser sends scheme://host[:port], "
                    "with no path, not even a /"
                )
        return value

    @field_validator("host")
    @classmethod
    def _some_host(cls, value: str) -> str:
        # An empty host listens on every interface: not what an empty variable suggests.
        if not value.strip():
            raise ValueError("empty: give an address (0.0.0.0 for every interface)")
        return value

    @field_validator("loop")
    @classmethod
    def _loop_installed(cls, value: loops.LoopChoice) -> loops.LoopChoice:
        loops.resolve(value)  # refuses uvloop when it is missing
        return value

    @field_validator("strategies")
    @classmethod
    def _strategies_folder(cls, value: str | None) -> str | None:
        if value is not None and not os.path.isdir(value):
            raise ValueError(f"{value!r} is not a folder")
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_address(cls, value: str | None) -> str | None:
        return value if value is None else redis_address(value)

    # A choice is taken in any case, as a log level is: `--log-format TEXT` said "Input
    # should be 'json' or 'text'" where `--log-level warning` was taken.
    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("log_format", "gc_freeze", "loop", mode="before")
    @classmethod
    def _lower_choice(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Flags (passed as init arguments) then the environment: no .env or secrets files,
        # so what the server runs with is all on its command line and in `env`.
        return init_settings, env_settings


def redis_address(value: str) -> str:
    """``value`` if it is a Redis URL redis-py takes as meant; else ``ValueError``."""
    url = urlsplit(value)
    if url.scheme not in ("redis", "rediss", "unix"):
        raise ValueError("a Redis URL starts with redis://, rediss:// or unix://")
    url.port  # noqa: B018 (a port that is not a number raises ValueError, naming it)
    # A socket's path is no database: its database comes after db=, as it may for any.
    database = "" if url.scheme == "unix" else url.path.strip("/")
    if database and not database.isdigit():
        # redis-py would quietly use database 0.
        raise ValueError(f"the database after the host is a number, not {database!r}")
    for given in parse_qs(url.query).get("db", []):
        if not given.isdigit():
            raise ValueError(f"the database after db= is a number, not {given!r}")
    return value


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def env_name(name: str) -> str:
    return ENV_PREFIX + name.upper()


def parse_config(argv: Sequence[str] | None = None) -> ServerConfig:
    """The configuration from flags in ``argv`` and ``QIUQIU_*`` environment variables.
    A value that does not fit exits with status 2, naming the flag or variable."""
    parser = argparse.ArgumentParser(
        prog="qiuqiu-server",
        allow_abbrev=False,
        description="Serve QiuQiu tables over WebSocket.",
        epilog="Every flag can also be set in the environment as QIUQIU_<FLAG>, "
        "e.g. QIUQIU_PORT=9000.",
    )
    for name, info in ServerConfig.model_fields.items():
        default = "unset" if info.default is None else _shown(info.default)
        parser.add_argument(
            flag(name),
            dest=name,
            default=argparse.SUPPRESS,
            metavar=name.upper(),
            help=f"{info.description} (default {default}; env {env_name(name)})",
        )
    flags = vars(parser.parse_args(argv))
    try:
        return ServerConfig(**flags)
    except ValidationError as invalid:
        problems = []
        for error in invalid.errors():
            name = str(error["loc"][0])
            if name in flags:
                where = f"{flag(name)} {secret_hidden(flags[name])!r}"
            else:
                where = f"{env_name(name)}={secret_hidden(os.environ.get(env_name(name)))!r}"
            # pydantic's "Value error, " says nothing the operator can use.
            problems.append(f"{where}: {error['msg'].removeprefix('Value error, ')}")
        parser.error("; ".join(problems))


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """A line for each ``QIUQIU_*`` variable in ``environ`` that is no setting, naming the
    setting it most looks like: a misspelt variable is otherwise ignored without a word,
    and a server meant for Redis runs in memory. The clients' own variable is left out:
    it may well be set in the shell that starts a server."""
    settings = [env_name(name) for name in ServerConfig.model_fields]
    lines = []
    # Without the prefix every name shares, which alone makes two names look alike
    # (QIUQIU_SCREENSHOTS and QIUQIU_GC_THRESHOLD).
    bare = [setting.removeprefix(ENV_PREFIX) for setting in settings]
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX) or name in settings or name in CLIENT_VARIABLES:
            continue
        close = difflib.get_close_matches(name.removeprefix(ENV_PREFIX), bare, n=1)
        hint = f"; did you mean {ENV_PREFIX}{close[0]}?" if close else ""
        lines.append(f"{name} is not a setting of qiuqiu-server and is ignored{hint}")
    return lines


def secret_hidden(value: str | None) -> str | None:
    """``value`` with the password of a URL in it starred out, for an error message."""
    if value is None:
        return value
    value = QUERY_PASSWORD.sub(r"\1***", value)
    try:
        password = urlsplit(value).password
    except ValueError:
        return value
    return value if not password else value.replace(f":{password}@", ":***@", 1)


def _shown(value: object) -> str:
    if isinstance(value, tuple):
        return ",".join(value) or "empty"
    if isinstance(value, float):
        return f"{value:g}"  # 10 seconds, as README says, not 10.0
    return str(value)
