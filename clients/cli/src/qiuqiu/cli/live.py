"""The live table view: the table stays on screen while you play, the events below it.

On a terminal (not ``--plain``, not piped) ``qiuqiu play`` draws one picture with
``rich``'s live display: a panel with every seat, stack and bet, the pot, the
timer, your tiles and the commands you may type; under it the latest events;
and at the bottom the line being typed. The keys are read one by one (the
terminal in cbreak mode, so the picture and the typing never fight over the
cursor) and a line is handed on when Enter is pressed.

The picture is drawn again when something changes it (an event, a key, a message
shown) and when the turn's clock shows one second less; with no clock, once a
second, for a window resized. Drawn four times a second whatever changed, it
would cost a player waiting at a turn 3% of a core.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import termios
import time
import tty
from collections import deque
from collections.abc import AsyncIterator, Callable

from rich import box
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.segment import Segment
from rich.text import Text

from qiuqiu.cli import render
from qiuqiu.cli.game import TableState

EVENT_LINES = 200
"""Lines of events kept; the screen shows as many of the last as fit."""


class LiveView:
    """The picture: ``state()`` gives the table to draw (``None`` when there is none)."""

    def __init__(
        self, console: Console, unicode: bool, state: Callable[[], TableState | None]
    ) -> None:
        self.console = console
        self.unicode = unicode
        self.state = state
        self.events: deque[Text] = deque(maxlen=EVENT_LINES)
        self.typed = ""
        self.standing: Text | None = None
        """A line kept under the table while it holds, where events scroll away (the
        seat stands up after this hand)."""
        self.offline: Text | None = None
        """Said instead of the commands while the connection is down: the table shows
        the game as it was when it dropped, and nothing typed can reach the server."""
        self.pinned: RenderableType | None = None
        """Drawn under the events, whole, until the next line is typed (it then joins
        them), the table giving up its upper lines for it where both do not fit:
        ``help``, which the events cut at 20 rows (and pushed away as they came)."""
        self._closed = False
        self._clock: asyncio.TimerHandle | None = None
        self._live = Live(
            console=console,
            get_renderable=self.picture,
            auto_refresh=False,
            vertical_overflow="crop",
            redirect_stdout=False,
            redirect_stderr=False,
        )

    def __enter__(self) -> LiveView:
        self._live.start()
        self._tick()
        return self

    def __exit__(self, *_: object) -> None:
        if self._clock is not None:
            self._clock.cancel()
        # The last picture stays on the terminal: without the prompt, which would look
        # as if the client still listened after it has gone.
        self._closed = True
        self.pinned = None  # the events say how it ended
        self._live.refresh()
        self._live.stop()

    def add(self, renderable: RenderableType) -> None:
        if isinstance(renderable, Text):
            for line in renderable.split("\n"):
                self.events.append(line)
        else:
            for segments in self.console.render_lines(renderable, pad=False):
                self.events.append(_joined(segments))
        self._live.refresh()

    def unpin(self) -> None:
        """What was pinned joins the events where it was drawn: under those said meanwhile."""
        pinned, self.pinned = self.pinned, None
        if pinned is not None:
            self.add(pinned)

    def refresh(self) -> None:
        self._live.refresh()

    def _tick(self) -> None:
        self._live.refresh()
        self._clock = asyncio.get_running_loop().call_later(
            self.until_the_clock_moves(), self._tick
        )

    def until_the_clock_moves(self) -> float:
        """Seconds until the turn's clock, as drawn, shows one less; one without a clock."""
        state = self.state()
        deadline = None if state is None or state.hand is None else state.hand.deadline_ms
        left = 0 if deadline is None else deadline - now_ms()
        if left <= render.HALF_SECOND_MS:
            return 1.0
        # A millisecond past the moment its rounding goes down.
        return ((left - render.HALF_SECOND_MS) % 1000 + 1) / 1000

    def picture(self) -> RenderableType:
        state = self.state()
        height = self.console.size.height
        parts: list[RenderableType] = []
        prompt = Text.assemble(("> ", "bold"), self.typed, ("_", "blink"))
        # The line being typed (a long one wraps onto more), and the one below it.
        used = 1 + (0 if self._closed else len(self.console.render_lines(prompt, pad=False)))
        pinned = [] if self.pinned is None else self.console.render_lines(self.pinned, pad=False)
        pinned = pinned[: max(0, height - used - 1)]  # the table keeps its last line
        used += len(pinned)
        if state is not None:
            drawn_table = render.table(state, now_ms(), self.unicode, turns=self.offline is None)
            body: list[RenderableType] = [drawn_table]
            if self.offline is not None:
                body.append(self.offline)
            elif state.legal is not None:
                body.append(
                    Text.assemble(
                        ("Your turn: ", "bold cyan"), render.legal(state.legal, self.unicode)
                    )
                )
            if self.standing is not None:
                body.append(self.standing)
            hand = state.hand
            title = f"Table {state.table_id}" + (f"  Hand #{hand.hand_id}" if hand else "")
            panel = Panel(
                Group(*body),
                title=title,
                title_align="left",
                box=box.ROUNDED if self.unicode else box.ASCII,
            )
            # Measured, not counted: a line too long for the terminal takes two, and
            # the prompt at the bottom must not be pushed off the screen. A panel
            # taller than the window keeps its lower lines, the turn among them.
            drawn = self.console.render_lines(panel, pad=False)[-max(1, height - used) :]
            parts.append(Text("\n").join(_joined(segments) for segments in drawn))
            used += len(drawn)
        room = height - used
        if room > 0:
            # The last lines as this terminal wraps them now: an event wider than the
            # window takes more than one, which would push the prompt off the screen.
            latest = Text("\n").join(list(self.events)[-room:])
            shown = self.console.render_lines(latest, pad=False)[-room:]
            parts.append(Text("\n").join(_joined(segments) for segments in shown))
        if pinned:
            parts.append(Text("\n").join(_joined(segments) for segments in pinned))
        if not self._closed:
            parts.append(prompt)
        return Group(*parts)


async def key_lines(view: LiveView) -> AsyncIterator[str]:
    """Lines typed at the live view, echoed into its picture as they are typed."""
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    loop = asyncio.get_running_loop()
    keys: asyncio.Queue[bytes] = asyncio.Queue()
    tty.setcbreak(fd)
    loop.add_reader(fd, lambda: keys.put_nowait(os.read(fd, 1024)))
    try:
        while True:
            chunk = await keys.get()
            for char in chunk.decode(errors="replace"):
                if char in "\r\n":
                    line, view.typed = view.typed, ""
                    view.unpin()
                    view.refresh()
                    yield line + "\n"
                elif char == "\x04":  # Ctrl-D: the end of input, as in line mode
                    if not view.typed:
                        return
                elif char in "\x7f\x08":
                    view.typed = view.typed[:-1]
                elif char == "\x15":  # Ctrl-U
                    view.typed = ""
                elif char.isprintable():
                    view.typed += char
            view.refresh()
    finally:
        loop.remove_reader(fd)
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _joined(segments: list[Segment]) -> Text:
    """One rendered line as text, its styles kept."""
    line = Text()
    for segment in segments:
        line.append(segment.text, segment.style)
    return line


def now_ms() -> int:
    return int(time.time() * 1000)
