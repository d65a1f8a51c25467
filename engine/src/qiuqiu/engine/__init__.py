"""Pure QiuQiu rules: tiles, hand ranking and the hand state machine.

No I/O, no clock, no global random: randomness comes in as an argument
(``secrets.SystemRandom()`` in production, a seeded ``random.Random`` in tests).

>>> from qiuqiu.engine import compare, parse_hand, rank
>>> rank(parse_hand("3-1 6-6 5-0 5-2")).pairs
(9, 9)
>>> compare(parse_hand("3-3 4-2 5-1 6-0"), parse_hand("6-6 5-5 4-4 3-3"))
1
"""

from qiuqiu.engine.errors import EngineError, IllegalAction, InvalidRules, InvalidTiles
from qiuqiu.engine.events import (
    AnteTaken,
    BetPlaced,
    BetReturned,
    BettingRoundEnded,
    BettingRoundStarted,
    Called,
    Checked,
    CutDeclared,
    CuttingStarted,
    Event,
    Folded,
    FourthTileDealt,
    HandEnded,
    HandStarted,
    HandVoided,
    PotAwarded,
    Raised,
    Showdown,
    ShownHand,
    TilesDealt,
    TurnTimedOut,
)
from qiuqiu.engine.ranking import (
    TIE_RULES,
    Category,
    Cut,
    Rank,
    TieRule,
    all_ranks,
    compare,
    compare_ranks,
    cut_with,
    cuts,
    pair_value,
    rank,
    rank_with_cut,
)
from qiuqiu.engine.rules import MAX_SEATS, MIN_SEATS, TableRules
from qiuqiu.engine.state import ChipRange, HandState, LegalActions, Phase, SeatState
from qiuqiu.engine.tiles import (
    ALL_TILES,
    Hand,
    Shuffler,
    Tile,
    parse_hand,
    parse_tiles,
    shuffled_deck,
)

__all__ = [
    "ALL_TILES",
    "MAX_SEATS",
    "MIN_SEATS",
    "TIE_RULES",
    "AnteTaken",
    "BetPlaced",
    "BetReturned",
    "BettingRoundEnded",
    "BettingRoundStarted",
    "Called",
    "Category",
    "Checked",
    "ChipRange",
    "Cut",
    "CutDeclared",
    "CuttingStarted",
    "EngineError",
    "Event",
    "Folded",
    "FourthTileDealt",
    "Hand",
    "HandEnded",
    "HandStarted",
    "HandState",
    "HandVoided",
    "IllegalAction",
    "InvalidRules",
    "InvalidTiles",
    "LegalActions",
    "Phase",
    "PotAwarded",
    "Raised",
    "Rank",
    "SeatState",
    "Showdown",
    "ShownHand",
    "Shuffler",
    "TableRules",
    "TieRule",
    "Tile",
    "TilesDealt",
    "TurnTimedOut",
    "all_ranks",
    "compare",
    "compare_ranks",
    "cut_with",
    "cuts",
    "pair_value",
    "parse_hand",
    "parse_tiles",
    "rank",
    "rank_with_cut",
    "shuffled_deck",
]
