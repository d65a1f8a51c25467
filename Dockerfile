# The QiuQiu server. `docker compose up` runs it with Redis (docker-compose.yml);
# alone it keeps its state in memory: `docker build -t qiuqiu-server .`, then
# `docker run -p 8765:8765 qiuqiu-server`, and open http://localhost:8765/ to play
# in the browser.
FROM python:3.11-slim AS build

RUN pip install --no-cache-dir uv==0.13.9
# A C compiler for the dealer bot's decision (server/.../house/_native.c) and the deal
# (server/.../table/_deal.c, which also needs OpenSSL's headers); only this stage has
# them, the image gets the built modules. The deal's module links libcrypto.so.3, which
# the slim image already has: Python's own hashlib and ssl link it.
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev libssl-dev \
    && rm -rf /var/lib/apt/lists/*
ENV UV_COMPILE_BYTECODE=1 UV_LINK_MODE=copy UV_PYTHON_DOWNLOADS=never
WORKDIR /app

# Third-party dependencies first, in a layer that a change to our code does not rebuild.
# uv reads every workspace member's pyproject.toml to check the lock, the CLI's too.
COPY pyproject.toml uv.lock ./
COPY engine/pyproject.toml engine/
COPY protocol/pyproject.toml protocol/
COPY server/pyproject.toml server/
COPY clients/cli/pyproject.toml clients/cli/
COPY clients/web/pyproject.toml clients/web/
RUN uv sync --locked --no-default-groups --package qiuqiu-server --extra uvloop --no-install-workspace

COPY engine/src engine/src
COPY protocol/src protocol/src
COPY server/src server/src
# The browser page the server serves at /.
COPY clients/web/src clients/web/src
# Installed as wheels, not editable, so the image needs no source tree.
RUN uv sync --locked --no-default-groups --package qiuqiu-server --extra uvloop --no-editable


FROM python:3.11-slim

RUN useradd --system --no-create-home qiuqiu
COPY --from=build /app/.venv /app/.venv
# Every interface, as a container must to be reached; set in the environment rather
# than as a flag so that QIUQIU_HOST can still change it (a flag would win).
ENV PATH="/app/.venv/bin:$PATH" PYTHONUNBUFFERED=1 QIUQIU_HOST=0.0.0.0
USER qiuqiu
EXPOSE 8765
CMD ["qiuqiu-server"]
