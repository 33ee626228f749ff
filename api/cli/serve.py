"""``proofgate serve``: uvicorn on uvloop and httptools, one process or
``--workers N`` on one listening socket.

The socket is bound and the store checked before anything says the gateway
is up, so a taken port or a misconfigured table is one line and a non-zero
exit; through a storage outage the socket answers ``/health`` but not
``/ready`` until the store answers (``api/runtime/storage_wait.py``).
With several workers each process builds its own app from the same
environment (flags are written into it first) and runs its own relay and
tailer, exactly like separate ``serve`` processes on one store: alerts
reach every subscriber once whichever worker holds its socket. Their metrics
are aggregated through ``PROMETHEUS_MULTIPROC_DIR``.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import logging
import os
import shutil
import socket
import sys
import tempfile
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from api import __version__
from api.cli.flags import DATA_DIR_HELP, flag_environ
from api.observability.logs import LogFormat
from api.observability.metrics import MULTIPROCESS_DIR
from api.runtime.backend import check_storage
from api.runtime.redis_check import check_redis
from api.settings.gateway import Backend, CacheChannel, Settings
from domain.errors import ConfigurationError

if TYPE_CHECKING:
    from starlette.types import ASGIApp

__all__ = ["add_serve_command", "worker_app"]


def add_serve_command(commands: Any) -> None:
    serve = commands.add_parser("serve", help="run the gateway (uvicorn)")
    serve.add_argument("--host", help="interface to bind (PROOFGATE_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to bind (PROOFGATE_PORT, default 8000)")
    serve.add_argument("--data-dir", help=DATA_DIR_HELP)
    serve.add_argument("--endpoint", help="DynamoDB endpoint URL (PROOFGATE_DYNAMODB_ENDPOINT)")
    serve.add_argument(
        "--workers", type=int, default=1, help="processes serving one port (default 1)"
    )
    serve.add_argument(
        "--proxy-headers",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="believe X-Forwarded-For/-Proto from --forwarded-allow-ips (default: on)",
    )
    serve.add_argument(
        "--forwarded-allow-ips",
        help="comma-separated proxy addresses or networks, or * "
        "(PROOFGATE_FORWARDED_ALLOW_IPS, default 127.0.0.1)",
    )
    serve.add_argument("--demo", action="store_true", help="load demo data on start")
    serve.set_defaults(command=_serve)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from api.runtime.draining import DrainingServer

    if args.workers < 1 or (args.workers > 1 and args.demo):
        raise ConfigurationError(
            f"--workers must be at least 1, and 1 with --demo; got {args.workers}",
            hint="Load the demo with one worker, then restart with more.",
        )
    environ = flag_environ(
        host=args.host,
        port=args.port,
        data_dir=args.data_dir,
        dynamodb_endpoint=args.endpoint,
        forwarded_allow_ips=args.forwarded_allow_ips,
    )
    settings = replace(Settings.from_env(environ), demo=args.demo)
    _set_malloc_options(settings)
    if settings.cache and args.workers > 1:
        environ.update(_workers_cache_channel(settings, args.workers))
    _check_sole_writer(settings, args.workers)
    listener = _bind(settings.host, settings.port)
    built: list[ASGIApp] = []
    try:
        if not asyncio.run(_storage_answers(settings, listener, args, built)):
            listener.close()
            return 0
        asyncio.run(
            check_redis(settings.pipeline.redis_url, degraded_allowed=settings.redis_start_degraded)
        )
    except BaseException:
        listener.close()
        raise
    if args.workers == 1:
        config = _config(built[0] if built else _app(settings), settings, args)
        _announce(settings, args.workers)
        DrainingServer(config).run(sockets=[listener])
        return 0
    _check_operations(settings)
    _check_spans()
    os.environ.update(environ)
    with _metrics_directory():
        config = _config("api.cli.serve:worker_app", settings, args, factory=True)
        config.workers = args.workers
        _announce(settings, args.workers)
        uvicorn.supervisors.Multiprocess(config, sockets=[listener]).run()
    return 0


def _workers_cache_channel(settings: Settings, workers: int) -> dict[str, str]:
    """Workers sharing a store hear each other's writes: ``auto`` without
    Redis means the table's log
    (docs/design.md, Cache invalidations across processes)."""
    from api.runtime.cache_channel import channel_of

    if channel_of(settings) is not CacheChannel.NONE:
        return {}
    if settings.cache_channel is CacheChannel.AUTO:
        return {"PROOFGATE_CACHE_CHANNEL": CacheChannel.TABLE.value}
    raise ConfigurationError(
        f"PROOFGATE_CACHE_CHANNEL=none cannot serve {workers} workers with PROOFGATE_CACHE=on",
        hint="Unset PROOFGATE_CACHE_CHANNEL (or set it to table or redis), or run one worker.",
    )


async def _storage_answers(
    settings: Settings, listener: socket.socket, args: argparse.Namespace, built: list[ASGIApp]
) -> bool:
    """Checks the store; through an outage, ``listener`` answers ``/health``
    and not ``/ready`` until it passes (docs/design.md, Degraded start), and
    a single process builds its app into ``built`` meanwhile. A
    misconfiguration is one line and exit 1. False: stopped while waiting."""
    from api.runtime.storage_wait import PROBE_SECONDS, start_when_storage_answers

    def waiting(app: ASGIApp) -> Any:
        return _config(app, settings, args, lifespan="off")

    def build() -> None:
        if args.workers == 1:
            built.append(_app(settings))

    # The embedded store has no outage to wait through; it opens at its own pace.
    bound = PROBE_SECONDS if settings.backend is Backend.DYNAMODB else None
    if bound is not None:
        # Imported before the bounded check: the AWS SDK alone can take a
        # second to import on a busy machine, which is no outage.
        import storage.dynamodb  # noqa: F401
    return await start_when_storage_answers(
        lambda: check_storage(settings),
        listener,
        waiting,
        backend=settings.backend.value,
        store=_where(settings),
        bound=bound,
        prepare=build,
    )


def _where(settings: Settings) -> str:
    if settings.backend is Backend.SQLITE:
        return f"The SQLite store {settings.sqlite_path}"
    return f"DynamoDB at {settings.dynamodb_endpoint or f'region {settings.aws_region}'}"


def _check_operations(settings: Settings) -> None:
    """Workers load the operation registry themselves; checking it here too
    makes a bad file stop ``serve`` with one line, not every worker."""
    from api.graphql.schema import schema
    from api.operations.defaults import default_documents
    from api.operations.registry import load_registry

    load_registry(schema, settings.limits, settings.operations.directory, default_documents())


def worker_app() -> ASGIApp:
    """One worker's app, from the environment ``serve`` prepared."""
    settings = Settings.from_env()
    _set_malloc_options(settings)
    return _app(settings)


def _set_malloc_options(settings: Settings) -> None:
    """Before the process starts a thread: the arena cap binds only the
    arenas created after it (docs/design.md, Memory growth)."""
    from api.runtime.malloc_options import set_malloc_options

    set_malloc_options(settings.malloc_arena_max, settings.malloc_mmap_threshold_bytes)


def _app(settings: Settings) -> ASGIApp:
    from api.app import create_app
    from api.observability.memory import start_tracing
    from api.observability.spans import Spans
    from api.runtime.gc_freeze import FreezeAfterStartup
    from api.ws.close_on_shutdown import GoingAwayOnExit

    start_tracing(settings.tracemalloc_frames)
    app = create_app(settings, spans=Spans.from_environment())
    full_every = timedelta(milliseconds=settings.gc_full_ms)
    return FreezeAfterStartup(GoingAwayOnExit(app), full_every=full_every)


def _check_spans() -> None:
    """Workers set up their own exporters; a missing ``otel`` extra stops
    ``serve`` here with one line, not every worker."""
    from api.observability.spans import Spans

    spans = Spans.from_environment()
    if spans is not None:
        spans.shutdown()


def _config(
    app: ASGIApp | str,
    settings: Settings,
    args: argparse.Namespace,
    *,
    factory: bool = False,
    lifespan: Literal["on", "off"] = "on",
) -> Any:
    import uvicorn

    from api.observability.logs import logging_config
    from api.runtime.http_protocol import (
        LeanHttpProtocol,
        LeanWebSocketProtocol,
        OneWriteHttpProtocol,
    )
    from api.settings.limits import Lane

    lean = Lane.PROTOCOL in settings.limits.execution

    return uvicorn.Config(
        app,
        factory=factory,
        loop="uvloop" if sys.platform != "win32" else "asyncio",
        # httptools, a response's head and body in one write, the common
        # request on a lean cycle (api/runtime/http_protocol.py).
        http=LeanHttpProtocol if lean else OneWriteHttpProtocol,
        # Stated rather than detected: the outermost app returns the inner
        # app's awaitable instead of being a coroutine function itself.
        interface="asgi3",
        lifespan=lifespan,
        # A permessage-deflate context holds ~300 KB per connection, six times
        # what an idle subscription otherwise costs; alerts are small JSON.
        ws_per_message_deflate=False,
        # uvicorn's websockets protocol holding less per idle socket
        # (api/runtime/http_protocol.py, docs/design.md, Alert fan-out).
        ws=LeanWebSocketProtocol,
        # WebSocket messages obey the body limit; uvicorn refuses a larger
        # frame from its header (1009) instead of buffering up to 16 MiB.
        ws_max_size=settings.limits.max_body_bytes,
        server_header=False,
        proxy_headers=args.proxy_headers,
        forwarded_allow_ips=list(settings.forwarded_allow_ips),
        limit_concurrency=settings.max_connections,
        timeout_graceful_shutdown=settings.shutdown_seconds,
        log_config=logging_config(settings.log_format, settings.log_level),
        # ``proofgate.request`` writes one richer line per request instead.
        access_log=False,
    )


class _metrics_directory:
    """A fresh ``PROMETHEUS_MULTIPROC_DIR`` for the workers unless the operator
    chose one; removed when serving ends, since its files describe processes
    that no longer exist."""

    def __enter__(self) -> None:
        self.created: str | None = None
        if not os.environ.get(MULTIPROCESS_DIR):
            self.created = tempfile.mkdtemp(prefix="proofgate-metrics-")
            os.environ[MULTIPROCESS_DIR] = self.created

    def __exit__(self, *exc: object) -> None:
        if self.created is not None:
            shutil.rmtree(self.created, ignore_errors=True)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as error:
        raise ConfigurationError(
            f"Cannot listen on {host}:{port}: {error.strerror or error}",
            hint=_BIND_HINTS.get(error.errno or 0, _HOST_HINT),
        ) from None


_HOST_HINT = (
    "--host (PROOFGATE_HOST) must be an address of this machine: 127.0.0.1, "
    "0.0.0.0 for every interface (behind a load balancer), or one interface's address."
)
_BIND_HINTS = {
    errno.EADDRINUSE: "Stop what holds the port, or choose another with --port (PROOFGATE_PORT).",
    errno.EACCES: "Ports below 1024 need privileges: choose --port (PROOFGATE_PORT) 1024 or above.",
}


def _announce(settings: Settings, workers: int) -> None:
    """The banner on stdout, or in JSON log mode one log line like every other
    (uvicorn's ``Config`` has set up logging by now), never with a key in it."""
    if settings.log_format is not LogFormat.JSON:
        print(_banner(settings, workers), flush=True)
        return
    fields = {
        "version": __version__,
        "backend": settings.backend.value,
        "store": _store(settings),
        "workers": workers,
        "url": settings.url,
        "adminKey": f"kept in {settings.admin_key_file}"
        if settings.admin_key_file is not None
        else "set by PROOFGATE_ADMIN_KEY",
    }
    logging.getLogger("proofgate.api").info("proofgate serving", extra={"fields": fields})


def _store(settings: Settings) -> str:
    return settings.sqlite_path if settings.backend is Backend.SQLITE else settings.table


def _banner(settings: Settings, workers: int = 1) -> str:
    processes = f", {workers} workers" if workers > 1 else ""
    lines = [
        f"proofgate {__version__}: {settings.backend.value} store {_store(settings)}{processes}",
        f"  URL:       {settings.url}",
        f"  GraphQL:   {settings.url}/graphql",
    ]
    if settings.admin_key_file is not None and settings.demo:
        lines.append(f"  Admin key: {settings.admin_key}  (kept in {settings.admin_key_file})")
    elif settings.admin_key_file is not None:
        # Stdout ends up in log stores; the key stays in its file.
        lines.append(f"  Admin key: kept in {settings.admin_key_file}")
    else:
        lines.append("  Admin key: set by PROOFGATE_ADMIN_KEY")
    return "\n".join(lines)


def _check_sole_writer(settings: Settings, workers: int) -> None:
    """docs/design.md, Storage cache, The watermark: the claim holds for one
    process that hears no one, not for workers or a fleet on a channel."""
    if not (settings.cache and settings.cache_sole_writer):
        return
    if workers > 1:
        raise ConfigurationError(
            f"PROOFGATE_CACHE_SOLE_WRITER=on claims one writing process; got {workers} workers",
            hint="Run one worker, or set PROOFGATE_CACHE_SOLE_WRITER=off.",
        )
    if settings.pipeline.redis_url is not None:
        raise ConfigurationError(
            "PROOFGATE_CACHE_SOLE_WRITER=on with PROOFGATE_REDIS_URL set: the channel decides",
            hint="Set PROOFGATE_CACHE_SOLE_WRITER=off; the processes on Redis prove freshness.",
        )
    from api.runtime.cache_channel import channel_of

    if channel_of(settings) is CacheChannel.TABLE:
        raise ConfigurationError(
            "PROOFGATE_CACHE_SOLE_WRITER=on with the table's cache log: others may write",
            hint="Set PROOFGATE_CACHE_CHANNEL=none for one gateway alone on its store, "
            "or PROOFGATE_CACHE_SOLE_WRITER=off.",
        )
