"""Frames to messages and back: every message survives the trip, and nothing loose gets in.

The codec is the whole of the server's defence against malformed input, so
each way a frame can be wrong is tried here, and each must end in a
:class:`BadMessage` with the right code rather than any other exception.
"""

from __future__ import annotations

import contextlib
import gc
import json
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from qiuqiu.engine import Category, Tile
from qiuqiu.protocol import (
    MAX_CHIPS,
    PROTOCOL_VERSION,
    BadMessage,
    ChipRange,
    CutView,
    ErrorCode,
    LegalActions,
    SeatAmount,
    TableOptions,
    clean_name,
    decode_client,
    decode_server,
    encode,
    fairness,
    message_id,
)
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import NAME_LENGTH, SeatSeed

T = "te71d2f02"
OPTIONS = TableOptions(seats=3, dealer_bot=False, max_bet=200, max_raises=3, manual_split=True)
CUT = CutView(pairs=(("3-3", "2-1"), ("2-2", "4-1")), values=(9, 9))
CHIPS = (
    wire.SeatChips(seat=0, stack=490, bet=0),
    wire.SeatChips(seat=1, stack=9980, bet=10, folded=False, all_in=False),
)
LEGAL = LegalActions(
    fold=True, call=10, raise_to=ChipRange(min=20, max=490), bet=None, declare_cut=False
)
SEAT = wire.SeatView(
    seat=0,
    name="Ann",
    is_bot=False,
    connected=True,
    stack=490,
    in_hand=True,
    tile_count=3,
    tiles=("4-1", "2-1", "3-3"),
)
SEALED = fairness.derive_deck(fairness.hand_seed("ab" * 32, T, 3), {0: "ann", 1: ""})
OPENED = (SEALED.opening(0), SEALED.opening(1), SEALED.opening(2), SEALED.opening(6))
SEEDS = (SeatSeed(seat=0, client_seed="ann"), SeatSeed(seat=1, client_seed=""))
SUMMARY = wire.TableSummary(
    table_id=T,
    options=OPTIONS,
    seed_commitment=fairness.seed_commitment("ab" * 32),
    seats=(wire.SeatSummary(seat=2, name="Bob", is_bot=False, stack=300),),
    free_seats=2,
    playing=False,
)
STACKS = (SeatAmount(seat=0, amount=500), SeatAmount(seat=1, amount=10_000))
HAND: dict[str, Any] = {"table_id": T, "seq": 7, "hand_id": 3}

CLIENT_EXAMPLES: tuple[cmd.ClientMessage, ...] = (
    cmd.Hello(id=1, version=PROTOCOL_VERSION, name="Ann"),
    cmd.Hello(
        id="resume", version=PROTOCOL_VERSION, token="4rQePYUuFjFlr-o7Ua1_fAqd9zL4y1EN7DkGWtFGuX0"
    ),
    cmd.ListTables(id=2),
    cmd.ListHands(id=7, table_id="t1", limit=5),
    cmd.CreateTable(id=3, options=OPTIONS, buy_in=500),
    cmd.CreateTable(),
    cmd.JoinTable(id=4, table_id=T, buy_in=300, seat=2),
    cmd.JoinTable(id=4, table_id=T, buy_in=300, client_seed="9f86d081884c7d65"),
    cmd.SetSeed(id=14, table_id=T, client_seed="lucky-7"),
    cmd.LeaveTable(id=5, table_id=T),
    cmd.WatchTable(id=6, table_id=T),
    cmd.RequestSnapshot(id=7, table_id=T),
    cmd.Check(id=8, table_id=T, hand_id=3),
    cmd.Bet(id=9, table_id=T, hand_id=3, amount=MAX_CHIPS),
    cmd.Call(id=10, table_id=T, hand_id=3),
    cmd.Raise(id=11, table_id=T, hand_id=3, to=40),
    cmd.Fold(id=12, table_id=T, hand_id=3),
    cmd.DeclareCut(id=13, table_id=T, hand_id=3, pairs=(("3-3", "2-1"), ("2-2", "4-1"))),
)

SERVER_EXAMPLES: tuple[wire.Reply, ...] = (
    wire.Welcome(
        ref=1, version=PROTOCOL_VERSION, account_id="a1", name="Ann", balance=1000, token="tok"
    ),
    wire.Welcome(
        ref=1,
        version=PROTOCOL_VERSION,
        account_id="a1",
        name="Ann",
        balance=500,
        resumed=True,
        tables=(T,),
    ),
    wire.TableList(ref=2, tables=(SUMMARY,)),
    wire.HandList(
        ref=7,
        hands=(
            wire.PlayedHand(
                table_id="t1",
                hand_id=1,
                voided=False,
                seats=(wire.SeatResult(seat=0, account_id="a1", before=500, after=510),),
                events=({"type": "hand_started", "table_id": "t1", "seq": 3, "hand_id": 1},),
            ),
        ),
    ),
    wire.TableCreated(ref=3, table=SUMMARY),
    wire.TableCreated(ref=3, table=SUMMARY.model_copy(update={"seed_commitment": None})),
    wire.SeedSet(ref=14, table_id=T, client_seed="lucky-7"),
    wire.TableJoined(ref=4, table_id=T, seat=0, buy_in=500, balance=500),
    wire.TableLeft(ref=5, table_id=T, seat=0, cashed_out=340, balance=1040),
    wire.TableLeft(table_id=T, balance=1000),
    wire.TableWatched(ref=6, table_id=T),
    wire.TableSnapshot(
        ref=7,
        seq=8,
        table=wire.TableView(
            table_id=T,
            options=OPTIONS,
            seed_commitment="cd" * 32,
            seats=(
                SEAT,
                wire.SeatView(
                    seat=1,
                    name="Dealer",
                    is_bot=True,
                    connected=True,
                    stack=9990,
                    in_hand=True,
                    tile_count=3,
                ),
            ),
            hand=wire.HandView(
                hand_id=3,
                button=1,
                stacks=(SeatAmount(seat=0, amount=500), SeatAmount(seat=1, amount=10_000)),
                commitment=SEALED.commitment,
                leaves=SEALED.leaves,
                client_seeds=SEEDS,
                phase="betting",
                round=1,
                pot=20,
                current_bet=0,
                actor=0,
                deadline_ms=1_795_982_336_005,
            ),
            you=0,
            legal=LEGAL,
        ),
    ),
    wire.TableSnapshot(
        seq=0,
        table=wire.TableView(
            table_id=T, options=TableOptions(), seed_commitment="cd" * 32, seats=()
        ),
    ),
    wire.Error(ref="x", code=ErrorCode.BET_TOO_SMALL, message="the smallest bet is 10, not 5"),
    wire.PlayerSeated(table_id=T, seq=1, seat=0, name="Ann", is_bot=False, stack=300),
    wire.PlayerLeft(table_id=T, seq=2, seat=0, name="Ann", cashed_out=340),
    wire.PlayerDisconnected(table_id=T, seq=3, seat=0, grace_ms=60_000),
    wire.PlayerReconnected(table_id=T, seq=4, seat=0),
    wire.TableClosed(table_id=T, seq=60, reason="the last player left", table_seed="ab" * 32),
    wire.TableClosed(table_id=T, seq=60, reason="moved"),
    wire.HandStarted(
        **HAND,
        button=1,
        stacks=STACKS,
        commitment=SEALED.commitment,
        leaves=SEALED.leaves,
        client_seeds=SEEDS,
    ),
    wire.AnteTaken(**HAND, seat=0, amount=10, all_in=False),
    wire.TilesDealt(
        **HAND,
        seat=0,
        tiles=(SEALED.tiles[0], SEALED.tiles[1], SEALED.tiles[2]),
        openings=(SEALED.opening(0), SEALED.opening(1), SEALED.opening(2)),
    ),
    wire.TilesDealt(**HAND, seat=1),
    wire.BettingRoundStarted(**HAND, round=1),
    wire.TurnStarted(
        **HAND, seat=0, to_call=10, deadline_ms=1_795_982_336_140, pot=30, seats=CHIPS, legal=LEGAL
    ),
    wire.TurnStarted(**HAND, seat=1, to_call=0, deadline_ms=1_795_982_336_140, pot=20, seats=CHIPS),
    wire.Checked(**HAND, seat=0, ref=8),
    wire.BetPlaced(**HAND, seat=1, amount=10, all_in=False),
    wire.Called(**HAND, seat=0, amount=10, all_in=True),
    wire.Raised(**HAND, seat=0, to=40, amount=40, all_in=False),
    wire.Folded(**HAND, seat=0),
    wire.TurnTimedOut(**HAND, seat=0),
    wire.BetReturned(**HAND, seat=1, amount=20),
    wire.BettingRoundEnded(**HAND, round=1, pot=60),
    wire.FourthTileDealt(**HAND, seat=0, tile=SEALED.tiles[6], opening=SEALED.opening(6)),
    wire.FourthTileDealt(**HAND, seat=1),
    wire.CuttingStarted(**HAND, seats=(0, 1), deadline_ms=1_795_982_213_860),
    wire.CutDeclared(**HAND, seat=0, cut=CUT),
    wire.CutDeclared(**HAND, seat=1),
    wire.Showdown(
        **HAND,
        hands=(
            wire.ShownHand(
                seat=0,
                tiles=("3-3", "2-2", "4-1", "2-1"),
                cut=CUT,
                category=Category.NORMAL,
                openings=OPENED,
            ),
            wire.ShownHand(
                seat=1,
                tiles=("6-6", "5-5", "4-4", "1-1"),
                cut=CutView(pairs=(("5-5", "1-1"), ("6-6", "4-4")), values=(2, 0)),
                category=Category.FOUR_DOUBLES,
                openings=OPENED,
            ),
        ),
    ),
    wire.PotAwarded(**HAND, amount=40, eligible=(0, 1), shares=(SeatAmount(seat=0, amount=40),)),
    wire.HandVoided(**HAND, reason="the server is shutting down", refunds=STACKS),
    wire.HandEnded(**HAND, stacks=STACKS),
)


def type_tag(message: BaseModel) -> str:
    return str(type(message).model_fields["type"].default)


def members(union: Any) -> set[type[BaseModel]]:
    # An Annotated[A | B | ..., Field(discriminator=...)]: the classes are inside the union.
    return set(get_args(get_args(union)[0]))


def bad(frame: str | bytes) -> BadMessage:
    with pytest.raises(BadMessage) as caught:
        decode_client(frame)
    return caught.value


def bet(**fields: Any) -> str:
    return json.dumps({"type": "bet", "table_id": T, "hand_id": 3, "amount": 10, **fields})


# -- round trips -----------------------------------------------------------------


def test_the_examples_cover_every_message_type_of_both_directions() -> None:
    assert {type(m) for m in CLIENT_EXAMPLES} == members(cmd.AnyClientMessage)
    assert {type(m) for m in SERVER_EXAMPLES} == members(wire.AnyServerMessage)


@pytest.mark.parametrize("message", CLIENT_EXAMPLES, ids=lambda m: type_tag(m))
def test_every_client_message_decodes_to_what_was_encoded(message: cmd.ClientMessage) -> None:
    assert decode_client(encode(message)) == message


@pytest.mark.parametrize("message", SERVER_EXAMPLES, ids=lambda m: type_tag(m))
def test_every_server_message_decodes_to_what_was_encoded(message: wire.Reply) -> None:
    assert decode_server(encode(message)) == message


def test_a_frame_is_one_json_object_without_the_fields_left_at_null() -> None:
    frame = json.loads(encode(wire.TilesDealt(**HAND, seat=1)))
    assert frame == {"type": "tiles_dealt", "seat": 1, **HAND}


def test_each_direction_decodes_only_its_own_messages() -> None:
    assert bad(encode(wire.Checked(**HAND, seat=0))).code == "unknown_type"
    with pytest.raises(BadMessage) as caught:
        decode_server(encode(cmd.Check(table_id=T, hand_id=3)))
    assert caught.value.code == "unknown_type"


def test_decoded_messages_cannot_be_changed() -> None:
    message = decode_client(bet())
    with pytest.raises(ValueError, match="frozen"):
        message.id = 5  # type: ignore[misc]


# -- strictness ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "field"),
    [
        (bet(hand_id="10"), "hand_id"),  # a string is not a number
        (bet(amount=1.0), "amount"),  # chips are whole
        (bet(amount=1.5), "amount"),
        (bet(amount=True), "amount"),
        (bet(amount=None), "amount"),
        (bet(amount=[10]), "amount"),
        ('{"type": "bet", "table_id": "t1", "hand_id": 3, "amount": 1e3}', "amount"),
        (bet(table_id=5), "table_id"),
        (bet(table_id="t 1"), "table_id"),
        (bet(hand_id=0), "hand_id"),
        (json.dumps({"type": "hello", "version": "1", "name": "Ann"}), "version"),
        (json.dumps({"type": "hello", "version": 1, "name": 7}), "name"),
        (json.dumps({"type": "create_table", "options": {"ante": "10"}}), "options.ante"),
        (json.dumps({"type": "create_table", "options": {"colour": "red"}}), "options.colour"),
        # A whole-number option that is picked from a list is as strict as the others.
        (
            json.dumps({"type": "create_table", "options": {"betting_rounds": True}}),
            "options.betting_rounds",
        ),
        (
            json.dumps({"type": "create_table", "options": {"betting_rounds": 2.0}}),
            "options.betting_rounds",
        ),
        (json.dumps({"type": "join_table", "table_id": "t1", "buy_in": 100, "seat": 6}), "seat"),
        (json.dumps({"type": "check", "table_id": "t1"}), "hand_id"),
    ],
)
def test_a_field_of_the_wrong_type_or_range_is_refused_by_name(frame: str, field: str) -> None:
    error = bad(frame)
    assert error.code == "invalid_message"
    assert error.message.startswith(field + ":") or f"; {field}:" in error.message


def test_an_unknown_field_is_refused_by_name() -> None:
    error = bad(bet(surprise=1))
    assert (error.code, error.message) == (
        "invalid_message",
        "surprise: Extra inputs are not permitted",
    )


@pytest.mark.parametrize(
    ("frame", "key"),
    [
        ('{"type":"bet","table_id":"t1","hand_id":1,"amount":20,"amount":40}', "amount"),
        ('{"type":"bet","id":1,"table_id":"t1","hand_id":1,"amount":20,"id":2}', "id"),
        ('{"type":"list_hands","table_id":"t1","limit":0, "limit" : 5}', "limit"),
        ('{"type":"create_table","options":{"seats":2,"seats":6},"buy_in":500}', "seats"),
    ],
)
def test_a_key_given_twice_is_refused_by_name(frame: str, key: str) -> None:
    """Read as its last value, a message would mean one thing to the server and may mean
    another to whatever read it on the way (a proxy, a log)."""
    error = bad(frame)
    assert (error.code, error.message) == (
        "invalid_message",
        f"{key}: given twice; send each key once",
    )


@pytest.mark.parametrize("amount", [-1, 0, MAX_CHIPS + 1, 10**40, int("9" * 4000)])
def test_a_negative_zero_or_oversized_amount_is_refused(amount: int) -> None:
    error = bad(bet(amount=amount))
    assert error.code == "invalid_message"
    assert error.message.startswith("amount:")


@pytest.mark.parametrize(
    "fields",
    [
        {"type": "list_tables", "id": None},
        {"type": "hello", "version": 2, "name": "Ann", "token": None},
        {"type": "hello", "version": 2, "name": None, "token": "a-token"},
        {"type": "list_hands", "table_id": None},
        {"type": "create_table", "buy_in": None},
        {"type": "create_table", "options": {"max_bet": None, "max_raises": None}},
        {"type": "join_table", "table_id": "t1", "buy_in": 100, "seat": None, "client_seed": None},
    ],
)
def test_null_is_accepted_where_protocol_md_says_a_field_takes_it(fields: dict[str, Any]) -> None:
    decode_client(json.dumps(fields))


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"type": "list_hands", "limit": None}, "limit"),
        ({"type": "create_table", "options": None}, "options"),
        ({"type": "create_table", "options": {"seats": None}}, "options.seats"),
    ],
)
def test_null_is_refused_where_a_field_has_a_default_of_its_own(
    fields: dict[str, Any], field: str
) -> None:
    """As PROTOCOL.md's "Missing means null" says: left out, such a field takes its
    default; null is not a value it takes, and the error names the field."""
    error = bad(json.dumps(fields))
    assert error.code == "invalid_message"
    assert error.message.startswith(field + ":")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_a_turn_time_that_is_not_a_finite_number_is_refused_as_such(literal: str) -> None:
    """NaN passes no bound, so the bound it was refused by said nothing true of it."""
    error = bad('{"type": "create_table", "options": {"turn_seconds": ' + literal + "}}")
    assert error.code == "invalid_message"
    assert error.message == "options.turn_seconds: Input should be a finite number"


@pytest.mark.parametrize("ref", ["1.5", "-1", "true", '""', str(2**53 + 1), '"' + "x" * 65 + '"'])
def test_a_bad_id_is_refused_with_what_an_id_may_be(ref: str) -> None:
    """Not pydantic's two attempts ("id.constrained-str: ...; id.constrained-int: ..."),
    which name types no client sends."""
    error = bad('{"type": "list_tables", "id": ' + ref + "}")
    assert error.code == "invalid_message"
    assert error.message == "id: a string of 1 to 64 characters, or a whole number from 0 to 2^53"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"type": "set_seed", "table_id": "t1", "client_seed": "é"},
            "client_seed: 1 to 64 letters (a-z, A-Z), digits, _ or -",
        ),
        (
            {"type": "join_table", "table_id": "t1", "buy_in": 100, "client_seed": ""},
            "client_seed: 1 to 64 letters (a-z, A-Z), digits, _ or -",
        ),
        (
            {"type": "watch_table", "table_id": "a b"},
            "table_id: letters (a-z, A-Z), digits, _ or -",
        ),
        (
            {
                "type": "declare_cut",
                "table_id": "t1",
                "hand_id": 1,
                "pairs": [["7-1", "1-1"], ["2-2", "3-3"]],
            },
            'pairs.0.0: a tile, its two ends from 0 to 6 joined by "-", such as "6-1"',
        ),
    ],
)
def test_a_text_of_the_wrong_form_is_refused_with_its_form_in_words(
    fields: dict[str, Any], message: str
) -> None:
    """Not pydantic's "String should match pattern '^[A-Za-z0-9_-]{1,64}$'": an error's
    message is for people, and a seed that is refused should say what a seed may be."""
    error = bad(json.dumps(fields))
    assert error.code == "invalid_message"
    assert error.message == message


def test_the_largest_amount_is_accepted() -> None:
    message = decode_client(bet(amount=MAX_CHIPS))
    assert isinstance(message, cmd.Bet)
    assert message.amount == MAX_CHIPS


@pytest.mark.parametrize("frame", ['{"table_id": "t1"}', "{}", '{"Type": "check"}'])
def test_a_message_without_a_type_is_refused(frame: str) -> None:
    assert bad(frame).code == "invalid_message"
    assert "type" in bad(frame).message


@pytest.mark.parametrize("kind", ["nope", "HELLO", "welcome", ""])
def test_an_unknown_type_is_refused_with_its_own_code(kind: str) -> None:
    error = bad(json.dumps({"type": kind}))
    assert error.code == "unknown_type"
    assert repr(kind) in error.message


@pytest.mark.parametrize(
    ("kind", "said"),
    [(None, "null"), (5, "a number"), (True, "true or false"), (["hello"], "an array")],
)
def test_a_type_that_is_not_a_string_is_refused_saying_what_it_is(kind: object, said: str) -> None:
    # Refused as a type no message has: the tag is looked up before it is checked. It
    # was "no message of type 'None'", pydantic's words for null.
    error = bad(json.dumps({"type": kind, "version": 1}))
    assert error.code == "unknown_type"
    assert error.message == f"'type' names a message, so it is a string, not {said}"


@pytest.mark.parametrize("frame", ["{oops", "", "{'type': 'hello'}", '{"type": "hello",}', b"\xff"])
def test_malformed_json_is_refused_as_bad_json(frame: str | bytes) -> None:
    assert bad(frame).code == "bad_json"


@pytest.mark.parametrize("frame", ["[]", "1", '"hello"', "null", "true"])
def test_json_that_is_not_an_object_is_refused(frame: str) -> None:
    assert bad(frame).code == "invalid_message"


@pytest.mark.parametrize("depth", [300, 100_000])
def test_deep_nesting_is_refused_without_crashing(depth: int) -> None:
    nested = "[" * depth + "]" * depth
    for frame in (nested, bet()[:-1] + f', "id": "deep", "x": {nested}}}'):
        assert bad(frame).code in ("bad_json", "invalid_message")
        message_id(frame)  # must return, whatever it finds


def test_the_id_of_a_deep_frame_is_looked_for_without_recursing_as_deep_as_it_nests() -> None:
    """The json module read the frame for its id, recursing to the interpreter's limit:
    a collection run meanwhile called the server's collector callback there, where it
    failed ("Exception ignored in ... PauseWatch._collected: RecursionError"), and the
    pause it was timing was lost or mistimed."""
    failed: list[RecursionError] = []

    def down(depth: int) -> int:
        return depth if depth == 0 else down(depth - 1)

    def callback(phase: str, info: dict[str, int]) -> None:
        try:
            down(20)
        except RecursionError as error:
            failed.append(error)

    threshold = gc.get_threshold()
    gc.callbacks.append(callback)
    gc.set_threshold(1)
    try:
        assert message_id("[" * 5000) is None
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(callback)
    assert not failed


@given(st.text(max_size=200) | st.binary(max_size=200))
def test_whatever_text_arrives_the_decoder_raises_nothing_but_bad_message(
    frame: str | bytes,
) -> None:
    with contextlib.suppress(BadMessage):
        decode_client(frame)


CLIENT_FIELDS = sorted({name for m in members(cmd.AnyClientMessage) for name in m.model_fields})
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(
    st.sampled_from(sorted({type_tag(m) for m in CLIENT_EXAMPLES})),
    st.dictionaries(st.sampled_from(CLIENT_FIELDS), JSON, max_size=5),
)
def test_any_json_object_of_a_known_type_decodes_or_raises_bad_message(
    kind: str, fields: dict[str, Any]
) -> None:
    error: BadMessage | None = None
    try:
        decode_client(json.dumps({**fields, "type": kind}))
    except BadMessage as caught:
        error = caught
    assert error is None or error.code == "invalid_message"


# -- tiles -----------------------------------------------------------------------


def test_tiles_are_accepted_in_either_order_and_come_out_high_end_first() -> None:
    frame = json.dumps(
        {
            "type": "declare_cut",
            "table_id": T,
            "hand_id": 3,
            "pairs": [["1-6", "0-0"], ["2-3", "5-4"]],
        }
    )
    message = decode_client(frame)
    assert isinstance(message, cmd.DeclareCut)
    assert message.pairs == (("6-1", "0-0"), ("3-2", "5-4"))
    assert json.loads(encode(message))["pairs"] == [["6-1", "0-0"], ["3-2", "5-4"]]


def test_a_server_message_holds_tiles_high_end_first_and_refuses_them_otherwise() -> None:
    # The server always writes the high end first (PROTOCOL.md), so its models check
    # the 28 texts by pattern, without the client's normalising validator.
    for a in range(7):
        for b in range(7):
            frame = json.dumps(
                {"type": "tiles_dealt", **HAND, "seat": 0, "tiles": [f"{a}-{b}"] * 3}
            )
            if a >= b:
                message = decode_server(frame)
                assert isinstance(message, wire.TilesDealt)
                assert message.tiles == (str(Tile.parse(f"{a}-{b}")),) * 3
            else:
                with pytest.raises(BadMessage):
                    decode_server(frame)


@pytest.mark.parametrize("tile", ["7-1", "6-", "61", "6-1 ", " 6-1", "6--1", "6\u20131", "", "a-b"])
def test_anything_but_a_domino_is_refused_where_a_tile_belongs(tile: str) -> None:
    frame = json.dumps(
        {
            "type": "declare_cut",
            "table_id": T,
            "hand_id": 3,
            "pairs": [[tile, "0-0"], ["2-3", "5-4"]],
        }
    )
    error = bad(frame)
    assert error.code == "invalid_message"
    assert error.message.startswith("pairs.0.0:")


# -- names -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Ann", "Ann"),
        ("A\x07n\x00n", "Ann"),  # control characters
        ("A\u200bn\u200dn\ufeff", "Ann"),  # zero-width characters
        ("Ann\u202eeL", "AnneL"),  # a direction override cannot flip what others see
        ("Dealer\ufe0f", "Dealer"),  # a variation selector: it would pass for the bot
        ("A\u034fn\U000e0100n\u180b", "Ann"),  # a joiner and more variation selectors
        ("  Ann   Lee  ", "Ann Lee"),  # leading, trailing and repeated spaces
        ("Ann\u00a0\u00a0Lee", "Ann Lee"),  # no-break spaces count as spaces
        ("\uff21\uff4e\uff4e", "Ann"),  # full-width letters fold to their plain form
        ("x" * 40, "x" * NAME_LENGTH),
        ("Zoë 🂡", "Zoë 🂡"),
    ],
)
def test_names_are_cleaned_before_anyone_sees_them(raw: str, clean: str) -> None:
    assert clean_name(raw) == clean


@pytest.mark.parametrize(
    "raw", ["", "   ", "\u200b\u200d", "\x00\x1b", "\u00a0\t\n", "\u3164", "\uffa0\u115f"]
)
def test_a_name_with_nothing_visible_is_refused(raw: str) -> None:
    with pytest.raises(ValueError, match="visible"):
        clean_name(raw)


def test_a_name_cut_to_length_does_not_end_in_a_space() -> None:
    assert clean_name("x" * (NAME_LENGTH - 1) + " yz") == "x" * (NAME_LENGTH - 1)


def test_names_in_hello_are_cleaned_and_an_invisible_one_is_refused() -> None:
    hello = decode_client(json.dumps({"type": "hello", "version": 1, "name": "  Ann\u200b  "}))
    assert isinstance(hello, cmd.Hello)
    assert hello.name == "Ann"
    error = bad(json.dumps({"type": "hello", "version": 1, "name": "\u200b \u200b"}))
    assert error.code == "invalid_message"
    assert error.message.startswith("name:")
    assert bad(json.dumps({"type": "hello", "version": 1, "name": "x" * 65})).code == (
        "invalid_message"
    )


# -- message_id ------------------------------------------------------------------


@pytest.mark.parametrize("ref", [7, 0, 2**53, "a", "x" * 64, "a\u0001", "tab\there", "\u2028"])
def test_message_id_finds_the_id_of_a_frame_that_is_not_a_valid_message(ref: object) -> None:
    # Any id a valid message may carry, unprintable characters included: its reply
    # names it, so the error for the same id in a frame that is not valid must too.
    assert decode_client(json.dumps({"type": "list_tables", "id": ref})).id == ref
    assert message_id(bet(id=ref, amount="10")) == ref
    assert message_id(json.dumps({"type": "nope", "id": ref})) == ref


@pytest.mark.parametrize(
    "frame",
    [
        "{oops",
        "[1, 2]",
        '"id"',
        json.dumps({"type": "bet"}),
        json.dumps({"id": True}),
        json.dumps({"id": -1}),
        json.dumps({"id": 2**53 + 1}),
        json.dumps({"id": ""}),
        json.dumps({"id": "x" * 65}),
        json.dumps({"id": 1.0}),
        json.dumps({"id": ["a"]}),
        b"\xff\xfe",
    ],
)
def test_message_id_is_none_when_there_is_no_valid_id(frame: str | bytes) -> None:
    assert message_id(frame) is None


def test_message_id_never_names_an_id_the_codec_would_refuse() -> None:
    # message_id must not name an id that decode_client would refuse as an id.
    for ref in (True, -1, 2**53 + 1, "", "x" * 65):
        error = bad(bet(id=ref))
        assert error.message.startswith("id")
        assert message_id(bet(id=ref)) is None


# -- table options ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"seats": 3, "min_players": 4}, "min_players"),
        ({"min_buy_in": 500, "max_buy_in": 100}, "min_buy_in"),
        ({"min_bet": 20, "max_bet": 10}, "max_bet"),
        ({"seats": 6, "max_buy_in": 200_000_000_000}, "times seats (6) exceeds"),
        ({"seats": 7}, "options.seats"),
        ({"betting_rounds": 3}, "options.betting_rounds"),
        ({"tie_rule": "coin_flip"}, "options.tie_rule"),
        ({"turn_seconds": 0}, "options.turn_seconds"),
    ],
)
def test_table_options_that_contradict_each_other_or_the_rules_are_refused(
    options: dict[str, Any], problem: str
) -> None:
    error = bad(json.dumps({"type": "create_table", "options": options}))
    assert error.code == "invalid_message"
    assert problem in error.message


def test_options_that_contradict_each_other_are_refused_in_the_models_own_words() -> None:
    error = bad(json.dumps({"type": "create_table", "options": {"min_bet": 50, "max_bet": 20}}))
    assert error.message == "options: max_bet (20) is below min_bet (50)"
