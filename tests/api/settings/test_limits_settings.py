"""The limits' settings: PROOFGATE_* variables, checked at start-up."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from api.settings.gateway import Environment, Settings
from api.settings.limits import ANONYMOUS_RATE, KEY_RATE, Limits, Rate
from domain.errors import ConfigurationError


def read_limits(environ: dict[str, str]) -> Limits:
    return Environment.read(environ).build(Limits)


def test_defaults() -> None:
    limits = read_limits({})
    assert limits == Limits()
    assert (limits.max_depth, limits.max_aliases, limits.max_tokens) == (10, 30, 2000)
    assert (limits.max_cost, limits.max_body_bytes) == (5000, 1024 * 1024)
    assert limits.introspection and limits.suggestions
    assert (limits.anonymous_rate, limits.key_rate) == (ANONYMOUS_RATE, KEY_RATE)
    assert limits.persisted_queries == 1000


def test_every_variable() -> None:
    limits = read_limits(
        {
            "PROOFGATE_MAX_DEPTH": "7",
            "PROOFGATE_MAX_ALIASES": "5",
            "PROOFGATE_MAX_TOKENS": "500",
            "PROOFGATE_MAX_COST": "900",
            "PROOFGATE_MAX_BODY_BYTES": "65536",
            "PROOFGATE_INTROSPECTION": "off",
            "PROOFGATE_SUGGESTIONS": "OFF",
            "PROOFGATE_RATE_LIMIT": "30",
            "PROOFGATE_RATE_BURST": "5",
            "PROOFGATE_KEY_RATE_LIMIT": "off",
            "PROOFGATE_PERSISTED_QUERIES": "off",
        }
    )
    assert limits == Limits(
        max_depth=7,
        max_aliases=5,
        max_tokens=500,
        max_cost=900,
        max_body_bytes=65536,
        introspection=False,
        suggestions=False,
        rate_limit=30,
        rate_burst=5,
        key_rate_limit=None,
        persisted_queries=0,
    )


def test_a_burst_alone_keeps_the_default_rate() -> None:
    limits = read_limits({"PROOFGATE_KEY_RATE_BURST": "7"})
    assert limits.key_rate == Rate(per_minute=KEY_RATE.per_minute, burst=7)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("PROOFGATE_MAX_DEPTH", "0"),
        ("PROOFGATE_MAX_COST", "lots"),
        ("PROOFGATE_MAX_BODY_BYTES", "1MB"),
        ("PROOFGATE_INTROSPECTION", "maybe"),
        ("PROOFGATE_RATE_LIMIT", "-5"),
        ("PROOFGATE_RATE_BURST", "0"),
        ("PROOFGATE_PERSISTED_QUERIES", "many"),
    ],
)
def test_a_bad_value_names_its_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigurationError, match=variable):
        read_limits({variable: value})


def test_settings_read_the_limits(tmp_path: Path) -> None:
    settings = Settings.from_env({"PROOFGATE_DATA_DIR": str(tmp_path), "PROOFGATE_MAX_COST": "42"})
    assert settings.limits.max_cost == 42


def test_a_bad_limit_stops_settings_before_any_key_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="PROOFGATE_MAX_DEPTH"):
        Settings.from_env({"PROOFGATE_DATA_DIR": str(tmp_path), "PROOFGATE_MAX_DEPTH": "x"})
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"max_depth": 0}, "Invalid PROOFGATE_MAX_DEPTH: must be a positive integer, got 0"),
        ({"max_cost": True}, "Invalid PROOFGATE_MAX_COST: must be a positive integer, got True"),
        ({"rate_limit": 0}, "Invalid PROOFGATE_RATE_LIMIT: must be calls per minute or off"),
        ({"persisted_queries": -1}, "Invalid PROOFGATE_PERSISTED_QUERIES: must be a number"),
        (
            {"execution": "fast"},
            "Invalid PROOFGATE_EXECUTION: must be one of compiled, graphql-core, library, or lanes",
        ),
    ],
)
def test_direct_construction_is_checked_by_the_variables_rules(
    change: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Limits(**change)  # type: ignore[arg-type]


def test_rates_are_made_from_their_variables() -> None:
    limits = Limits(rate_limit=None, key_rate_limit=30, key_rate_burst=5)
    assert (limits.anonymous_rate, limits.key_rate) == (None, Rate(per_minute=30, burst=5))


def test_limits_are_frozen_and_hashable() -> None:
    limits = Limits()
    with pytest.raises(FrozenInstanceError):
        limits.max_depth = 3  # type: ignore[misc]
    assert hash(limits) == hash(Limits())
