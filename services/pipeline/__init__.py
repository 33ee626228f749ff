"""The threat pipeline: outbox, relay, live fan-out and webhook delivery.

Commands enqueue events in their own transactions (``outbox_actions``); the
relay in every gateway process turns them into alerts; the broker and tailer
bring alerts to live subscriptions; webhooks receive them through the same
outbox.
"""

from services.pipeline.events import (
    AppendEvent,
    DisputeEvent,
    EventKind,
    OutboxEvent,
    RecallEvent,
    ScanEvent,
    WebhookEvent,
)
from services.pipeline.live.broker import Broker, Subscriber
from services.pipeline.live.quota import SubscriptionLimits
from services.pipeline.live.tailer import Tailer
from services.pipeline.outbox.backlog import BACKLOG_COUNT_MAX, Backlog
from services.pipeline.relay import Relay
from services.pipeline.service import Pipeline, outbox_actions
from services.pipeline.settings import PipelineSettings, ShardLayout

__all__ = [
    "BACKLOG_COUNT_MAX",
    "AppendEvent",
    "Backlog",
    "Broker",
    "DisputeEvent",
    "EventKind",
    "OutboxEvent",
    "Pipeline",
    "PipelineSettings",
    "RecallEvent",
    "Relay",
    "ScanEvent",
    "ShardLayout",
    "Subscriber",
    "SubscriptionLimits",
    "Tailer",
    "WebhookEvent",
    "outbox_actions",
]
