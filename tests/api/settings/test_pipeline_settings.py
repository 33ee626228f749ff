"""The threat pipeline's variables reach ``PipelineSettings``."""

from __future__ import annotations

from datetime import timedelta

import pytest

from api.settings.gateway import Environment
from domain.errors import ConfigurationError
from domain.threats import ThreatSettings
from services.pipeline.settings import PipelineSettings, ShardLayout


def test_defaults_are_the_pipelines_defaults() -> None:
    env = Environment.read({})
    assert env.pipeline(ThreatSettings()) == PipelineSettings()


def test_every_variable_reaches_the_pipeline_settings() -> None:
    env = Environment.read(
        {
            "PROOFGATE_OUTBOX_SHARDS": "1:4, 2:16",
            "PROOFGATE_OUTBOX_LEASE_SECONDS": "45",
            "PROOFGATE_OUTBOX_MAX_ATTEMPTS": "3",
            "PROOFGATE_RELAY_POLL_MS": "100",
            "PROOFGATE_TAIL_INTERVAL_MS": "250",
            "PROOFGATE_KEY_CHECK_MS": "2000",
            "PROOFGATE_WS_KEEPALIVE_MS": "7000",
            "PROOFGATE_WEBHOOK_RETRY_BASE_MS": "20",
            "PROOFGATE_WEBHOOK_RETRY_HOURS": "48",
            "PROOFGATE_WEBHOOK_ALLOW_PRIVATE": "TRUE",
            "PROOFGATE_REDIS_URL": "redis://:secret@cache.internal:6380/2",
            "PROOFGATE_REDIS_PREFIX": "staging:",
            "PROOFGATE_REDIS_SWEEP_MS": "2500",
        }
    )
    threats = ThreatSettings(burst_max_scans=2)
    settings = env.pipeline(threats)
    assert settings.shard_layouts == (ShardLayout(1, 4), ShardLayout(2, 16))
    assert settings.current_layout == ShardLayout(2, 16)
    assert (settings.lease, settings.max_attempts) == (timedelta(seconds=45), 3)
    assert settings.poll_interval == timedelta(milliseconds=100)
    assert settings.tail_interval == timedelta(milliseconds=250)
    assert settings.key_check_interval == timedelta(seconds=2)
    assert settings.keepalive_interval == timedelta(seconds=7)
    assert settings.retry_base == timedelta(milliseconds=20)
    assert settings.webhook_retry_horizon == timedelta(hours=48)
    assert settings.webhook_allow_private is True
    assert settings.redis_url == "redis://:secret@cache.internal:6380/2"
    assert settings.redis_prefix == "staging:"
    assert settings.redis_sweep_interval == timedelta(milliseconds=2500)
    assert "secret" not in repr(settings)
    assert settings.threats is threats


@pytest.mark.parametrize("value", ["0", "false", " 0 "])
def test_private_webhooks_can_be_refused_explicitly(value: str) -> None:
    env = Environment.read({"PROOFGATE_WEBHOOK_ALLOW_PRIVATE": value})
    assert env.pipeline(ThreatSettings()).webhook_allow_private is False


@pytest.mark.parametrize("value", ["four", "1:4,2", "1:4:2", "1-4", ",", "v1:4"])
def test_a_malformed_shard_list_names_the_variable(value: str) -> None:
    with pytest.raises(ConfigurationError, match="PROOFGATE_OUTBOX_SHARDS") as raised:
        Environment.read({"PROOFGATE_OUTBOX_SHARDS": value})
    assert raised.value.hint == "Use version:count pairs, e.g. 1:4,2:8."


def test_shard_layouts_out_of_order_are_refused_when_built() -> None:
    env = Environment.read({"PROOFGATE_OUTBOX_SHARDS": "2:4,1:4"})
    with pytest.raises(ConfigurationError, match="increasing versions"):
        env.pipeline(ThreatSettings())


def test_without_redis_the_table_carries_alerts_across_processes() -> None:
    assert (
        Environment.read({"PROOFGATE_REDIS_URL": "  "}).pipeline(ThreatSettings()).redis_url is None
    )


@pytest.mark.parametrize("value", ["127.0.0.1:6379", "http://cache:6379", "redis://", "valkey"])
def test_a_malformed_redis_url_names_the_variable(value: str) -> None:
    with pytest.raises(ConfigurationError, match="PROOFGATE_REDIS_URL") as raised:
        Environment.read({"PROOFGATE_REDIS_URL": value})
    assert raised.value.hint is not None and "redis://" in raised.value.hint


@pytest.mark.parametrize("value", ["has space", "x" * 65, "quote'"])
def test_a_malformed_redis_prefix_names_the_variable(value: str) -> None:
    with pytest.raises(ConfigurationError, match="PROOFGATE_REDIS_PREFIX") as raised:
        Environment.read({"PROOFGATE_REDIS_PREFIX": value})
    assert raised.value.hint is not None


@pytest.mark.parametrize("value", ["10000", "60000", "0"])
def test_a_sweep_no_shorter_than_the_overlap_is_refused(value: str) -> None:
    with pytest.raises(ConfigurationError, match="PROOFGATE_REDIS_SWEEP_MS"):
        Environment.read({"PROOFGATE_REDIS_SWEEP_MS": value})
