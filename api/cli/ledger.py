"""Operator commands over the whole store: ``reconcile`` and
``release-reservations``.

Both visit every brand through the brand index (AP02) and read by key only,
so they run against production without a scan. The resolvers they use are
imported when they run, so the other commands start without them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from api.cli.flags import add_store_flags, existing_store_settings
from api.runtime.backend import job_storage
from api.settings.gateway import Settings

if TYPE_CHECKING:
    from services.reconcile import Report

__all__ = ["add_ledger_commands", "release_reservations", "run_reconcile"]


def add_ledger_commands(commands: Any) -> None:
    """Adds the subcommands to ``proofgate``'s parser."""
    check = commands.add_parser(
        "reconcile",
        help="prove every ledger balances and every certificate and chain verifies",
        description=(
            "Exits 1 and lists each discrepancy when anything does not reconcile; "
            "2 when a brand's ledger moved during every attempt to read it."
        ),
    )
    add_store_flags(check)
    check.set_defaults(command=run_reconcile)
    release = commands.add_parser(
        "release-reservations",
        help="return the credits of batch reservations whose expiry has passed",
    )
    add_store_flags(release)
    release.set_defaults(command=release_reservations)


async def _reconcile(settings: Settings) -> Report:
    from api.runtime.resolver_services import load_key_ring
    from services.reconcile import reconcile

    async with job_storage(settings) as storage:
        return await reconcile(storage, load_key_ring(settings), datetime.now(UTC))


def run_reconcile(args: argparse.Namespace) -> int:
    report = asyncio.run(
        _reconcile(existing_store_settings(create=args.create, data_dir=args.data_dir))
    )
    clean = report.ok and report.complete
    (sys.stdout if clean else sys.stderr).write(report.render())
    if not report.ok:
        return 1
    return 0 if report.complete else 2


async def _release(settings: Settings) -> int:
    from services.ledger import release_expired

    async with job_storage(settings) as storage:
        released = await release_expired(storage, datetime.now(UTC))
    for item in released:
        print(f"released {item.hold.amount} {item.currency} held for brand {item.brand_id}")
    return len(released)


def release_reservations(args: argparse.Namespace) -> int:
    count = asyncio.run(
        _release(existing_store_settings(create=args.create, data_dir=args.data_dir))
    )
    print(f"{count} expired reservations released")
    return 0
