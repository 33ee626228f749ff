"""The Product type, its certificate, and the fields that read its
provenance (AP09), scans (AP10) and claim (AP11)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Annotated

import strawberry

from domain.datetimes import parse_datetime
from domain.enums import ProductStatus
from domain.errors import ProofgateError
from domain.labels import label_url, qr_url
from services.claims.items import claim_is_active
from services.passport import passport_for
from services.visibility import require_owner
from storage import Item
from storage.access_patterns import (
    BRAND_BY_ID,
    PRODUCT_CLAIM,
    PRODUCT_SCANS,
    PROVENANCE_CHAIN,
)

from ..analytics.types import ProductAnalytics, analytics_range
from ..brands.types import Brand
from ..claims.types import Claim
from ..context import Info, RequestContext
from ..fields import ap_field, computed_field
from ..node.types import Node
from ..provenance.types import ProvenanceEvent
from ..scans.types import Scan
from ..stored import SAME_ITEM, STORED_METADATA, StoredReference, stored, stored_values
from ..types.connection import Connection, connection
from ..types.scalars import JSON, DateTime

__all__ = ["SCANS_EPOCH", "Certificate", "Product"]

SCANS_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_AFTER_NOW = timedelta(seconds=1)


def _json(value: object) -> JSON:
    return JSON(value or {})


def _held_brand(context: RequestContext, brand_id: str) -> tuple[bool, Item | None]:
    """The product's brand when this request already holds it."""
    return context.loaders.cached(BRAND_BY_ID, brand_id=brand_id)


_BRAND = StoredReference("brandId", _held_brand)


@strawberry.type(
    description="Ed25519 over the 32 raw bytes of `hash`, the SHA-256 of the product's "
    "canonical record; verify offline with the `signingKeys` entry named `keyId`."
)
class Certificate:
    hash: str = stored("certificateHash")
    signature: str = stored("signature")
    key_id: str = stored("keyId")
    algorithm: str = stored("algorithm")
    chain_head: str = stored(
        "chainHead",
        description="Hash of the latest provenance event (the certificate hash before any)",
    )

    @classmethod
    def from_item(cls, item: Item) -> Certificate:
        return cls(**stored_values(cls, item))


@strawberry.type(
    description="A registered product. verificationCode, qrUrl, labelUrl, serial and "
    "scanCount need one of the brand's own keys; every other field is public to whoever "
    "found the product."
)
class Product(Node):
    id: strawberry.ID = stored("id")
    name: str = stored("name")
    sku: str | None = stored("sku", optional=True)
    category: str | None = stored("category", optional=True)
    description: str | None = stored("description", optional=True)
    metadata: JSON = stored("metadata", optional=True, convert=_json)
    status: ProductStatus = stored("status", convert=ProductStatus)
    gtin: str | None = stored(
        "gtin", optional=True, description="The GS1 GTIN-14 it was registered with"
    )
    lot: str | None = stored("lot", optional=True, description="The batch or lot (GS1 AI 10)")

    @computed_field
    def created_at(self) -> DateTime:
        """Parsed when selected: a page rarely asks for it."""
        return parse_datetime(self._item["createdAt"])

    @computed_field
    def updated_at(self) -> DateTime:
        return parse_datetime(self._item["updatedAt"])

    _item: strawberry.Private[Item]

    @classmethod
    def from_item(cls, item: Item) -> Product:
        return cls(**stored_values(cls, item), _item=item)

    @property
    def brand_id(self) -> str:
        brand_id: str = self._item["brandId"]
        return brand_id

    @ap_field(BRAND_BY_ID, metadata={STORED_METADATA: _BRAND})
    def brand(self, info: Info) -> Brand:
        # Synchronous when the brand is already loaded (graphql-core awaits
        # the coroutine otherwise): a page of one brand's products then runs
        # no task per product.
        hit, item = _BRAND.held(info.context, self._item)
        if hit:
            return self._brand(info, item)
        return self._load_brand(info)  # type: ignore[return-value]

    async def _load_brand(self, info: Info) -> Brand:
        item = await info.context.loaders.item(BRAND_BY_ID, brand_id=self.brand_id)
        return self._brand(info, item)

    def _brand(self, info: Info, item: Item | None) -> Brand:
        if item is None:
            raise ProofgateError(f"Product {self.id} names a brand that does not exist")
        return info.context.loaders.built(item, Brand.from_item)

    @computed_field(metadata={STORED_METADATA: SAME_ITEM})
    def certificate(self) -> Certificate:
        return Certificate.from_item(self._item)

    @computed_field(description="The code printed on the product; the brand's keys only")
    def verification_code(self, info: Info) -> str | None:
        require_owner(info.context.principal, self.brand_id, "verificationCode")
        code: str = self._item["verificationCode"]
        return code

    @computed_field(
        description="The label's QR image (PNG; `.svg` for SVG), encoding the public verify "
        "URL; the brand's keys only, as it contains the code"
    )
    def qr_url(self, info: Info) -> str | None:
        require_owner(info.context.principal, self.brand_id, "qrUrl")
        return qr_url(info.context.services.public_url, self._item["verificationCode"])

    @computed_field(
        description="The unit's serial number (GS1 AI 21); the brand's keys only, as with the "
        "GTIN it resolves to the verification page, which names the code"
    )
    def serial(self, info: Info) -> str | None:
        require_owner(info.context.principal, self.brand_id, "serial")
        serial: str | None = self._item.get("serial")
        return serial

    @computed_field(
        description="What the label's QR code encodes: the GS1 Digital Link URI when the "
        "product has a GTIN and a serial, else the public verify URL; the brand's keys only"
    )
    def label_url(self, info: Info) -> str | None:
        require_owner(info.context.principal, self.brand_id, "labelUrl")
        return label_url(info.context.services.public_url, self._item)

    @ap_field(
        PROVENANCE_CHAIN,
        loads=BRAND_BY_ID,
        description="The EU Digital Product Passport (ESPR, Regulation (EU) 2024/1781) as "
        "JSON-LD, the document `GET /dpp/{code}.json` downloads; carries the canonical record, "
        "signature and public key PEM so it verifies offline; the brand's keys only",
    )
    async def passport(self, info: Info) -> JSON | None:
        require_owner(info.context.principal, self.brand_id, "passport")
        context = info.context
        return JSON(await passport_for(context.loaders, context.services, self._item, public=False))

    @computed_field(
        description="This product's scans, verdicts, countries and threats per UTC day from "
        "`from` to `to` (both included, at most 92 days); the brand's keys only"
    )
    def analytics(
        self, info: Info, start: Annotated[date, strawberry.argument(name="from")], to: date
    ) -> ProductAnalytics | None:
        require_owner(info.context.principal, self.brand_id, "analytics")
        first, last = analytics_range(start, to)
        return ProductAnalytics(product_id=str(self.id), start=first, end=last)

    @computed_field(description="Verifications recorded for this product; the brand's keys only")
    def scan_count(self, info: Info) -> int | None:
        require_owner(info.context.principal, self.brand_id, "scanCount")
        return int(self._item.get("scanCount", 0))

    @ap_field(PROVENANCE_CHAIN, description="The hash chain, oldest first")
    async def provenance(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[ProvenanceEvent]:
        """Public to whoever can see the product: the history is what a buyer checks."""
        context = info.context
        page = await context.loaders.page(
            PROVENANCE_CHAIN, {"product_id": str(self.id)}, first=first, after=after
        )
        owner, salt = context.principal.can_read(self.brand_id), context.services.hash_salt
        return connection(
            page, lambda item: ProvenanceEvent.from_item(item, owner=owner, salt=salt)
        )

    @ap_field(PRODUCT_SCANS, description="Recorded verifications; the brand's keys only")
    async def scans(
        self,
        info: Info,
        since: DateTime | None = None,
        until: DateTime | None = None,
        first: int | None = None,
        after: str | None = None,
    ) -> Connection[Scan] | None:
        """Scans with ``since <= scannedAt < until``, newest first. Without
        bounds: everything up to now. Pass the same bounds with ``after`` (a
        cursor is only valid within its range)."""
        require_owner(info.context.principal, self.brand_id, "scans")
        start = since if since is not None else SCANS_EPOCH
        end = until if until is not None else info.context.now() + _AFTER_NOW
        params = {"product_id": str(self.id), "start": start, "end": end}
        page = await info.context.loaders.page(PRODUCT_SCANS, params, first=first, after=after)
        return connection(page, Scan.from_item)

    @ap_field(PRODUCT_CLAIM, description="The active claim; the brand's keys only")
    async def claim(self, info: Info) -> Claim | None:
        """Null when unclaimed or expired."""
        require_owner(info.context.principal, self.brand_id, "claim")
        item = await info.context.loaders.item(PRODUCT_CLAIM, product_id=str(self.id))
        if item is None or not claim_is_active(item, info.context.now()):
            return None
        return Claim.from_item(item)
