"""What the terminal client says of one table, seated or watching: into the live table
view when it is drawn, else printed line after line; and the same words, in both, for
a connection that drops, comes back, or is gone for good."""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.text import Text

from qiuqiu.cli import render
from qiuqiu.cli.commands import HelpText
from qiuqiu.cli.connection import Connection
from qiuqiu.cli.game import TableState
from qiuqiu.cli.live import LiveView


class Narrator:
    """Tells what happens at the table ``table_id`` of ``conn``."""

    def __init__(
        self,
        conn: Connection,
        table_id: str,
        console: Console,
        unicode: bool,
        screen: LiveView | None = None,
    ) -> None:
        self.conn = conn
        self.table_id = table_id
        self.console = console
        self.unicode = unicode
        self.screen = screen
        """The live table view; ``None`` in line mode (pipes, ``--plain``)."""

    @property
    def state(self) -> TableState | None:
        return self.conn.tables.get(self.table_id)

    def say(self, renderable: RenderableType) -> None:
        if not self.unicode and isinstance(renderable, Text):
            renderable = render.ascii_only(renderable)
        if self.screen is not None:
            self.screen.add(renderable)
            return
        self.console.print(renderable)

    def redraw(self) -> None:
        """Draw the live view again, for what a message changed without a line said."""
        if self.screen is not None:
            self.screen.refresh()

    def show_help(self, help: HelpText) -> None:
        """``help``, which the live view keeps in sight until the next line is typed."""
        if self.screen is None:
            self.say(render.help_text(help))
        else:
            self.screen.pinned = render.help_text(help)
            self.screen.refresh()

    @property
    def ellipsis(self) -> str:
        return "…" if self.unicode else "..."

    def connection_dropped(self, reason: str, meanwhile: str = "") -> None:
        """The connection dropped and is being made again; ``meanwhile`` says, in the
        live view, what becomes of what is typed until then."""
        if self.screen is not None:
            # Before the line below, whose refresh draws the table with it.
            self.screen.offline = Text(
                f"Reconnecting{self.ellipsis} the table is as it was when the connection "
                f"dropped{meanwhile}.",
                "bold red",
            )
        self.say(Text(f"Connection lost ({reason}); reconnecting{self.ellipsis}", "red"))

    def reconnected(self) -> None:
        if self.screen is not None:
            self.screen.offline = None
        self.say(Text("Reconnected.", "green"))

    def connection_closed(self, reason: str) -> None:
        """The connection is gone for good: nothing more comes from the table."""
        closed = Text(f"The connection is closed ({reason}).", "bold red")
        if self.screen is not None:
            self.screen.offline = closed
        self.say(closed)
