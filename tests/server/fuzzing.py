"""What the protocol-boundary fuzz suite (``test_fuzz.py``) stands on.

- :class:`Arena`: a real server on a free port, run by an event loop of its own in a
  thread, with innocent players at two tables who play on, hand after hand, for as
  long as the test runs. The test itself stays synchronous, so that hypothesis can
  drive it example by example while the server and the innocents never stop.
- :meth:`Arena.exchange`: one fuzz client over a real WebSocket connection. Every
  frame the server sends it must be a server message, and every ``error`` must carry
  a code from PROTOCOL.md's table.
- Strategies for what a hostile client sends: any JSON value, the right ``type`` with
  the wrong fields, valid messages with a field mutated, nasty text, deep nesting.
- :meth:`Arena.assert_unharmed`: the innocents kept playing and saw no error, no chip
  was made or lost, every innocent stack moved only by that player's own hands, and
  nothing was logged at ERROR (or with a traceback) by the server or ``websockets``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import re
import secrets
import threading
import typing
from collections.abc import Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import strategies as st
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection as SyncConnection
from websockets.sync.client import connect as connect_sync

from qiuqiu.protocol import PROTOCOL_VERSION, TableOptions, decode_server
from qiuqiu.protocol.client import AnyClientMessage
from qiuqiu.server import views
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.memory_store import MemoryStore
from tests.server.conftest import WAIT, Client, chip_total, my_turn

T = TypeVar("T")
Message = dict[str, Any]

PROTOCOL = Path(__file__).resolve().parents[2] / "PROTOCOL.md"


def _section(title: str) -> str:
    return PROTOCOL.read_text().split(title, 1)[1].split("\n## ", 1)[0]


ERROR_CODES = frozenset(re.findall(r"^\| `([a-z_]+)` \|", _section("## Error codes"), re.M))
"""Every code an ``error`` may carry, as PROTOCOL.md documents them."""
CLOSE_CODES = frozenset(
    int(c) for c in re.findall(r"^\| (\d{4}) \|", _section("## Transport"), re.M)
)
"""The close codes PROTOCOL.md documents."""
FRAME_CODES = frozenset({"bad_json", "unknown_type", "invalid_message"})
"""The codes of a text frame that is not a message at all."""

MODELS: tuple[Any, ...] = typing.get_args(typing.get_args(AnyClientMessage)[0])
CLIENT_TYPES = tuple(str(m.model_fields["type"].default) for m in MODELS)
FIELD_NAMES = tuple(
    sorted({name for m in MODELS for name in m.model_fields} | set(TableOptions.model_fields))
)

# -- JSON as a hostile client writes it -----------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """JSON text written as it is: a number no Python value prints as (``1e400``),
    or something that is not JSON at all (``0x10``)."""

    text: str


@dataclass(frozen=True)
class Pairs:
    """An object written from its pairs, so that a key may repeat."""

    items: tuple[tuple[str, Any], ...]


def to_json(value: Any, *, ascii: bool = True) -> str:
    """``value`` as JSON text; ``NaN`` and ``Infinity`` come out as the literals."""
    match value:
        case Raw(text):
            return text
        case Pairs(items):
            inner = ", ".join(
                f"{to_json(k, ascii=ascii)}: {to_json(v, ascii=ascii)}" for k, v in items
            )
            return "{" + inner + "}"
        case dict():
            return to_json(Pairs(tuple(value.items())), ascii=ascii)
        case list() | tuple():
            return "[" + ", ".join(to_json(v, ascii=ascii) for v in value) + "]"
        case _:
            return json.dumps(value, ensure_ascii=ascii)


def text_frame(value: Any, *, ascii: bool = True) -> str:
    """``value`` as a text frame. Unescaped text is kept only when it can be sent as
    UTF-8: a lone surrogate goes out as a ``\\ud800`` escape instead."""
    frame = to_json(value, ascii=ascii)
    try:
        frame.encode()
    except UnicodeEncodeError:
        return to_json(value, ascii=True)
    return frame


def plain_json(frame: str) -> Any:
    """``frame`` parsed by the standard library. Raises ``ValueError`` (or
    ``RecursionError``) for anything that is not JSON. Like the server's parser, it
    takes the ``NaN`` and ``Infinity`` literals; no field of a message accepts them."""
    return json.loads(frame)


HUGE_INTS = (
    2**31,
    2**53,
    2**53 + 1,
    2**63,
    2**64,
    -(2**63),
    -(2**64),
    10**12 + 1,
    10**400,
    -(10**400),
)
RAW_NUMBERS = (
    "1e400",
    "-1e400",
    "1e-400",
    "NaN",
    "Infinity",
    "-Infinity",
    "-0",
    "0.0",
    "1.0",
    "1E2",
    "2e53",
    "1" + "0" * 400,
    "0x10",
    "01",
    "+1",
    ".5",
    "nan",
    "True",
    "None",
    "undefined",
)
NASTY_CHARS = (
    "\x00",
    "\x07",
    "\x1b[31m",
    "\x7f",
    "\u0085",
    "\u00a0",
    "\u200b",
    "\u200d",
    "\u200e",
    "\u202e",
    "\u2066",
    "\u2028",
    "\u3000",
    "\ufeff",
    "\ufffd",
    "\uffff",
    "\U0010ffff",
    "\U0001f600",
    "\U0001f469\u200d\U0001f4bb",
    "\ud800",
    "\udfff",
    "e\u0301",
    "\ufb01",
    "\uff37",
    "\u0645\u0631\u062d\u0628\u0627",
    " ",
    "  ",
)

nasty_text = st.lists(st.sampled_from(NASTY_CHARS) | st.characters(), max_size=30).map("".join)
"""Text full of control, format, invisible, right-to-left and surrogate characters."""
long_text = st.sampled_from((65, 129, 1000, 5000)).map(lambda n: "x" * n)
scalars: st.SearchStrategy[Any] = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from(HUGE_INTS)
    | st.floats()
    | st.sampled_from(RAW_NUMBERS).map(Raw)
    | nasty_text
    | long_text
    | st.sampled_from(CLIENT_TYPES)
)
keys = st.sampled_from(FIELD_NAMES) | nasty_text
json_values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(keys, inner, max_size=4)
        | st.lists(st.tuples(keys, inner), max_size=4).map(lambda kv: Pairs(tuple(kv)))
    ),
    max_leaves=12,
)
"""Any JSON value, and some that are not quite JSON (raw tokens, repeated keys)."""


@st.composite
def wrong_shapes(draw: st.DrawFn) -> Any:
    """A known ``type`` with fields of any name and any value, or none at all."""
    fields = draw(st.dictionaries(keys, json_values, max_size=5))
    return {**fields, "type": draw(st.sampled_from(CLIENT_TYPES))}


def leaves(message: Message, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, value in message.items():
        yield (*path, key)
        if isinstance(value, dict):
            yield from leaves(value, (*path, key))


def mutate(message: Message, path: Sequence[str], how: str, value: Any) -> Message:
    """A copy of ``message`` with the field at ``path`` replaced by ``value``, deleted,
    or joined by an extra field called ``value``."""
    copy = dict(message)
    head, *rest = path
    if rest:
        inner = copy.get(head)
        copy[head] = mutate(inner if isinstance(inner, dict) else {}, rest, how, value)
    elif how == "replace":
        copy[head] = value
    elif how == "delete":
        copy.pop(head, None)
    else:
        copy[str(value)[:40] or "extra"] = 1
    return copy


BOUNDARY_INTS = (
    -1,
    0,
    1,
    2,
    5,
    6,
    7,
    99,
    100,
    10_000,
    10_001,
    10**12,
    10**12 + 1,
    2**53,
    2**53 + 1,
)


def values_in(message: Message) -> Iterator[Any]:
    for value in message.values():
        yield from values_in(value) if isinstance(value, dict) else (value,)


@st.composite
def mutated(draw: st.DrawFn, templates: Sequence[Message]) -> Message:
    """One of ``templates`` (each a valid message) with up to three fields replaced by
    any JSON value (a huge number, a float, ``NaN``, a bool, ``null``, nasty or long
    text, a nested value) or by a plausible one (a boundary number, another message's
    value), deleted, or joined by a field no message has."""
    plausible = st.sampled_from(BOUNDARY_INTS) | st.sampled_from(
        [v for t in templates for v in values_in(t)]
    )
    message = dict(draw(st.sampled_from(templates)))
    message["id"] = draw(st.integers(0, 2**53) | st.text(min_size=1, max_size=64))
    for _ in range(draw(st.integers(0, 3))):
        # Not the type: the other tests send every type with every shape.
        paths = [p for p in leaves(message) if p != ("type",)]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        how = draw(st.sampled_from(("replace", "replace", "replace", "delete", "extra")))
        message = mutate(message, path, how, draw(json_values | plausible))
    return message


def nested(depth: int, opener: str, closed: bool, inside: str) -> str:
    """A frame ``depth`` containers deep, the containers closed or not, alone or as the
    value of a message field."""
    closer = {"[": "]", '{"a": ': "}"}[opener]
    value = opener * depth + (closer * depth if closed else "")
    match inside:
        case "id":
            return '{"type": "list_tables", "id": ' + value + "}"
        case "options":
            return '{"type": "create_table", "options": {"seats": ' + value + "}}"
        case _:
            return value


# -- the arena: a server, and innocents playing at it --------------------------------------

BUY_IN = 10_000


@dataclass
class Innocent:
    """A player who only wants to play: answers every turn of theirs, at one table."""

    name: str
    client: Client
    table_id: str
    seat: int
    account_id: str
    problems: list[str] = field(default_factory=list)
    task: asyncio.Task[None] | None = None

    async def play(self, first: Message | None) -> None:
        """Check when it can; bet the least on odd hands and call a bet, so chips move."""
        message = first
        while True:
            if message is None:
                message = await self._next()
            if message is not None:
                await self._act(message)
            message = None

    async def _next(self) -> Message | None:
        """The next turn of this seat; anything else it waited for is a problem."""
        try:
            message = await self.client.wait(
                lambda m: (
                    m["type"] in ("error", "table_left", "table_closed")
                    or (
                        m["type"] == "turn_started"
                        and m["table_id"] == self.table_id
                        and "legal" in m
                    )
                )
            )
        except TimeoutError:
            self.problems.append(f"no turn for {WAIT} seconds")
            return None
        if message["type"] != "turn_started":
            self.problems.append(f"got {message}")
            return None
        return message

    async def _act(self, message: Message) -> None:
        legal, hand_id = message["legal"], message["hand_id"]
        act: dict[str, Any] = {"table_id": self.table_id, "hand_id": hand_id}
        if "bet" in legal and hand_id % 2:
            await self.client.send("bet", amount=legal["bet"]["min"], **act)
        elif legal.get("check"):
            await self.client.send("check", **act)
        elif "call" in legal:
            await self.client.send("call", **act)
        else:
            await self.client.send("fold", **act)

    def hands(self) -> list[tuple[Message, Message]]:
        """Each hand this seat saw from start to end: (``hand_started``, ``hand_ended``)."""
        mine = [m for m in self.client.frames if m.get("table_id") == self.table_id]
        started = {m["hand_id"]: m for m in mine if m["type"] == "hand_started"}
        return [(started[m["hand_id"]], m) for m in mine if m["type"] == "hand_ended"]

    def stack(self, message: Message) -> int:
        return next(int(s["amount"]) for s in message["stacks"] if s["seat"] == self.seat)


class LogWatch(logging.Handler):
    """Keeps every record of the server, ``websockets`` or ``asyncio`` logged at ERROR or
    above, or with a traceback: a hostile client must never get that far."""

    WATCHED = ("qiuqiu", "websockets", "asyncio")

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.bad: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not record.name.startswith(self.WATCHED):
            return
        if record.levelno >= logging.ERROR or record.exc_info:
            self.bad.append(f"{record.name}: {record.getMessage()}\n{self.format(record)}")


@dataclass
class Exchange:
    """What one fuzz connection got for its frames: the messages before the probe's
    answer and, if the server closed the connection instead, its close code."""

    replies: list[Message]
    close_code: int | None
    closed: bool

    @property
    def first(self) -> Message:
        assert self.replies, "the frame got no answer"
        return self.replies[0]


class Arena:
    """A real server on a free port, its loop in a thread, and four innocent players:
    Ann against the dealer bot, Bob against Cy at a table without the bot. By the
    time the constructor returns, both tables have a hand in play."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.logs = LogWatch()
        logging.getLogger().addHandler(self.logs)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="arena", daemon=True)
        self.thread.start()
        self.server = QiuQiuServer(config, store=MemoryStore(), rng=random.Random(2026))
        self.innocents: list[Innocent] = []
        self.stopped = False
        try:
            self.call(self._open())
        except BaseException:
            self.close()
            raise

    def call(self, work: Coroutine[Any, Any, T], timeout: float = 4 * WAIT) -> T:
        """Run ``work`` on the arena's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def address(self) -> tuple[str, int]:
        return self.config.host, self.server.port

    @property
    def tables(self) -> tuple[str, str]:
        """The bot table, then the table without the bot."""
        return self.innocents[0].table_id, self.innocents[1].table_id

    async def _open(self) -> None:
        await self.server.start()
        # Ann calls every bet: at no limit the dealer bot could win her stack in a hand
        # and close her table. With bets of at most 20 she loses at most 40 chips a hand.
        ann = await self._innocent("Ann", None, {"max_bet": 20})
        bob = await self._innocent("Bob", None, {"seats": 2, "dealer_bot": False})
        cy = await self._innocent("Cy", bob.table_id, {})
        # The first to act at each table: Ann (the bot is the button), and Bob (seat 0).
        first = [await my_turn(p.client, p.table_id) for p in (ann, bob)]
        self.innocents = [ann, bob, cy]
        for player, turn in zip(self.innocents, [*first, None], strict=True):
            player.task = asyncio.create_task(player.play(turn))

    async def _innocent(self, name: str, table_id: str | None, options: Message) -> Innocent:
        client = Client(await connect(self.server.url))
        welcome = await client.hello(name)
        if table_id is None:
            created = await client.reply("create_table", options=options, buy_in=BUY_IN)
            table_id = created["table"]["table_id"]
        else:
            await client.send("join_table", table_id=table_id, buy_in=BUY_IN)
        joined = await client.expect("table_joined", table_id=table_id)
        return Innocent(name, client, table_id, joined["seat"], welcome["account_id"])

    # -- the fuzz client ---------------------------------------------------------------

    def exchange(
        self, frames: Sequence[str | bytes], *, identified: bool = True, utf8: bool = True
    ) -> Exchange:
        """Send ``frames`` on a new connection (after a ``hello`` if ``identified``),
        then a probe: the answers up to the probe's, or up to the server's close.
        ``utf8=False`` sends bytes as text frames as they are, valid UTF-8 or not."""
        probe = f"probe-{secrets.token_hex(8)}"
        replies: list[Message] = []
        with connect_sync(self.url, open_timeout=WAIT, close_timeout=WAIT, max_size=None) as ws:
            if identified:
                ws.send(json.dumps({"type": "hello", "version": PROTOCOL_VERSION, "name": "Fuzz"}))
                assert read(ws)["type"] == "welcome"
            with contextlib.suppress(ConnectionClosed):
                for frame in frames:
                    ws.send(frame, text=True if not utf8 else None)
                ws.send(json.dumps({"type": "list_tables", "id": probe}))
            while True:
                try:
                    message = read(ws)
                except ConnectionClosed as closed:
                    code = None if closed.rcvd is None else closed.rcvd.code
                    return Exchange(replies, code, closed=True)
                if message.get("ref") == probe:
                    return Exchange(replies, None, closed=False)
                replies.append(message)

    # -- the audit -----------------------------------------------------------------------

    async def _hands_ended(self) -> list[int]:
        return [len(p.hands()) for p in self.innocents[:2]]

    async def _more_hands(self, since: list[int], more: int) -> None:
        async with asyncio.timeout(2 * WAIT):
            while any(
                now < then + more
                for now, then in zip(await self._hands_ended(), since, strict=True)
            ):
                await asyncio.sleep(0.01)

    def hands_ended(self) -> list[int]:
        """How many hands each innocent table has finished."""
        return self.call(self._hands_ended())

    def wait_for_hands(self, since: list[int], more: int) -> None:
        """Until each innocent table has finished ``more`` hands after ``since``; if
        they do not, the failure says where each table stood."""
        try:
            self.call(self._more_hands(since, more))
        except TimeoutError:
            raise AssertionError(
                f"{more} more hands after {since} were not played:\n{self.call(self._where())}"
            ) from None

    async def _where(self) -> str:
        """Each innocent table's state and hand, and what its innocents last got."""
        lines = []
        for table_id in self.tables:
            table = self.server.lobby.tables.get(table_id)
            hand = None if table is None else table.hand
            lines.append(
                f"table {table_id}: {None if table is None else table.core.state}, hand "
                f"{None if table is None else table.hand_id}, actor "
                f"{None if hand is None else hand.actor}, phase "
                f"{None if hand is None else hand.phase}"
            )
        for player in self.innocents:
            lines.append(f"{player.name} (seat {player.seat}), problems {player.problems}:")
            lines.extend(f"  {json.dumps(m)}" for m in player.client.frames[-6:])
        return "\n".join(lines)

    def hand_id(self, table_id: str) -> int:
        """The last hand dealt at ``table_id`` (0 before the first, or once it closed)."""

        async def read() -> int:
            table = self.server.lobby.tables.get(table_id)
            return 0 if table is None else table.hand_id

        return self.call(read())

    def legal(self, table_id: str) -> Message:
        """What the seat to act at ``table_id`` may do now, as the wire says it."""

        async def read() -> Message:
            table = self.server.lobby.tables.get(table_id)
            hand = None if table is None else table.hand
            if hand is None or hand.is_over or hand.actor is None:
                return {}
            legal = views.legal_view(hand.legal_actions(hand.actor))
            return {} if legal is None else legal.model_dump()

        return self.call(read())

    def call_chip_total(self) -> int:
        return self.call(chip_total(self.server))

    def assert_unharmed(self) -> None:
        """The innocents played on and saw nothing wrong, no chip moved but by their own
        hands, and nothing was logged as an error. Stops the server."""
        # Whole hands dealt and played after the fuzzing, at both tables.
        self.wait_for_hands(self.hands_ended(), 2)
        assert [p.problems for p in self.innocents] == [[], [], []]
        assert self.call_chip_total() == 0
        self.stop()
        for player in self.innocents:
            assert player.client.connection.close_code == 1001, player.name
            self._assert_ledger(player)
        bob, cy = self.innocents[1:]
        for (_, ended_b), (_, ended_c) in zip(bob.hands(), cy.hands(), strict=True):
            # Bob and Cy play only each other: what one wins the other loses.
            assert bob.stack(ended_b) + cy.stack(ended_c) == 2 * BUY_IN
        balances = self.call(self.server.store.balances())
        assert sum(balances.values()) == 0
        for player in self.innocents:
            left = next(m for m in player.client.frames if m["type"] == "table_left")
            assert balances[player.account_id] == left["balance"]
        assert self.logs.bad == []

    def _assert_ledger(self, player: Innocent) -> None:
        """Each hand started with the stack the last one ended with, and the seat was
        cashed out, at the stop, with what the last hand left it."""
        stack = BUY_IN
        hands = player.hands()
        assert hands, f"{player.name} finished no hand"
        for started, ended in hands:
            assert player.stack(started) == stack, (player.name, started)
            stack = player.stack(ended)
        left = [m for m in player.client.frames if m["type"] == "table_left"]
        assert len(left) == 1, left
        assert left[0]["cashed_out"] == stack
        assert left[0]["balance"] == self.config.starting_balance - BUY_IN + stack

    def stop(self) -> None:
        """Stop the innocents, then the server (which cashes every seat out)."""
        if not self.stopped:
            self.stopped = True
            self.call(self._stop())

    async def _stop(self) -> None:
        for player in self.innocents:
            if player.task is not None:
                player.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await player.task
        await self.server.stop()
        for player in self.innocents:
            await player.client.closed()

    def close(self) -> None:
        """Stop everything and end the thread, leaving no task behind."""
        try:
            self.stop()
            self.call(self._cancel_the_rest())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(WAIT)
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()
            logging.getLogger().removeHandler(self.logs)

    @staticmethod
    async def _cancel_the_rest() -> None:
        rest = asyncio.all_tasks() - {asyncio.current_task()}
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)


def read(ws: SyncConnection) -> Message:
    """The next message, checked: a text frame holding a server message, and an
    ``error`` with a documented code and a message for people."""
    frame = ws.recv(timeout=WAIT)
    assert isinstance(frame, str), f"the server sent a binary frame: {frame!r}"
    decode_server(frame)
    message: Message = json.loads(frame)
    if message["type"] == "error":
        assert message["code"] in ERROR_CODES, message
        assert message["message"], message
    return message
