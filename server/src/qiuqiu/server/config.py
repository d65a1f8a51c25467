"""What an operator can set: flags, each with a ``QIUQIU_*`` environment variable.

A flag beats its environment variable, which beats the default. The defaults
are safe on a laptop: listen on localhost only.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any


def _option(default: Any, help: str, choices: tuple[str, ...] | None = None) -> Any:
    return field(default=default, metadata={"help": help, "choices": choices})


@dataclass(frozen=True, slots=True)
class ServerConfig:
    host: str = _option("127.0.0.1", "address to listen on (0.0.0.0 for every interface)")
    port: int = _option(8765, "TCP port (0 picks a free one; the log says which)")
    starting_balance: int = _option(1_000, "chips a new account is granted")
    max_frame: int = _option(4096, "largest frame accepted in bytes; more closes with 1009")
    rate: float = _option(20.0, "messages per second a connection may send on average")
    burst: int = _option(40, "messages a connection may send at once; more closes with 1008")
    grace: float = _option(60.0, "seconds a disconnected player keeps the seat")
    hand_pause: float = _option(2.0, "seconds between hands")
    bot_delay: float = _option(0.5, "seconds the dealer bot waits before acting")
    lease: float = _option(
        5.0, "seconds a table's lease lasts unless renewed: a dead server's tables move after it"
    )
    log_level: str = _option("INFO", "logging level", ("DEBUG", "INFO", "WARNING", "ERROR"))
    redis_url: str | None = _option(
        None,
        "keep accounts, tables and hands in this Redis (redis://host:port/db); "
        "unset keeps them in memory until the process stops",
    )


def parse_config(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> ServerConfig:
    environ = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(
        prog="qiuqiu-server",
        description="Serve QiuQiu tables over WebSocket.",
        epilog="Every flag can also be set in the environment as QIUQIU_<FLAG>, "
        "e.g. QIUQIU_PORT=9000.",
    )
    for f in fields(ServerConfig):
        env = f"QIUQIU_{f.name.upper()}"
        default: Any = f.default
        kind = str if default is None else type(default)
        try:
            value = kind(environ[env]) if env in environ else f.default
        except ValueError:
            parser.error(f"{env}={environ[env]!r} is not a valid {kind.__name__}")
        choices = f.metadata["choices"]
        if choices and value not in choices:
            parser.error(f"{env}={value!r} is not one of {', '.join(choices)}")
        parser.add_argument(
            f"--{f.name.replace('_', '-')}",
            type=kind,
            default=value,
            help=f"{f.metadata['help']} (default {f.default}; env {env})",
            choices=f.metadata.get("choices"),
        )
    return ServerConfig(**vars(parser.parse_args(argv)))
