"""The published descriptions of the protocol cannot drift from the models.

Two artefacts describe the protocol to people who never read our Python:
``protocol/schema.json`` (generated) and ``PROTOCOL.md`` (written). Both are
checked here against the models themselves.

PROTOCOL.md's convention, which these tests rely on:

- a section whose heading starts with ``## Client messages`` or ``## Server
  messages`` holds one ``### `type` `` heading per message of that direction,
  and nothing else at that level;
- every such heading is followed by at least one ```json block, and each block
  must decode to a message of that type;
- under ``## A whole hand, frame by frame``, every line of a fenced block is a
  real frame: ``> `` sent by the client, ``< `` received from the server;
- every ```python block runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from qiuqiu.protocol import (
    PROTOCOL_VERSION,
    ErrorCode,
    decode_client,
    decode_server,
    fairness,
)
from qiuqiu.protocol.client import AnyClientMessage
from qiuqiu.protocol.schema import SCHEMA_FILE, main, render
from qiuqiu.protocol.server import AnyServerMessage
from tests.server.witness import hands_seen

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL_MD = ROOT / "PROTOCOL.md"
REGENERATE = "run `uv run python -m qiuqiu.protocol.schema`"


def union_members(union: Any) -> list[type[BaseModel]]:
    # An Annotated[A | B | ..., Field(discriminator=...)]: the classes are inside the union.
    members: list[type[BaseModel]] = list(get_args(get_args(union)[0]))
    return members


def type_tag(model: type[BaseModel]) -> str:
    tag = model.model_fields["type"].default
    assert isinstance(tag, str)
    return tag


CLIENT_TYPES = {type_tag(m): m for m in union_members(AnyClientMessage)}
SERVER_TYPES = {type_tag(m): m for m in union_members(AnyServerMessage)}
DECODERS: dict[str, Callable[[str], BaseModel]] = {
    "client": decode_client,
    "server": decode_server,
}


# -- schema.json ---------------------------------------------------------------------


def test_the_committed_schema_is_what_the_models_generate() -> None:
    committed = SCHEMA_FILE.read_text(encoding="utf-8")
    assert committed == render(), f"{SCHEMA_FILE} is stale: {REGENERATE}"


def test_the_schema_command_refuses_a_prefix_of_a_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--he"])  # not taken for --help
    assert exited.value.code == 2
    assert "unrecognized arguments: --he" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("key", "types"), [("client_message", CLIENT_TYPES), ("server_message", SERVER_TYPES)]
)
def test_every_message_of_both_unions_is_in_the_schema(
    key: str, types: dict[str, type[BaseModel]]
) -> None:
    union = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))[key]
    mapping: dict[str, str] = union["discriminator"]["mapping"]
    assert union["discriminator"]["propertyName"] == "type"
    assert set(mapping) == set(types), f"{SCHEMA_FILE} is stale: {REGENERATE}"
    listed = {option["$ref"] for option in union["oneOf"]}
    for tag, ref in mapping.items():
        assert ref in listed
        definition = union["$defs"][ref.removeprefix("#/$defs/")]
        assert definition["properties"]["type"]["const"] == tag
        assert definition["additionalProperties"] is False


@pytest.mark.parametrize("key", ["client_message", "server_message"])
def test_every_message_in_the_schema_requires_its_type(key: str) -> None:
    # Code generators for other languages read "required": an optional tag makes an
    # optional discriminator, which no frame on the wire ever lacks.
    union = json.loads(render())[key]
    for ref in union["discriminator"]["mapping"].values():
        assert "type" in union["$defs"][ref.removeprefix("#/$defs/")].get("required", [])


def test_the_schema_carries_the_protocol_version() -> None:
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))["version"] == PROTOCOL_VERSION


# -- PROTOCOL.md ---------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    heading: str
    lines: list[str]

    def fenced_blocks(self, language: str | None = None) -> list[str]:
        """The text of every fenced block (of ``language``, if given)."""
        blocks: list[str] = []
        current: list[str] = []
        fence: str | None = None
        for line in self.lines:
            if fence is None and line.startswith("```"):
                fence = line[3:].strip()
                current = []
            elif fence is not None and line.startswith("```"):
                if language is None or fence == language:
                    blocks.append("\n".join(current))
                fence = None
            elif fence is not None:
                current.append(line)
        return blocks


def sections(level: str, lines: list[str]) -> Iterator[Section]:
    """Split ``lines`` at headings of exactly ``level`` (``##``, ``###``), skipping code."""
    heading, in_code = "", False
    body: list[str] = []
    for line in lines:
        if line.startswith("```"):
            in_code = not in_code
        if not in_code and line.startswith(level + " "):
            if heading:
                yield Section(heading, body)
            heading, body = line[len(level) + 1 :].strip(), []
        else:
            body.append(line)
    if heading:
        yield Section(heading, body)


def protocol_md() -> list[str]:
    return PROTOCOL_MD.read_text(encoding="utf-8").splitlines()


def documented_messages() -> dict[str, dict[str, Section]]:
    """``{"client": {type: section}, "server": {...}}`` from the message sections."""
    found: dict[str, dict[str, Section]] = {"client": {}, "server": {}}
    for part in sections("##", protocol_md()):
        direction = next(
            (d for d in found if part.heading.lower().startswith(f"{d} messages")), None
        )
        if direction is None:
            continue
        for message in sections("###", part.lines):
            match = re.fullmatch(r"`([a-z_]+)`", message.heading)
            assert match, f"in {part.heading!r}, {message.heading!r} is not a `type` heading"
            assert match[1] not in found[direction], f"{match[1]} is documented twice"
            found[direction][match[1]] = message
    return found


@pytest.mark.parametrize(
    ("direction", "types"), [("client", CLIENT_TYPES), ("server", SERVER_TYPES)]
)
def test_protocol_md_documents_every_message_type_in_its_direction(
    direction: str, types: dict[str, type[BaseModel]]
) -> None:
    documented = documented_messages()[direction]
    assert sorted(set(types) - set(documented)) == [], "undocumented messages"
    assert sorted(set(documented) - set(types)) == [], "documented messages that do not exist"


@pytest.mark.parametrize(
    ("direction", "tag"),
    [("client", tag) for tag in CLIENT_TYPES] + [("server", tag) for tag in SERVER_TYPES],
)
def test_every_json_example_in_protocol_md_decodes_to_the_message_it_documents(
    direction: str, tag: str
) -> None:
    section = documented_messages()[direction].get(tag)
    assert section is not None, f"PROTOCOL.md has no `### \\`{tag}\\`` under {direction} messages"
    examples = section.fenced_blocks("json")
    assert examples, f"`{tag}` has no ```json example"
    for example in examples:
        message = DECODERS[direction](example)
        assert type_tag(type(message)) == tag


def nulls(value: Any, where: str = "") -> list[str]:
    """Where ``value``, a decoded JSON document, holds a ``null``."""
    if value is None:
        return [where]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in nulls(item, f"{where}.{key}")]
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in nulls(item, f"{where}[{i}]")]
    return []


@pytest.mark.parametrize("tag", list(SERVER_TYPES))
def test_no_server_example_in_protocol_md_shows_a_null(tag: str) -> None:
    """The server leaves out every field whose value is null ("Missing means null"), so
    an example with a null is not a frame it sends: a client written from it would expect
    a field that never comes."""
    for example in documented_messages()["server"][tag].fenced_blocks("json"):
        assert nulls(json.loads(example)) == [], f"`{tag}`'s example shows a null"


@pytest.mark.parametrize(
    ("direction", "tag"),
    [("client", tag) for tag in CLIENT_TYPES] + [("server", tag) for tag in SERVER_TYPES],
)
def test_every_field_of_a_message_is_named_in_its_section_of_protocol_md(
    direction: str, tag: str
) -> None:
    """A client written from PROTOCOL.md learns a message's fields from its section:
    each is named in the text or shown in an example there. ``ref`` is "`id` and
    `ref`" of the Conventions, for every message."""
    text = "\n".join(documented_messages()[direction][tag].lines)
    model = (CLIENT_TYPES if direction == "client" else SERVER_TYPES)[tag]
    unnamed = [
        field
        for field in model.model_fields
        if field != "ref" and f"`{field}`" not in text and f'"{field}"' not in text
    ]
    assert unnamed == [], f"`{tag}` has fields its section never names"


# -- PROTOCOL.md: the walkthrough ------------------------------------------------------


def walkthrough() -> list[tuple[str, dict[str, Any]]]:
    """``(direction, frame)`` for every frame of the walkthrough, each decoded and checked."""
    part = next(s for s in sections("##", protocol_md()) if s.heading.startswith("A whole hand"))
    frames = []
    for block in part.fenced_blocks():
        for line in block.splitlines():
            arrow, _, frame = line.partition(" ")
            assert arrow in (">", "<"), f"a walkthrough line starts with > or <: {line!r}"
            direction = "client" if arrow == ">" else "server"
            DECODERS[direction](frame)
            frames.append((direction, json.loads(frame)))
    assert frames
    return frames


def test_the_walkthrough_goes_from_hello_to_the_end_of_a_hand() -> None:
    frames = walkthrough()
    assert frames[0][0] == "client"
    assert frames[0][1]["type"] == "hello"
    assert frames[-1][0] == "server"
    assert frames[-1][1]["type"] == "hand_ended"
    shown = {frame["type"] for _, frame in frames}
    assert {"bet_placed", "called", "showdown", "pot_awarded"} <= shown


def test_the_walkthrough_answers_every_id_and_counts_events_one_by_one() -> None:
    sent: set[object] = set()
    last_seq: int | None = None
    for direction, frame in walkthrough():
        if direction == "client":
            sent.add(frame["id"])
            continue
        if "ref" in frame:
            assert frame["ref"] in sent, f"{frame['type']} names an id never sent"
        if frame["type"] == "table_snapshot":
            last_seq = frame["seq"]
        elif "seq" in frame:
            assert last_seq is not None, "an event before the first snapshot"
            assert frame["seq"] == last_seq + 1, f"seq jumps at {frame['type']}"
            last_seq = frame["seq"]


def test_every_tile_of_the_walkthrough_opens_its_committed_position() -> None:
    frames = walkthrough()
    joined = next(f for d, f in frames if d == "client" and f["type"] == "join_table")
    (hand,) = hands_seen(frame for direction, frame in frames if direction == "server")
    assert hand.ended
    assert hand.shown == {0, 1}
    checked = fairness.verify_hand(hand.seen(), my_seat=0, my_seeds=(joined["client_seed"],))
    assert checked == 8


def test_the_python_examples_in_protocol_md_run() -> None:
    blocks = [
        block for part in sections("##", protocol_md()) for block in part.fenced_blocks("python")
    ]
    assert blocks
    for block in blocks:
        exec(compile(block, str(PROTOCOL_MD), "exec"), {})


# -- PROTOCOL.md: error codes --------------------------------------------------------

ENGINE_CODE = re.compile(r"\bIllegalAction\(\s*\"([a-z_]+)\"")
"""The engine imports nothing of ours, so it raises its codes as strings."""


def engine_codes() -> set[str]:
    engine = ROOT / "engine/src/qiuqiu/engine"
    return {c for p in sorted(engine.rglob("*.py")) for c in ENGINE_CODE.findall(p.read_text())}


def test_every_code_the_engine_refuses_with_is_an_error_code() -> None:
    found = engine_codes()
    # Sanity: the scan must see the engine's codes, or it proves nothing.
    assert {"not_your_turn", "invalid_cut"} <= found
    assert sorted(found - {c.value for c in ErrorCode}) == []


def test_the_protocol_md_table_lists_every_error_code_and_no_other() -> None:
    part = next(s for s in sections("##", protocol_md()) if s.heading == "Error codes")
    table = re.findall(r"^\| `([a-z_]+)` \|", "\n".join(part.lines), flags=re.MULTILINE)
    assert table == [c.value for c in ErrorCode]


def test_the_schema_names_every_error_code() -> None:
    schema = json.loads(SCHEMA_FILE.read_text())
    assert schema["server_message"]["$defs"]["ErrorCode"]["enum"] == [c.value for c in ErrorCode]
