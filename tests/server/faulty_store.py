"""A :class:`~qiuqiu.server.redis_store.RedisStore` that fails, or stalls, on cue.

Every method of the :class:`~qiuqiu.server.store.Store` Protocol is wrapped, the
list read from the Protocol itself (:func:`store_methods`), so a method added to
the contract is counted and can be planned for without anyone editing this file.
Calls are counted per method; only the server's own calls count, not the calls
one store method makes to another inside it.

A :class:`FaultPlan` says, for method M at its Nth call (and the ``count - 1``
calls after it), what goes wrong:

- ``fail``: :class:`~qiuqiu.server.errors.StoreUnavailable` without calling Redis
  (nothing happened);
- ``fail_after``: call Redis, then raise it (it happened, the caller cannot know);
- ``stall``: sleep ``stall`` seconds (longer than the lease), then call Redis;
- ``late``: call Redis, then sleep ``stall`` seconds before answering. Not a failure,
  so not one of :data:`MODES`: it holds a race open (what was read is out of date
  by the time the caller acts on it).

Besides the plan, a test can switch the store's Redis off and on from outside, by
writing a file (:data:`OUTAGE_VARIABLE` names it): ``down`` fails every call as
``fail`` does, ``flap`` fails every other one (a Redis that comes and goes), and
anything else, or no file, fails none. This needs no method names, so a test of
"the store is away now" runs unchanged whatever the Protocol's methods are called.

What the store did is written to a journal, one JSON object a line, so a test
in another process can tell which methods were called and which faults fired.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import time
import typing
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from qiuqiu.server.errors import StoreUnavailable
from qiuqiu.server.redis_store import RedisStore
from qiuqiu.server.store import Store

Mode = Literal["fail", "fail_after", "stall", "late"]
MODES: tuple[Mode, ...] = ("fail", "fail_after", "stall")
"""The failures every store method is tried with (``test_faults.py``)."""

PLAN_VARIABLE = "QIUQIU_TEST_FAULT_PLAN"
"""The environment variable the faulty server reads its plan from, as JSON."""

JOURNAL_VARIABLE = "QIUQIU_TEST_FAULT_JOURNAL"
"""The environment variable naming the file the faulty store writes its journal to."""

OUTAGE_VARIABLE = "QIUQIU_TEST_FAULT_OUTAGE"
"""The environment variable naming the file that switches the store's Redis off."""


def store_methods() -> tuple[str, ...]:
    """Every coroutine method the Store Protocol names, in the order it names them."""
    return tuple(
        name
        for name, member in vars(Store).items()
        if not name.startswith("_") and inspect.iscoroutinefunction(member)
    )


@dataclass(frozen=True, slots=True)
class Fault:
    method: str
    call: int
    """The first call that goes wrong, counting from 1."""
    mode: Mode
    count: int = 1
    """How many calls in a row go wrong."""
    stall: float = 0.0
    """Seconds a ``stall`` waits before it calls Redis."""

    def __post_init__(self) -> None:
        if self.method not in store_methods():
            raise ValueError(f"the Store Protocol has no method {self.method!r}")
        if self.mode not in typing.get_args(Mode) or self.call < 1 or self.count < 1:
            raise ValueError(f"not a fault: {self!r}")

    def covers(self, method: str, call: int) -> bool:
        return method == self.method and self.call <= call < self.call + self.count


@dataclass(frozen=True, slots=True)
class FaultPlan:
    faults: tuple[Fault, ...] = ()

    def at(self, method: str, call: int) -> Fault | None:
        return next((f for f in self.faults if f.covers(method, call)), None)

    def to_json(self) -> str:
        return json.dumps([asdict(f) for f in self.faults])

    @classmethod
    def from_json(cls, text: str) -> FaultPlan:
        return cls(tuple(Fault(**fault) for fault in json.loads(text)))


_inside_store: contextvars.ContextVar[bool] = contextvars.ContextVar("inside_store", default=False)


class FaultyStore(RedisStore):
    """A RedisStore (so the server treats it as one) with :attr:`plan` applied."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plan = FaultPlan()
        self.calls: Counter[str] = Counter()
        self.journal: Path | None = None
        self.outage: Path | None = None
        self._flaps = 0
        for name in store_methods():
            setattr(self, name, self._wrapped(name, getattr(self, name)))

    @classmethod
    async def open(
        cls,
        url: str,
        plan: FaultPlan,
        journal: Path | None = None,
        outage: Path | None = None,
    ) -> FaultyStore:
        store = await cls.from_url(url)
        assert isinstance(store, FaultyStore)
        store.plan, store.journal, store.outage = plan, journal, outage
        return store

    def _cut_off(self) -> bool:
        """Whether the outage switch fails this call."""
        try:
            state = self.outage.read_text().strip() if self.outage else ""
        except FileNotFoundError:
            return False
        if state == "flap":
            self._flaps += 1
            return self._flaps % 2 == 1
        return state == "down"

    def _wrapped(
        self, name: str, method: Callable[..., Coroutine[Any, Any, Any]]
    ) -> Callable[..., Coroutine[Any, Any, Any]]:
        async def faulty(*args: Any, **kwargs: Any) -> Any:
            if _inside_store.get():
                return await method(*args, **kwargs)
            self.calls[name] += 1
            call = self.calls[name]
            if call == 1:
                self._write({"called": name})
            if self._cut_off():
                self._write({"cut_off": name, "call": call})
                raise StoreUnavailable(
                    f"injected: {name} call {call} found Redis away", unsent=True
                )
            fault = self.plan.at(name, call)
            token = _inside_store.set(True)
            try:
                if fault is None:
                    return await method(*args, **kwargs)
                self._write({"fired": name, "call": call, "mode": fault.mode})
                match fault.mode:
                    case "fail":
                        raise StoreUnavailable(f"injected: {name} call {call} failed", unsent=True)
                    case "fail_after":
                        await method(*args, **kwargs)
                        raise StoreUnavailable(f"injected: {name} call {call} failed after")
                    case "stall":
                        await asyncio.sleep(fault.stall)
                        return await method(*args, **kwargs)
                    case "late":
                        answer = await method(*args, **kwargs)
                        await asyncio.sleep(fault.stall)
                        return answer
            finally:
                _inside_store.reset(token)
                if fault is not None:
                    self._write({"over": name, "call": call})

        return faulty

    def _write(self, entry: dict[str, Any]) -> None:
        if self.journal is None:
            return
        with self.journal.open("a") as journal:
            journal.write(json.dumps({**entry, "at": time.time()}) + "\n")


@dataclass(frozen=True, slots=True)
class Journal:
    """What a faulty store wrote: the methods it was asked for, and the faults it ran."""

    called: frozenset[str]
    fired: tuple[dict[str, Any], ...]
    over: tuple[dict[str, Any], ...] = field(default=())
    cut_off: tuple[dict[str, Any], ...] = field(default=())

    @classmethod
    def read(cls, path: Path) -> Journal:
        entries = (
            [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        )
        return cls(
            called=frozenset(e["called"] for e in entries if "called" in e),
            fired=tuple(e for e in entries if "fired" in e),
            over=tuple(e for e in entries if "over" in e),
            cut_off=tuple(e for e in entries if "cut_off" in e),
        )

    @property
    def all_over(self) -> bool:
        """Every fault that fired has finished (a stall has called Redis at last)."""
        return len(self.over) == len(self.fired)
