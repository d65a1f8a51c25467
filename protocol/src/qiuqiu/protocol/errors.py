"""Why a message was refused. Every refusal has a stable ``code`` for programs and
a ``message`` for people; both travel in an ``error`` reply.

:class:`ErrorCode` is the one list of codes: the codec's, the server's and the
engine's refusals (the engine, which imports nothing of ours, raises the same
values as plain strings, and a test holds the two lists together). The schema
writes it as the ``code`` field's enumeration.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    # The frame or message itself: the client's fault.
    BAD_JSON = "bad_json"
    UNKNOWN_TYPE = "unknown_type"
    INVALID_MESSAGE = "invalid_message"
    BINARY_FRAME = "binary_frame"
    # The session.
    HELLO_REQUIRED = "hello_required"
    ALREADY_IDENTIFIED = "already_identified"
    UNSUPPORTED_VERSION = "unsupported_version"
    NAME_REQUIRED = "name_required"
    RESERVED_NAME = "reserved_name"
    UNKNOWN_TOKEN = "unknown_token"
    ACCOUNT_EXISTS = "account_exists"
    TOO_MANY_ACCOUNTS = "too_many_accounts"
    UNKNOWN_ACCOUNT = "unknown_account"
    DUPLICATE_ID = "duplicate_id"
    # The lobby and the server: ours, not the client's.
    TOO_MANY_TABLES = "too_many_tables"
    UNKNOWN_TABLE = "unknown_table"
    TABLE_CLOSED = "table_closed"
    TABLE_MOVED = "table_moved"
    TABLE_MOVING = "table_moving"
    OUTCOME_UNKNOWN = "outcome_unknown"
    STORE_UNAVAILABLE = "store_unavailable"
    # Seats.
    ALREADY_SEATED = "already_seated"
    TABLE_FULL = "table_full"
    TOO_MANY_SPECTATORS = "too_many_spectators"
    TOO_MANY_WATCHED = "too_many_watched"
    SEAT_TAKEN = "seat_taken"
    NO_SUCH_SEAT = "no_such_seat"
    INVALID_BUY_IN = "invalid_buy_in"
    INSUFFICIENT_BALANCE = "insufficient_balance"
    BALANCE_LIMIT = "balance_limit"
    NOT_AT_TABLE = "not_at_table"
    NOT_SEATED = "not_seated"
    ALREADY_LEAVING = "already_leaving"
    STALE_HAND = "stale_hand"
    NOT_IN_HAND = "not_in_hand"
    # The engine's refusals of an action.
    UNKNOWN_SEAT = "unknown_seat"
    NO_BETTING_ROUND = "no_betting_round"
    NOT_YOUR_TURN = "not_your_turn"
    CANNOT_CHECK = "cannot_check"
    NOTHING_TO_CALL = "nothing_to_call"
    CANNOT_FOLD = "cannot_fold"
    CANNOT_BET = "cannot_bet"
    CANNOT_RAISE = "cannot_raise"
    INVALID_AMOUNT = "invalid_amount"
    BET_TOO_SMALL = "bet_too_small"
    BET_TOO_LARGE = "bet_too_large"
    RAISE_TOO_SMALL = "raise_too_small"
    RAISE_TOO_LARGE = "raise_too_large"
    NOT_ENOUGH_CHIPS = "not_enough_chips"
    RAISE_LIMIT = "raise_limit"
    BETTING_NOT_REOPENED = "betting_not_reopened"
    NO_ONE_TO_RAISE = "no_one_to_raise"
    NOT_CUTTING = "not_cutting"
    CUT_NOT_EXPECTED = "cut_not_expected"
    INVALID_CUT = "invalid_cut"
    HAND_OVER = "hand_over"


class ProtocolError(Exception):
    """The root of every error this package raises."""


class BadMessage(ProtocolError):
    """The peer sent something that is not a valid message: its fault, not ours."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
