"""The ``proofgate`` command.

Flags override the ``PROOFGATE_*`` environment; both go through
``Settings.from_env`` so a value is checked the same way wherever it comes from.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from collections.abc import Callable, Sequence

from api import __version__
from api.cli.backup import add_backup_command
from api.cli.capacity import add_capacity_command
from api.cli.explain import render_markdown, render_text
from api.cli.flags import flag_environ
from api.cli.ledger import add_ledger_commands
from api.cli.mcp import add_mcp_command
from api.cli.migrate import add_migrate_command
from api.cli.operations import add_operation_commands
from api.cli.outbox import add_outbox_commands
from api.cli.secrets import add_secret_commands
from api.cli.serve import add_serve_command
from api.settings.gateway import TableLocation
from domain.errors import ConfigurationError, ProofgateError
from storage.access_patterns import REGISTRY

__all__ = ["main"]

_SCHEMA_MODULE = "api.graphql.schema"
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

    add_serve_command(commands)
    add_capacity_command(commands)

    create = commands.add_parser("create-table", help="create the DynamoDB table")
    create.add_argument("--table", help="table name (PROOFGATE_TABLE, default proofgate)")
    create.add_argument("--endpoint", help="DynamoDB endpoint URL (PROOFGATE_DYNAMODB_ENDPOINT)")
    create.add_argument("--region", help="AWS region (PROOFGATE_AWS_REGION, default us-east-1)")
    create.set_defaults(command=_create_table)

    explain = commands.add_parser(
        "explain", help="print the access-pattern registry and the field -> AP map"
    )
    explain.add_argument("--markdown", action="store_true", help="print docs/access-patterns.md")
    explain.add_argument(
        "--tail",
        nargs=2,
        type=int,
        metavar=("PROCESSES", "BRANDS"),
        help="print what the alert tail reads a second for these counts, and with Redis",
    )
    explain.add_argument(
        "--hit-ratios",
        metavar="SCRAPE",
        help="add each pattern's cache hit ratio from a /metrics scrape saved in SCRAPE "
        "('-': standard input)",
    )
    explain.set_defaults(command=_explain)

    export = commands.add_parser("export-schema", help="print the GraphQL schema (SDL)")
    export.set_defaults(command=_export_schema)
    add_ledger_commands(commands)
    add_backup_command(commands)
    add_migrate_command(commands)
    add_outbox_commands(commands)
    add_secret_commands(commands)
    add_operation_commands(commands)
    add_mcp_command(commands)
    return parser


def _create_table(args: argparse.Namespace) -> int:
    from api.runtime.backend import stamp_new_table
    from storage.dynamodb import create_table

    environ = flag_environ(
        table=args.table, dynamodb_endpoint=args.endpoint, aws_region=args.region
    )
    location = TableLocation.from_env(environ)
    created = asyncio.run(
        create_table(
            table_name=location.table, region=location.region, endpoint_url=location.endpoint
        )
    )
    if created:
        asyncio.run(
            stamp_new_table(
                table=location.table, region=location.region, endpoint=location.endpoint
            )
        )
    where = location.endpoint or location.region
    print(f"Table {location.table} is ready ({where}): keys, indexes, stream, TTL, PITR")
    return 0


def _explain(args: argparse.Namespace) -> int:
    from api.graphql.fieldmap import field_map
    from api.graphql.schema import schema

    if args.tail is not None:
        return _explain_tail(*args.tail)
    fields = field_map(schema, REGISTRY)
    if args.markdown:
        sys.stdout.write(render_markdown(REGISTRY, fields))
        return 0
    ratios = None
    if args.hit_ratios is not None:
        from api.cli.cache_ratios import hit_ratios, read_scrape

        try:
            scrape = read_scrape(args.hit_ratios)
        except ConfigurationError as error:
            print(f"proofgate: error: {error.message}\nhint: {error.hint}", file=sys.stderr)
            return 2
        ratios = hit_ratios(scrape)
    sys.stdout.write(render_text(REGISTRY, fields, ratios))
    return 0


def _explain_tail(processes: int, brands: int) -> int:
    from api.limits.tail_cost import render_tail_cost
    from api.settings.gateway import Environment

    if processes < 1 or brands < 0:
        print("proofgate: error: --tail needs PROCESSES >= 1 and BRANDS >= 0", file=sys.stderr)
        return 2
    env = Environment.read()
    sys.stdout.write(render_tail_cost(processes, brands, env.pipeline(env.threats())))
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
