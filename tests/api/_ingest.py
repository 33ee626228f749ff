"""Partner ingest as a partner calls it: GraphQL with the ingest key, or a
signed POST to /ingest/<source> built the way the partner's system builds it."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from domain.ingest import INTEGRATION_HEADER, SIGNATURE_HEADER, signature_header

__all__ = [
    "CHAIN",
    "CREATE",
    "INGEST",
    "INTEGRATIONS",
    "REVOKE",
    "create_integration",
    "post_signed",
]

CREATE = """mutation($b: ID!, $name: String!, $type: IntegrationType!) {
    createIntegration(brandId: $b, name: $name, type: $type) {
        ingestKey
        integration {
            id name type source eventCount lastEventAt createdAt revokedAt ingestUrl
        }
    }
}"""
REVOKE = "mutation($id: ID!) { revokeIntegration(id: $id) { id revokedAt eventCount } }"
INTEGRATIONS = """query($b: ID!) {
    brand(id: $b) {
        integrations(first: 50) {
            edges { node { id name type source eventCount lastEventAt revokedAt } }
        }
    }
}"""
INGEST = """mutation($input: IngestEventInput!) {
    ingestEvent(input: $input) {
        integrationId eventId productId
        event {
            sequence type source actor location latitude longitude occurredAt data
            hash previousHash
        }
    }
}"""
CHAIN = """query($p: ID!) {
    product(id: $p) {
        certificate { hash chainHead }
        provenance(first: 100) {
            edges { node {
                sequence type source actor location latitude longitude occurredAt data
                hash previousHash
            } }
        }
    }
}"""


async def create_integration(
    gateway: Any, brand: Any, integration_type: str = "CARRIER", name: str = "Carrier"
) -> tuple[dict[str, Any], str]:
    """The integration and its ingest key."""
    data = await gateway.data(
        CREATE, {"b": brand.id, "name": name, "type": integration_type}, key=brand.key
    )
    payload = data["createIntegration"]
    return payload["integration"], payload["ingestKey"]


async def post_signed(
    http: httpx.AsyncClient,
    source: str,
    integration_id: str | None,
    key: str,
    body: dict[str, Any] | bytes,
    *,
    timestamp: int | None = None,
    signature: str | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {"Content-Type": "application/json", **(headers or {})}
    if integration_id is not None:
        sent[INTEGRATION_HEADER] = integration_id
    stamp = int(time.time()) if timestamp is None else timestamp
    sent[SIGNATURE_HEADER] = signature or signature_header(key, stamp, raw)
    return await http.post(f"/ingest/{source}", content=raw, headers=sent)
