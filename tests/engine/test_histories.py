"""Golden hand histories: whole hands played from a fixed deck, checked event by event.

Each file in ``tests/data/histories/`` is one hand: its rules, stacks, button
and deck (all 28 tiles, in dealing order), the actions taken, every event the
hand must produce and the stacks it must end with. Its ``description`` says
who wins what and why, and those numbers were worked out by hand from the
rules (README, "The rules as the engine plays them"), not copied from the engine.

To (re)write the ``events`` and ``final_stacks`` of histories from their actions::

    uv run python tests/engine/test_histories.py --write [FILE ...]

Without ``--write`` it only reports what the engine makes of each file. Either
way, check every pot and stack against the rules by hand before committing:
a golden file records what is right, not what the engine happens to do.

Action forms: ``["check", seat]``, ``["bet", seat, amount]``, ``["call", seat]``,
``["raise_to", seat, to]``, ``["fold", seat]``, ``["time_out", seat]``,
``["declare_cut", seat, "6-1 5-3"]`` (the pair named, the other two tiles are
the other pair) and ``["void"]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeAlias

import pytest

from qiuqiu.engine import (
    Event,
    Hand,
    HandState,
    PotAwarded,
    TableRules,
    Tile,
    cut_with,
    parse_tiles,
)

HISTORIES = Path(__file__).resolve().parents[1] / "data" / "histories"
KEYS = ("description", "rules", "stacks", "button", "deck", "actions", "events", "final_stacks")

Json: TypeAlias = bool | int | str | list["Json"] | dict[str, "Json"] | None
History: TypeAlias = dict[str, Any]


# -- events as JSON ------------------------------------------------------------


def to_json(value: object) -> Json:
    """Any engine value as plain JSON: a tile as ``"6-1"``, a run of tiles as
    ``"6-1 5-3"``, an enum as its value, a dataclass as a dict of its fields."""
    if isinstance(value, Tile):
        return str(value)
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        if value and all(isinstance(item, Tile) for item in value):
            return " ".join(str(item) for item in value)
        return [to_json(item) for item in value]
    if value is None or isinstance(value, bool | int | str):
        return value
    raise TypeError(f"cannot write {value!r} as JSON")


def event_to_json(event: Event) -> dict[str, Json]:
    fields = to_json(event)
    assert isinstance(fields, dict)
    return {"type": type(event).__name__, **fields}


# -- playing a history ---------------------------------------------------------


def load(path: Path) -> History:
    history: History = json.loads(path.read_text(encoding="utf-8"))
    return history


def play(history: History) -> HandState:
    """Start the hand a history describes and apply its actions, in order."""
    state = HandState.start(
        TableRules(**history["rules"]),
        {int(seat): chips for seat, chips in history["stacks"].items()},
        history["button"],
        parse_tiles(history["deck"]),
    )
    for action in history["actions"]:
        apply(state, action)
    return state


def apply(state: HandState, action: Sequence[Any]) -> None:
    match action:
        case ["check", int(seat)]:
            state.check(seat)
        case ["bet", int(seat), int(amount)]:
            state.bet(seat, amount)
        case ["call", int(seat)]:
            state.call(seat)
        case ["raise_to", int(seat), int(to)]:
            state.raise_to(seat, to)
        case ["fold", int(seat)]:
            state.fold(seat)
        case ["time_out", int(seat)]:
            state.time_out(seat)
        case ["declare_cut", int(seat), str(pair)]:
            a, b = parse_tiles(pair)
            state.declare_cut(seat, cut_with(Hand(state.seats[seat].tiles), a, b))
        case ["void"]:
            state.void()
        case _:
            raise ValueError(f"unknown action {action!r}")


def final_stacks(state: HandState) -> dict[str, int]:
    return {str(seat): state.seats[seat].stack for seat in sorted(state.seats)}


# -- the tests -----------------------------------------------------------------


CASES = [pytest.param(path, id=path.stem) for path in sorted(HISTORIES.glob("*.json"))]


def test_the_golden_histories_are_there() -> None:
    assert len(CASES) >= 7


@pytest.mark.parametrize("path", CASES)
def test_a_history_is_well_formed_and_keeps_every_chip(path: Path) -> None:
    history = load(path)
    assert tuple(history) == KEYS
    assert history["description"].strip()
    assert len(parse_tiles(history["deck"])) == 28
    assert history["events"][0]["type"] == "HandStarted"
    assert sum(history["final_stacks"].values()) == sum(history["stacks"].values())


@pytest.mark.parametrize("path", CASES)
def test_a_history_replays_to_exactly_its_recorded_events_and_stacks(path: Path) -> None:
    history = load(path)
    state = play(history)
    assert state.is_over
    assert [event_to_json(event) for event in state.log] == history["events"]
    assert final_stacks(state) == history["final_stacks"]
    assert HandState.replay(state.log) == state


# -- rewriting histories -------------------------------------------------------


def dumps(history: History) -> str:
    """A history as JSON with one action or event a line."""
    lines = []
    for key in KEYS:
        value = history[key]
        if key in ("actions", "events") and value:
            items = ",\n".join(f"    {json.dumps(item, ensure_ascii=False)}" for item in value)
            lines.append(f"  {json.dumps(key)}: [\n{items}\n  ]")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("files", nargs="*", type=Path, help="histories (default: all)")
    parser.add_argument(
        "--write", action="store_true", help="rewrite events and final_stacks from the actions"
    )
    args = parser.parse_args(argv)
    paths: list[Path] = args.files or sorted(HISTORIES.glob("*.json"))
    for path in paths:
        history = load(path)
        state = play(history)
        events = [event_to_json(event) for event in state.log]
        stacks = final_stacks(state)
        same = events == history.get("events") and stacks == history.get("final_stacks")
        print(f"{path.name}: {'unchanged' if same else 'differs'}")
        for event in state.log:
            if isinstance(event, PotAwarded):
                print(f"  pot {event.amount} among {list(event.eligible)}: {list(event.shares)}")
        print(f"  final stacks {stacks}")
        if args.write and not same:
            written = {key: history.get(key) for key in KEYS}
            written.update(events=events, final_stacks=stacks)
            path.write_text(dumps(written), encoding="utf-8")
            print("  written: check it by hand")
    return 0


if __name__ == "__main__":
    sys.exit(main())
