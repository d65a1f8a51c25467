"""The payouts as the browser checks them: payouts.js against the Python reference
(``qiuqiu.cli.payouts``) on hands the real engine plays at random, honest and
tampered with; then whole hands against a real server, honest or paying every
showdown's pot to the dealer bot (tests/server/cheats.py), where the page must check
each hand and fail loudly at the one it was cheated of."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright.async_api import expect

from qiuqiu.cli.bot import play
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.payouts import PaidWrong, verify_history
from qiuqiu.engine import ALL_TILES, Hand, HandState, Phase, rank
from qiuqiu.engine.ranking import Category, TieRule, all_ranks, compare_ranks, cuts, rank_with_cut
from qiuqiu.protocol import TableOptions, fairness
from qiuqiu.protocol import server as wire
from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer
from qiuqiu.server.views import HandWire
from tests.cli.test_payouts import STACKS, Wild
from tests.server import cheats
from tests.web.conftest import QUICK, Player, screenshot
from tests.web.evening_helpers import replayed_to_the_end
from tests.web.test_browser import CHECK_OR_CALL, OpenPlayer, frames_of, sign_in
from tests.web.test_fairness import at_the_bot_table, play_until_checked

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture
def config() -> ServerConfig:
    return QUICK


SEED = 20261205
"""The generator's seed: a failure names its case, and the same seed makes it again."""
HANDS = 400
TABLE = "tpay0001"


@dataclass
class Played:
    """A hand the engine played at random, as a spectator's events tell it."""

    options: TableOptions
    events: list[dict[str, Any]] = field(default_factory=list)


def random_options(rng: random.Random) -> TableOptions:
    min_bet = rng.choice((1, 2, 5, 10))
    return TableOptions(
        seats=6,
        ante=rng.choice((0, 1, 5, 10, 25)),
        min_bet=min_bet,
        max_bet=rng.choice((None, None, min_bet, 3 * min_bet, 40)),
        max_raises=rng.choice((None, None, 0, 1, 3)),
        betting_rounds=rng.choice((1, 2)),
        tie_rule=rng.choice(("highest_tile", "split")),
        manual_split=rng.choice((False, True)),
    )


def random_deck(rng: random.Random, dealt: int) -> list[str]:
    """A shuffled deck, one time in three rigged so that the first two seats in acting
    order hold hands of equal strength (a split under ``tie_rule="split"``)."""
    rigged = rng.random() < 1 / 3
    while True:
        deck = [str(tile) for tile in ALL_TILES]
        rng.shuffle(deck)
        if not rigged:
            return deck
        hands = [
            Hand(ALL_TILES_BY_TEXT[deck[p]] for p in (3 * i, 3 * i + 1, 3 * i + 2, 3 * dealt + i))
            for i in (0, 1)
        ]
        if rank(hands[0]).strength == rank(hands[1]).strength:
            return deck


ALL_TILES_BY_TEXT = {str(tile): tile for tile in ALL_TILES}


def play_at_random(rng: random.Random, hand_id: int) -> Played:
    """One hand of 2 to 6 seats played through the engine with random legal moves
    (now and then all in, or out of time), its events written by the server's own
    :class:`HandWire` as a spectator gets them."""
    options = random_options(rng)
    seats = sorted(rng.sample(range(6), rng.randint(2, 6)))
    # Short stacks too, so that antes and calls put seats all in and make side pots.
    stacks = {seat: rng.choice((1, 3, 8, 20, 60, 150, 400, 1000)) for seat in seats}
    button = rng.choice(seats)
    salts = [rng.randbytes(fairness.SALT_BYTES).hex() for _ in ALL_TILES]
    sealed = fairness.seal(random_deck(rng, len(seats)), salts)
    state = HandState.start(
        options.rules(), stacks, button, [ALL_TILES_BY_TEXT[t] for t in sealed.tiles]
    )
    wire_ = HandWire(TABLE, hand_id, sealed, [(seat, "") for seat in seats])
    played = Played(options)
    seq = iter(range(1, 1000))
    played.events.append(
        json.loads(wire_.started(next(seq), button, sorted(stacks.items())).public_frame.text)
    )

    def publish(events: tuple[Any, ...]) -> None:
        for event in events:
            publication = wire_.event(event, next(seq))
            if publication is not None:
                played.events.append(json.loads(publication.public_frame.text))

    publish(state.log[1:])
    while not state.is_over:
        if state.phase is Phase.CUTTING:
            cutter = rng.choice(state.pending_cuts)
            if rng.random() < 0.2:
                publish(state.time_out(cutter))
            else:
                hand = Hand(state.seats[cutter].tiles)
                publish(state.declare_cut(cutter, rng.choice(cuts(hand))))
            continue
        seat = state.actor
        assert seat is not None
        publish(state.time_out(seat) if rng.random() < 0.05 else random_move(rng, state, seat))
    return played


def random_move(rng: random.Random, state: HandState, seat: int) -> tuple[Any, ...]:
    """A legal move of ``seat`` at random: checks and calls the likeliest, and a bet or
    raise as small, as large (all in, or the table's limit) or anything between."""
    legal = state.legal_actions(seat)
    kinds = [
        *(["check"] * 2 if legal.check else []),
        *(["call"] * 2 if legal.call is not None else []),
        *(["fold"] if legal.fold else []),
        *(["bet"] if legal.bet is not None else []),
        *(["raise"] if legal.raise_to is not None else []),
    ]
    match rng.choice(kinds):
        case "check":
            return state.check(seat)
        case "call":
            return state.call(seat)
        case "fold":
            return state.fold(seat)
        case "bet":
            assert legal.bet is not None
            low, high = legal.bet.min, legal.bet.max
            return state.bet(seat, rng.choice((low, high, rng.randint(low, high))))
        case _:
            assert legal.raise_to is not None
            low, high = legal.raise_to.min, legal.raise_to.max
            return state.raise_to(seat, rng.choice((low, high, rng.randint(low, high))))


def ended_stacks(played: Played) -> dict[int, int]:
    (ended,) = [e for e in played.events if e["type"] == "hand_ended"]
    return {x["seat"]: x["amount"] for x in ended["stacks"]}


def paid_otherwise(played: Played, stacks: dict[int, int]) -> Played:
    """The hand with ``hand_ended`` (and nothing else) saying ``stacks``."""
    events = [
        {**e, "stacks": [{"seat": s, "amount": a} for s, a in sorted(stacks.items())]}
        if e["type"] == "hand_ended"
        else e
        for e in played.events
    ]
    return Played(played.options, events)


def moved(stacks: dict[int, int], chips: int, source: int, to: int) -> dict[int, int]:
    after = dict(stacks)
    after[source] -= chips
    after[to] += chips
    return after


def tamperings(played: Played) -> dict[str, Played]:
    """The ways this hand can be paid or told wrong, each as a server doing it would
    tell it, every chip still accounted for: only the rules can tell."""
    stacks = ended_stacks(played)
    pots = [e for e in played.events if e["type"] == "pot_awarded"]
    returned = [e for e in played.events if e["type"] == "bet_returned"]
    out: dict[str, Played] = {}
    for pot in pots:
        winner = pot["shares"][0]["seat"]
        others = [s for s in stacks if s not in {x["seat"] for x in pot["shares"]}]
        if others and pot["amount"]:
            to = others[0]
            out["a pot to the wrong seat"] = paid_otherwise(
                played, moved(stacks, pot["shares"][0]["amount"], winner, to)
            )
        if len(pot["shares"]) > 1:
            first, second = pot["shares"][0]["seat"], pot["shares"][1]["seat"]
            out["a split pot shared wrong"] = paid_otherwise(
                played, moved(stacks, 1, first, second)
            )
    for back in returned:
        # Kept in the pot, and paid to whoever took the main pot (or anyone else).
        owner = back["seat"]
        to = next(
            (x["seat"] for p in pots for x in p["shares"] if x["seat"] != owner),
            next(s for s in stacks if s != owner),
        )
        out["an unmatched bet not given back"] = paid_otherwise(
            played, moved(stacks, back["amount"], owner, to)
        )
    for i, e in enumerate(played.events):
        if e["type"] == "showdown" and pots:
            # The winner's hand left out, paid all the same.
            hidden = pots[0]["shares"][0]["seat"]
            events = list(played.events)
            events[i] = {**e, "hands": [h for h in e["hands"] if h["seat"] != hidden]}
            out["a hand still in hidden at the showdown"] = Played(played.options, events)
    bet = 0
    for i, e in enumerate(played.events):
        if e["type"] == "betting_round_started":
            bet = 0
        elif e["type"] == "bet_placed":
            bet = e["amount"]
        elif e["type"] == "raised":
            # A raise to the bet it faced: no raise at all, which the rules never allow.
            events = [*played.events[:i], {**e, "to": bet}, *played.events[i + 1 :]]
            out["a raise that raises nothing"] = Played(played.options, events)
            break
    moves = [i for i, e in enumerate(played.events) if e["type"] in MOVES]
    if len(moves) >= 2:
        # Two moves told in each other's place: turns out of order, the same chips.
        i, j = moves[0], moves[1]
        events = list(played.events)
        events[i], events[j] = events[j], events[i]
        if events[i]["seat"] != events[j]["seat"]:
            out["two moves in each other's turn"] = Played(played.options, events)
    return out


MOVES = {"checked", "folded", "bet_placed", "called", "raised"}


def python_verdict(played: Played) -> bool:
    """The reference's answer for the same hand (``verify_history``)."""
    stacks = ended_stacks(played)
    (started,) = [e for e in played.events if e["type"] == "hand_started"]
    before = {x["seat"]: x["amount"] for x in started["stacks"]}
    hand = wire.PlayedHand(
        table_id=TABLE,
        hand_id=started["hand_id"],
        voided=False,
        seats=tuple(
            wire.SeatResult(seat=s, account_id=f"a{s}", before=before[s], after=stacks[s])
            for s in sorted(before)
        ),
        events=tuple(played.events),
    )
    try:
        verify_history(played.options, hand)
    except PaidWrong:
        return False
    return True


CHECK = """async (cases) => {
  const { checkPayouts } = await import("./payouts.js");
  return cases.map(([options, events]) => checkPayouts(options, events));
}"""


async def test_payouts_js_agrees_with_the_python_reference_on_random_and_tampered_hands(
    open_player: OpenPlayer,
) -> None:
    rng = random.Random(SEED)
    cases: list[tuple[str, Played]] = []
    for n in range(HANDS):
        hand = play_at_random(rng, n + 1)
        cases.append((f"hand {n + 1}", hand))
        cases += [(f"hand {n + 1}, {how}", p) for how, p in tamperings(hand).items()]
    player = await open_player()
    got = await player.page.evaluate(
        CHECK, [[p.options.model_dump(mode="json"), p.events] for _, p in cases]
    )
    for (name, played), verdict in zip(cases, got, strict=True):
        expected = python_verdict(played)
        assert verdict["ok"] is expected, f"{name} (seed {SEED}): {verdict['detail']}"
        # Every tampering is caught by the reference; the honest hands all check.
        assert expected is ("," not in name), name
    # What the hands covered, so that a change to the generator cannot thin it out.
    kinds = {how.split(", ")[1] for how, _ in cases if ", " in how}
    assert kinds == {
        "a pot to the wrong seat",
        "a split pot shared wrong",
        "a hand still in hidden at the showdown",
        "a raise that raises nothing",
        "an unmatched bet not given back",
        "two moves in each other's turn",
    }
    honest = [p for name, p in cases if "," not in name]
    pots = [sum(e["type"] == "pot_awarded" for e in p.events) for p in honest]
    assert max(pots) >= 3, "side pots"
    assert sum(any(e["type"] == "showdown" for e in p.events) for p in honest) > HANDS / 4
    assert any(
        p.options.manual_split and any(e["type"] == "showdown" for e in p.events) for p in honest
    )
    assert any(e["type"] == "turn_timed_out" for p in honest for e in p.events)
    showdowns = [any(e["type"] == "showdown" for e in p.events) for p in honest]
    assert not all(showdowns), "a walk-over"


SPECIAL = [r for r in all_ranks() if r.category is not Category.NORMAL]

RANKS = """async (pairs) => {
  const { compareShown } = await import("./hands.js");
  return pairs.map(([a, b, tieRule]) => Math.sign(compareShown(a, b, tieRule)));
}"""


async def test_hands_js_orders_hands_as_the_engine_does_under_either_tie_rule(
    open_player: OpenPlayer,
) -> None:
    """Two hands at random, each scored by its best cut or by a cut at random as a
    manual split declares it: compareShown's verdict is the engine's."""
    rng = random.Random(SEED)
    pairs: list[Any] = []
    expected: list[int] = []
    for _ in range(4000):
        tiles = rng.sample(ALL_TILES, 8)
        ranks = []
        for hand in (Hand(tiles[:4]), Hand(tiles[4:])):
            if rng.random() < 0.1:
                hand = rng.choice(SPECIAL).hand
            cut = rank(hand).cut if rng.random() < 0.5 else rng.choice(cuts(hand))
            ranks.append(rank_with_cut(hand, cut))
        tie_rule: TieRule = rng.choice(("highest_tile", "split"))
        pairs.append(
            [
                {
                    "tiles": [str(t) for t in r.hand.tiles],
                    "cut": {"values": list(r.pairs)},
                    "category": r.category.value,
                }
                for r in ranks
            ]
            + [tie_rule]
        )
        expected.append(compare_ranks(ranks[0], ranks[1], tie_rule))
    player = await open_player()
    assert await player.page.evaluate(RANKS, pairs) == expected


# -- whole hands against the server ----------------------------------------------


def seen_paid_right(player: Player, hand_id: int) -> bool:
    """The reference's answer for hand ``hand_id`` as this player's page got it."""
    (created,) = frames_of(player, "table_created")
    events = [f for f in player.frames if f.get("hand_id") == hand_id and "seq" in f]
    return python_verdict(Played(TableOptions(**created["table"]["options"]), events))


async def test_each_honest_hand_at_the_bot_table_is_paid_as_the_rules_say(
    open_player: OpenPlayer,
) -> None:
    ann = await at_the_bot_table(open_player)
    for hand in (1, 2, 3):
        await play_until_checked(ann.page, hand)
        verdict = ann.page.locator(f".result[data-hand='{hand}'] .verify.ok")
        await expect(verdict).to_contain_text("Paid as the rules say.")
        assert seen_paid_right(ann, hand)
    await expect(ann.page.locator(".log .ok").last).to_contain_text("Paid as the rules say.")
    replay = await replayed_to_the_end(ann.page, 1)
    await expect(replay.locator(".verify.ok")).to_contain_text("Paid as the rules say.")


async def test_a_pot_paid_to_the_bot_that_lost_it_fails_the_hand_loudly_live_and_replayed(
    open_player: OpenPlayer,
) -> None:
    """Every tile checks and every chip is accounted for: only paying the hand again
    shows it. The page calls each hand the reference calls right right, and fails the
    first it calls wrong, at once and again when the history replays it."""
    with cheats.house_takes_the_pot():
        ann = await at_the_bot_table(open_player)
        page = ann.page
        # Checking and calling to every showdown: the player wins one within a few hands.
        for hand in range(1, 40):
            await play_until_checked(page, hand)
            if not seen_paid_right(ann, hand):
                break
            await expect(page.locator(f".result[data-hand='{hand}'] .verify.ok")).to_contain_text(
                "Paid as the rules say."
            )
        else:
            pytest.fail("the player won no showdown in 40 hands")
        failed = page.locator(f".result[data-hand='{hand}'] .verify.bad")
        await expect(failed).to_contain_text("PAYOUT CHECK FAILED")
        await expect(failed).to_contain_text(f"Hand #{hand} was not paid as the rules say: seat")
        await expect(failed).to_contain_text("Do not trust this server.")
        await expect(page.locator(".log .bad")).to_contain_text(
            f"PAYOUT CHECK FAILED: Hand #{hand} was not paid"
        )
        # The deal's check comes after: its tiles check, and the log says so without
        # calling the hand verified under the red line.
        await expect(page.locator(".log")).to_contain_text("The chips do not: see above.")
        # Nor does it explain the pot by the hands shown: the server's award breaks them.
        await expect(page.locator(f".result[data-hand='{hand}'] .why")).to_have_count(0)
        replay = await replayed_to_the_end(page, hand)
        await expect(replay.locator(".verify.bad")).to_contain_text("PAYOUT CHECK FAILED")
        await page.screenshot(path=screenshot("payout-check-failed"), full_page=True)


async def test_a_hand_watched_from_its_middle_is_paid_again_from_the_events_its_snapshot_carries(
    open_player: OpenPlayer,
) -> None:
    """Cici starts watching while hand 1 waits for Ann's move: her snapshot carries
    the hand's events so far, so hand 1 is paid again as hand 2, seen from its start,
    is. A snapshot without them (a server older than they are) leaves the hand
    unchecked rather than called wrong."""
    ann = await at_the_bot_table(open_player)
    await expect(ann.page.locator(CHECK_OR_CALL)).to_be_visible()
    (created,) = frames_of(ann, "table_created")
    cici = await open_player()
    await sign_in(cici.page, "Cici")
    await cici.page.click(
        f".table-row[data-table-id='{created['table']['table_id']}'] [data-action=watch]"
    )
    await expect(cici.page.locator(".role")).to_have_text("Watching")
    await play_until_checked(ann.page, 1)
    await play_until_checked(cici.page, 1)
    (snapshot, *_) = frames_of(cici, "table_snapshot")
    assert snapshot["table"]["hand"]["hand_id"] == 1
    assert snapshot["table"]["hand"]["events"][0]["type"] == "hand_started"
    for hand in (1, 2):
        if hand == 2:
            await play_until_checked(ann.page, 2)
            await play_until_checked(cici.page, 2)
        await expect(cici.page.locator(f".result[data-hand='{hand}'] .verify")).to_contain_text(
            "Paid as the rules say."
        )
    without_events = {**snapshot, "table": {**snapshot["table"]}}
    without_events["table"]["hand"] = {
        k: v for k, v in snapshot["table"]["hand"].items() if k != "events"
    }
    played = await cici.page.evaluate(
        """async (snapshot) => {
            const { TableState } = await import("./state.js");
            return new TableState(snapshot, () => {}).played;
        }""",
        without_events,
    )
    assert played is None


KEEP_WHAT_IS_SHOWN = """() => {
  window.verdicts = {};
  window.failures = [];
  new MutationObserver(() => {
    const result = document.querySelector(".result");
    const verify = result?.querySelector(".verify:not(.pending)");
    if (verify) window.verdicts[result.dataset.hand] = verify.innerText;
    for (const bad of document.querySelectorAll(".log .bad")) {
      if (!window.failures.includes(bad.innerText)) window.failures.push(bad.innerText);
    }
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
}"""
"""Keep, in the page, each hand's verdict and each failure the log says as they show."""


WILD = ServerConfig(port=0, hand_pause=0.5, bot_delay=0.05, grace=30.0, starting_balance=10_000)
"""Hands one after the other, and players rich enough for the stacks they sit with."""
HANDS_WATCHED = 20
HANG = 240.0
"""Seconds the hands may take before the test gives up (not a timing check)."""


@pytest.mark.parametrize("config", [WILD])
async def test_a_spectator_finds_every_wild_hand_of_a_real_table_paid_as_the_rules_say(
    server: QiuQiuServer, open_player: OpenPlayer
) -> None:
    """Four players at random, of four stack sizes, at a table of two rounds where they
    cut their own hands and equal hands split: side pots, splits, folds and cuts that
    are not the best, every one paid by the real server, none called wrong."""
    # A bet or raise adds 40 at most, twice a round, so that the short stacks go all in
    # (side pots) while the long ones last the hands the test watches.
    options = TableOptions(
        seats=4,
        dealer_bot=False,
        max_bet=40,
        max_raises=2,
        betting_rounds=2,
        manual_split=True,
        tie_rule="split",
    )
    cici = await open_player()
    await sign_in(cici.page, "Cici")
    async with contextlib.AsyncExitStack() as stack:
        conns = [
            await stack.enter_async_context(await Connection.open(server.url, name=f"P{n}"))
            for n in range(len(STACKS))
        ]
        table, _ = await conns[0].open_table(options, buy_in=STACKS[0])
        await cici.page.click(f".table-row[data-table-id='{table.table_id}'] [data-action=watch]")
        await expect(cici.page.locator(".role")).to_have_text("Watching")
        for conn, chips in zip(conns[1:], STACKS[1:], strict=True):
            await conn.join_table(table.table_id, buy_in=chips)
        plays = [
            asyncio.create_task(play(Wild(n), conn, table.table_id)) for n, conn in enumerate(conns)
        ]
        # Every result shown while the table plays its hands, and any failure the log
        # says, kept by the page as it shows them: read from here between two DOM
        # reads, one shown for half a second was missed on a busy machine.
        await cici.page.evaluate(KEEP_WHAT_IS_SHOWN)
        try:
            # Only against a hang: in a full run on two cores the hands took 60 s (15 alone).
            async with asyncio.timeout(HANG):
                while (
                    len(frames_of(cici, "hand_ended")) < HANDS_WATCHED
                    and sum(not p.done() for p in plays) > 1
                ):
                    await asyncio.sleep(0.05)
        finally:
            for task in plays:
                task.cancel()
        verdicts, failures = await cici.page.evaluate("[window.verdicts, window.failures]")
    assert not failures
    assert len(verdicts) >= 6, verdicts
    assert all("Paid as the rules say." in v for v in verdicts.values()), verdicts
