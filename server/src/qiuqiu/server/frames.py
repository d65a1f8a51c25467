"""Outbound messages as the JSON text they go out as, and the pieces that text is made of.

A :class:`Frame` is one message for one audience, written once and sent as the
same ``str`` to every connection of that audience. :mod:`qiuqiu.server.views`
writes a hand's events straight to text with the helpers below, because
building a pydantic model and dumping it again cost a hand more than all its
text does; the model is made from the text only for whoever reads models (the
dealer bot), so the text is the one translation and the model follows from it.
Every message here carries only fields the protocol's models define:
``tests/server/test_outbound.py`` plays real games and checks every frame a
client gets against them, field for field.
"""

from __future__ import annotations

from collections.abc import Iterable
from json.encoder import encode_basestring_ascii
from typing import Any

from qiuqiu.protocol import encode
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import MessageId

BOOL = ("false", "true")
"""JSON for ``False`` and ``True``, by index."""


class Frame:
    """One outbound message: its text, what the session orders it by (``table_id``,
    ``seq``), and its model, made from the text the first time it is asked for.
    ``own_seat`` is the seat whose own copy of a table event this is, where it tells
    that seat alone something (its tiles, the actions it may take, the ``ref`` of its
    own action); ``None`` for the copy everyone else gets, and for any other message."""

    __slots__ = ("_message", "event", "kind", "own_seat", "ref", "seq", "table_id", "text")

    def __init__(
        self,
        text: str,
        kind: type[wire.Reply],
        table_id: str | None = None,
        seq: int | None = None,
        ref: MessageId | None = None,
        message: wire.Reply | None = None,
        own_seat: int | None = None,
    ) -> None:
        self.text, self.kind, self.table_id, self.seq, self.ref = text, kind, table_id, seq, ref
        self.event = issubclass(kind, wire.TableEvent)
        self._message, self.own_seat = message, own_seat

    @classmethod
    def of(cls, message: wire.Reply) -> Frame:
        """A message made as a model (a reply, a snapshot: nothing a hand repeats)."""
        table_id: str | None = None
        seq: int | None = None
        if isinstance(message, wire.TableEvent):
            table_id, seq = message.table_id, message.seq
        elif isinstance(message, wire.TableSnapshot):
            table_id, seq = message.table.table_id, message.seq
        return cls(encode(message), type(message), table_id, seq, message.ref, message)

    @property
    def message(self) -> wire.Reply:
        if self._message is None:
            # The model's own validator: model_validate_json's checks of its keyword
            # arguments cost a third again as much as reading a small message.
            message: wire.Reply = self.kind.__pydantic_validator__.validate_json(self.text)
            self._message = message
        return self._message

    def with_ref(self, ref: MessageId, own_seat: int | None = None) -> Frame:
        """The copy for the client whose action caused the event (at ``own_seat``)."""
        text = f'{{"ref":{ref_text(ref)},{self.text[1:]}'
        return Frame(text, self.kind, self.table_id, self.seq, ref, own_seat=own_seat)

    def with_field(self, name: str, value: str, own_seat: int) -> Frame:
        """The copy for ``own_seat`` with one more field, ``value`` being its JSON text."""
        text = f'{self.text[:-1]},"{name}":{value}}}'
        return Frame(text, self.kind, self.table_id, self.seq, self.ref, own_seat=own_seat)


def table_list(summaries: Iterable[str], ref: MessageId | None) -> Frame:
    """A ``table_list`` of the tables' summaries, each already JSON text."""
    text = ",".join(summaries).join(('{"type":"table_list","tables":[', "]}"))
    frame = Frame(text, wire.TableList)
    return frame if ref is None else frame.with_ref(ref)


def hand_list(hands: Iterable[str], ref: MessageId | None) -> Frame:
    """A ``hand_list`` of the hands, each already JSON text."""
    text = ",".join(hands).join(('{"type":"hand_list","hands":[', "]}"))
    frame = Frame(text, wire.HandList)
    return frame if ref is None else frame.with_ref(ref)


def ref_text(ref: MessageId) -> str:
    # A client chose it: escaped, and in ASCII, so no lone surrogate reaches the socket.
    return str(ref) if isinstance(ref, int) else encode_basestring_ascii(ref)


def free_text(text: str) -> str:
    """A string nobody constrained (a reason), as JSON."""
    return encode_basestring_ascii(text)


def amounts_text(pairs: Iterable[tuple[int, int]]) -> str:
    return ",".join(f'{{"seat":{seat},"amount":{amount}}}' for seat, amount in pairs).join("[]")


def plain_strings(items: Iterable[Any]) -> str:
    """Things whose ``str`` needs no escaping and is never empty (tiles, hex) as a JSON
    array of strings."""
    quoted = '","'.join(map(str, items))
    return f'["{quoted}"]' if quoted else "[]"


def ints_text(numbers: Iterable[int]) -> str:
    return ",".join(map(str, numbers)).join("[]")
