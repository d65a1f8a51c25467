"""What a person types at the prompt, read into an action or a one-line reason why not.

The check against the legal actions here is for the person's sake (a quick,
plain answer); the server checks everything again and alone decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from qiuqiu.cli.game import TableState
from qiuqiu.cli.render import chips
from qiuqiu.cli.render import legal as legal_text
from qiuqiu.cli.turns import Action, Bet, Call, Check, Fold, Raise, Split
from qiuqiu.engine import Hand, InvalidTiles, Tile, cut_with, parse_tiles, rank
from qiuqiu.protocol.fairness import valid_client_seed

RANKING = (
    "Best hand wins: four tiles cut into two pairs, each its spots mod 10 (9 best); "
    "higher pair first, then the lower. Above them, best first: Six Gods (3-3 4-2 "
    "5-1 6-0), Four Doubles, Pure Big (39+ spots), Pure Small (9 spots or fewer)."
)


@dataclass(frozen=True, slots=True)
class HelpText:
    """What ``help`` says: each command beside what it does, then the notes. Kept as
    words, not lines, so that a narrow terminal wraps each in its own column."""

    heading: str
    commands: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]


HELP = HelpText(
    "Commands:",
    (
        (
            "check, call, fold",
            "pass when nobody has bet; match the bet; give up the hand "
            "(fold is refused when you may check for free)",
        ),
        ("bet N, raise N", "bet N chips; raise this round's bet to N in all"),
        (
            "split [A-B C-D]",
            "where players cut their own hands: tile A-B and tile C-D "
            "make one pair, the other two the other (alone: best cut)",
        ),
        ("rebuy [N]", "after a bust: buy in again here (N chips; else up to 500)"),
        (
            "seed [TEXT]",
            "your own part of every shuffle here from the next hand on "
            "(1-64 letters, digits, _ or -; alone: the one in use)",
        ),
        ("help", "this list"),
        (
            "quit, leave",
            "stand up, your stack back to your balance: mid-hand once "
            "you have played it out; quit now (or again) leaves at once",
        ),
    ),
    (RANKING,),
)

WATCHING_HELP = HelpText(
    "Commands while watching:",
    (("help", "this list"), ("quit, leave", "stop watching")),
    ("Nobody's tiles are shown before the showdown; then every hand still in is.", RANKING),
)


@dataclass(frozen=True, slots=True)
class Quit:
    """Stand up: after the hand in play, unless ``now`` (its turns checked or folded)."""

    now: bool = False


@dataclass(frozen=True, slots=True)
class Help:
    pass


@dataclass(frozen=True, slots=True)
class Nothing:
    """An empty line."""


@dataclass(frozen=True, slots=True)
class Rebuy:
    """Buy in again at the table that took every chip; ``amount`` unless the default."""

    amount: int | None = None


@dataclass(frozen=True, slots=True)
class Seed:
    """Put ``client_seed`` into the shuffle from the next hand; ``None``: say which is in use."""

    client_seed: str | None = None


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why the line cannot be played, in one line."""

    reason: str


Command = Action | Split | Quit | Help | Nothing | Rebuy | Seed | Refusal

ACTIONS = frozenset({"check", "bet", "call", "raise", "fold", "split"})
"""The verbs that play a turn: only the player's turn can take them."""


def read(line: str, state: TableState | None) -> Command:
    words = line.strip().lower().split()
    if not words:
        return Nothing()
    verb, args = words[0], words[1:]
    if verb in ("quit", "exit", "q", "leave"):
        if not args:
            return Quit()
        if args == ["now"]:
            return Quit(now=True)
        return Refusal(f"{verb} takes nothing but now: {verb} now leaves a hand at once")
    if verb in ("help", "h", "?"):
        return Help()
    if verb == "rebuy":
        if not args:
            return Rebuy()
        digits = _digits(args[0]) if len(args) == 1 else None
        if digits is not None and len(digits) < 16 and int(digits) > 0:
            return Rebuy(int(digits))
        return Refusal(
            "say how many chips, 1 or more: rebuy N (or rebuy alone for 500, or all you have "
            "if less)"
        )
    if verb in ("seed", "/seed"):
        return _seed(line.split()[1:])
    if verb not in ACTIONS:
        return Refusal(f"unknown command {verb!r}: type help for the list")
    if state is None or state.hand is None or state.hand.phase == "ended":
        return Refusal("no hand is being played yet: wait for the deal")
    if state.legal is None:
        return Refusal(_not_now(state))
    return _action(verb, args, state)


def _not_now(state: TableState) -> str:
    """Why nothing can be played now: "not your turn" alone would leave someone who has
    folded, gone all in or cut their hand waiting for a turn that does not come."""
    hand, me = state.hand, state.me
    assert hand is not None
    if me is None or not me.in_hand:
        return "you are not in this hand: you are dealt in from the next"
    if me.folded:
        return "you have folded this hand: wait for the next"
    if hand.phase == "cutting" and me.cut is not None:
        return "you have cut your hand: the showdown comes once the others have cut theirs"
    if me.all_in:
        return "you are all in: nothing more to do in this hand but wait for the showdown"
    if hand.actor is not None:
        return f"it is not your turn: {state.name(hand.actor)} is to act"
    return "it is not your turn"


def _seed(args: list[str]) -> Command:
    """A seed is case-sensitive: read from the line as typed."""
    if not args:
        return Seed()
    if len(args) == 1 and valid_client_seed(args[0]):
        return Seed(args[0])
    return Refusal("a seed is 1 to 64 letters, digits, _ or -, in one word: seed TEXT")


def _action(verb: str, args: list[str], state: TableState) -> Command:
    legal = state.legal
    assert legal is not None
    allowed = f"now you may: {legal_text(legal)}"
    if verb == "split":
        if not legal.declare_cut and not state.options.manual_split:
            return Refusal(
                "the best cut is made for you at this table: players cut their own hands "
                f"only at tables opened with --split; {allowed}"
            )
        if not legal.declare_cut:
            return Refusal(f"you cannot cut your hand now; {allowed}")
        return _split(args, state)
    if legal.declare_cut:
        return Refusal(f"cut your hand first; {allowed}")
    if verb in ("check", "call", "fold"):
        if args:
            return Refusal(f"{verb} takes no amount")
        if verb == "check" and not legal.check:
            return Refusal(f"you cannot check: there is a bet; {allowed}")
        if verb == "call" and legal.call is None:
            return Refusal(f"there is nothing to call; {allowed}")
        if verb == "fold" and not legal.fold:
            return Refusal(f"you can check for free, no need to fold; {allowed}")
        return Check() if verb == "check" else Call() if verb == "call" else Fold()
    if not args:
        return Refusal(f"say how much: {verb} N")
    digits = _digits(args[0]) if len(args) == 1 else None
    if digits is None:
        return Refusal(f"an amount is one whole number of chips: {verb} N")
    allowed_range = legal.bet if verb == "bet" else legal.raise_to
    if allowed_range is None:
        return Refusal(f"you cannot {verb} now; {allowed}")
    least, most = chips(allowed_range.min), chips(allowed_range.max)
    if len(digits) > 15:
        # More chips than any table holds, in more digits than int() need read.
        return Refusal(f"{verb} must be from {least} to {most}")
    amount = int(digits)
    if allowed_range.min == allowed_range.max != amount:
        return Refusal(f"{verb} can only be {least} here, not {chips(amount)}")
    if not allowed_range.min <= amount <= allowed_range.max:
        return Refusal(f"{verb} must be from {least} to {most}, not {chips(amount)}")
    return Bet(amount) if verb == "bet" else Raise(amount)


def _split(args: list[str], state: TableState) -> Command:
    me = state.me
    if me is None or len(me.tiles) != 4:
        return Refusal("you have no four tiles to cut")
    hand = Hand(parse_tiles(" ".join(me.tiles)))
    if not args:
        cut = rank(hand).cut
    else:
        try:
            chosen = [Tile.parse(arg) for arg in args]
        except InvalidTiles:
            return Refusal("name two tiles like 6-3: split 6-3 2-1 pairs those two")
        strangers = [str(t) for t in chosen if t not in hand.tiles]
        if strangers:
            return Refusal(
                f"{' and '.join(strangers)} {'is' if len(strangers) == 1 else 'are'} not "
                f"your tile{'s' * (len(strangers) > 1)}: yours are {' '.join(me.tiles)}"
            )
        if len(chosen) != 2:
            return Refusal(f"pick two of your tiles ({' '.join(me.tiles)}) to pair together")
        if len(set(chosen)) != len(chosen):
            return Refusal("pick two different tiles")
        cut = cut_with(hand, chosen[0], chosen[1])
    high, low = cut.high_pair, cut.low_pair
    return Split((str(high[0]), str(high[1])), (str(low[0]), str(low[1])))


THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+")


def _digits(typed: str) -> str | None:
    """The digits of an amount typed plainly or as this client writes amounts ("1,000");
    ``None`` for anything else. isdigit() alone admits digits int() cannot read, such
    as "²"."""
    if typed.isascii() and (typed.isdigit() or THOUSANDS.fullmatch(typed)):
        return typed.replace(",", "")
    return None
