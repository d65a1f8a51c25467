"""The words a table's refusals and notices carry, beside their codes: each says what
happened and what the client may do about it (PROTOCOL.md, "Errors")."""

UNAVAILABLE = "the server cannot reach its storage just now; nothing changed: try again shortly"
IN_DOUBT = (
    "the server is making sure it still hosts this table (it lost touch with its storage"
    " for longer than the table's lease); nothing changed: send it again in a moment"
)
MOVED = "the table moved to another server: reconnect to go on playing"
MOVED_WHILE_WRITTEN = (
    "the table moved to another server while this was being written: reconnect, and its "
    "snapshot there says whether it was"
)
MOVED_UNANSWERED = (
    "the table moved to another server before this was answered: nothing changed; send it "
    "again in a moment"
)
LOST = "the server hosting the table stopped"
"""Why only: hand_voided itself says every chip went back, and the clients say so."""
LEFT = "your seat stood up before its new seed was written: it dealt no hand"

LAST_LEFT = "the last player left"
NOBODY_SAT = "nobody sat down"
NOBODY_BACK = "nobody bought in again"
"""Why a table closed by itself (``table_closed``'s reason); a server stopping says why
it stopped."""
