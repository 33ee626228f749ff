"""The registered access patterns: the code's registry is the source of truth.

docs/access-patterns.md is generated from this module (``proofgate explain
--markdown``) and a test fails when the two disagree.
"""

from __future__ import annotations

from typing import Any

from .keys import KeyTemplate
from .registry import AccessPattern, Direction, Operation, Registry, SortCondition
from .table import IndexName

__all__ = [
    "API_KEY_BY_HASH",
    "AUDIT_DAY",
    "BRANDS_NEWEST",
    "BRAND_ANALYTICS_DAY",
    "BRAND_BY_ID",
    "BRAND_INTEGRATIONS",
    "BRAND_PRODUCTS",
    "BRAND_STATS",
    "BRAND_THREATS",
    "BRAND_WEBHOOKS",
    "CACHE_LOG",
    "HEALTH_PROBE",
    "IDEMPOTENCY_RECORD",
    "INGESTED_EVENT",
    "INTEGRATION_BY_ID",
    "LEDGER_BALANCE",
    "LEDGER_STATEMENT",
    "LEDGER_TRANSACTION",
    "OUTBOX_DUE",
    "OUTBOX_PARKED",
    "PRODUCT_ANALYTICS_DAY",
    "PRODUCT_BY_CODE",
    "PRODUCT_BY_GTIN_SERIAL",
    "PRODUCT_BY_HASH",
    "PRODUCT_BY_ID",
    "PRODUCT_CLAIM",
    "PRODUCT_GALLERY",
    "PRODUCT_RECORD",
    "PRODUCT_SCANS",
    "PROVENANCE_CHAIN",
    "REGISTRY",
    "SIGNING_KEYS",
    "STORE_VERSION",
    "THREAT_BY_ID",
    "WEBHOOK_BY_ID",
    "WEBHOOK_DELIVERIES",
    "WEBHOOK_PENDING",
]

REGISTRY = Registry()
_GET, _QUERY = Operation.GET, Operation.QUERY
_TABLE, _GSI1, _GSI2 = IndexName.TABLE, IndexName.GSI1, IndexName.GSI2
_NEWEST_FIRST = Direction.BACKWARD


def _ap(
    ap_id: str,
    name: str,
    operation: Operation,
    index: IndexName,
    partition_key: str,
    sort_key: SortCondition,
    entity: str,
    direction: Direction = Direction.FORWARD,
    **options: Any,
) -> AccessPattern:
    pattern = AccessPattern(
        ap_id,
        name,
        operation,
        index,
        KeyTemplate(partition_key),
        sort_key,
        entity,
        direction,
        **options,
    )
    return REGISTRY.register(pattern)


BRAND_BY_ID = _ap(
    "AP01", "brand by id", _GET, _TABLE, "BRAND#{brand_id}", SortCondition("=", "PROFILE"), "Brand"
)
BRANDS_NEWEST = _ap(
    "AP02",
    "list brands, newest first",
    _QUERY,
    _TABLE,
    "BRAND_INDEX",
    SortCondition("begins_with", "BRAND#"),
    "BrandIndexEntry",
    _NEWEST_FIRST,
)
BRAND_STATS = _ap(
    "AP03",
    "brand counters",
    _GET,
    _TABLE,
    "BRAND#{brand_id}",
    SortCondition("=", "STATS"),
    "BrandStats",
)
PRODUCT_BY_ID = _ap(
    "AP04",
    "product by id",
    _GET,
    _TABLE,
    "PRODUCT#{product_id}",
    SortCondition("=", "META"),
    "Product",
)
PRODUCT_BY_CODE = _ap(
    "AP05",
    "product id by verification code",
    _GET,
    _TABLE,
    "VERIFY#{code}",
    SortCondition("=", "META"),
    "VerificationCode",
)
PRODUCT_BY_HASH = _ap(
    "AP06",
    "product id by certificate hash",
    _GET,
    _TABLE,
    "HASH#{certificate_hash}",
    SortCondition("=", "META"),
    "CertificateHash",
)
BRAND_PRODUCTS = _ap(
    "AP07",
    "products of a brand, newest first",
    _QUERY,
    _GSI1,
    "BRAND#{brand_id}",
    SortCondition("begins_with", "PRODUCT#"),
    "Product",
    _NEWEST_FIRST,
)
PRODUCT_GALLERY = _ap(
    "AP08",
    "public product gallery",
    _QUERY,
    _TABLE,
    "PRODUCT_INDEX",
    SortCondition("begins_with", "PRODUCT#"),
    "ProductIndexEntry",
    _NEWEST_FIRST,
)
PROVENANCE_CHAIN = _ap(
    "AP09",
    "provenance chain, in order",
    _QUERY,
    _TABLE,
    "PRODUCT#{product_id}",
    SortCondition("begins_with", "EVENT#"),
    "ProvenanceEvent",
    consistent=True,
)
PRODUCT_SCANS = _ap(
    "AP10",
    "scans of a product, time range",
    _QUERY,
    _TABLE,
    "PRODUCT#{product_id}",
    SortCondition("between", "SCAN#{start:time}", "SCAN#{end:time}"),
    "Scan",
    _NEWEST_FIRST,
)
PRODUCT_CLAIM = _ap(
    "AP11",
    "claim of a product",
    _GET,
    _TABLE,
    "PRODUCT#{product_id}",
    SortCondition("=", "CLAIM"),
    "Claim",
)
BRAND_THREATS = _ap(
    "AP12",
    "threats of a brand, newest first, since",
    _QUERY,
    _GSI1,
    "BRAND#{brand_id}",
    SortCondition("between", "THREAT#{since:time}", "THREAT#~"),
    "ThreatAlert",
    _NEWEST_FIRST,
)
THREAT_BY_ID = _ap(
    "AP13",
    "threat by id",
    _GET,
    _TABLE,
    "THREAT#{brand_id}#{month}",
    SortCondition("=", "ALERT#{detected_at:time}#{threat_type}#{product_id}"),
    "ThreatAlert",
)
AUDIT_DAY = _ap(
    "AP14",
    "audit log of one day (scatter-gather over N days)",
    _QUERY,
    _TABLE,
    "AUDIT#{day}",
    SortCondition("begins_with", "ENTRY#"),
    "AuditEntry",
    _NEWEST_FIRST,
)
LEDGER_BALANCE = _ap(
    "AP15",
    "ledger balance",
    _GET,
    _TABLE,
    "LEDGER#{brand_id}",
    SortCondition("=", "BAL#{currency}"),
    "Balance",
)
LEDGER_STATEMENT = _ap(
    "AP16",
    "ledger statement for a month",
    _QUERY,
    _TABLE,
    "LEDGER#{brand_id}#{month}",
    SortCondition("begins_with", "POST#"),
    "Posting",
)
LEDGER_TRANSACTION = _ap(
    "AP17",
    "ledger transaction",
    _GET,
    _TABLE,
    "LTXN#{transaction_id}",
    SortCondition("=", "META"),
    "LedgerTransaction",
)
IDEMPOTENCY_RECORD = _ap(
    "AP18",
    "idempotency record",
    _GET,
    _TABLE,
    "IDEM#{scope}#{key}",
    SortCondition("=", "REQUEST"),
    "IdempotencyRecord",
    consistent=True,
)
OUTBOX_DUE = _ap(
    "AP19",
    "outbox due queue (sharded)",
    _QUERY,
    _GSI2,
    "OUTBOX#READY#{shard:int}",
    SortCondition("<", "DUE#{before:time}"),
    "OutboxItem",
)
API_KEY_BY_HASH = _ap(
    "AP20",
    "API key by hash",
    _GET,
    _TABLE,
    "APIKEY#{key_hash}",
    SortCondition("=", "META"),
    "ApiKey",
    consistent=True,
)
HEALTH_PROBE = _ap(
    "AP21", "health probe", _GET, _TABLE, "HEALTH", SortCondition("=", "PROBE"), "HealthProbe"
)
OUTBOX_PARKED = _ap(
    "AP22",
    "parked outbox items (dead letters)",
    _QUERY,
    _GSI2,
    "OUTBOX#PARKED",
    SortCondition("begins_with", "PARKED#"),
    "OutboxItem",
)
BRAND_WEBHOOKS = _ap(
    "AP23",
    "webhooks of a brand",
    _QUERY,
    _TABLE,
    "BRAND#{brand_id}",
    SortCondition("begins_with", "WEBHOOK#"),
    "Webhook",
    consistent=True,
)
WEBHOOK_BY_ID = _ap(
    "AP24",
    "webhook by id",
    _GET,
    _TABLE,
    "BRAND#{brand_id}",
    SortCondition("=", "WEBHOOK#{webhook_id}"),
    "Webhook",
    consistent=True,
)
WEBHOOK_DELIVERIES = _ap(
    "AP25",
    "webhook deliveries of a brand, newest first",
    _QUERY,
    _TABLE,
    "DELIVERIES#{brand_id}",
    SortCondition("begins_with", "DELIVERY#"),
    "WebhookDelivery",
    _NEWEST_FIRST,
)
BRAND_ANALYTICS_DAY = _ap(
    "AP26",
    "brand analytics counters of one UTC day, one write shard",
    _GET,
    _TABLE,
    "ANALYTICS#BRAND#{brand_id}#{shard}",
    SortCondition("=", "DAY#{day}"),
    "AnalyticsDay",
)
PRODUCT_ANALYTICS_DAY = _ap(
    "AP27",
    "product analytics counters of one UTC day",
    _GET,
    _TABLE,
    "ANALYTICS#PRODUCT#{product_id}",
    SortCondition("=", "DAY#{day}"),
    "AnalyticsDay",
)
STORE_VERSION = _ap(
    "AP28",
    "store version and any migration in progress",
    _GET,
    _TABLE,
    "STORE",
    SortCondition("=", "VERSION"),
    "StoreVersion",
    consistent=True,
)
SIGNING_KEYS = _ap(
    "AP29",
    "signing keys recorded by the processes",
    _QUERY,
    _TABLE,
    "KEYRING",
    SortCondition("begins_with", "KEY#"),
    "SigningKeyRecord",
    consistent=True,
)
BRAND_INTEGRATIONS = _ap(
    "AP30",
    "partner integrations of a brand, newest first",
    _QUERY,
    _TABLE,
    "BRAND#{brand_id}",
    SortCondition("begins_with", "INTEGRATION#"),
    "Integration",
    _NEWEST_FIRST,
    consistent=True,
)
INTEGRATION_BY_ID = _ap(
    "AP31",
    "partner integration by id",
    _GET,
    _TABLE,
    "BRAND#{brand_id}",
    SortCondition("=", "INTEGRATION#{integration_id}"),
    "Integration",
    consistent=True,
)
INGESTED_EVENT = _ap(
    "AP32",
    "ingested partner event by the partner's event id",
    _GET,
    _TABLE,
    "INGEST#{brand_id}#{integration_id}",
    SortCondition("=", "EVENT#{event_id}"),
    "IngestedEvent",
    consistent=True,
)
PRODUCT_RECORD = _ap(
    "AP33",
    "a product with its claim and whole chain, in order (the verify path)",
    _QUERY,
    _TABLE,
    "PRODUCT#{product_id}",
    # The product's item collection up to META: CLAIM, then EVENT#..., then
    # META itself; its scans sort after META (docs/design.md, Verify path).
    SortCondition("between", "CLAIM", "META"),
    "Claim, ProvenanceEvent, Product",
    consistent=True,
)
PRODUCT_BY_GTIN_SERIAL = _ap(
    "AP34",
    "product by GTIN and serial (GS1 Digital Link)",
    _GET,
    _TABLE,
    "GTIN#{gtin}#{serial}",
    SortCondition("=", "META"),
    "GtinSerial",
)
CACHE_LOG = _ap(
    "AP35",
    "cache invalidations logged since (the cache's table tail)",
    _QUERY,
    _TABLE,
    "CACHELOG",
    # Strong: a tail must see what was acknowledged before it read
    # (docs/design.md, Cache invalidations across processes).
    SortCondition("between", "LOG#{since:time}", "LOG#~"),
    "CacheLogBatch",
    consistent=True,
)
WEBHOOK_PENDING = _ap(
    "AP36",
    "a webhook's unsettled deliveries, oldest first (its order)",
    _QUERY,
    _TABLE,
    "WEBHOOKQ#{webhook}",
    # Strong: whether an earlier delivery is still pending decides whether
    # this one may be sent (docs/design.md, Webhook order).
    SortCondition("begins_with", "AT#"),
    "PendingDelivery",
    consistent=True,
)
