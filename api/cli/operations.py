"""``proofgate operations list|check|export [DIR]``: the registry as the
gateway would load it, so a frontend's export is checked before it is
deployed, and written back as a client tool's persisted-document manifest."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from api.operations.manifests import ManifestFormat, export_manifest
from api.operations.registry import OperationRegistry, load_registry

__all__ = ["add_operation_commands"]


def add_operation_commands(commands: Any) -> None:
    """Adds the subcommands to ``proofgate``'s parser."""
    operations = commands.add_parser(
        "operations", help="list or check the registered (named) operations"
    )
    actions = operations.add_subparsers(title="actions", required=True, metavar="ACTION")
    listing = actions.add_parser(
        "list", help="print each operation with its cost and the access patterns it reads"
    )
    listing.add_argument(
        "directory", type=Path, nargs="?", help="folder of .graphql files (default: the setting)"
    )
    listing.set_defaults(command=_list)
    check = actions.add_parser(
        "check", help="load a folder as start-up would; exit 1 naming the first bad file"
    )
    check.add_argument("directory", type=Path, help="folder of .graphql files")
    check.set_defaults(command=_check)
    export = actions.add_parser(
        "export", help="print the registry as a persisted-document manifest (JSON)"
    )
    export.add_argument(
        "--format",
        required=True,
        choices=[f.value for f in ManifestFormat],
        help="apollo: persisted-query-manifest.json; relay: persisted_queries.json (MD5 ids); "
        "codegen: client-preset persisted-documents.json (SHA-256 ids)",
    )
    export.add_argument(
        "directory", type=Path, nargs="?", help="folder of .graphql files and manifests"
    )
    export.set_defaults(command=_export)


def _load(directory: Path | None) -> OperationRegistry:
    from api.graphql.schema import schema
    from api.mcp.tools import tool_specs
    from api.operations.defaults import default_documents
    from api.settings.gateway import Environment
    from api.settings.limits import Limits

    env = Environment.read(os.environ)
    if directory is None:
        directory = env.operations().directory
    registry = load_registry(schema, env.build(Limits), directory, default_documents())
    tool_specs(schema.graphql_schema, registry)  # a bad @tool mark stops start-up too
    return registry


def _list(args: argparse.Namespace) -> int:
    registry = _load(args.directory)
    rows = [("operation", "kind", "cost", "access patterns", "sha256", "file")]
    for op in registry.by_name.values():
        patterns = ",".join(op.access_patterns) or "-"
        rows.append((op.name, op.kind, str(op.cost), patterns, op.sha256, op.source))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        sys.stdout.write("  ".join([*cells, row[-1]]).rstrip() + "\n")
    return 0


def _check(args: argparse.Namespace) -> int:
    registry = _load(args.directory)
    sys.stdout.write(f"{len(registry)} operations registered, all within the limits\n")
    return 0


def _export(args: argparse.Namespace) -> int:
    registry = _load(args.directory)
    operations = [(op.name, op.kind, op.text) for op in registry.by_name.values()]
    manifest = export_manifest(ManifestFormat(args.format), operations)
    sys.stdout.write(json.dumps(manifest, indent=2) + "\n")
    return 0
