"""What this client saw of a table's deals, and the checks it makes of them, without I/O.

The server commits to every hand before it is played (``qiuqiu.protocol.fairness``):
the table's seed by its ``seed_commitment`` when the table opens, each deck
position by a leaf in ``hand_started``. A :class:`TableDeals` keeps, for one
table, what the client needs to hold the server to that:

1. **The client seeds it sent.** A seat's seed must be in every shuffle it is
   dealt: the one last confirmed, or the one on its way while a ``set_seed``
   waits for its ``seed_set`` (which comes once the server has written it, so
   every hand that starts after it is dealt with it). A seat whose seed this
   client does not know (a session resumed by a new process) is held, once it
   sends one, to at most one hand dealt with another seed before ``seed_set``.
2. **Each hand as it saw it.** The leaves and client seeds of ``hand_started``
   (or of a snapshot), its own openings (``tiles_dealt``, ``fourth_tile_dealt``,
   a snapshot's ``openings``) and the showdown's, merged into one
   :class:`~qiuqiu.protocol.fairness.HandSeen` that :meth:`TableDeals.end_hand`
   checks with ``verify_hand``.
3. **Every hand until the table's seed is out.** ``table_closed`` (or
   ``list_hands`` once the table has closed) reveals the seed; then
   :meth:`TableDeals.reveal` rebuilds each kept hand's deck with ``verify_reveal``.

A failed check is kept, never raised here, so that folding messages into the
state goes on: the SDK raises it, the terminal shows it.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from pydantic import ValidationError

from qiuqiu.cli.payouts import verify_history
from qiuqiu.protocol import DealTampered, TableOptions
from qiuqiu.protocol import server as wire
from qiuqiu.protocol.common import Opening, SeatSeed
from qiuqiu.protocol.fairness import HandSeen, verify_hand, verify_reveal


def fresh_seed() -> str:
    """A client seed nobody can guess: 32 bytes from the operating system's CSPRNG."""
    return secrets.token_hex(32)


@dataclass(frozen=True, slots=True)
class DealChecked:
    """A hand passed its check: ``tiles`` openings matched their committed positions,
    and ``own_seed`` says whether this client's own seed was checked in its shuffle."""

    tiles: int
    own_seed: bool
    paid: bool = False
    """Its payouts were checked too (:mod:`qiuqiu.cli.payouts`), and are the rules'."""


DealCheck = DealChecked | DealTampered


@dataclass(frozen=True, slots=True)
class ShuffleVerified:
    """The table's seed was revealed and rebuilt every deck it was checked against."""

    hands: int


@dataclass
class _HandInPlay:
    """A hand being collected: ``hand_started``'s commitments, then the openings."""

    hand_id: int
    button: int
    commitment: str
    leaves: tuple[str, ...]
    client_seeds: dict[int, str]
    my_seat: int | None
    my_seeds: tuple[str, ...]
    openings: dict[int, dict[tuple[int, str, str], Opening]] = field(default_factory=dict)
    """Each seat's openings in the order first seen, by their content: a showdown
    opens again the tiles this client was dealt."""
    tampered: DealTampered | None = None

    def seen(self, table_id: str) -> HandSeen:
        return HandSeen(
            table_id=table_id,
            hand_id=self.hand_id,
            button=self.button,
            commitment=self.commitment,
            leaves=self.leaves,
            client_seeds=dict(self.client_seeds),
            openings={seat: tuple(found.values()) for seat, found in self.openings.items()},
        )


@dataclass
class TableDeals:
    """One table's deals as this client saw them (see the module's docstring)."""

    table_id: str
    seed_commitment: str | None = None
    """``sha256(table_seed)`` as first published to this client."""
    bot_seat: int | None = None
    options: TableOptions | None = None
    """The table's options, from its first snapshot: what its history is paid by."""
    """The dealer bot's seat: the button of every hand, with the empty seed."""
    seed: str | None = None
    """The client seed this seat plays with; ``None`` when this process never sent one."""
    pending_seed: str | None = None
    """A seed sent with ``set_seed`` that the server has not confirmed yet."""
    _unconfirmed: int | None = None
    """How many hands started with another seed for this seat than the one on its way,
    while this client does not know the seat's seed and waits for the ``seed_set`` of
    the first ``set_seed`` it sent; ``None`` when it waits for none. An honest server
    deals at most one so (the hand it was writing as the seed came): a server that
    never confirms could otherwise list a seed of its own choosing in every hand."""
    _unconfirmed_after: int = 0
    """The newest hand this client had heard of when it sent that ``set_seed``: that one
    and those before began before the server could have the seed, however late this
    client reads them, and are not counted."""
    kept: dict[int, HandSeen] = field(default_factory=dict)
    """Every finished hand, by ``hand_id``, until the table's seed rebuilds it: without
    its openings and its leaves, checked as it ended, since the seed rebuilds every leaf
    and the commitment stands for them (the leaves are 4 KB a hand, and a bot may play
    a hundred thousand hands at one table)."""
    rebuilt: dict[int, str] = field(default_factory=dict)
    """The hands the table's seed rebuilt, by ``hand_id``: the commitment each was
    dealt with, which the table's history must show too."""
    checks: dict[int, DealCheck] = field(default_factory=dict)
    """Each finished hand's check."""
    tampered: DealTampered | None = None
    """The first check that failed at this table, whichever it was."""
    table_seed: str | None = None
    shuffle: ShuffleVerified | None = None
    checking: bool = True
    """``False`` where this client made the deals itself (the arena): no hand is kept or
    checked, its payouts neither, and every hand's check is ``None``."""
    _hand: _HandInPlay | None = None
    _last_hand: tuple[int, int] | None = None
    """The number and button of the last hand seen start, or in a snapshot, which the
    next ``hand_started`` must follow (see :meth:`_out_of_turn`)."""
    _joining: bool = False
    """``join_table`` was sent and its snapshot has not come yet: a hand over by then
    was dealt before the seat's seed was sent (the same account's seat, in a session
    of another process), so it is not checked against that seed."""

    # -- seeds ------------------------------------------------------------------------

    def joined_with(self, seed: str) -> None:
        """Sent ``join_table`` with ``seed``: the seat's first hand is dealt with it."""
        self.seed, self.pending_seed = seed, None
        self._unconfirmed = None
        self._joining = True

    def sent_seed(self, seed: str, heard_through: int = 0) -> None:
        """Sent ``set_seed`` with ``seed``, the newest hand heard of then being
        ``heard_through``. Sent again on the same connection, the first one's
        ``seed_set`` still comes: the count of hands dealt without it goes on."""
        self.pending_seed = seed
        if self.seed is None and self._unconfirmed is None:
            self._unconfirmed, self._unconfirmed_after = 0, heard_through

    def seed_set(self, seed: str) -> None:
        """The server wrote the seed and confirmed it: every hand that starts from now
        on is dealt with it (the hand in play keeps the one it was dealt with)."""
        self.seed = seed
        self._unconfirmed = None
        if self.pending_seed == seed:
            self.pending_seed = None

    def seed_unanswered(self) -> None:
        """The ``set_seed`` on its way gets no ``seed_set``: refused (an ``error`` with its
        ref), or its connection closed. The server may never have written it, and deal
        with the seat's old seed until one sent again is confirmed, so the count of
        hands dealt without it starts again with the next ``set_seed``."""
        self._unconfirmed = None

    def _my_seeds(self) -> tuple[str, ...]:
        """The seeds a hand starting now may have been dealt with; none to check when
        the seed is unknown (a session resumed by another process, until its new seed
        is confirmed)."""
        if self.seed is None:
            return ()
        pending = () if self.pending_seed is None else (self.pending_seed,)
        return (self.seed, *pending)

    # -- what the server committed to ----------------------------------------------

    def committed(self, seed_commitment: str | None) -> None:
        """The table's ``seed_commitment`` as a summary or snapshot shows it: the first
        one seen is the one the revealed seed must match, and it never changes.
        (A table from before protocol 2 has none, and no seed to reveal.) One first
        seen after this client sent its seed proves nothing: the server may have drawn
        its seed to suit that one."""
        if seed_commitment is None:
            return
        if self.seed_commitment is None:
            if self.seed is not None or self.pending_seed is not None:
                self._fail(
                    DealTampered(
                        self.table_id,
                        None,
                        "the table showed no seed commitment before this client sent its seed",
                    )
                )
            self.seed_commitment = seed_commitment
        elif seed_commitment != self.seed_commitment:
            self._fail(
                DealTampered(self.table_id, None, "the table's seed commitment changed while open")
            )

    def start_hand(self, started: wire.HandStarted, you: int | None) -> None:
        last, self._last_hand = self._last_hand, (started.hand_id, started.button)
        self._take_hand(
            started.hand_id,
            started.button,
            started.commitment,
            started.leaves,
            started.client_seeds,
            [entry.seat for entry in started.stacks],
            you if you in {entry.seat for entry in started.stacks} else None,
        )
        hand = self._hand
        wrong = None if last is None else self._out_of_turn(last, started)
        if wrong is not None and hand is not None:
            hand.tampered = DealTampered(self.table_id, started.hand_id, wrong)

    def _out_of_turn(self, last: tuple[int, int], started: wire.HandStarted) -> str | None:
        """Why ``started`` cannot come after the hand numbered and buttoned ``last``. A
        deck is fixed by its hand's number, and the button says which seat gets which
        positions of it: a server free to choose either could choose the hands."""
        number, button = last
        if started.hand_id != number + 1:
            return f"the server skipped from hand {number} to this one"
        if self.bot_seat is None:  # the bot's seat is always the button (verify_hand)
            seats = sorted(entry.seat for entry in started.stacks)
            moved = next((seat for seat in seats if seat > button), seats[0])
            if started.button != moved:
                return f"the button moved from seat {button} to {started.button}, not to {moved}"
        return None

    def snapshot(self, view: wire.TableView) -> None:
        """A snapshot: the commitment again, and the hand in play as far as it has gone."""
        self.committed(view.seed_commitment)
        self.bot_seat, self.options = dealer_seat(view.options), view.options
        hand = view.hand
        joining, self._joining = self._joining, False
        self._last_hand = None if hand is None else (hand.hand_id, hand.button)
        if hand is None:
            self._end_unseen()
            return
        me = next((seat for seat in view.seats if seat.seat == view.you), None)
        if joining and hand.phase == "ended":
            me = None
        self._take_hand(
            hand.hand_id,
            hand.button,
            hand.commitment,
            hand.leaves,
            hand.client_seeds,
            [entry.seat for entry in hand.stacks],
            view.you if me is not None and me.in_hand else None,
        )
        for seat in view.seats:
            if seat.openings is not None or seat.tiles is not None:
                self.opened(seat.seat, seat.openings or (), seat.tiles or ())
        if hand.phase == "ended":
            self.end_hand(hand.hand_id)

    def opened(self, seat: int, openings: Sequence[Opening], tiles: Sequence[str]) -> None:
        """Positions of ``seat``'s tiles opened to this client, its own or shown down,
        with the ``tiles`` the same message gave, which must be the tiles opened."""
        hand = self._hand
        if hand is None:
            return
        opened = [opening.tile for opening in openings]
        # A server lists them in the same order, but any order is the same tiles.
        if list(tiles) != opened and sorted(tiles) != sorted(opened):
            hand.tampered = hand.tampered or DealTampered(
                self.table_id, hand.hand_id, f"seat {seat + 1}'s tiles are not the tiles opened"
            )
        found = hand.openings.setdefault(seat, {})
        for opening in openings:
            found.setdefault((opening.position, opening.tile, opening.salt), opening)

    def end_hand(self, hand_id: int, paid: bool | DealTampered = False) -> DealCheck | None:
        """Check the hand that just ended; ``None`` if this client did not see it start.
        ``paid`` is its payouts' check: passed, failed (how), or not made."""
        hand = self._hand
        if hand is None or hand.hand_id != hand_id:
            return self.checks.get(hand_id)
        self._hand = None
        seen = hand.seen(self.table_id)
        self.kept[hand_id] = replace(seen, leaves=(), openings={})
        check: DealCheck
        if hand.tampered is not None:
            check = hand.tampered
        else:
            try:
                tiles = verify_hand(
                    seen, my_seat=hand.my_seat, my_seeds=hand.my_seeds, bot_seat=self.bot_seat
                )
                check = (
                    paid
                    if isinstance(paid, DealTampered)
                    else DealChecked(
                        tiles,
                        own_seed=hand.my_seat is not None and bool(hand.my_seeds),
                        paid=paid,
                    )
                )
            except DealTampered as tampered:
                check = tampered
        self.checks[hand_id] = check
        if isinstance(check, DealTampered):
            self._fail(check)
        return check

    # -- the table's seed -------------------------------------------------------------

    def reveal(self, table_seed: str, history: Sequence[wire.PlayedHand] = ()) -> ShuffleVerified:
        """Rebuild every hand's deck from the revealed ``table_seed``: the hands this
        client kept, and those of ``history`` (``list_hands``' spectator's view, whose
        shown openings are checked as well, and payouts, once the table's options
        are known). Raises :class:`DealTampered`, and keeps
        it, on the first that does not rebuild."""
        try:
            return self._reveal(table_seed, history)
        except DealTampered as tampered:
            self._fail(tampered)
            raise

    def _reveal(self, table_seed: str, history: Sequence[wire.PlayedHand]) -> ShuffleVerified:
        if self.table_seed is not None and table_seed != self.table_seed:
            raise DealTampered(self.table_id, None, "two different seeds were revealed")
        if self.seed_commitment is None:
            raise DealTampered(self.table_id, None, "the seed was revealed, never committed to")
        if self.tampered is not None and self.tampered.hand_id is None:
            raise self.tampered  # the commitment itself is not one to rebuild against
        self._end_unseen()
        hands = dict(self.kept)
        for played in history:
            if played.table_seed not in (None, table_seed):
                raise DealTampered(self.table_id, None, "two different seeds were revealed")
            seen = hand_seen(played)
            if seen is None:
                continue
            verify_hand(seen, bot_seat=self.bot_seat)
            if self.options is not None:
                verify_history(self.options, played)
            mine = hands.setdefault(seen.hand_id, seen)
            dealt = self.rebuilt.get(seen.hand_id, mine.commitment)
            if (dealt, mine.commitment, dict(mine.client_seeds)) != (
                seen.commitment,
                seen.commitment,
                dict(seen.client_seeds),
            ):
                raise DealTampered(
                    self.table_id, seen.hand_id, "the hand's history is not the hand dealt"
                )
        for seen in hands.values():
            verify_reveal(seen, table_seed, self.seed_commitment)
        self.table_seed = table_seed
        self.rebuilt |= {hand_id: seen.commitment for hand_id, seen in hands.items()}
        self.kept.clear()
        self.shuffle = ShuffleVerified(len(self.rebuilt))
        return self.shuffle

    # -- inside ---------------------------------------------------------------------

    def _take_hand(
        self,
        hand_id: int,
        button: int,
        commitment: str,
        leaves: Sequence[str],
        client_seeds: Sequence[SeatSeed],
        dealt: Sequence[int],
        my_seat: int | None,
    ) -> None:
        if not self.checking:
            return
        hand = self._hand
        if hand is not None and hand.hand_id == hand_id:
            if (hand.commitment, hand.leaves) != (commitment, tuple(leaves)):
                hand.tampered = DealTampered(
                    self.table_id, hand_id, "the hand's commitment changed while it was played"
                )
            return
        self._end_unseen()
        if hand_id in self.checks:
            return  # already over: a snapshot of its end
        my_seeds = self._my_seeds()
        self._hand = _HandInPlay(
            hand_id,
            button,
            commitment,
            tuple(leaves),
            {entry.seat: entry.client_seed for entry in client_seeds},
            my_seat,
            my_seeds if my_seat is not None else (),
        )
        if sorted(entry.seat for entry in client_seeds) != sorted(dealt):
            # A seed for a seat nobody plays is one the server chose, knowing the others.
            self._hand.tampered = DealTampered(
                self.table_id,
                hand_id,
                "the client seeds are listed for other seats than those dealt in",
            )
        unconfirmed = self._count_unconfirmed(hand_id, client_seeds, my_seat)
        self._hand.tampered = self._hand.tampered or unconfirmed

    def _count_unconfirmed(
        self, hand_id: int, client_seeds: Sequence[SeatSeed], my_seat: int | None
    ) -> DealTampered | None:
        """Count a hand dealt to this seat with another seed than the one on its way
        while that one waits for its ``seed_set`` (see :attr:`_unconfirmed`)."""
        if my_seat is None or self._unconfirmed is None or hand_id <= self._unconfirmed_after:
            return None
        listed = next((entry.client_seed for entry in client_seeds if entry.seat == my_seat), None)
        if listed == self.pending_seed:
            return None
        self._unconfirmed += 1
        if self._unconfirmed == 1:
            return None
        return DealTampered(
            self.table_id,
            hand_id,
            "a second hand was dealt without the seed this client sent, "
            "which the server never confirmed",
        )

    def _end_unseen(self) -> None:
        """A hand whose end this client missed is checked as far as it was seen."""
        if self._hand is not None:
            self.end_hand(self._hand.hand_id)

    def _fail(self, tampered: DealTampered) -> None:
        if self.tampered is None:
            self.tampered = tampered


def hand_seen(played: wire.PlayedHand) -> HandSeen | None:
    """A played hand as its history shows it (what a spectator saw); ``None`` for a
    hand whose history does not show it dealt (one voided when its server died)."""
    started: wire.HandStarted | None = None
    openings: dict[int, tuple[Opening, ...]] = {}
    try:
        for event in played.events:
            if event.get("type") == "hand_started":
                started = wire.HandStarted.model_validate_json(json.dumps(event))
            elif event.get("type") == "showdown":
                for shown in wire.Showdown.model_validate_json(json.dumps(event)).hands:
                    openings[shown.seat] = shown.openings
    except ValidationError:
        raise DealTampered(
            played.table_id, played.hand_id, "its history does not say how it was dealt"
        ) from None
    if started is None:
        return None
    return HandSeen(
        table_id=played.table_id,
        hand_id=played.hand_id,
        button=started.button,
        commitment=started.commitment,
        leaves=started.leaves,
        client_seeds={entry.seat: entry.client_seed for entry in started.client_seeds},
        openings=openings,
    )


def dealer_seat(options: TableOptions) -> int | None:
    """Where the dealer bot sits at a table of ``options`` (the last seat), if it has one."""
    return options.seats - 1 if options.dealer_bot else None
