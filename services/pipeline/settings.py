"""Settings of the threat pipeline: outbox, relay, live delivery, webhooks.

The shard count is versioned: items remember the layout version they were
written under, and relays poll the union of every layout still listed, so
changing the count never strands an item in a shard nobody reads. Add a new
``(version, count)`` at the end; drop an old one only once its shards are empty.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta

from domain.errors import ConfigurationError
from domain.threats import ThreatSettings

__all__ = ["PipelineSettings", "ShardLayout"]


@dataclass(frozen=True, slots=True)
class ShardLayout:
    version: int
    count: int


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    shard_layouts: tuple[ShardLayout, ...] = (ShardLayout(1, 4),)
    # Relay: how often it looks for due items when nothing woke it, how many it
    # claims at once, how long a claim is exclusive, and when it gives up.
    poll_interval: timedelta = timedelta(milliseconds=250)
    claim_batch: int = 25
    lease: timedelta = timedelta(seconds=30)
    max_attempts: int = 8
    retry_base: timedelta = timedelta(seconds=1)
    retry_cap: timedelta = timedelta(minutes=15)
    # Live delivery: other processes' alerts are found by tailing AP12.
    tail_interval: timedelta = timedelta(milliseconds=500)
    tail_overlap: timedelta = timedelta(seconds=10)
    """How far behind its newest alert the tailer keeps looking, because alerts
    from several processes become visible in a slightly different order than
    their timestamps."""
    replay_max: int = 5000
    queue_max: int = 256
    """Alerts one subscription may have waiting to be sent; past it the
    connection is a slow consumer and is closed."""
    subscriptions_per_connection: int = 10
    subscriptions_max: int = 10_000
    keepalive_interval: timedelta = timedelta(seconds=15)
    key_check_interval: timedelta = timedelta(seconds=5)
    # Webhooks.
    webhooks_per_brand: int = 10
    webhook_timeout: timedelta = timedelta(seconds=5)
    webhook_concurrency: int = 8
    webhook_allow_private: bool = False
    """Deliver to loopback and private addresses (tests, local development).
    Off by default: a webhook URL must not be a way into the private network."""
    delivery_retention: timedelta = timedelta(days=30)
    threats: ThreatSettings = field(default_factory=ThreatSettings)

    def __post_init__(self) -> None:
        if not self.shard_layouts:
            raise ConfigurationError("At least one outbox shard layout is needed")
        versions = [layout.version for layout in self.shard_layouts]
        if versions != sorted(set(versions)) or any(
            layout.count < 1 for layout in self.shard_layouts
        ):
            raise ConfigurationError(
                "Shard layouts need increasing versions and counts of at least 1"
            )
        for name in (
            "claim_batch",
            "max_attempts",
            "queue_max",
            "subscriptions_per_connection",
            "subscriptions_max",
            "webhooks_per_brand",
            "webhook_concurrency",
            "replay_max",
        ):
            if getattr(self, name) < 1:
                raise ConfigurationError(f"Pipeline setting {name} must be at least 1")

    @property
    def current_layout(self) -> ShardLayout:
        return self.shard_layouts[-1]

    @property
    def shards(self) -> range:
        """Every shard some listed layout writes to."""
        return range(max(layout.count for layout in self.shard_layouts))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> PipelineSettings:
        """The few settings an operator tunes: ``PROOFGATE_OUTBOX_SHARDS``
        (``version:count,...``), ``PROOFGATE_TAIL_INTERVAL_MS``,
        ``PROOFGATE_RELAY_POLL_MS``, ``PROOFGATE_OUTBOX_LEASE_SECONDS``,
        ``PROOFGATE_OUTBOX_MAX_ATTEMPTS``, ``PROOFGATE_WEBHOOK_RETRY_BASE_MS``,
        ``PROOFGATE_KEY_CHECK_MS``, ``PROOFGATE_WS_KEEPALIVE_MS`` and
        ``PROOFGATE_WEBHOOK_ALLOW_PRIVATE``."""
        settings = cls()
        changes: dict[str, object] = {}
        shards = environ.get("PROOFGATE_OUTBOX_SHARDS", "").strip()
        if shards:
            changes["shard_layouts"] = _layouts(shards)
        millis = {
            "PROOFGATE_TAIL_INTERVAL_MS": "tail_interval",
            "PROOFGATE_RELAY_POLL_MS": "poll_interval",
            "PROOFGATE_WEBHOOK_RETRY_BASE_MS": "retry_base",
            "PROOFGATE_KEY_CHECK_MS": "key_check_interval",
            "PROOFGATE_WS_KEEPALIVE_MS": "keepalive_interval",
        }
        for variable, name in millis.items():
            value = _positive_int(environ, variable)
            if value is not None:
                changes[name] = timedelta(milliseconds=value)
        lease = _positive_int(environ, "PROOFGATE_OUTBOX_LEASE_SECONDS")
        if lease is not None:
            changes["lease"] = timedelta(seconds=lease)
        attempts = _positive_int(environ, "PROOFGATE_OUTBOX_MAX_ATTEMPTS")
        if attempts is not None:
            changes["max_attempts"] = attempts
        private = environ.get("PROOFGATE_WEBHOOK_ALLOW_PRIVATE", "").strip().lower()
        if private:
            if private not in ("0", "1", "true", "false"):
                raise ConfigurationError("Invalid PROOFGATE_WEBHOOK_ALLOW_PRIVATE: use 1 or 0")
            changes["webhook_allow_private"] = private in ("1", "true")
        return replace(settings, **changes)  # type: ignore[arg-type]


def _positive_int(environ: Mapping[str, str], name: str) -> int | None:
    text = environ.get(name, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise ConfigurationError(f"Invalid {name}: must be a positive integer, got {text!r}")
    return int(text)


def _layouts(text: str) -> tuple[ShardLayout, ...]:
    layouts = []
    for part in text.split(","):
        version, _, count = part.strip().partition(":")
        if not (version.isdigit() and count.isdigit()):
            raise ConfigurationError(
                f"Invalid PROOFGATE_OUTBOX_SHARDS: {text!r}",
                hint="Use version:count pairs, e.g. 1:4,2:8.",
            )
        layouts.append(ShardLayout(int(version), int(count)))
    return tuple(layouts)
