"""schema.graphql is printed from the code; this fails when it is stale."""

from __future__ import annotations

from pathlib import Path

from api.graphql.schema import schema

SCHEMA_FILE = Path(__file__).parents[3] / "schema.graphql"


def test_schema_file_is_current() -> None:
    printed = schema.as_str().rstrip("\n") + "\n"
    assert SCHEMA_FILE.exists(), "schema.graphql is missing: run `make schema`"
    assert SCHEMA_FILE.read_text() == printed, "schema.graphql is stale: run `make schema`"


def test_contract_names_are_present() -> None:
    text = schema.as_str()
    for name in (
        "registerBrand(input: RegisterBrandInput!): RegisterBrandPayload!",
        "createApiKey(brandId: ID!, name: String!, role: ApiKeyRole!)",
        "revokeApiKey(id: ID!)",
        "registerProduct(input: RegisterProductInput!, idempotencyKey: String",
        "registerProducts(inputs: [RegisterProductInput!]!, idempotencyKey: String",
        "productByCode(code: String!)",
        "signingKeys: [SigningKey!]!",
        "auditLog(days: Int!",
    ):
        assert name in text, name
