"""The threat rules' thresholds and windows: read from ``PROOFGATE_THREAT_*``,
carried by the settings to the relay, and in force end to end."""

from __future__ import annotations

import uuid
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from _asgi import ADMIN_KEY, GraphQLClient, environment, serving

from api.settings.gateway import Environment, Settings
from domain.errors import ConfigurationError
from domain.threats import ThreatSettings


def test_defaults_are_the_rules_defaults() -> None:
    assert Environment.read({}).threats() == ThreatSettings()


def test_empty_values_count_as_unset() -> None:
    names = ("GEO_MIN_COUNTRIES", "BURST_WINDOW_MINUTES", "VELOCITY_MAX_PER_DAY")
    blank = {f"PROOFGATE_THREAT_{n}": "" for n in names}
    assert Environment.read(blank).threats() == ThreatSettings()


def test_every_variable_reaches_the_pipeline_settings(tmp_path: Path) -> None:
    settings = Settings.from_env(
        environment(
            tmp_path,
            PROOFGATE_THREAT_GEO_MIN_COUNTRIES="4",
            PROOFGATE_THREAT_GEO_WINDOW_HOURS="12",
            PROOFGATE_THREAT_BURST_MAX_SCANS="50",
            PROOFGATE_THREAT_BURST_WINDOW_MINUTES="15",
            PROOFGATE_THREAT_VELOCITY_MAX_TOTAL="100",
            PROOFGATE_THREAT_VELOCITY_MAX_PER_DAY="12.5",
            PROOFGATE_THREAT_CHAIN_GAP_HOURS="24",
            PROOFGATE_TAIL_INTERVAL_MS="200",
        )
    )
    assert settings.pipeline.tail_interval == timedelta(milliseconds=200)
    assert settings.pipeline.threats == ThreatSettings(
        geo_min_countries=4,
        geo_window=timedelta(hours=12),
        geo_dedupe=timedelta(hours=12),
        burst_max_scans=50,
        burst_window=timedelta(minutes=15),
        burst_dedupe=timedelta(minutes=15),
        velocity_max_total=100,
        velocity_max_per_day=Decimal("12.5"),
        chain_gap_max=timedelta(hours=24),
    )


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("PROOFGATE_THREAT_GEO_MIN_COUNTRIES", "0"),
        ("PROOFGATE_THREAT_GEO_WINDOW_HOURS", "1.5"),
        ("PROOFGATE_THREAT_BURST_MAX_SCANS", "ten"),
        ("PROOFGATE_THREAT_BURST_WINDOW_MINUTES", "-60"),
        ("PROOFGATE_THREAT_VELOCITY_MAX_TOTAL", "0"),
        ("PROOFGATE_THREAT_VELOCITY_MAX_PER_DAY", "-1"),
        ("PROOFGATE_THREAT_VELOCITY_MAX_PER_DAY", "1e3"),
        ("PROOFGATE_THREAT_VELOCITY_MAX_PER_DAY", "NaN"),
        ("PROOFGATE_THREAT_CHAIN_GAP_HOURS", "72h"),
    ],
)
def test_invalid_values_name_the_variable_and_write_nothing(
    tmp_path: Path, variable: str, value: str
) -> None:
    data_dir = tmp_path / "data"
    with pytest.raises(ConfigurationError, match=variable):
        Settings.from_env(environment(data_dir, **{variable: value}))
    assert not data_dir.exists()


BRAND = """mutation($input: RegisterBrandInput!) {
    registerBrand(input: $input) { apiKey brand { id } }
}"""
PRODUCT = """mutation($b: ID!) {
    registerProduct(input: {brandId: $b, name: "Scanned"}) { verificationCode }
}"""
VERIFY = "mutation($c: String!) { verifyProduct(code: $c) { result } }"
THREATS = "query($b: ID!) { brand(id: $b) { threats { edges { node { type } } } } }"


async def alert_types(gateway: GraphQLClient, brand_id: str, key: str) -> list[str]:
    data = await gateway.data(THREATS, {"b": brand_id}, key=key)
    return [edge["node"]["type"] for edge in data["brand"]["threats"]["edges"]]


async def test_a_lowered_burst_threshold_raises_the_alert(tmp_path: Path) -> None:
    """Two scans are a burst only because the setting says more than one is."""
    async with serving(tmp_path, PROOFGATE_THREAT_BURST_MAX_SCANS="1") as gateway:
        brand: dict[str, Any] = {"name": "Burst", "domain": f"{uuid.uuid4().hex[:8]}.example.com"}
        registered = (await gateway.data(BRAND, {"input": brand}, key=ADMIN_KEY))["registerBrand"]
        brand_id, key = registered["brand"]["id"], registered["apiKey"]
        code = (await gateway.data(PRODUCT, {"b": brand_id}, key=key))["registerProduct"][
            "verificationCode"
        ]
        await gateway.data(VERIFY, {"c": code})
        await gateway.drained()
        assert await alert_types(gateway, brand_id, key) == []
        await gateway.data(VERIFY, {"c": code})
        await gateway.drained()
        assert await alert_types(gateway, brand_id, key) == ["BURST_SCAN"]
