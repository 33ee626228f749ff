"""The threat pipeline's variables: outbox, relay, live delivery, webhooks.

``PipelineSettings`` lives with the pipeline, which must not import the
gateway; the gateway reads these variables and builds it. Defaults come from
the dataclass, so there is one place that says what they are.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, BeforeValidator
from pydantic_settings import NoDecode

from api.settings.environment import Malformed
from api.settings.formats import MillisecondsOrOff, Positive
from domain.threats import ThreatSettings
from services.pipeline.settings import PipelineSettings, ShardLayout

__all__ = ["PipelineVariables"]

_DEFAULT = PipelineSettings()
_SECOND = timedelta(seconds=1)
_MILLISECOND = timedelta(milliseconds=1)
_LAYOUT = re.compile(r"([0-9]+):([0-9]+)")


def _layouts(text: str) -> tuple[tuple[int, int], ...]:
    """``version:count,...``; their order is checked by ``PipelineSettings``."""
    layouts = []
    for part in text.split(","):
        match = _LAYOUT.fullmatch(part.strip())
        if match is None:
            raise Malformed(f"{text!r}", hint="Use version:count pairs, e.g. 1:4,2:8.")
        layouts.append((int(match[1]), int(match[2])))
    return tuple(layouts)


def _redis_url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("redis", "rediss", "unix") or (
        parts.scheme != "unix" and not parts.hostname
    ):
        raise Malformed(
            "must be a redis://, rediss:// or unix:// URL",
            hint="For example redis://127.0.0.1:6379/0 (Redis 7 or Valkey).",
        )
    return text


_REDIS_PREFIX = re.compile(r"[A-Za-z0-9_.:{}-]{1,64}")


def _redis_prefix(text: str) -> str:
    if not _REDIS_PREFIX.fullmatch(text):
        raise Malformed(
            f"{text!r} is not a Redis key prefix",
            hint="Use up to 64 letters, digits and _ . : - { }, e.g. proofgate-staging:.",
        )
    return text


def _sweep_ms(value: int) -> int:
    overlap = _DEFAULT.tail_overlap // _MILLISECOND
    if value >= overlap:
        raise Malformed(
            f"{value} is not below the tail overlap ({overlap} ms)",
            hint="A longer sweep could skip past alerts Redis dropped; keep it under 10000.",
        )
    return value


def _one_or_zero(text: str) -> bool:
    if text.lower() not in ("0", "1", "true", "false"):
        raise Malformed("use 1 or 0")
    return text.lower() in ("1", "true")


class PipelineVariables(BaseModel):
    outbox_shards: Annotated[tuple[tuple[int, int], ...], NoDecode, BeforeValidator(_layouts)] = (
        tuple((layout.version, layout.count) for layout in _DEFAULT.shard_layouts)
    )
    outbox_lease_seconds: Positive = _DEFAULT.lease // _SECOND
    outbox_max_attempts: Positive = _DEFAULT.max_attempts
    relay_poll_ms: Positive = _DEFAULT.poll_interval // _MILLISECOND
    relay_idle_poll_ms: Positive = _DEFAULT.idle_poll_interval // _MILLISECOND
    tail_interval_ms: Positive = _DEFAULT.tail_interval // _MILLISECOND
    key_check_ms: Positive = _DEFAULT.key_check_interval // _MILLISECOND
    key_cache_ms: MillisecondsOrOff = _DEFAULT.key_cache // _MILLISECOND
    ws_keepalive_ms: Positive = _DEFAULT.keepalive_interval // _MILLISECOND
    ws_init_timeout_ms: Positive = _DEFAULT.connection_init_timeout // _MILLISECOND
    subscriptions_per_key: Positive = _DEFAULT.subscriptions_per_key
    subscriptions_per_brand: Positive = _DEFAULT.subscriptions_per_brand
    alert_cost_per_brand: Positive = _DEFAULT.alert_cost_per_brand
    webhook_retry_base_ms: Positive = _DEFAULT.retry_base // _MILLISECOND
    webhook_allow_private: Annotated[bool, BeforeValidator(_one_or_zero)] = (
        _DEFAULT.webhook_allow_private
    )
    redis_url: Annotated[str | None, BeforeValidator(_redis_url)] = _DEFAULT.redis_url
    redis_prefix: Annotated[str, BeforeValidator(_redis_prefix)] = _DEFAULT.redis_prefix
    redis_sweep_ms: Annotated[Positive, AfterValidator(_sweep_ms)] = (
        _DEFAULT.redis_sweep_interval // _MILLISECOND
    )
    redis_start_degraded: Annotated[bool, BeforeValidator(_one_or_zero)] = False
    """``serve`` starts while Redis is unreachable instead of refusing (the
    operator decides a fleet may run degraded, not a typo in the URL)."""

    def pipeline(self, threats: ThreatSettings) -> PipelineSettings:
        return replace(
            _DEFAULT,
            shard_layouts=tuple(ShardLayout(v, c) for v, c in self.outbox_shards),
            lease=self.outbox_lease_seconds * _SECOND,
            max_attempts=self.outbox_max_attempts,
            poll_interval=self.relay_poll_ms * _MILLISECOND,
            idle_poll_interval=max(self.relay_poll_ms, self.relay_idle_poll_ms) * _MILLISECOND,
            tail_interval=self.tail_interval_ms * _MILLISECOND,
            key_check_interval=self.key_check_ms * _MILLISECOND,
            key_cache=self.key_cache_ms * _MILLISECOND,
            keepalive_interval=self.ws_keepalive_ms * _MILLISECOND,
            connection_init_timeout=self.ws_init_timeout_ms * _MILLISECOND,
            subscriptions_per_key=self.subscriptions_per_key,
            subscriptions_per_brand=self.subscriptions_per_brand,
            alert_cost_per_brand=self.alert_cost_per_brand,
            retry_base=self.webhook_retry_base_ms * _MILLISECOND,
            webhook_allow_private=self.webhook_allow_private,
            redis_url=self.redis_url,
            redis_prefix=self.redis_prefix,
            redis_sweep_interval=self.redis_sweep_ms * _MILLISECOND,
            threats=threats,
        )
