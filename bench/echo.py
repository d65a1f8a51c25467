"""The floor of the server benchmark: a bare ``websockets`` server that answers.

Run by :mod:`bench.load` as its own process, so its CPU time and memory are its own::

    python -m bench.echo --port N [--max-frame 4096] [--loop auto|asyncio|uvloop]

It serves WebSocket the way ``qiuqiu-server`` does (the asyncio implementation
of ``websockets``, no compression, the same largest frame and handshake
timeout) and does nothing else. A request is a text frame ``"K SIZE ..."``: it
is answered with K frames of SIZE bytes, so the load generator can make it send
as many frames, of the same size, for each frame it receives as the QiuQiu
server sent in the same run. With K = 1 and SIZE the request's own length it
is a plain echo. It runs on the event loop the server runs on in the same run
(:mod:`qiuqiu.server.loops`), so that a faster loop lowers the floor too.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Sequence

from websockets.asyncio.server import ServerConnection, serve

from bench import plain
from qiuqiu.server import loops


@functools.cache
def payload(size: int) -> str:
    return "x" * size


async def answer(connection: ServerConnection) -> None:
    async for request in connection:
        count, size, _ = str(request).split(" ", 2)
        reply = payload(int(size))
        for _ in range(int(count)):
            await connection.send(reply)


async def run(port: int, max_frame: int) -> None:
    async with serve(
        answer, "127.0.0.1", port, max_size=max_frame, open_timeout=10.0, compression=None
    ) as server:
        await server.serve_forever()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.echo",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--max-frame", type=int, default=4096)
    parser.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto")
    args = parser.parse_args(argv)
    loops.run(run(args.port, args.max_frame), args.loop)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
