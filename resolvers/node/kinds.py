"""Which access pattern reads each Node type, and who may see it.

One entry per type implementing ``Node``: the get pattern whose entity it
is, the key parameters its own id names, and the rule of the typed field
that reads it, so ``node(id:)`` answers exactly what that field answers.
Whatever the caller may not see is NOT_FOUND, as a missing object is:
an id leaks nothing (docs/design.md, "Global object identification").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from domain.encoding import is_sha256_hex
from domain.errors import BadUserInput
from domain.threats import parse_alert_id
from domain.validation import validate_id
from services.auth import Principal, Role
from services.ingest.items import parse_integration_id
from services.ledger.access import can_read_ledger
from services.ledger.commands import parse_transaction_id
from services.pipeline.alerts.records import alert_key_params
from services.webhooks.items import parse_webhook_id
from storage import AccessPattern, Item
from storage.access_patterns import (
    API_KEY_BY_HASH,
    BRAND_BY_ID,
    INTEGRATION_BY_ID,
    LEDGER_TRANSACTION,
    PRODUCT_BY_ID,
    THREAT_BY_ID,
    WEBHOOK_BY_ID,
)

from ..apikeys.types import ApiKey
from ..brands.types import Brand
from ..ingest.types import Integration
from ..ledger.types import LedgerTransaction
from ..products.types import Product
from ..threats.types import ThreatAlert
from ..webhooks.types import Webhook
from .types import Node

__all__ = ["NODE_KINDS", "NodeKind"]


@dataclass(frozen=True, slots=True)
class NodeKind:
    pattern: AccessPattern
    params: Callable[[str], Mapping[str, Any]]
    """The key parameters of a raw id; BAD_USER_INPUT for a malformed one."""
    readable: Callable[[Principal, Item], bool]
    build: Callable[[Item], Node]


def _owner(principal: Principal, item: Item) -> bool:
    return principal.can_read(item["brandId"])


def _configuration(principal: Principal, item: Item) -> bool:
    """Webhooks, integrations and keys: the brand's BRAND keys and the operator."""
    return _owner(principal, item) and principal.role is not Role.PARTNER


def _api_key(principal: Principal, item: Item) -> bool:
    """Ingest keys belong to their integration, and are read through it."""
    return _configuration(principal, item) and not item.get("integrationId")


def _key_hash(raw: str) -> Mapping[str, Any]:
    if not is_sha256_hex(raw):
        raise BadUserInput("Invalid API key id", hint="Use an ApiKey.id returned by the API.")
    return {"key_hash": raw}


NODE_KINDS: Mapping[str, NodeKind] = {
    "Brand": NodeKind(
        BRAND_BY_ID,
        lambda raw: {"brand_id": validate_id(raw)},
        lambda principal, item: principal.can_read(item["id"]),
        Brand.from_item,
    ),
    "Product": NodeKind(
        PRODUCT_BY_ID, lambda raw: {"product_id": validate_id(raw)}, _owner, Product.from_item
    ),
    "ThreatAlert": NodeKind(
        THREAT_BY_ID,
        lambda raw: alert_key_params(parse_alert_id(raw)),
        _owner,
        ThreatAlert.from_item,
    ),
    "LedgerTransaction": NodeKind(
        LEDGER_TRANSACTION,
        lambda raw: {"transaction_id": parse_transaction_id(raw)},
        lambda principal, item: can_read_ledger(principal, item["brandId"]),
        LedgerTransaction.from_item,
    ),
    "Webhook": NodeKind(
        WEBHOOK_BY_ID, lambda raw: parse_webhook_id(raw).params, _configuration, Webhook.from_item
    ),
    "Integration": NodeKind(
        INTEGRATION_BY_ID,
        lambda raw: parse_integration_id(raw).params,
        _configuration,
        Integration.from_item,
    ),
    "ApiKey": NodeKind(API_KEY_BY_HASH, _key_hash, _api_key, ApiKey.from_item),
}
