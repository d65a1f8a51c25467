"""How the terminal shows the game: tiles as dominoes, the table, one line per event.

Everything here turns state into ``rich`` text and prints nothing itself, so
the same pictures serve a colour terminal, a pipe (``rich`` drops the colour)
and the tests. Tiles are drawn with the Unicode domino faces (U+1F031 on) with
their spots written beside them, since many fonts draw those faces small; on a
terminal that cannot encode them, as ``[6|1]``.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Span, Text

from qiuqiu.cli.deals import DealChecked
from qiuqiu.cli.errors import ServerRefused
from qiuqiu.cli.game import SeatState, TableState
from qiuqiu.cli.payouts import PaidWrong
from qiuqiu.engine import Category, Hand, parse_tiles, rank
from qiuqiu.protocol import DealTampered, ErrorCode, LegalActions, SeatAmount, TableOptions
from qiuqiu.protocol import server as wire

if TYPE_CHECKING:  # commands reads legal moves through this module
    from qiuqiu.cli.commands import HelpText

DOMINO_FACES = 0x1F031
"""The horizontal domino 0-0; the face a-b is ``a * 7 + b`` past it."""

CATEGORY_NAMES = {
    Category.SIX_GODS: "Six Gods",
    Category.FOUR_DOUBLES: "Four Doubles",
    Category.PURE_BIG: "Pure Big",
    Category.PURE_SMALL: "Pure Small",
    Category.NORMAL: "",
}


ASCII_FOR = {"·": "|", "…": "...", "─": "-", "—": "-", "\u2013": "-", "◀": "<-", "⏱": ""}
"""The client's own symbols, and those the server's words may hold, as ``--ascii`` says
them: the same as the pictures drawn in ASCII say them."""


def ascii_only(text: Text) -> Text:
    """``text`` in ASCII, its styles kept: what the client did not draw itself (the
    server's refusals, other players' names) may hold anything. A letter loses its
    accents; anything else unknown is ``?``."""
    said = [_ascii_char(char) for char in text.plain]
    starts = [0]  # where each character's replacement starts, for the spans
    for part in said:
        starts.append(starts[-1] + len(part))
    spans = [Span(starts[s.start], starts[s.end], s.style) for s in text.spans]
    return Text("".join(said), style=text.style, end=text.end, spans=spans)


def _ascii_char(char: str) -> str:
    if char.isascii():
        return char
    if char in ASCII_FOR:
        return ASCII_FOR[char]
    bare = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    return bare if bare.isascii() and bare else "?"


def tile(text: str, unicode: bool) -> Text:
    high, low = (int(part) for part in text.split("-"))
    if not unicode:
        return Text(f"[{high}|{low}]", style="bold")
    face = chr(DOMINO_FACES + high * 7 + low)
    return Text.assemble((face, "bold"), " ", (f"{high}-{low}", "bold"))


def tiles(texts: Sequence[str], unicode: bool) -> Text:
    return Text("  ").join(tile(t, unicode) for t in texts)


def pairs(pair_texts: Sequence[Sequence[str]], unicode: bool) -> Text:
    """A cut: the two pairs with a bar between them."""
    return Text(" | ").join(tiles(pair, unicode) for pair in pair_texts)


def hand_value(texts: Sequence[str], unicode: bool) -> Text:
    """The best cut of a 4-tile hand and what it is worth, e.g. ``[6|3] [5|5] | ... = 9-4``."""
    best = rank(Hand(parse_tiles(" ".join(texts))))
    cut = best.cut
    drawn = pairs(
        (
            (str(cut.high_pair[0]), str(cut.high_pair[1])),
            (str(cut.low_pair[0]), str(cut.low_pair[1])),
        ),
        unicode,
    )
    special = CATEGORY_NAMES[best.category]
    value = f"{special}!" if special else f"{best.pairs[0]}-{best.pairs[1]}"
    return Text.assemble(drawn, "  = ", (value, "bold green" if special else "bold"))


def chips(amount: int) -> str:
    """A chip amount as a person reads it, thousands apart ("1,000"): one way
    everywhere this client shows one. The wire carries plain integers."""
    return f"{amount:,}"


def legal(actions: LegalActions, unicode: bool = True) -> str:
    """The commands the prompt accepts now, with their amounts."""
    choices = []
    if actions.check:
        choices.append("check")
    if actions.call is not None:
        choices.append(f"call {chips(actions.call)}")
    if actions.bet is not None:
        choices.append(f"bet {_range(actions.bet.min, actions.bet.max)}")
    if actions.raise_to is not None:
        choices.append(f"raise {_range(actions.raise_to.min, actions.raise_to.max)}")
    if actions.fold:
        choices.append("fold")
    if actions.declare_cut:
        choices.append("split [A-B C-D]")
    return (" · " if unicode else " | ").join(choices)


def _range(low: int, high: int) -> str:
    return chips(low) if low == high else f"{chips(low)}-{chips(high)}"


def rules(options: TableOptions) -> Text:
    """How the table plays, for whoever sits down: a table joined by its id may cut
    hands by hand or bet twice, which nothing else says before it happens."""
    bets = f"bets from {chips(options.min_bet)}" + (
        f" to {chips(options.max_bet)}" if options.max_bet is not None else ", no limit"
    )
    if options.max_raises is not None:
        bets += f", {options.max_raises} raise{'s' * (options.max_raises != 1)} a round"
    parts = [
        f"ante {chips(options.ante)}",
        bets,
        "1 betting round, before the fourth tile"
        if options.betting_rounds == 1
        else "2 betting rounds, before and after the fourth tile",
    ]
    if options.manual_split:
        parts.append("you cut your own hand at the showdown (split)")
    parts.append(
        "equal hands split the pot"
        if options.tie_rule == "split"
        else "equal hands: the highest tile wins"
    )
    parts.append(f"{options.turn_seconds:g} s a turn")
    return Text(f"Rules here: {'; '.join(parts)}.", "dim")


def who(state: TableState, seat: int) -> str:
    return "You" if seat == state.you else state.name(seat)


def joined(state: TableState, seats: Sequence[int], amounts: Sequence[int] = ()) -> str:
    """Seats as one subject, "you" past the first word ("Bo and you"); with each one's
    amount when given."""
    names = [who(state, seat) if n == 0 else _whom(state, seat) for n, seat in enumerate(seats)]
    if amounts:
        names = [f"{name} ({chips(amount)})" for name, amount in zip(names, amounts, strict=True)]
    return " and ".join(names)


def _whom(state: TableState, seat: int) -> str:
    return "you" if seat == state.you else state.name(seat)


def table(state: TableState, now_ms: int, unicode: bool, *, turns: bool = True) -> RenderableType:
    """Every seat with its stack and bet, the pot, and whose turn it is (not with
    ``turns`` false: while the connection is down, nobody here knows whose it is now)."""
    hand = state.hand
    seats = sorted(state.seats.values(), key=lambda s: s.seat)
    rows = [_seat_row(state, seat, unicode, turns) for seat in seats]
    lines: list[RenderableType] = [_Seats(rows)]
    if hand is not None and hand.phase == "ended":
        # Between hands: what is still drawn of the last one (its button, your tiles)
        # is that hand's, not a hand in play.
        lines.append(Text(f"Hand #{hand.hand_id} is over; the next is not dealt yet.", "dim"))
    missing = state.options.min_players - len(state.seats)
    if state.closed:
        # Its last player gone, it waits for nobody: the live view keeps this last picture.
        lines.append(Text("The table is closed.", "dim"))
    elif missing > 0:
        # Else a table without the bot, or one whose others left, just sits there.
        lines.append(
            Text(f"Waiting for {missing} more player{'s' * (missing > 1)} to sit down.", "dim")
        )
    # A hand over has no pot left to show: "Pot 0" read as a hand played for nothing.
    if hand is not None and hand.phase != "ended":
        dot = " · " if unicode else " | "
        status = Text.assemble(("Pot ", "dim"), (chips(hand.pot), "bold yellow"))
        if hand.actor is not None and turns:
            status.append(f"{dot}{who(state, hand.actor)} to act", "cyan")
            if hand.to_call:
                status.append(f"{dot}{chips(hand.to_call)} to call")
        if hand.phase == "cutting" and hand.cutting and turns:
            status.append(f"{dot}{joined(state, hand.cutting)} to cut", "cyan")
        if (
            turns
            and hand.deadline_ms is not None
            and (hand.actor is not None or hand.phase == "cutting")
        ):
            status.append(f"{dot}{seconds_left(hand.deadline_ms, now_ms)} s left", "dim")
        lines.append(status)
    me = state.me
    if me is not None and hand is not None and hand.phase != "ended" and not me.in_hand:
        # Seated while a hand is played: without a word, no tiles of yours looked amiss.
        lines.append(Text("You are dealt in from the next hand.", "dim"))
    if me is not None and me.tiles:
        mine = Text.assemble(("Your tiles: ", "dim"), tiles(me.tiles, unicode))
        lines.append(mine)
        if len(me.tiles) == 4:
            lines.append(Text.assemble(("Best cut:   ", "dim"), hand_value(me.tiles, unicode)))
    return Group(*lines)


SHORTEST_NAME = 8
"""Cells a name keeps, at least, in the one-line-a-seat layout: narrower, the seats
take two lines each."""


class _Seats:
    """The seats, one line each in aligned columns where the width allows (a long name
    cut short first, as little as fits, its button and away marks kept whole), else
    two lines each: a stack or a bet is never cut short, nor a name to nothing."""

    def __init__(self, rows: list[tuple[Text, ...]]) -> None:
        self.rows = rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # Measured unbounded: a measurement is clamped to the width it is given.
        unbounded = options.update_width(sys.maxsize)

        def cut_to(cells: int) -> list[tuple[Text, ...]]:
            return [(n, _cut(name, cells) + marks, *rest) for n, name, marks, *rest in self.rows]

        def fits(cells: int) -> bool:
            grid = _grid(cut_to(cells))
            return Measurement.get(console, unbounded, grid).maximum <= options.max_width

        # The longest cut that fits, by halves: the grid is measured at each try, and
        # a name may be 64 cells long.
        # A watched table may have no seat left: its last player stood up.
        longest = max((cell_len(r[1].plain) for r in self.rows), default=SHORTEST_NAME)
        low, high = SHORTEST_NAME, max(SHORTEST_NAME, longest)
        if fits(low):
            while low < high:
                middle = (low + high + 1) // 2
                low, high = (middle, high) if fits(middle) else (low, middle - 1)
            yield _grid(cut_to(low))
            return
        for number, name, marks, *figures in self.rows:
            yield Text.assemble(number, "  ", name, marks)
            yield Text.assemble("  ", Text("  ").join(f for f in figures if f.plain))


def _grid(rows: list[tuple[Text, ...]]) -> Table:
    grid = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False)
    for column in range(5):
        grid.add_column(no_wrap=column != 1)
    for row in rows:
        grid.add_row(*row)
    return grid


def _cut(name: Text, cells: int) -> Text:
    short = name.copy()
    short.truncate(cells, overflow="ellipsis")
    return short


def _seat_row(state: TableState, seat: SeatState, unicode: bool, turns: bool) -> tuple[Text, ...]:
    # Its seat's number is on the row: a name shared with another seat needs no more.
    name = Text(
        "You" if seat.seat == state.you else seat.name,
        "bold" if seat.seat == state.you else "",
        no_wrap=True,
        overflow="ellipsis",
    )
    marks = Text()
    if state.hand is not None and seat.seat == state.hand.button:
        marks.append(" (D)", "dim")
    if not seat.connected:
        marks.append(" (away)", "red")
    notes = Text()
    # Where the seat stands in the hand in play: between hands it stands in none, though
    # the last hand (from a snapshot too) still says it folded or went all in.
    in_play = state.hand is not None and state.hand.phase != "ended"
    if in_play and seat.folded:
        notes.append("folded", "dim")
    elif in_play and seat.all_in:
        notes.append("all in", "magenta")
    if turns and state.hand is not None and seat.seat == state.hand.actor:
        notes.append("◀ to act" if unicode else "<- to act", "cyan")
    elif turns and in_play and state.hand is not None and seat.seat in state.hand.cutting:
        notes.append("◀ to cut" if unicode else "<- to cut", "cyan")
    return (
        # Counted from 1, as the page counts them: seat 0 on the wire is "Seat 1" there.
        Text(f"seat {seat.seat + 1}", "dim"),
        name,
        marks,
        Text(f"stack {chips(seat.stack)}"),
        Text(f"bet {chips(seat.bet)}" if seat.bet else ""),
        notes,
    )


def hand_header(
    state: TableState, hand_id: int, button: int, commitment: str, unicode: bool
) -> Text:
    rule = "──" if unicode else "--"
    return Text.assemble(
        (f"\n{rule} Hand #{hand_id} {rule}", "bold"),
        (f"  button: {who(state, button)}", "dim"),
        (f"  commitment {commitment[:16]}{'…' if unicode else '...'}", "dim"),
    )


def hand_found(state: TableState, unicode: bool) -> Text | None:
    """The hand in play that a snapshot brought, its start unseen by this client: its
    header, and the tiles this seat holds in it, as its start would have said them. It
    may have been dealt while the connection was down, or before a client killed
    mid-hand was started again: "before you came back" is true of both."""
    hand = state.hand
    if hand is None or hand.phase == "ended":
        return None
    line = hand_header(state, hand.hand_id, hand.button, hand.commitment, unicode)
    line.append("  (begun before you came back)", "dim")
    me = state.me
    if me is not None and me.tiles:
        line.append_text(Text.assemble("\nYour tiles: ", tiles(me.tiles, unicode), "."))
    return line


HALF_SECOND_MS = 500
"""Where :func:`seconds_left` rounds: a clock shows one second less that long before
each whole second left."""


def seconds_left(deadline_ms: int, now_ms: int) -> int:
    return max(0, (deadline_ms - now_ms + HALF_SECOND_MS) // 1000)


def to_act(state: TableState, now_ms: int) -> Text | None:
    """Whose turn it is and the seconds it has left, when it is someone's."""
    hand = state.hand
    if hand is None or hand.actor is None or hand.deadline_ms is None:
        return None
    left = seconds_left(hand.deadline_ms, now_ms)
    return Text(f"{who(state, hand.actor)} to act ({left} s).", "dim")


def face_down(message: wire.AnyServerMessage, state: TableState) -> Text | None:
    """To whom tiles were dealt, for a viewer the tiles themselves are not sent to."""
    match message:
        case wire.TilesDealt(seat=seat, tiles=None):
            return Text(f"{who(state, seat)} was dealt three tiles, face down.", "dim")
        case wire.FourthTileDealt(seat=seat, tile=None):
            return Text(f"{who(state, seat)} was dealt a fourth tile, face down.", "dim")
    return None


def stacks(state: TableState) -> Text:
    """Every seat's stack, in seat order: ``Stacks: Ann 510, Dealer 490.``"""
    seats = sorted(state.seats.values(), key=lambda s: s.seat)
    listed = ", ".join(f"{who(state, seat.seat)} {chips(seat.stack)}" for seat in seats)
    return Text(f"Stacks: {listed}.", "dim")


def event(message: wire.AnyServerMessage, state: TableState, unicode: bool) -> Text | None:
    """One line for what happened, or ``None`` for what the table picture shows better."""

    def name(seat: int) -> str:
        return who(state, seat)

    match message:
        case wire.PlayerSeated(seat=seat, stack=stack):
            # The seat's number is said here, whatever name it shares.
            sitter = "You" if seat == state.you else message.name
            return Text(f"{sitter} sat down at seat {seat + 1} with {chips(stack)} chips.")
        case wire.PlayerLeft(seat=seat, cashed_out=cashed):
            return Text(
                f"{state.named(message.name, seat)} left the table with {chips(cashed)} chips."
            )
        case wire.PlayerDisconnected(seat=seat, grace_ms=grace):
            return Text(
                f"{name(seat)} lost the connection ({grace // 1000} s to come back).", "red"
            )
        case wire.PlayerReconnected(seat=seat) if seat != state.you:
            return Text(f"{name(seat)} is back.")
        case wire.TableClosed(table_seed=None):
            return Text("The table moved to another server: reconnecting to the seat there.")
        case wire.TableClosed(reason=reason):
            closed = Text(f"The table closed: {reason}.", "bold red")
            deals = state.deals
            if deals.tampered is not None:
                return Text("\n").join((closed, tampered(deals.tampered)))
            if deals.shuffle is not None:
                return Text("\n").join((closed, shuffle(state.table_id, deals.shuffle.hands)))
            return closed
        case wire.HandStarted(hand_id=hand_id, button=button, commitment=commitment):
            header = hand_header(state, hand_id, button, commitment, unicode)
            if state.hand is not None:
                for seat, had in state.hand.topped_up.items():
                    now = state.hand.stacks_before[seat]
                    header.append(
                        f"\nThe dealer bot topped up its stack to {chips(now)} "
                        f"(it had {chips(had)})."
                    )
            return header
        case wire.AnteTaken(seat=seat, amount=amount):
            return Text(f"{name(seat)} put in the ante of {chips(amount)}.", "dim")
        case wire.TilesDealt(seat=seat, tiles=dealt) if dealt is not None:
            return Text.assemble("You were dealt ", tiles(dealt, unicode), ".")
        case wire.FourthTileDealt(seat=seat, tile=fourth) if fourth is not None:
            me = state.me
            line = Text.assemble("Your fourth tile: ", tile(fourth, unicode), ".")
            if me is not None and len(me.tiles) == 4:
                # A line of its own: beside the tile it outgrows a narrow terminal,
                # whose wrapping would split a domino from its spots.
                line.append("\nBest cut: ")
                line.append_text(hand_value(me.tiles, unicode))
            return line
        case wire.BettingRoundStarted(round=number):
            return Text(f"Betting round {number}.", "bold")
        case wire.Checked(seat=seat):
            return Text(f"{name(seat)} checked.")
        case wire.BetPlaced(seat=seat, amount=amount, all_in=all_in):
            all_in_said = " (all in)" if all_in else ""
            return Text(f"{name(seat)} bet {chips(amount)}{all_in_said}.", "yellow")
        case wire.Called(seat=seat, amount=amount, all_in=all_in):
            return Text(f"{name(seat)} called {chips(amount)}{' (all in)' if all_in else ''}.")
        case wire.Raised(seat=seat, to=to, all_in=all_in):
            all_in_said = " (all in)" if all_in else ""
            return Text(f"{name(seat)} raised to {chips(to)}{all_in_said}.", "yellow")
        case wire.Folded(seat=seat):
            return Text(f"{name(seat)} folded.", "dim")
        case wire.TurnTimedOut(seat=seat):
            return Text(f"{name(seat)} ran out of time.", "red")
        case wire.BetReturned(seat=seat, amount=amount):
            return Text(
                f"{chips(amount)} unmatched chips went back to {_whom(state, seat)}.", "dim"
            )
        case wire.BettingRoundEnded(round=number, pot=pot):
            return Text(f"Betting round {number} is over; the pot is {chips(pot)}.", "dim")
        case wire.CuttingStarted(seats=cutting):
            if state.you in cutting:
                return Text(
                    "Cut your hand: split A-B C-D (the two tiles to pair), or split for the best.",
                    "cyan",
                )
            return Text("Players are cutting their hands.")
        case wire.CutDeclared(seat=seat, cut=cut):
            if seat != state.you:
                return Text(f"{name(seat)} cut their hand.", "dim")
            worth = f": {cut.values[0]}-{cut.values[1]}" if cut is not None else ""
            return Text(f"You cut your hand{worth}.", "dim")
        case wire.Showdown(hands=shown):
            return showdown(shown, state, unicode)
        case wire.PotAwarded(amount=amount, shares=shares, eligible=eligible):
            return award(amount, shares, eligible, state)
        case wire.HandVoided(reason=reason):
            return Text(f"The hand was called off ({reason}); every chip went back.", "bold red")
        case wire.HandEnded():
            return hand_over(state)
        case wire.SeedSet(client_seed=seed):
            return Text(f"Your seed is now {seed}: it goes into every shuffle from the next hand.")
        case wire.Error(message=text):
            return refusal(text)
    return None


def refusal(message: str) -> Text:
    """The server's no in its own words: its code is for programs, not players."""
    return Text(f"Refused: {message}", "red")


def rebuy_refused(refused: ServerRefused, amount: int, balance: int, options: TableOptions) -> Text:
    """Why a rebuy of ``amount`` was refused and what to type instead, where this client
    knows the sums; else the server's words."""
    if refused.code is ErrorCode.INSUFFICIENT_BALANCE:
        return Text(
            f"You cannot buy in with {chips(amount)}: your balance is {chips(balance)} chips. "
            "Type rebuy N for less.",
            "red",
        )
    if refused.code is ErrorCode.INVALID_BUY_IN and not (
        options.min_buy_in <= amount <= options.max_buy_in
    ):
        return Text(
            f"This table takes buy-ins of {chips(options.min_buy_in)} to "
            f"{chips(options.max_buy_in)} "
            "chips: type rebuy N with N between them.",
            "red",
        )
    return refusal(refused.message)


NARROWEST = 60
"""Columns a showdown line keeps within: the narrowest terminal the client lays out for."""


def showdown(shown: Sequence[wire.ShownHand], state: TableState, unicode: bool) -> Text:
    lines = Text("Showdown:", style="bold")
    names = [who(state, entry.seat) for entry in shown]
    cuts = [pairs(entry.cut.pairs, unicode) for entry in shown]
    values = [
        _worth(entry) + ("!" if entry.category is not Category.NORMAL else "") for entry in shown
    ]
    # The tiles in one column, two spaces clear of the longest name ("Bob (seat 1)"), as
    # far right as lets "= Four Doubles!" end by the narrowest width: a name longer
    # than that has a line of its own, as the terminal would otherwise break a hand's
    # line in the middle of its value.
    cut_cells = max((cut.cell_len for cut in cuts), default=0)
    room = NARROWEST - 2 - cut_cells - 4 - max(map(cell_len, values), default=0)
    width = min(max([10, *(cell_len(name) + 2 for name in names)]), room)
    for entry, name, cut, value in zip(shown, names, cuts, values, strict=True):
        lines.append("\n  ")
        if cell_len(name) + 2 > width:
            lines.append(name, "bold")
            lines.append("\n  " + " " * width)
        else:
            lines.append(name + " " * (width - cell_len(name)), "bold")
        lines.append_text(cut)
        lines.append("  = ")
        special = entry.category is not Category.NORMAL
        lines.append(value, "bold green" if special else "bold")
    return lines


def award(
    amount: int, shares: Sequence[SeatAmount], eligible: Sequence[int], state: TableState
) -> Text:
    """Who took a pot, and why: the winner's hand against the best one it beat."""
    winners = [s.seat for s in shares]
    names = joined(state, winners)
    shown = {entry.seat: entry for entry in state.hand.shown} if state.hand else {}
    if shown and len(eligible) == 1 and list(eligible) == winners:
        # A side pot of one seat's chips nobody matched (an ante over an all-in stack):
        # nothing was won from anyone, as the page says too.
        return Text.assemble(
            (names, "bold green"),
            f" took {chips(amount)} back: no one else could win it.",
        )
    if len(winners) > 1:
        names = joined(state, winners, [s.amount for s in shares])
        line = Text.assemble((names, "bold green"), " split the pot of ", (chips(amount), "bold"))
    else:
        verb = "win" if winners[0] == state.you else "wins"
        line = Text.assemble((names, "bold green"), f" {verb} the pot of ", (chips(amount), "bold"))
    rivals = [shown[seat] for seat in eligible if seat not in winners and seat in shown]
    if winners[0] not in shown:
        line.append(": everyone else folded" if not shown and len(winners) == 1 else "")
    elif len(winners) > 1 and winners[1] in shown:
        line.append(f": {why(shown[winners[0]], shown[winners[1]], split=True)}")
    elif rivals:
        best = max(rivals, key=lambda entry: _strength(entry))
        line.append(f": {why(shown[winners[0]], best, split=False)}")
    line.append(".")
    return line


def _strength(entry: wire.ShownHand) -> tuple[int, tuple[int, ...], int]:
    ranked = rank(Hand(parse_tiles(" ".join(entry.tiles))))
    normal = entry.category is Category.NORMAL
    return (ranked.strength // 100, tuple(entry.cut.values) if normal else (), ranked.tiebreak)


def why(winner: wire.ShownHand, loser: wire.ShownHand, *, split: bool) -> str:
    """Why ``winner`` beat ``loser``, in the words a player reads at a glance."""
    w, lo = _worth(winner), _worth(loser)
    if split:
        return f"equal hands ({w}) share it"
    if winner.category is not loser.category:
        return f"{w} beats {lo if loser.category is not Category.NORMAL else 'any normal hand'}"
    (wh, wl), (lh, ll) = winner.cut.values, loser.cut.values
    if winner.category is Category.NORMAL and wh != lh:
        return f"higher pair, {wh} beats {lh}"
    if winner.category is Category.NORMAL and wl != ll:
        return f"same higher pair ({wh}), lower pair {wl} beats {ll}"
    best = rank(Hand(parse_tiles(" ".join(winner.tiles)))).highest
    other = rank(Hand(parse_tiles(" ".join(loser.tiles)))).highest
    return f"equal hands ({w}), the highest tile decides: {best} beats {other}"


def _worth(entry: wire.ShownHand) -> str:
    special = CATEGORY_NAMES[entry.category]
    return special or f"{entry.cut.values[0]}-{entry.cut.values[1]}"


def hand_over(state: TableState) -> Text:
    """What the hand meant for this player, and the check of its deal."""
    lines = Text()
    net = None if state.you is None else state.net(state.you)
    hand = state.hand
    if net is not None and hand is not None and not hand.voided:
        sign = "+" if net > 0 else "-" if net < 0 else ""
        lines.append(f"For you: {sign}{chips(abs(net))} net this hand.", "bold")
        lines.append("\n")
    lines.append_text(verdict(state))
    return lines


def verdict(state: TableState) -> Text:
    """The check of the hand that just ended, loud when it fails. A voided hand
    dealt nothing that counted, so it is not said to be verified."""
    hand = state.hand
    check = None if hand is None else hand.deal_check
    if hand is None or check is None or (hand.voided and isinstance(check, DealChecked)):
        return Text("")
    if isinstance(check, DealChecked) and not check.tiles:
        # A spectator's hand won by a fold: nothing was opened to check.
        paid = " It was paid as the rules say." if check.paid else ""
        return Text(
            "No tile of this hand was shown to check against the deal's commitment: the"
            f" whole deck is checked when the table closes and reveals its seed.{paid}",
            "dim",
        )
    if isinstance(check, DealChecked):
        what = f"{check.tiles} tile{'s' * (check.tiles != 1)} at their committed positions"
        seed = ", your seed in the shuffle" if check.own_seed else ""
        paid = ", paid as the rules say" if check.paid else ""
        return Text(f"Deal verified: {what}{seed}{paid}.", "green")
    return tampered(check)


def shuffle(table_id: str, rebuilt: int) -> Text:
    """The table's seed rebuilt the ``rebuilt`` hands checked against it."""
    if not rebuilt:  # "0 hands rebuilt" would call a check made that was not
        return Text(f"Table {table_id}'s seed is revealed; there was no hand to rebuild from it.")
    hands = f"{rebuilt} hand{'s' * (rebuilt != 1)}"
    return Text(
        f"Table {table_id}'s shuffle verified: {hands} rebuilt from the revealed seed.", "green"
    )


def tampered(failure: DealTampered) -> Text:
    """A check that failed: what was wrong, unmissable."""
    where = "this hand" if failure.hand_id is not None else f"table {failure.table_id}"
    if isinstance(failure, PaidWrong):
        return Text(
            f"!!! PAYOUT CHECK FAILED at {failure}: the server did not pay {where} as the "
            "rules do. Do not trust this server. !!!",
            "bold white on red",
        )
    return Text(
        f"!!! DEAL CHECK FAILED at {failure}: the server did not deal what it committed "
        f"to for {where}. Do not trust this server. !!!",
        "bold white on red",
    )


def help_text(help: HelpText) -> RenderableType:
    """``help`` in two columns, each description wrapped in its own: a terminal
    narrower than the text would otherwise break it under the commands."""
    commands = Table.grid(padding=(0, 3))
    commands.add_column(no_wrap=True)
    commands.add_column()
    for command, what in help.commands:
        commands.add_row(command, what)
    return Group(Text(help.heading), Padding(commands, (0, 0, 0, 2)), *map(Text, help.notes))
