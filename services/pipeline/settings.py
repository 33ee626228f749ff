"""Settings of the threat pipeline: outbox, relay, live delivery, webhooks.

The shard count is versioned: items remember the layout version they were
written under, and relays poll the union of every layout still listed, so
changing the count never strands an item in a shard nobody reads. Add a new
``(version, count)`` at the end; drop an old one only once its shards are empty.
A field an operator tunes is declared with ``variable``, which names its
``PROOFGATE_*`` variable; the gateway reads those (``api.settings.pipeline``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from domain.errors import ConfigurationError
from domain.threats import ThreatSettings
from domain.variables import variable
from services.pipeline.alerts.known import KNOWN_ALERTS_BYTES
from services.pipeline.live.quota import SubscriptionLimits

__all__ = ["PipelineSettings", "ShardLayout"]

_MS = timedelta(milliseconds=1)
_SECOND = timedelta(seconds=1)


@dataclass(frozen=True, slots=True)
class ShardLayout:
    version: int
    count: int


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    shard_layouts: tuple[ShardLayout, ...] = variable(
        (ShardLayout(1, 4),), "outbox_shards", format="shard_layouts"
    )
    # Relay: how often it looks for due items when nothing woke it, how many it
    # claims at once, how long a claim is exclusive, and when it gives up.
    poll_interval: timedelta = variable(250 * _MS, "relay_poll_ms", unit=_MS)
    idle_poll_interval: timedelta = variable(2 * _SECOND, "relay_idle_poll_ms", unit=_MS)
    """While polls find nothing, the interval doubles up to this: an idle
    process queried the outbox sixteen times a second (four shards), which
    on DynamoDB was over 1% of a core; this process's own items never wait
    for a poll (``Relay.expect``), others' and retries wait at most this.
    Never below ``poll_interval``."""
    claim_batch: int = 25
    lease: timedelta = variable(30 * _SECOND, "outbox_lease_seconds", unit=_SECOND)
    max_attempts: int = variable(8, "outbox_max_attempts")
    retry_base: timedelta = variable(_SECOND, "webhook_retry_base_ms", unit=_MS)
    retry_cap: timedelta = timedelta(minutes=15)
    webhook_retry_horizon: timedelta = variable(
        timedelta(hours=24), "webhook_retry_hours", unit=timedelta(hours=1)
    )
    """A webhook delivery is retried, with the backoff above, until it is this
    old, not ``max_attempts`` times: receivers built for Standard Webhooks
    expect retries over about a day (Svix: eight attempts over 27 hours), and
    eight attempts from one second last four minutes, less than an ordinary
    outage. Then it is FAILED and parked (docs/design.md, Webhook order)."""
    # Live delivery: other processes' alerts are found by tailing AP12.
    tail_interval: timedelta = variable(500 * _MS, "tail_interval_ms", unit=_MS)
    tail_overlap: timedelta = timedelta(seconds=10)
    """How far behind its newest alert the tailer keeps looking, because alerts
    from several processes become visible in a slightly different order than
    their timestamps."""
    redis_url: str | None = variable(None, "redis_url", format="redis_url", repr=False)
    """Alerts across processes through Redis pub/sub instead of the tail alone."""
    redis_prefix: str = variable("proofgate:", "redis_prefix", format="redis_prefix")
    """Starts every Redis key and channel name, so deployments can share one Redis."""
    redis_sweep_interval: timedelta = variable(
        5 * _SECOND, "redis_sweep_ms", format="sweep_ms", unit=_MS
    )
    """How often the table is read for watched brands while Redis carries the
    alerts: what pub/sub dropped still arrives. Shorter than ``tail_overlap``,
    so a sweep never skips past an alert (docs/design.md, "Alerts across processes")."""
    replay_max: int = 5000
    queue_max: int = 256
    """Alerts one subscription may have waiting to be sent; past it the
    connection is a slow consumer and is closed."""
    subscriptions_per_connection: int = 10
    subscriptions_max: int = 10_000
    subscriptions_per_key: int = variable(100, "subscriptions_per_key")
    subscriptions_per_brand: int = variable(1_000, "subscriptions_per_brand")
    alert_cost_per_brand: int = variable(20_000, "alert_cost_per_brand")
    """Reads per alert a brand's live subscriptions may plan together."""
    filter_values_per_brand: int = variable(100_000, "filter_values_per_brand")
    filter_values_per_process: int = variable(1_000_000, "filter_values_per_process")
    """Values the filters of live subscriptions name, in one process: what
    the broker's index holds (docs/design.md, Alert filters)."""
    known_alerts_bytes: int = variable(KNOWN_ALERTS_BYTES, "known_alerts_bytes")
    """What the relay's keys of alerts known stored may hold
    (``services.pipeline.alerts.known``)."""
    connection_init_timeout: timedelta = variable(10 * _SECOND, "ws_init_timeout_ms", unit=_MS)
    """How long a WebSocket may stay open without a ``connection_init``."""
    keepalive_interval: timedelta = variable(15 * _SECOND, "ws_keepalive_ms", unit=_MS)
    key_check_interval: timedelta = variable(5 * _SECOND, "key_check_ms", unit=_MS)
    key_cache: timedelta = variable(
        100 * _MS, "key_cache_ms", format="milliseconds_or_off", unit=_MS
    )
    """How long a process trusts an API key it read (``services.auth.KeyCache``):
    one consistent read per key per this, not per request; a revocation in
    another process is seen within it."""
    # Webhooks.
    webhooks_per_brand: int = 10
    webhook_timeout: timedelta = timedelta(seconds=5)
    webhook_concurrency: int = 8
    webhook_allow_private: bool = variable(False, "webhook_allow_private", format="one_or_zero")
    """Deliver to loopback and private addresses (tests, local development).
    Off by default: a webhook URL must not be a way into the private network."""
    delivery_retention: timedelta = timedelta(days=30)
    threats: ThreatSettings = field(default_factory=ThreatSettings)

    def __post_init__(self) -> None:
        if self.idle_poll_interval < self.poll_interval:
            # The idle interval is where a doubling poll interval stops.
            object.__setattr__(self, "idle_poll_interval", self.poll_interval)
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
            "filter_values_per_brand",
            "filter_values_per_process",
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
            filter_values_per_brand=self.filter_values_per_brand,
            filter_values_per_process=self.filter_values_per_process,
        )

    @property
    def current_layout(self) -> ShardLayout:
        return self.shard_layouts[-1]

    @property
    def shards(self) -> range:
        """Every shard some listed layout writes to."""
        return range(max(layout.count for layout in self.shard_layouts))
