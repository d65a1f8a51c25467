"""The evening at the table: every hand this player finished, those its seat played
while the connection was down too, and the biggest pot won."""

from __future__ import annotations

from qiuqiu.cli.connection import HISTORY_LIMIT, Connection
from qiuqiu.cli.errors import ClientError
from qiuqiu.cli.game import TableState
from qiuqiu.protocol import client as cmd
from qiuqiu.protocol import server as wire


class Tally:
    """Each hand's net for this player, counted by order, and the biggest pot won."""

    def __init__(self) -> None:
        self.nets: dict[int, int] = {}
        self.pots: dict[int, int] = {}
        self.biggest = 0
        self.counted: set[tuple[str, int]] = set()
        """Every hand whose end was seen, by table and hand id, counted or voided."""
        self.dealt: tuple[str, int] | None = None
        """The table and hand the seat was last seen dealt into."""

    def pot_won(self, hand_id: int, amount: int) -> None:
        self.pots[hand_id] = self.pots.get(hand_id, 0) + amount

    def record(self, table_id: str, hand_id: int, net: int) -> None:
        self.counted.add((table_id, hand_id))
        # Hand ids restart at a new table (a rebuy at a table like the last): count by order.
        self.nets[len(self.nets)] = net
        if net > 0:
            self.biggest = max(self.biggest, self.pots.get(hand_id, 0))
        self.pots.pop(hand_id, None)

    def unseen(self, table_id: str, state: TableState) -> list[int]:
        """The hands the seat was dealt into whose end this client did not see, once a
        snapshot of ``table_id`` shows ``state``: from the last one seen dealt (its end
        went by while the connection was down) to the one the snapshot shows (itself
        too, once it has ended). Their ends came replayed after the reconnect, as
        events after a gap, which say nothing of what the seat had before them."""
        hand = state.hand
        if hand is None or state.you is None or state.you not in hand.stacks_before:
            return []
        dealt, self.dealt = self.dealt, (table_id, hand.hand_id)
        if dealt is None or dealt[0] != table_id:
            return []
        last = hand.hand_id + (hand.phase == "ended")
        return [i for i in range(dealt[1], last) if (table_id, i) not in self.counted]

    async def count_unseen(
        self, conn: Connection, table_id: str, missed: list[int], *, since: int | None = None
    ) -> dict[int, int] | ClientError:
        """Count the hands ``missed`` at ``table_id``, and with ``since`` every one from
        that hand on (the seat was given up meanwhile: no snapshot says how far the
        table got), as the table's history has them, and return each one's net, by
        hand id: a voided one cost nothing and is not counted, nor is one the history
        no longer keeps, nor one the seat was not dealt into. The error if it cannot
        say."""
        try:
            listed = await conn.request(
                cmd.ListHands(table_id=table_id, limit=HISTORY_LIMIT), wire.HandList
            )
        except ClientError as error:
            return error
        nets: dict[int, int] = {}
        for hand in listed.hands:
            wanted = hand.hand_id in missed or (since is not None and hand.hand_id >= since)
            if not wanted or (table_id, hand.hand_id) in self.counted:
                continue
            self.counted.add((table_id, hand.hand_id))
            seat = next((s for s in hand.seats if s.account_id == conn.account_id), None)
            if seat is not None and not hand.voided:
                self.record(table_id, hand.hand_id, seat.after - seat.before)
                nets[hand.hand_id] = seat.after - seat.before
        return nets

    @property
    def hands(self) -> int:
        return len(self.nets)

    @property
    def won(self) -> int:
        return sum(net > 0 for net in self.nets.values())

    @property
    def lost(self) -> int:
        return sum(net < 0 for net in self.nets.values())

    @property
    def net(self) -> int:
        return sum(self.nets.values())
