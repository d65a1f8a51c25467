"""The JSON Schema of both message unions, generated from the models.

``python -m qiuqiu.protocol.schema`` rewrites ``protocol/schema.json``; a test
fails when the committed file differs from what the models generate, so the
schema other languages build clients from is never stale.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from qiuqiu.protocol.client import CLIENT_MESSAGES
from qiuqiu.protocol.common import PROTOCOL_VERSION
from qiuqiu.protocol.server import SERVER_MESSAGES

SCHEMA_FILE = Path(__file__).resolve().parents[3] / "schema.json"


def protocol_schema() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "QiuQiu protocol",
        "version": PROTOCOL_VERSION,
        "client_message": CLIENT_MESSAGES.json_schema(mode="validation"),
        "server_message": SERVER_MESSAGES.json_schema(mode="serialization"),
    }


def render() -> str:
    return json.dumps(protocol_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("path", nargs="?", type=Path, default=SCHEMA_FILE)
    args = parser.parse_args(argv)
    args.path.write_text(render(), encoding="utf-8")
    print(f"wrote {args.path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
