"""Resume tokens kept between runs, one per server, in the user's config folder.

The token is the account: whoever holds it plays with its chips. So the file
is written whole (a crash never leaves half of it) and readable by its owner
only. A file that cannot be read as tokens is set aside, never overwritten: it
may hold other servers' tokens, which a person can still get back from it.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from qiuqiu.cli.errors import TokenNotSaved


def config_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """``$QIUQIU_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/qiuqiu``, else ``~/.config/qiuqiu``."""
    if environ.get("QIUQIU_CONFIG_DIR"):
        return Path(environ["QIUQIU_CONFIG_DIR"])
    base = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "qiuqiu"


class TokenFile:
    """``tokens.json``: the resume token for each server URL this user played on."""

    def __init__(self, folder: Path, name: str = "tokens.json") -> None:
        self.path = folder / name

    def load(self, server: str) -> str | None:
        token = (self._read() or {}).get(server)
        return token if isinstance(token, str) else None

    def save(self, server: str, token: str) -> Path | None:
        """Keep ``token`` for ``server``; return where a file that could not be read was
        set aside to make room for it, else ``None``."""
        tokens = self._read()
        aside = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if tokens is None:
                if self.path.is_dir():  # given for the file: moved aside, it would be lost
                    raise IsADirectoryError(errno.EISDIR, "it is a folder, not a file")
                aside = self._set_aside()
                tokens = {}
            tokens[server] = token
            partial = self.path.with_suffix(".tmp")
            partial.unlink(missing_ok=True)  # a leftover may have a wider mode
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as file:
                json.dump(tokens, file, indent=2)
            partial.replace(self.path)
        except OSError as error:
            raise TokenNotSaved(
                f"cannot keep this account's token in {self.path}: {error.strerror or error} "
                "(QIUQIU_CONFIG_DIR names a folder to keep it in)"
            ) from None
        return aside

    def _read(self) -> dict[str, object] | None:
        """The tokens in the file, none if there is no file, ``None`` if it cannot be read."""
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _set_aside(self) -> Path:
        aside = self.path.with_name(f"{self.path.name}.damaged-{secrets.token_hex(4)}")
        # It may hold tokens: readable by its owner only, as the file it was.
        self.path.chmod(0o600)
        self.path.rename(aside)
        return aside
