"""The operations the explorer opens with, one tab each.

Under ``--demo`` they are filled in with a demo brand's id, key and a
verification code, so each runs as it stands; otherwise they carry
placeholders to replace. The operator key is never put in a page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from resolvers.node.ids import global_id

if TYPE_CHECKING:
    from api.demo.loader import Demo

__all__ = ["Example", "default_operations", "examples"]

PASTE_KEY = "<paste an API key>"
PASTE_BRAND_ID = "<your brand id: run { viewer { brandId } } with your key>"
PASTE_CODE = "<a verification code>"
PASTE_INGEST_KEY = "<paste an ingest key: createIntegration returns it>"
PASTE_PRODUCT_ID = "<one of the brand's product ids>"
PASTE_NODE_ID = "<a nodeId: run { brand(id: ...) { nodeId } } with your key>"

EXPLORE = """\
# Welcome to the proofgate explorer.
#
# Each tab holds an example: run it with the play
# button or Ctrl-Enter. Anyone may run this one: the
# public gallery, newest first.
#
# API keys go in the Headers pane below:
#   {"Authorization": "Bearer <key>"}

query Explore($after: String) {
  explore(first: 10, after: $after) {
    edges {
      node {
        name
        sku
        category
        status
        brand { name domain }
        certificate { hash signature keyId algorithm }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}
"""

VERIFY = """\
# Public and read-only: the verdict on a code,
# recording nothing. The code is in Variables below.

query Verify($code: String!) {
  verification(code: $code) {
    authentic
    result
    signatureValid
    chainIntact
    claimed
    warnings
    scanCount
    product {
      name
      status
      brand { name }
      provenance(first: 10) {
        edges { node { sequence type actor location occurredAt hash previousHash } }
      }
    }
  }
}
"""

RECORD_SCAN = """\
# Public: verify a product and record the scan, as a
# consumer's phone would. Scans of one product from
# three countries within a day raise an alert.

mutation RecordScan($code: String!, $scan: ScanInput) {
  verifyProduct(code: $code, scan: $scan) {
    authentic
    result
    warnings
    scanCount
  }
}
"""

BRAND = """\
# Needs one of the brand's keys (Headers pane): its
# products with what only the brand may see
# (verification codes, scan counts) and certificates.

query MyBrand($brandId: ID!) {
  viewer { role brandId }
  brand(id: $brandId) {
    name
    plan
    stats { productCount scanCount threatCount openThreatCount }
    products(first: 20) {
      edges {
        node {
          id
          name
          sku
          status
          verificationCode
          scanCount
          certificate { hash signature keyId chainHead }
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}
"""

THREATS = """\
# Needs one of the brand's keys (Headers pane): the
# alerts the threat rules raised, newest first.

query Threats($brandId: ID!) {
  brand(id: $brandId) {
    stats { threatCount openThreatCount }
    threats(first: 20) {
      edges {
        node { type severity country city detectedAt resolved details product { name } }
      }
    }
  }
}
"""

ANALYTICS = """\
# Needs one of the brand's keys (Headers pane): the
# dashboard, from counters kept as scans happen. Days
# and hours are UTC; at most 92 days per request.

query Analytics($brandId: ID!, $from: Date!, $to: Date!) {
  brand(id: $brandId) {
    analytics(from: $from, to: $to) {
      daily { day scans }
      hourly { hour scans }
      topCountries(first: 5) { country scans }
      results { result scans }
      threatsByType { type alerts }
      statuses { status products }
    }
  }
}
"""

INGEST = """\
# Partner ingest: needs an ingest key (Headers pane),
# which createIntegration returns once. A carrier
# appends a shipment to one of the brand's products;
# the event is hashed with its source (SHIPPING).
# The same eventId appends once: under the demo this
# one was sent already, so the answer is its first
# receipt and nothing is appended. Change eventId to
# append another. Systems that only send webhooks POST
# the same fields, signed with the key, to the
# integration's ingestUrl (/ingest/shipping).

mutation Ingest($input: IngestEventInput!) {
  ingestEvent(input: $input) {
    integrationId
    eventId
    productId
    event { sequence type source actor location occurredAt hash previousHash }
  }
}
"""

NODE = """\
# Needs one of the brand's keys (Headers pane): any
# object by its global id, as Relay refetches it. Every
# Node type (Brand, Product, ThreatAlert, ...) has a
# nodeId next to its own id; the one in Variables is the
# brand's. Paste a product's nodeId to fetch it instead.

query Node($id: ID!) {
  node(id: $id) {
    __typename
    nodeId
    ... on Brand {
      id
      name
      products(first: 3) { edges { node { name nodeId } } }
    }
    ... on Product { id name status brand { name } }
    ... on ThreatAlert { id type severity product { name } }
  }
}
"""

LIVE_ALERTS = """\
# Needs one of the brand's keys (Headers pane):
# alerts as they happen, over WebSocket. Start it,
# then record scans in the RecordScan tab.

subscription LiveAlerts($brandId: ID!) {
  threatAlerts(brandId: $brandId, minSeverity: LOW) {
    type
    severity
    detectedAt
    details
    product { name }
  }
}
"""


_INGEST_PLACEHOLDER = {
    "input": {
        "eventId": "carrier-event-0001",
        "productId": PASTE_PRODUCT_ID,
        "type": "SHIPPED",
        "actor": "Carrier",
        "location": "Rotterdam, NL",
    }
}


@dataclass(frozen=True)
class Example:
    query: str
    variables: dict[str, Any] | None = None
    authorization: str | None = None
    """The key for the Authorization header; None for a public operation."""

    def as_tab(self) -> dict[str, str | None]:
        """A GraphiQL tab: variables and headers are JSON text, as its editors hold them."""
        return {
            "query": self.query,
            "variables": _json(self.variables),
            "headers": _json({"Authorization": f"Bearer {self.authorization}"})
            if self.authorization is not None
            else None,
        }


def examples(demo: Demo | None) -> tuple[Example, ...]:
    key = demo.brand.api_key if demo else PASTE_KEY
    brand = {"brandId": demo.brand.id if demo else PASTE_BRAND_ID}
    code = demo.verification_code if demo else PASTE_CODE
    scan = {"country": "FR", "city": "Paris", "deviceFingerprint": "explorer"}
    today = datetime.now(UTC).date()
    week_ago = today - timedelta(days=6)
    ingest_key = demo.brand.ingest_key if demo and demo.ingested else None
    ingested = demo.ingested if demo and demo.ingested else _INGEST_PLACEHOLDER
    return (
        Example(EXPLORE),
        Example(VERIFY, {"code": code}),
        Example(RECORD_SCAN, {"code": code, "scan": scan}),
        Example(BRAND, brand, key),
        Example(THREATS, brand, key),
        Example(ANALYTICS, {**brand, "from": week_ago.isoformat(), "to": today.isoformat()}, key),
        Example(INGEST, ingested, ingest_key or PASTE_INGEST_KEY),
        Example(NODE, {"id": global_id("Brand", demo.brand.id) if demo else PASTE_NODE_ID}, key),
        Example(LIVE_ALERTS, brand, key),
    )


def default_operations() -> tuple[str, ...]:
    """The registry's default set: the examples' documents, placeholders and all,
    since variables are not part of a document."""
    return tuple(example.query for example in examples(None))


def _json(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value, indent=2)
