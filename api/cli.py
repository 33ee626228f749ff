"""The ``proofgate`` command.

Flags override the ``PROOFGATE_*`` environment; both go through
``Settings.from_env`` so a value is checked the same way wherever it comes from.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace

from domain.errors import ConfigurationError, ProofgateError
from storage.access_patterns import REGISTRY

from . import __version__
from ._flags import DATA_DIR_HELP, flag_environ, settings_with_flags
from .explain import render_markdown, render_text
from .ledger_commands import add_ledger_commands
from .outbox_commands import add_outbox_commands
from .secret_commands import add_secret_commands
from .settings import Backend, Settings, TableLocation

__all__ = ["main"]

_SCHEMA_MODULE = "api.schema"
_DESCRIPTION = "GraphQL gateway for product-authenticity data over one DynamoDB-style table."


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.command
    try:
        return command(args)
    except ProofgateError as error:
        print(f"proofgate: error: {error.message}", file=sys.stderr)
        if error.hint:
            print(f"proofgate: hint: {error.hint}", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="proofgate", description=_DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"proofgate {__version__}")
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the gateway (uvicorn, one worker)")
    serve.add_argument("--host", help="interface to bind (PROOFGATE_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to bind (PROOFGATE_PORT, default 8000)")
    serve.add_argument("--data-dir", help=DATA_DIR_HELP)
    serve.add_argument("--endpoint", help="DynamoDB endpoint URL (PROOFGATE_DYNAMODB_ENDPOINT)")
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

    create = commands.add_parser("create-table", help="create the DynamoDB table")
    create.add_argument("--table", help="table name (PROOFGATE_TABLE, default proofgate)")
    create.add_argument("--endpoint", help="DynamoDB endpoint URL (PROOFGATE_DYNAMODB_ENDPOINT)")
    create.add_argument("--region", help="AWS region (PROOFGATE_AWS_REGION, default us-east-1)")
    create.set_defaults(command=_create_table)

    explain = commands.add_parser(
        "explain", help="print the access-pattern registry and the field -> AP map"
    )
    explain.add_argument("--markdown", action="store_true", help="print docs/access-patterns.md")
    explain.set_defaults(command=_explain)

    export = commands.add_parser("export-schema", help="print the GraphQL schema (SDL)")
    export.set_defaults(command=_export_schema)
    add_ledger_commands(commands)
    add_outbox_commands(commands)
    add_secret_commands(commands)
    return parser


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from .app import create_app
    from .gc_freeze import FreezeAfterStartup
    from .logs import logging_config

    configured = settings_with_flags(
        host=args.host,
        port=args.port,
        data_dir=args.data_dir,
        dynamodb_endpoint=args.endpoint,
        forwarded_allow_ips=args.forwarded_allow_ips,
    )
    settings = replace(configured, demo=args.demo)
    app = create_app(settings)
    listener = _bind(settings.host, settings.port)
    print(_banner(settings, [getattr(r, "path", "") for r in app.routes]), flush=True)
    config = uvicorn.Config(
        FreezeAfterStartup(app),
        loop="uvloop" if sys.platform != "win32" else "asyncio",
        http="httptools",
        lifespan="on",
        # A permessage-deflate context holds ~300 KB per connection, six times
        # what an idle subscription otherwise costs; alerts are small JSON.
        ws_per_message_deflate=False,
        server_header=False,
        proxy_headers=args.proxy_headers,
        forwarded_allow_ips=list(settings.forwarded_allow_ips),
        limit_concurrency=settings.max_connections,
        timeout_graceful_shutdown=settings.shutdown_seconds,
        log_config=logging_config(settings.log_format, settings.log_level),
        # ``proofgate.request`` writes one richer line per request instead.
        access_log=False,
    )
    uvicorn.Server(config).run(sockets=[listener])
    return 0


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything says the gateway is up, so
    a taken port is one line and a non-zero exit rather than a banner
    followed by uvicorn's failure."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as error:
        raise ConfigurationError(
            f"Cannot listen on {host}:{port}: {error.strerror or error}",
            hint="Stop what holds the port, or choose another with --port (PROOFGATE_PORT).",
        ) from None


def _banner(settings: Settings, paths: Sequence[str]) -> str:
    store = settings.sqlite_path if settings.backend is Backend.SQLITE else settings.table
    lines = [
        f"proofgate {__version__}: {settings.backend.value} store {store}",
        f"  URL:       {settings.url}",
    ]
    if "/graphql" in paths:
        lines.append(f"  GraphQL:   {settings.url}/graphql")
    if settings.admin_key_file is not None and settings.demo:
        lines.append(f"  Admin key: {settings.admin_key}  (kept in {settings.admin_key_file})")
    elif settings.admin_key_file is not None:
        # Stdout ends up in log stores; the key stays in its file.
        lines.append(f"  Admin key: kept in {settings.admin_key_file}")
    else:
        lines.append("  Admin key: set by PROOFGATE_ADMIN_KEY")
    return "\n".join(lines)


def _create_table(args: argparse.Namespace) -> int:
    from storage.dynamodb import create_table

    environ = flag_environ(
        table=args.table, dynamodb_endpoint=args.endpoint, aws_region=args.region
    )
    location = TableLocation.from_env(environ)
    asyncio.run(
        create_table(
            table_name=location.table, region=location.region, endpoint_url=location.endpoint
        )
    )
    where = location.endpoint or location.region
    print(f"Table {location.table} is ready ({where}): keys, indexes, stream, TTL, PITR")
    return 0


def _explain(args: argparse.Namespace) -> int:
    from .fieldmap import field_map
    from .schema import schema

    render = render_markdown if args.markdown else render_text
    sys.stdout.write(render(REGISTRY, field_map(schema, REGISTRY)))
    return 0


def _export_schema(args: argparse.Namespace) -> int:
    try:
        module = importlib.import_module(_SCHEMA_MODULE)
    except ModuleNotFoundError as error:
        if error.name != _SCHEMA_MODULE:
            raise
        module = None
    schema = getattr(module, "schema", None)
    if schema is None:
        print(
            f"proofgate: error: no GraphQL schema: {_SCHEMA_MODULE} does not define `schema`",
            file=sys.stderr,
        )
        return 1
    sys.stdout.write(schema.as_str().rstrip("\n") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
