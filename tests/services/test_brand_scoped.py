"""Ids of what a brand owns: one spelling and one check for every kind."""

from __future__ import annotations

import pytest

from domain.errors import BadUserInput
from services.ingest.items import IntegrationRef, parse_integration_id
from services.webhooks.items import WebhookRef, parse_webhook_id

BRAND, LOCAL = "01JD8X3V9Q7ZK5M2N4P6R8T0W1", "01JD8X3V9Q7ZK5M2N4P6R8T0W2"


def test_an_id_names_its_brand_and_reads_back() -> None:
    integration, webhook = IntegrationRef(BRAND, LOCAL), WebhookRef(BRAND, LOCAL)
    assert integration.id == f"int_{BRAND}_{LOCAL}"
    assert webhook.id == f"wh_{BRAND}_{LOCAL}"
    assert parse_integration_id(integration.id) == integration
    assert parse_webhook_id(webhook.id) == webhook
    assert integration.params == {"brand_id": BRAND, "integration_id": LOCAL}
    assert webhook.params == {"brand_id": BRAND, "webhook_id": LOCAL}


@pytest.mark.parametrize(
    "text", [f"wh_{BRAND}_{LOCAL}", f"int_{BRAND}", f"int_{BRAND}_x", f"{BRAND}_{LOCAL}", ""]
)
def test_anything_else_is_refused_with_the_types_hint(text: str) -> None:
    with pytest.raises(BadUserInput, match="Invalid integration id") as raised:
        parse_integration_id(text)
    assert raised.value.hint == "Use an Integration.id returned by the API."


def test_a_webhook_id_of_an_integration_is_refused() -> None:
    with pytest.raises(BadUserInput, match="Invalid webhook id") as raised:
        parse_webhook_id(IntegrationRef(BRAND, LOCAL).id)
    assert raised.value.hint == "Use a Webhook.id returned by the API."
