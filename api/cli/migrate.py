"""``proofgate migrate``: brings the store to this build's version.

It prints the plan first; ``--dry-run`` stops there. Steps report progress
as they save it, so a long step shows it is moving and an interrupted one
resumes where it stopped (docs/design.md, "Store versions").
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from api.cli.flags import add_store_flags, existing_store_settings
from api.runtime.backend import job_storage, migration_steps_of_this_build
from api.settings.gateway import Backend, Settings

__all__ = ["add_migrate_command"]


def add_migrate_command(commands: Any) -> None:
    migrate = commands.add_parser(
        "migrate",
        help="bring the store to this build's version (prints the plan first)",
        description="Idempotent and resumable: run it again after an interruption.",
    )
    migrate.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    add_store_flags(migrate)
    migrate.add_argument("--endpoint", help="DynamoDB endpoint URL (PROOFGATE_DYNAMODB_ENDPOINT)")
    migrate.set_defaults(command=_migrate)


def _migrate(args: argparse.Namespace) -> int:
    settings = existing_store_settings(
        create=args.create, data_dir=args.data_dir, dynamodb_endpoint=args.endpoint
    )
    try:
        asyncio.run(_run(settings, dry_run=args.dry_run))
    except KeyboardInterrupt:
        # The step saved its position as it went; nothing needs undoing.
        print("proofgate: interrupted: run `proofgate migrate` again to resume", file=sys.stderr)
        return 130
    return 0


async def _run(settings: Settings, *, dry_run: bool) -> None:
    from services.migrations import migrate, plan

    if settings.backend is Backend.DYNAMODB:
        await _reachable(settings)
    steps = migration_steps_of_this_build()
    async with job_storage(settings, current=False) as storage:
        planned = await plan(storage, steps)
        print(planned.render(), flush=True)
        if dry_run or not planned.pending:
            if planned.pending:
                print("Dry run: nothing changed. Run without --dry-run to migrate.")
            return
        await migrate(storage, steps, lambda line: print(line, flush=True))
        print(f"The store is at version {planned.expected}.")


async def _reachable(settings: Settings) -> None:
    """Credentials, endpoint and table, as one line each (``check_table``)."""
    from storage.dynamodb import check_table

    await check_table(
        table_name=settings.table,
        region=settings.aws_region,
        endpoint_url=settings.dynamodb_endpoint,
    )
