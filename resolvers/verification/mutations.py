"""verifyProduct (``services.verification.commands``)."""

from __future__ import annotations

from typing import Any

import strawberry

from services.verification import commands
from storage.access_patterns import PRODUCT_BY_CODE

from ..context import Info
from ..fields import mutation_field
from .inputs import ScanInput
from .types import Verification

__all__ = ["VerificationMutations", "client_ip"]


def client_ip(request: Any) -> str | None:
    """The client address the server resolved: uvicorn replaces the peer with
    the ``X-Forwarded-For`` client only when the peer is one of
    ``PROOFGATE_FORWARDED_ALLOW_IPS`` (``proofgate serve --proxy-headers``, on by
    default), so a client elsewhere cannot forge it. No header is read here,
    and the address is only ever stored as a salted hash."""
    client = getattr(request, "client", None)
    host = getattr(client, "host", None)
    return host if isinstance(host, str) and host else None


@strawberry.type
class VerificationMutations:
    @mutation_field(
        reads=PRODUCT_BY_CODE,
        description="Verify a product by its code and record the scan (public). An unknown "
        "code answers authentic: false and result UNKNOWN, records nothing and is no error.",
    )
    async def verify_product(
        self, info: Info, code: str, scan: ScanInput | None = None
    ) -> Verification:
        context = info.context
        verified = await commands.verify_product(context, code, scan, client_ip(context.request))
        return Verification.of(verified.checks, scan_count=verified.scan_count)
