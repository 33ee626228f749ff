"""The threat pipeline: outbox, relay, live fan-out and webhook delivery.

Commands enqueue events in their own transactions (``outbox_actions``); the
relay in every gateway process turns them into alerts; the broker and tailer
bring alerts to live subscriptions; webhooks receive them through the same
outbox.
"""

from .backlog import BACKLOG_COUNT_MAX, Backlog
from .broker import Broker, Subscriber
from .events import (
    AppendEvent,
    DisputeEvent,
    EventKind,
    OutboxEvent,
    RecallEvent,
    ScanEvent,
    WebhookEvent,
)
from .quota import SubscriptionLimits
from .relay import Relay
from .service import Pipeline, outbox_actions
from .settings import PipelineSettings, ShardLayout
from .tailer import Tailer

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
