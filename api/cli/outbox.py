"""``proofgate outbox``: the parked items of the threat pipeline, and retrying them.

An item is parked when it used up its attempts (a webhook receiver that kept
failing, a bug in a rule); it stays visible here instead of being retried
forever or silently dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import UTC, datetime
from typing import Any

from api.cli.flags import add_store_flags, existing_store_settings
from api.runtime.backend import job_storage
from api.settings.gateway import Settings

__all__ = ["add_outbox_commands", "run_outbox"]


def add_outbox_commands(commands: Any) -> None:
    outbox = commands.add_parser("outbox", help="list parked outbox items, or retry one")
    outbox.add_argument("--parked", action="store_true", help="list the parked items, oldest first")
    outbox.add_argument("--requeue", metavar="ID", help="put a parked item back in the ready queue")
    outbox.add_argument("--json", action="store_true", help="one JSON object per line")
    add_store_flags(outbox)
    outbox.set_defaults(command=run_outbox)


async def _run(args: argparse.Namespace, settings: Settings) -> int:
    from services.pipeline.outbox.items import describe
    from services.pipeline.outbox.parked import parked_items, requeue_parked

    async with job_storage(settings) as storage:
        if args.requeue is not None:
            item = await requeue_parked(
                storage, args.requeue, now=datetime.now(UTC), settings=settings.pipeline
            )
            print(f"requeued {item['id']}")
            return 0
        items = [describe(item) for item in await parked_items(storage)]
    for item in items:
        if args.json:
            print(json.dumps(item, sort_keys=True))
        else:
            fields = (
                item["id"],
                item["kind"],
                f"attempts={item['attempts']}",
                f"parked={item['parkedAt']}",
            )
            print("  ".join((*fields, str(item["lastError"]))))
    if not args.json:
        print(f"{len(items)} parked item(s)", file=sys.stderr)
    return 0


def run_outbox(args: argparse.Namespace) -> int:
    if not args.parked and args.requeue is None:
        print("proofgate outbox: say --parked or --requeue ID", file=sys.stderr)
        return 2
    return asyncio.run(
        _run(args, existing_store_settings(create=args.create, data_dir=args.data_dir))
    )
