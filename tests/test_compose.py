"""docker-compose.yml and the Dockerfile, checked without Docker.

The compose file is validated against the Compose Specification's own JSON
schema, vendored in tests/data/compose-spec.json exactly as it is at
schema/compose-spec.json in the compose-spec/compose-spec repository on GitHub
(commit 00655e2222608fa6eaecdf12ac5195889ca2244a); the schema declares draft 7.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from typing import Any

import jsonschema
import pytest
import yaml

from qiuqiu.server.config import ServerConfig
from qiuqiu.server.gateway import QiuQiuServer

ROOT = Path(__file__).parent.parent
SCHEMA = json.loads((ROOT / "tests" / "data" / "compose-spec.json").read_text())


@pytest.fixture(scope="module")
def compose() -> Any:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_the_vendored_schema_is_a_valid_draft_7_schema() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft-07/schema"
    jsonschema.Draft7Validator.check_schema(SCHEMA)


def test_the_compose_file_keeps_to_the_compose_specification(compose: Any) -> None:
    jsonschema.Draft7Validator(SCHEMA).validate(compose)


def test_the_schema_would_catch_a_mistake_in_the_compose_file(compose: Any) -> None:
    broken = json.loads(json.dumps(compose))
    broken["services"]["server"]["depends_on"]["redis"]["condition"] = "service_ready"
    assert not jsonschema.Draft7Validator(SCHEMA).is_valid(broken)


def test_every_service_has_a_healthcheck(compose: Any) -> None:
    assert set(compose["services"]) == {"redis", "server"}
    for name, service in compose["services"].items():
        assert service["healthcheck"]["test"][0] == "CMD", name


def test_redis_appends_every_write_to_a_file_on_a_named_volume(compose: Any) -> None:
    redis = compose["services"]["redis"]
    assert redis["image"] == "redis:7"
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert "redis-data:/data" in redis["volumes"]
    assert "redis-data" in compose["volumes"]
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]


def test_the_server_starts_once_redis_is_healthy_and_is_told_where_it_is(compose: Any) -> None:
    server = compose["services"]["server"]
    assert server["build"] == "."
    assert server["depends_on"] == {"redis": {"condition": "service_healthy"}}
    assert server["environment"]["QIUQIU_REDIS_URL"] == "redis://redis:6379/0"
    assert server["environment"]["QIUQIU_HOST"] == "0.0.0.0"
    assert server["ports"] == ["8765:8765"]


def test_the_servers_environment_names_only_settings_the_server_has(compose: Any) -> None:
    known = {f"QIUQIU_{name.upper()}" for name in ServerConfig.model_fields}
    assert set(compose["services"]["server"]["environment"]) <= known


def test_everything_the_dockerfile_copies_is_in_the_repository_and_not_ignored() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    sources = [
        source
        for line in dockerfile.splitlines()
        if line.startswith("COPY ") and "--from" not in line
        for source in line.split()[1:-1]
    ]
    assert "uv.lock" in sources
    patterns = [
        line
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line and not line.startswith(("#", "!"))
    ]
    for source in sources:
        assert (ROOT / source).exists(), source
        # Docker leaves a path out when a pattern matches it or a folder it is in.
        parts = PurePosixPath(source).parts
        within = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
        assert not any(fnmatch(path, p) for path in within for p in patterns), source
    assert "--locked" in dockerfile


async def test_the_servers_healthcheck_passes_against_a_live_server(compose: Any) -> None:
    """The health check's own command, in a container whose server listens on the port
    ``QIUQIU_PORT`` names (a real server on a free port)."""
    check = compose["services"]["server"]["healthcheck"]["test"]
    assert check[:3] == ["CMD", "python", "-c"]
    server = QiuQiuServer(ServerConfig(port=0))
    await server.start()
    environment = {**os.environ, "QIUQIU_PORT": str(server.port)}

    async def checked() -> int:
        ran = await asyncio.create_subprocess_exec(
            sys.executable, "-c", check[3], env=environment, stderr=asyncio.subprocess.DEVNULL
        )
        return await ran.wait()

    try:
        assert await checked() == 0
    finally:
        await server.stop()
    assert await checked() != 0, "nothing listens any more: the same check fails"
