"""Settings of the threat pipeline: outbox, relay, live delivery, webhooks.

The shard count is versioned: items remember the layout version they were
written under, and relays poll the union of every layout still listed, so
changing the count never strands an item in a shard nobody reads. Add a new
``(version, count)`` at the end; drop an old one only once its shards are empty.
The gateway reads the few an operator tunes (``api.settings.pipeline``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from domain.errors import ConfigurationError
from domain.threats import ThreatSettings
from services.pipeline.live.quota import SubscriptionLimits

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
    idle_poll_interval: timedelta = timedelta(seconds=2)
    """While polls find nothing, the interval doubles up to this: an idle
    process queried the outbox sixteen times a second (four shards), which
    on DynamoDB was over 1% of a core; this process's own items never wait
    for a poll (``Relay.expect``), others' and retries wait at most this."""
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
    redis_url: str | None = field(default=None, repr=False)
    """Alerts across processes through Redis pub/sub instead of the tail alone."""
    redis_prefix: str = "proofgate:"
    """Starts every Redis key and channel name, so deployments can share one Redis."""
    redis_sweep_interval: timedelta = timedelta(seconds=5)
    """How often the table is read for watched brands while Redis carries the
    alerts: what pub/sub dropped still arrives. Shorter than ``tail_overlap``,
    so a sweep never skips past an alert (docs/design.md, "Alerts across processes")."""
    replay_max: int = 5000
    queue_max: int = 256
    """Alerts one subscription may have waiting to be sent; past it the
    connection is a slow consumer and is closed."""
    subscriptions_per_connection: int = 10
    subscriptions_max: int = 10_000
    subscriptions_per_key: int = 100
    subscriptions_per_brand: int = 1_000
    alert_cost_per_brand: int = 20_000
    """Reads per alert a brand's live subscriptions may plan together."""
    connection_init_timeout: timedelta = timedelta(seconds=10)
    """How long a WebSocket may stay open without a ``connection_init``."""
    keepalive_interval: timedelta = timedelta(seconds=15)
    key_check_interval: timedelta = timedelta(seconds=5)
    key_cache: timedelta = timedelta(milliseconds=100)
    """How long a process trusts an API key it read (``services.auth.KeyCache``):
    one consistent read per key per this, not per request; a revocation in
    another process is seen within it."""
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
            "subscriptions_per_key",
            "subscriptions_per_brand",
            "alert_cost_per_brand",
            "webhooks_per_brand",
            "webhook_concurrency",
            "replay_max",
        ):
            if getattr(self, name) < 1:
                raise ConfigurationError(f"Pipeline setting {name} must be at least 1")

    @property
    def commit_budget(self) -> timedelta:
        """How long after its ``recordedAt`` an alert may become visible and
        still be read by every tailer: a reader re-reads ``tail_overlap`` behind
        the newest alert it saw, one ``tail_interval`` after the last read. Half
        of what is left, for clock skew between hosts (docs/design.md, "Late commits")."""
        return max(self.tail_overlap - self.tail_interval, self.tail_overlap / 4) / 2

    @property
    def subscription_limits(self) -> SubscriptionLimits:
        return SubscriptionLimits(
            per_process=self.subscriptions_max,
            per_key=self.subscriptions_per_key,
            per_brand=self.subscriptions_per_brand,
            cost_per_brand=self.alert_cost_per_brand,
        )

    @property
    def current_layout(self) -> ShardLayout:
        return self.shard_layouts[-1]

    @property
    def shards(self) -> range:
        """Every shard some listed layout writes to."""
        return range(max(layout.count for layout in self.shard_layouts))
