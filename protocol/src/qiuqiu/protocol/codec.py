"""Text frames to messages and back.

Decoding a client frame never raises anything but :class:`BadMessage`, whose
``code`` says what was wrong (``bad_json``, ``unknown_type``,
``invalid_message``) and whose message names the field, so a bot author can
fix their client from the error alone.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import from_json

from qiuqiu.protocol.client import CLIENT_MESSAGES, AnyClientMessage
from qiuqiu.protocol.common import (
    CLIENT_SEED_PATTERN,
    TABLE_ID_PATTERN,
    TILE_INPUT_PATTERN,
    MessageId,
)
from qiuqiu.protocol.errors import BadMessage, ErrorCode
from qiuqiu.protocol.server import SERVER_MESSAGES, AnyServerMessage


def encode(message: BaseModel) -> str:
    """One JSON text frame; fields left at ``null`` are not sent."""
    return message.model_dump_json(exclude_none=True)


def decode_client(frame: str | bytes) -> AnyClientMessage:
    try:
        message = CLIENT_MESSAGES.validate_json(frame)
    except ValidationError as error:
        raise _bad_message(error) from None
    # pydantic reads a key given twice as its last value, where a message must mean one
    # thing; read again for that, once it is known to be a message.
    _EACH_KEY_ONCE.decode(frame if isinstance(frame, str) else frame.decode())
    return message


def _each_key_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) < len(pairs):
        keys = [key for key, _ in pairs]
        twice = next(key for n, key in enumerate(keys) if key in keys[:n])
        raise BadMessage(ErrorCode.INVALID_MESSAGE, f"{twice}: given twice; send each key once")
    return found


_EACH_KEY_ONCE = json.JSONDecoder(object_pairs_hook=_each_key_once)


def decode_server(frame: str | bytes) -> AnyServerMessage:
    try:
        return SERVER_MESSAGES.validate_json(frame)
    except ValidationError as error:
        raise _bad_message(error) from None


def message_id(frame: str | bytes) -> MessageId | None:
    """The ``id`` of a frame that may not be a valid message, to name it in an error."""
    try:
        # pydantic's parser, not the json module's: that one recurses as deep as the
        # frame nests, up to the interpreter's limit, and a garbage collection that
        # runs meanwhile calls the server's collector callback at that limit, where
        # the callback itself fails.
        data = from_json(frame)
    except ValueError:
        return None
    ref = data.get("id") if isinstance(data, dict) else None
    if isinstance(ref, str) and 0 < len(ref) <= 64:
        try:
            ref.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate cannot be sent back
            return None
        return ref
    if isinstance(ref, int) and not isinstance(ref, bool) and 0 <= ref <= 2**53:
        return ref
    return None


_JSON_KINDS = {
    type(None): "null",
    bool: "true or false",
    int: "a number",
    float: "a number",
    list: "an array",
    dict: "an object",
}


def _bad_message(error: ValidationError) -> BadMessage:
    first = error.errors(include_url=False)[0]
    kind = first["type"]
    if kind == "json_invalid":
        return BadMessage(ErrorCode.BAD_JSON, f"not valid JSON: {first['msg']}")
    if kind == "union_tag_invalid":
        tag = first["input"].get("type") if isinstance(first["input"], dict) else None
        if not isinstance(tag, str):
            # pydantic's own tag is str(value): null would read as a type named 'None'.
            given = _JSON_KINDS.get(type(tag), "a value")
            return BadMessage(
                ErrorCode.UNKNOWN_TYPE, f"'type' names a message, so it is a string, not {given}"
            )
        return BadMessage(ErrorCode.UNKNOWN_TYPE, f"there is no message of type {tag!r}")
    if kind in ("union_tag_not_found", "model_attributes_type"):
        return BadMessage(
            ErrorCode.INVALID_MESSAGE, "a message is a JSON object with a 'type' field"
        )
    problems: list[str] = []
    for e in error.errors(include_url=False):
        where = e["loc"][1:]
        # An id may be either of two types, and pydantic says why it is neither by the
        # names of its own two attempts, which mean nothing to a client; and its
        # "Value error, " before a model's own reason says nothing either.
        said = e["msg"].removeprefix("Value error, ")
        if e["type"] == "string_pattern_mismatch":
            said = FORM_IN_WORDS.get(e.get("ctx", {}).get("pattern", ""), said)
        problem = BAD_ID if where[:1] == ("id",) else f"{_where(where)}: {said}"
        if problem not in problems:
            problems.append(problem)
    return BadMessage(ErrorCode.INVALID_MESSAGE, "; ".join(problems[:3]))


# pydantic says a text of the wrong form "should match pattern '^[A-Za-z0-9_-]{1,64}$'",
# a regular expression, where an error's message is for people.
FORM_IN_WORDS = {
    CLIENT_SEED_PATTERN: "1 to 64 letters (a-z, A-Z), digits, _ or -",
    TABLE_ID_PATTERN: "letters (a-z, A-Z), digits, _ or -",
    TILE_INPUT_PATTERN: 'a tile, its two ends from 0 to 6 joined by "-", such as "6-1"',
}

BAD_ID = "id: a string of 1 to 64 characters, or a whole number from 0 to 2^53"


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "message"
