"""The QiuQiu wire protocol: pydantic models for every client and server message.

``client`` holds what clients send (imperatives), ``server`` what the server
sends (facts), ``common`` what both share; ``codec`` turns frames into messages
and back; ``fairness`` derives, commits and checks a deal; ``schema`` writes
the JSON Schema of both unions. PROTOCOL.md documents every message.
"""

from qiuqiu.protocol import client, server
from qiuqiu.protocol.codec import decode_client, decode_server, encode, message_id
from qiuqiu.protocol.common import (
    MAX_BALANCE,
    MAX_CHIPS,
    PROTOCOL_VERSION,
    ChipRange,
    CutView,
    LegalActions,
    SeatAmount,
    TableOptions,
    clean_name,
)
from qiuqiu.protocol.errors import BadMessage, ErrorCode, ProtocolError
from qiuqiu.protocol.fairness import DealTampered

__all__ = [
    "MAX_BALANCE",
    "MAX_CHIPS",
    "PROTOCOL_VERSION",
    "BadMessage",
    "ChipRange",
    "CutView",
    "DealTampered",
    "ErrorCode",
    "LegalActions",
    "ProtocolError",
    "SeatAmount",
    "TableOptions",
    "clean_name",
    "client",
    "decode_client",
    "decode_server",
    "encode",
    "message_id",
    "server",
]
