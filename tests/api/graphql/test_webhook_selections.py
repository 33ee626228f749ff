"""A webhook's GraphQL document, checked at registration: the one shape a
webhook runs, the schema's validation, the cost of one event and trusted
documents (docs/design.md, Webhook selections)."""

from __future__ import annotations

import pytest

from api.graphql.schema import schema
from api.graphql.webhook_selections import SchemaSelections
from api.operations.registry import load_registry
from api.operations.trusted import UntrustedCounter
from api.settings.limits import Limits
from api.settings.operations import TrustedDocuments
from domain.errors import BadUserInput, PersistedQueryNotAllowed, QueryTooComplex
from services.auth import Principal, Role

BRAND = "01JD8X3V9Q7ZK5M2N4P6R8T0W1"
OTHER = "01JD8X3V9Q7ZK5M2N4P6R8T0W2"
BRAND_KEY = Principal(Role.BRAND, brand_id=BRAND)
GOOD = (
    "subscription WebhookAlert($b: ID!) { threatAlerts(brandId: $b) { id type product { name } } }"
)
INLINE = f'subscription {{ threatAlerts(brandId: "{BRAND}") {{ id severity }} }}'
COSTLY = """subscription ($b: ID!) { threatAlerts(brandId: $b) {
    brand { products(first: 100) { edges { node { passport } } } } } }"""


def selections(**options: object) -> SchemaSelections:
    return SchemaSelections(schema, Limits(), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", [GOOD, INLINE])
def test_the_webhook_shape_is_accepted(text: str) -> None:
    selections().check(text, BRAND, BRAND_KEY)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("subscription { threatAlerts(", "Syntax Error"),
        ("query { __typename }", "one subscription operation"),
        (f'subscription {{ threatAlerts(brandId: "{BRAND}") {{ nope }} }}', "Cannot query field"),
        (
            f'subscription {{ threatAlerts(brandId: "{BRAND}", minSeverity: HIGH) {{ id }} }}',
            "takes only brandId",
        ),
        (f'subscription {{ threatAlerts(brandId: "{OTHER}") {{ id }} }}', f"must be {BRAND}"),
        (
            "subscription ($b: ID!, $c: ID!) { threatAlerts(brandId: $c) { id } }",
            "never used",
        ),
        (
            f'subscription {{ a: threatAlerts(brandId: "{BRAND}") {{ id }} '
            f'b: threatAlerts(brandId: "{BRAND}") {{ id }} }}',
            "only one top level field",
        ),
        (
            f'subscription {{ threatAlerts(brandId: "{BRAND}") {{ id ... @defer {{ type }} }} }}',
            "Defer directive not supported on subscription",
        ),
    ],
)
def test_other_documents_are_refused_saying_why(text: str, message: str) -> None:
    with pytest.raises(BadUserInput, match=message):
        selections().check(text, BRAND, BRAND_KEY)


def test_a_document_over_the_cost_budget_is_refused_with_its_cost() -> None:
    with pytest.raises(QueryTooComplex) as refused:
        selections().check(COSTLY, BRAND, BRAND_KEY)
    assert refused.value.extensions["maxCost"] == Limits().max_cost
    assert refused.value.extensions["cost"] > Limits().max_cost


def test_trusted_documents_apply_to_webhook_documents() -> None:
    registry = load_registry(schema, Limits(), None, [GOOD])
    counter = UntrustedCounter()
    enforced = selections(trusted=TrustedDocuments.ENFORCE, registry=registry)
    enforced.check(GOOD, BRAND, BRAND_KEY)
    with pytest.raises(PersistedQueryNotAllowed):
        enforced.check(INLINE, BRAND, BRAND_KEY)
    enforced.check(INLINE, BRAND, Principal(Role.ADMIN))
    logged = selections(trusted=TrustedDocuments.LOG, registry=registry, counter=counter)
    logged.check(INLINE, BRAND, BRAND_KEY)
    logged.check(GOOD, BRAND, BRAND_KEY)
    assert counter.count == 1
