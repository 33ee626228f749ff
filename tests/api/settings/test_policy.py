"""The registration fee, FREE plan credits and claim lifetime: read from the
environment, checked, and in force through GraphQL."""

from __future__ import annotations

import uuid
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from _asgi import ADMIN_KEY, GraphQLClient, environment, serving

from api.settings.gateway import Environment, Settings
from api.settings.policy import Policy
from domain.datetimes import parse_datetime
from domain.errors import ConfigurationError


def test_defaults() -> None:
    policy = Environment.read({}).build(Policy)
    assert policy == Policy()
    assert policy.registration_fee == Decimal("1.00")
    assert policy.free_plan_credits == Decimal("10.00")
    assert policy.claim_ttl == timedelta(days=365)


def test_settings_carry_the_policy(tmp_path: Path) -> None:
    settings = Settings.from_env(
        environment(
            tmp_path,
            PROOFGATE_REGISTRATION_FEE="0.25",
            PROOFGATE_FREE_PLAN_CREDITS="0",
            PROOFGATE_CLAIM_TTL_SECONDS="3600",
        )
    )
    assert settings.policy == Policy(
        registration_fee=Decimal("0.25"),
        free_plan_credits=Decimal(0),
        claim_ttl_seconds=3600,
    )


def test_empty_values_count_as_unset(tmp_path: Path) -> None:
    names = ("REGISTRATION_FEE", "FREE_PLAN_CREDITS", "CLAIM_TTL_SECONDS")
    settings = Settings.from_env(environment(tmp_path, **{f"PROOFGATE_{n}": " " for n in names}))
    assert settings.policy == Policy()


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("PROOFGATE_REGISTRATION_FEE", "0"),
        ("PROOFGATE_REGISTRATION_FEE", "0.00"),
        ("PROOFGATE_REGISTRATION_FEE", "-1"),
        ("PROOFGATE_REGISTRATION_FEE", "1.005"),
        ("PROOFGATE_REGISTRATION_FEE", "one"),
        ("PROOFGATE_FREE_PLAN_CREDITS", "-5"),
        ("PROOFGATE_FREE_PLAN_CREDITS", "0.001"),
        ("PROOFGATE_CLAIM_TTL_SECONDS", "0"),
        ("PROOFGATE_CLAIM_TTL_SECONDS", "1d"),
        ("PROOFGATE_CLAIM_TTL_SECONDS", "-60"),
    ],
)
def test_invalid_values_name_the_variable_and_write_nothing(
    tmp_path: Path, variable: str, value: str
) -> None:
    data_dir = tmp_path / "data"
    with pytest.raises(ConfigurationError, match=variable):
        Settings.from_env(environment(data_dir, **{variable: value}))
    assert not data_dir.exists()


@pytest.mark.parametrize(
    "change",
    [
        {"registration_fee": Decimal(0)},
        {"registration_fee": Decimal("0.001")},
        {"free_plan_credits": Decimal(-1)},
        {"claim_ttl_seconds": 0},
    ],
)
def test_direct_construction_is_checked_too(change: dict[str, Any]) -> None:
    """By the variable's own rule, with the variable's own message."""
    name = next(iter(change))
    with pytest.raises(ConfigurationError, match=f"Invalid PROOFGATE_{name.upper()}: "):
        Policy(**change)


def test_the_claim_lifetime_is_read_in_seconds() -> None:
    assert Policy(claim_ttl_seconds=90).claim_ttl == timedelta(seconds=90)


REGISTER_BRAND = """mutation($input: RegisterBrandInput!) {
    registerBrand(input: $input) { apiKey brand { id } }
}"""
REGISTER_PRODUCT = """mutation($b: ID!, $name: String!) {
    registerProduct(input: {brandId: $b, name: $name}) { id verificationCode }
}"""
BALANCE = "query($b: ID!) { brand(id: $b) { ledger { balance { posted available } } } }"
CLAIM = """mutation($c: String!) {
    claimProduct(code: $c, deviceFingerprint: "alice-phone") { claimedAt expiresAt }
}"""


async def register_brand(gateway: GraphQLClient) -> tuple[str, str]:
    brand = {"name": "Policy", "domain": f"{uuid.uuid4().hex[:8]}.example.com", "plan": "FREE"}
    data = await gateway.data(REGISTER_BRAND, {"input": brand}, key=ADMIN_KEY)
    return data["registerBrand"]["brand"]["id"], data["registerBrand"]["apiKey"]


async def register_product(gateway: GraphQLClient, brand_id: str, key: str) -> dict[str, Any]:
    variables = {"b": brand_id, "name": f"Kettle {uuid.uuid4().hex[:8]}"}
    return await gateway.execute(REGISTER_PRODUCT, variables, key=key)


async def balance(gateway: GraphQLClient, brand_id: str, key: str) -> dict[str, str]:
    data = await gateway.data(BALANCE, {"b": brand_id}, key=key)
    result: dict[str, str] = data["brand"]["ledger"]["balance"]
    return result


async def test_the_fee_and_the_free_credits_take_effect(tmp_path: Path) -> None:
    async with serving(
        tmp_path, PROOFGATE_REGISTRATION_FEE="0.35", PROOFGATE_FREE_PLAN_CREDITS="0.70"
    ) as gateway:
        brand_id, key = await register_brand(gateway)
        assert await balance(gateway, brand_id, key) == {"posted": "0.70", "available": "0.70"}
        for _ in range(2):
            assert "errors" not in await register_product(gateway, brand_id, key)
        assert await balance(gateway, brand_id, key) == {"posted": "0.00", "available": "0.00"}
        refused = await register_product(gateway, brand_id, key)
        assert gateway.codes(refused) == ["INSUFFICIENT_CREDITS"]


async def test_the_claim_lifetime_takes_effect(tmp_path: Path) -> None:
    async with serving(tmp_path, PROOFGATE_CLAIM_TTL_SECONDS="90") as gateway:
        brand_id, key = await register_brand(gateway)
        product = (await register_product(gateway, brand_id, key))["data"]["registerProduct"]
        claim = (await gateway.data(CLAIM, {"c": product["verificationCode"]}))["claimProduct"]
        lifetime = parse_datetime(claim["expiresAt"]) - parse_datetime(claim["claimedAt"])
        assert abs(lifetime - timedelta(seconds=90)) < timedelta(seconds=1)
