"""Resume tokens kept between runs, one per server, in the user's config folder.

The token is the account: whoever holds it plays with its chips. So the file
is written whole (a crash never leaves half of it) and readable by its owner
only.
"""

from __future__ import annotations

import json
import os
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

    def __init__(self, folder: Path) -> None:
        self.path = folder / "tokens.json"

    def load(self, server: str) -> str | None:
        token = self._read().get(server)
        return token if isinstance(token, str) else None

    def save(self, server: str, token: str) -> None:
        tokens = self._read()
        tokens[server] = token
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
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

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}
