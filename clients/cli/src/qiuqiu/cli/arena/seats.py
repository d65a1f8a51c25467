"""Who plays in the arena: a bot written against the SDK, or the house.

An SDK bot is given exactly what a network client is: its
:class:`~qiuqiu.cli.game.TableState` is kept from the same wire messages by the
same code, and its :class:`~qiuqiu.cli.turns.Turn` comes from
:func:`~qiuqiu.cli.turns.turn_of`, so a bot cannot tell the arena from a server.
Only the SDK's check of each deal is left out, since the arena sealed the deals
itself (a bot never sees that check). The house reads the same frames as the
server's dealer bot, the kinds its
:class:`~qiuqiu.server.house.record.SeenHand` learns from, and decides with
the same function.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Protocol, cast

from qiuqiu.cli.bot import LOADING, MainRunOnLoad
from qiuqiu.cli.deals import TableDeals, dealer_seat
from qiuqiu.cli.errors import BotFailed
from qiuqiu.cli.game import Applied, SeatState, TableState
from qiuqiu.cli.turns import (
    Action,
    Bet,
    Bot,
    Call,
    Check,
    Fold,
    Raise,
    Split,
    answer,
    check_is_a_bot,
    listens,
    result_of,
    tell,
    turn_of,
)
from qiuqiu.engine import Hand, rank
from qiuqiu.protocol import TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.server.csprng import BatchedSystemRandom
from qiuqiu.server.frames import Frame
from qiuqiu.server.house import policy
from qiuqiu.server.house.record import OBSERVED, SeenHand
from qiuqiu.server.strategy import Decision, prepare

DEALER = "dealer"
THRESHOLD_DEALER = "dealer:threshold"
"""Today's dealer before the solved strategy: the threshold policy, for comparison."""


class Player(Protocol):
    """One contestant in one seat of one match."""

    name: str

    def sit(self, seats: dict[int, tuple[str, bool, int]]) -> None:
        """Meet the table: each seat's name, whether it is the house's, and its chips."""

    def deliver_frame(self, frame: Frame) -> None:
        """A table event, as the server's table would hand it to this seat's viewer."""

    def act(self, turn: wire.TurnStarted | wire.CuttingStarted) -> Action | Split: ...


@dataclass(frozen=True)
class Entrant:
    """A contestant as the command line names it, able to take a seat any number of times."""

    name: str
    spec: str

    @property
    def is_house(self) -> bool:
        return self.spec in (DEALER, THRESHOLD_DEALER)

    def seat(self, table_id: str, options: TableOptions, seat: int, rng: Random) -> Player:
        if self.spec == DEALER:
            prepare()  # tables built before the match's clock starts, as at a server's start
            return HousePlayer(self.name, seat, options, rng, solved=True)
        if self.spec == THRESHOLD_DEALER:
            return HousePlayer(self.name, seat, options, rng, solved=False)
        return SdkPlayer(self.name, load_bot(self.spec), table_id, options, seat)


def entrant(spec: str) -> Entrant:
    """``dealer``, ``dealer:threshold``, ``path/to/bot.py`` or ``path/to/bot.py:ClassName``."""
    if spec in (DEALER, THRESHOLD_DEALER):
        return Entrant(spec, spec)
    path, class_name = bot_file(spec)
    load_bot(spec)  # fail now, not in the middle of a match
    return Entrant(class_name or Path(path).stem, spec)


def bot_file(spec: str) -> tuple[str, str]:
    """The file and the class name (or ``""``) of ``path/to/bot.py[:ClassName]``. A
    colon that no class name follows is the path's own (``C:\\bots``, ``v1:2/bot.py``)."""
    path, _, class_name = spec.rpartition(":")
    return (path, class_name) if path and class_name.isidentifier() else (spec, "")


def load_bot(spec: str) -> Bot:
    """A fresh bot from a file: its class ``ClassName``, or the one :class:`Bot` it defines."""
    path, class_name = bot_file(spec)
    file = Path(path)
    if not file.is_file():
        # "dealer:solved" reads as the file "dealer" and its class "solved".
        missing = f"no dealer {spec!r}" if path == DEALER else f"no bot file {path!r}"
        raise ValueError(
            f"{missing} (a contestant is a bot file, {DEALER!r} or {THRESHOLD_DEALER!r})"
        )
    # One module per file and content, not per name: two bots may both be someone's
    # "bot.py", and a bot mended in the same process (a notebook, a test) is read again.
    key = hashlib.sha256(bytes(file.resolve()) + b"\0" + file.read_bytes())
    module_name = f"qiuqiu_arena_{key.hexdigest()[:16]}"
    module = sys.modules.get(module_name)
    if module is None:
        loader = importlib.util.spec_from_file_location(module_name, file)
        if loader is None or loader.loader is None:
            raise ValueError(f"cannot import {path!r}: a bot file is Python source, *.py")
        module = importlib.util.module_from_spec(loader)
        sys.modules[module_name] = module
        folder = str(file.resolve().parent)
        if folder not in sys.path:
            # As `python my_bot.py` puts the file's folder first: a bot that imports a
            # module of its own beside it loads here as it runs on its own.
            sys.path.insert(0, folder)
        loading = LOADING.set(path)
        try:
            loader.loader.exec_module(module)
        except MainRunOnLoad:
            del sys.modules[module_name]  # as a failed import leaves nothing behind
            raise
        except (Exception, SystemExit) as error:  # sys.exit() in a bot is its failure too
            del sys.modules[module_name]
            raise BotFailed(class_name or file.stem, error) from error
        finally:
            LOADING.reset(loading)
    bots = {
        name: value
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and issubclass(value, Bot)
        and value is not Bot
        and value.__module__ == module_name
    }
    if class_name:
        if class_name not in bots:
            raise ValueError(f"{path} defines no bot class {class_name!r}")
        bot_class = bots[class_name]
    elif not bots:
        raise ValueError(f"{path} defines no bot: a class of its own that subclasses Bot")
    elif len(bots) > 1:
        raise ValueError(f"{path} defines {len(bots)} bot classes: name one, as {path}:Name")
    else:
        (bot_class,) = bots.values()
    try:
        bot = bot_class()
    except (Exception, SystemExit) as error:
        raise BotFailed(class_name or file.stem, error) from error
    try:
        check_is_a_bot(bot)
    except TypeError as not_a_bot:
        raise ValueError(f"{path}: {not_a_bot}") from None
    return bot


class SdkPlayer:
    """A bot written against the SDK, seen through the SDK's own table state."""

    def __init__(
        self, name: str, bot: Bot, table_id: str, options: TableOptions, seat: int
    ) -> None:
        self.name = name
        self.bot = bot
        # Checking the arena's own deals is the arena's test
        # (tests/cli/arena/test_match.py), not a match's work: it would cost a tenth of
        # the match.
        unchecked = TableDeals(table_id, bot_seat=dealer_seat(options), checking=False)
        self.state = TableState(table_id, options, seq=0, you=seat, deals_so_far=unchecked)
        self.seat = seat
        self.listens = listens(bot)

    def sit(self, seats: dict[int, tuple[str, bool, int]]) -> None:
        for number, (name, is_bot, stack) in seats.items():
            self.state.seats[number] = SeatState(number, name, is_bot, stack)

    def deliver_frame(self, frame: Frame) -> None:
        # The frame's model: what a client decodes from the same text (a test holds it).
        assert frame.event
        message = cast(wire.TableEvent, frame.message)
        if self.state.apply(message) is Applied.GAP:
            raise AssertionError(f"the arena skipped a message before {message.seq}")
        if self.listens and type(message) is wire.HandEnded:
            result = result_of(self.state, message)
            if result is not None:
                tell(self.bot, result, self.name)

    def act(self, turn: wire.TurnStarted | wire.CuttingStarted) -> Action | Split:
        seen = turn_of(self.state)
        if seen is None:
            raise AssertionError("the SDK's table state does not say it is this bot's turn")
        return answer(self.bot, seen, self.name)


class HousePlayer:
    """The dealer bot: the server's record and decision, with the arena's RNG."""

    def __init__(
        self, name: str, seat: int, options: TableOptions, rng: Random, *, solved: bool
    ) -> None:
        self.name = name
        self.seat = seat
        self.options = options
        self.record = SeenHand(seat)
        self.rng = rng
        self.solved = solved

    def sit(self, seats: dict[int, tuple[str, bool, int]]) -> None:
        pass

    def deliver_frame(self, frame: Frame) -> None:
        if frame.kind in OBSERVED:
            self.record.observe(frame.message)

    def act(self, turn: wire.TurnStarted | wire.CuttingStarted) -> Action | Split:
        tiles = tuple(self.record.tiles)
        if isinstance(turn, wire.CuttingStarted):
            best = rank(Hand(tiles)).cut
            (a, b), (c, d) = best.high_pair, best.low_pair
            return Split((str(a), str(b)), (str(c), str(d)))
        situation = self.record.situation(turn, self.options, tiles)
        decision = (
            policy.decide(situation, self.rng) if self.solved else policy.threshold(situation)
        )
        return sdk_action(decision)


def sdk_action(decision: Decision) -> Action:
    amount = decision.amount or 0
    match decision.action:
        case "check":
            return Check()
        case "call":
            return Call()
        case "fold":
            return Fold()
        case "bet":
            return Bet(amount)
        case "raise":
            return Raise(amount)


def house_rng(seed: int | None) -> Random:
    """The house's RNG: seeded for a reproducible run, the CSPRNG otherwise."""
    return BatchedSystemRandom() if seed is None else Random(seed)
