"""The arena: duplicate matches at engine speed, with the SDK's own Turn objects.

Short matches check that chips are conserved in every half, that the second
half deals each bot exactly the tiles the other had, that the dealer never
answers illegally against the exploiting bots, that an illegal answer is
played as a time-out and counted (the command line itself: test_command.py).
"""

from __future__ import annotations

import json
import random
import statistics
import textwrap
from pathlib import Path

import pytest

from qiuqiu.cli.__main__ import main
from qiuqiu.cli.arena import table
from qiuqiu.cli.arena.match import TABLE_ID, duplicate_match, half_width, t95, tiles_swapped
from qiuqiu.cli.arena.seats import Entrant, Player, SdkPlayer, entrant
from qiuqiu.cli.bot import Turn
from qiuqiu.cli.deals import DealChecked
from qiuqiu.cli.game import SeatState, TableState
from qiuqiu.cli.turns import turn_of
from qiuqiu.engine import HandState, TableRules, shuffled_deck
from qiuqiu.protocol import TableOptions, decode_server
from qiuqiu.protocol import server as wire
from qiuqiu.server import views
from qiuqiu.server.frames import Frame
from tests.cli.conftest import bot_module

ROOT = Path(__file__).resolve().parents[3]
CALLER = str(ROOT / "clients/examples/always_call.py")
RANKER = str(ROOT / "clients/examples/tile_ranker.py")
EXPLOITERS = ROOT / "bench/exploiters.py"

RECORDER = """
from qiuqiu.cli.bot import Action, Bot, Call, Check, Turn

SEEN: list[Turn] = []


class Recorder(Bot):
    def decide(self, turn: Turn) -> Action:
        SEEN.append(turn)
        return Check() if turn.legal.check else Call()
"""


def play(a: Entrant, b: Entrant, deals: int, seed: int = 1) -> tuple[list[float], list[int]]:
    sums: list[int] = []
    result = duplicate_match(
        a,
        b,
        deals=deals,
        options=TableOptions(),
        buy_in=500,
        seed=seed,
        house=lambda: random.Random(3),
        check=lambda deal, half, total: sums.append(total),
    )
    return result.scores, sums


def test_chips_are_conserved_in_both_halves_of_every_deal() -> None:
    scores, sums = play(entrant(RANKER), entrant(CALLER), deals=60)
    assert len(sums) == 120
    assert set(sums) == {0}
    assert len(scores) == 60
    # Duplicate play cancels luck, not skill: the ranker's edge over a caller shows.
    assert statistics.mean(scores) > 0


def test_the_same_seed_plays_the_same_match() -> None:
    assert play(entrant(RANKER), entrant("dealer"), deals=40) == play(
        entrant(RANKER), entrant("dealer"), deals=40
    )


def test_each_bot_gets_the_others_tiles_in_the_second_half(tmp_path: Path) -> None:
    bot = tmp_path / "recorder.py"
    bot.write_text(textwrap.dedent(RECORDER))
    first, second = entrant(f"{bot}:Recorder"), Entrant("other", f"{bot}:Recorder")
    play(first, second, deals=1, seed=8)
    SEEN = bot_module(f"{bot}:Recorder").SEEN

    # Two checkers see one turn each per half: half one's seats, then half two's.
    assert len(SEEN) == 4
    half_one = {t.seat: t.tiles for t in SEEN[:2]}
    half_two = {t.seat: t.tiles for t in SEEN[2:]}
    assert half_one[0] == half_two[0]
    assert half_one[1] == half_two[1]
    assert half_one[0] != half_one[1]
    # A Turn is the SDK's, with what the seat may see: three tiles and the legal actions.
    assert all(len(t.tiles) == 3 and t.legal.check for t in SEEN)


def test_a_bots_table_options_say_whether_the_dealer_bot_sits_there(tmp_path: Path) -> None:
    bot = tmp_path / "recorder.py"
    bot.write_text(textwrap.dedent(RECORDER))
    recorder = entrant(f"{bot}:Recorder")
    play(recorder, entrant(CALLER), deals=2)
    SEEN = bot_module(f"{bot}:Recorder").SEEN
    assert SEEN
    assert not any(t.options.dealer_bot for t in SEEN), "as at a table opened with --no-bot"
    SEEN.clear()
    play(recorder, entrant("dealer"), deals=2)
    assert SEEN
    assert all(t.options.dealer_bot for t in SEEN)


def test_a_bot_gets_the_turns_a_client_makes_of_the_same_frames_off_the_wire(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The arena hands its players the frames' models; a network client decodes the
    same texts itself. Replayed through the client's decoder into a fresh state,
    they make every Turn the bot was given, field for field."""
    bot = tmp_path / "for_the_wire.py"
    bot.write_text(textwrap.dedent(RECORDER))
    texts: dict[Player, list[str]] = {}
    publish = table._Publisher.publish

    def recording(self: table._Publisher, published: views.Publication) -> None:
        for seat, player in self.players.items():
            texts.setdefault(player, []).append(published.frame_for(seat).text)
        publish(self, published)

    monkeypatch.setattr(table._Publisher, "publish", recording)
    options = TableOptions(betting_rounds=2)
    duplicate_match(
        entrant(f"{bot}:Recorder"),
        entrant("dealer"),
        deals=30,
        options=options,
        buy_in=500,
        seed=6,
        house=lambda: random.Random(4),
    )
    SEEN = bot_module(f"{bot}:Recorder").SEEN

    players = [p for p in texts if isinstance(p, SdkPlayer)]
    assert len(players) == 2  # one for each half
    made: list[Turn | None] = []
    for player in players:
        seat = player.seat
        state = TableState(TABLE_ID, options, seq=0, you=seat)
        state.seats[seat] = SeatState(seat, player.name, False, 500)
        state.seats[1 - seat] = SeatState(1 - seat, "dealer", True, options.max_buy_in)
        for text in texts[player]:
            message = decode_server(text)
            assert isinstance(message, wire.TableEvent)
            state.apply(message)
            if isinstance(message, wire.TurnStarted) and message.seat == seat:
                made.append(turn_of(state))
    assert len(SEEN) > 60
    # The halves take turns deal by deal; each half's turns in its own order.
    assert sorted(made, key=SEEN.index) == SEEN


def test_every_hand_the_arena_deals_passes_the_clients_check_of_the_deal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    states: list[TableState] = []
    salts: dict[tuple[int, int, int], str] = {}
    """By the player's state (one each half), hand and position."""
    deliver = SdkPlayer.deliver_frame

    def seen(self: SdkPlayer, frame: Frame) -> None:
        if self.state not in states:
            self.state.deals.checking = True  # as a client on the network checks them
            states.append(self.state)
        message = frame.message
        if isinstance(message, wire.TilesDealt) and message.openings:
            for o in message.openings:
                salts[(states.index(self.state), message.hand_id, o.position)] = o.salt
        deliver(self, frame)

    monkeypatch.setattr(SdkPlayer, "deliver_frame", seen)
    play(entrant(RANKER), entrant("dealer"), deals=40)
    assert len(states) == 2
    for state in states:
        checks = state.deals.checks
        assert state.deals.tampered is None
        assert len(checks) == 40
        assert all(isinstance(c, DealChecked) and c.tiles >= 3 for c in checks.values())
    # Every position a seat is dealt, hand after hand, is sealed with a salt of its own.
    for half in (0, 1):
        mine = [salt for (at, _, _), salt in salts.items() if at == half]
        assert len(set(mine)) == len(mine) == 40 * 3


@pytest.mark.parametrize(
    "exploiter",
    ["AlwaysShove", "AlwaysMinBet", "FoldToRaise", "SizedByStrength", "OffTreeSizer", "MinRaiser"],
)
def test_the_dealer_answers_every_exploiter_legally(exploiter: str) -> None:
    result = duplicate_match(
        entrant(f"{EXPLOITERS}:{exploiter}"),
        entrant("dealer"),
        deals=60,
        options=TableOptions(),
        buy_in=500,
        seed=2,
        house=lambda: random.Random(5),
    )
    assert result.answers.illegal == {exploiter: 0, "dealer": 0}


@pytest.mark.parametrize("opponent", [CALLER, "dealer"])
def test_at_a_manual_split_table_every_seat_cuts_legally(opponent: str) -> None:
    sums: list[int] = []
    result = duplicate_match(
        entrant(RANKER),
        entrant(opponent),
        deals=30,
        options=TableOptions(manual_split=True, betting_rounds=2),
        buy_in=500,
        seed=3,
        house=lambda: random.Random(2),
        check=lambda deal, half, total: sums.append(total),
    )
    assert set(sums) == {0}
    assert set(result.answers.illegal.values()) == {0}


def test_an_illegal_answer_is_played_as_a_time_out_and_counted(tmp_path: Path) -> None:
    bot = tmp_path / "too_small.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bet, Bot, Turn


            class TooSmall(Bot):
                def decide(self, turn: Turn) -> Action:
                    return Bet(1)
            """
        )
    )
    result = duplicate_match(
        entrant(str(bot)),
        entrant(CALLER),
        deals=10,
        options=TableOptions(),
        buy_in=500,
        seed=1,
        house=lambda: random.Random(1),
    )
    assert result.answers.illegal["too_small"] >= 10
    assert result.answers.illegal["always_call"] == 0
    assert result.answers.first_illegal == {
        "too_small": "Bet(amount=1) in hand 1 (the smallest bet is 10, not 1)"
    }


def test_the_command_says_which_answer_was_illegal_first_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "raises_first.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bot, Raise, Turn


            class RaisesFirst(Bot):
                def decide(self, turn: Turn) -> Action:
                    return Raise(30)
            """
        )
    )
    argv = ["arena", str(bot), CALLER, "--hands", "4"]
    assert main(argv) == 0
    said = "Raise(to=30) in hand 1 (nobody has bet yet: bet instead)"
    assert (
        f"  raises_first answered 4 turns illegally (played as time-outs), the first: {said}\n"
        in (capsys.readouterr().out)
    )
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["first_illegal"] == {"raises_first": said, "always_call": None}


@pytest.mark.parametrize(
    ("answered", "said"),
    [
        ("None", "its answer was None, not Check()"),
        ('"check"', "its answer was 'check', not Check()"),
        ('Bet("10")', "Bet(amount='10'): chips are a whole number"),
    ],
)
def test_an_answer_that_is_no_action_stops_the_command_naming_the_bot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], answered: str, said: str
) -> None:
    bot = tmp_path / "confused.py"
    bot.write_text(
        textwrap.dedent(
            f"""
            from qiuqiu.cli.bot import Bet, Bot, Turn


            class Confused(Bot):
                def decide(self, turn: Turn):
                    return {answered}
            """
        )
    )
    assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"qiuqiu arena: confused raised TypeError in hand 1: {said}")
    # No line of the bot's raised: the SDK's frames that judged the answer are not its.
    assert len(err.strip().splitlines()) == 1, err


def test_a_bot_that_calls_sys_exit_stops_the_command_naming_it_and_the_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "quitter.py"
    bot.write_text(
        textwrap.dedent(
            """
            import sys

            from qiuqiu.cli.bot import Action, Bot, Turn


            class Quitter(Bot):
                def decide(self, turn: Turn) -> Action:
                    sys.exit("had enough")
            """
        )
    )
    assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("qiuqiu arena: quitter raised SystemExit in hand 1: had enough"), err


def test_a_bot_without_a_decide_of_its_own_is_told_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "misspelt.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bot, Check, Turn


            class Misspelt(Bot):
                def decied(self, turn: Turn) -> Action:
                    return Check()
            """
        )
    )
    assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 2
    err = capsys.readouterr().err
    assert "misspelt.py: Misspelt has no decide(self, turn) of its own" in err, err
    assert "Traceback" not in err, "refused as it is loaded, before the SDK's decide raises"


def test_a_decide_written_async_is_named_as_the_mistake_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "eager.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bot, Check, Turn


            class Eager(Bot):
                async def decide(self, turn: Turn) -> Action:
                    return Check()
            """
        )
    )
    assert main(["arena", str(bot), "dealer", "--hands", "4"]) == 1
    err = capsys.readouterr().err
    assert "(decide is async def): write def decide" in err, err
    assert "never awaited" not in err


def test_a_cut_of_the_tiles_the_turn_gave_is_an_answer(tmp_path: Path) -> None:
    """``turn.tiles`` are ``Tile`` objects; a cut made of them is the cut of their text."""
    bot = tmp_path / "own_cut.py"
    bot.write_text(
        textwrap.dedent(
            """
            from qiuqiu.cli.bot import Action, Bot, Call, Check, Split, Turn


            class OwnCut(Bot):
                def decide(self, turn: Turn) -> Action:
                    return Check() if turn.legal.check else Call()

                def cut(self, turn: Turn) -> Split:
                    a, b, c, d = turn.tiles
                    return Split((a, b), (c, d))
            """
        )
    )
    result = duplicate_match(
        entrant(str(bot)),
        entrant(CALLER),
        deals=20,
        options=TableOptions(manual_split=True),
        buy_in=500,
        seed=1,
        house=lambda: random.Random(1),
    )
    assert result.answers.illegal["own_cut"] == 0


def test_the_dealer_beats_the_caller_and_the_ranker_by_more_than_the_threshold_policy() -> None:
    """Seeded, so one fixed run: the figures of docs/dealer-bot.md in small (against the
    caller the margin is within the noise of a run this size, as it is at 100,000)."""
    margins = {}
    for opponent, deals in ((CALLER, 3000), (RANKER, 1000)):
        solved, _ = play(entrant(opponent), entrant("dealer"), deals=deals, seed=4)
        threshold, _ = play(entrant(opponent), entrant("dealer:threshold"), deals=deals, seed=4)
        margins[opponent] = (sum(solved) / deals, sum(threshold) / deals)
    for opponent, (solved_mean, threshold_mean) in margins.items():
        assert solved_mean < threshold_mean < 0, opponent


@pytest.mark.parametrize("rounds", [1, 2])
def test_against_the_dealer_the_second_half_deals_each_seat_what_the_other_had(
    rounds: int,
) -> None:
    """The seats and the button stay as a server has them: only the tiles change hands."""
    rules = TableRules(betting_rounds=rounds)
    deck = shuffled_deck(random.Random(5))
    # Check down both rounds to the showdown: every seat gets its four tiles.
    for button in (0, 1):
        tiles = []
        for dealt in (deck, tiles_swapped(deck, button)):
            hand = HandState.start(rules, {0: 500, 1: 500}, button, dealt)
            while hand.actor is not None:
                hand.check(hand.actor)
            tiles.append({seat: hand.seats[seat].tiles for seat in (0, 1)})
        assert tiles[1] == {0: tiles[0][1], 1: tiles[0][0]}
        assert all(len(t) == 4 for t in tiles[0].values())


def test_the_player_gets_the_dealers_tiles_in_the_second_half(tmp_path: Path) -> None:
    bot = tmp_path / "against_dealer.py"
    bot.write_text(textwrap.dedent(RECORDER))
    play(entrant(f"{bot}:Recorder"), entrant("dealer"), deals=20, seed=8)
    SEEN = bot_module(f"{bot}:Recorder").SEEN

    # The player acts first in every hand; its tiles at its turns, hand by hand: two
    # different holdings (its own, then the dealer's), never one twice.
    held: dict[int, set[tuple[str, ...]]] = {}
    for turn in SEEN:
        held.setdefault(turn.hand_id, set()).add(tuple(map(str, turn.tiles[:3])))
    assert len(held) == 20
    assert all(len(tiles) == 2 for tiles in held.values())
    # In both halves it sits where a server seats a player against the dealer.
    assert {turn.seat for turn in SEEN} == {0}
    assert {tuple(turn.stacks) for turn in SEEN} == {(0, 1)}


def test_the_interval_of_few_deals_is_students_not_the_normals() -> None:
    assert half_width([0.0, 2.0]) == pytest.approx(12.706)  # two deals: one degree of freedom
    known = {11: 2.201, 30: 2.042, 31: 2.040, 40: 2.021, 60: 2.000, 120: 1.980}
    for df, t in known.items():
        assert t95(df) == pytest.approx(t, abs=0.001)
