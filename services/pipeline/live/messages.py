"""Alert messages on Redis: signed, fresh and validated before a subscriber
sees one (docs/design.md, "Alerts across processes").

Whoever can publish to the Redis (deployments may share one by prefix) must
not be able to reach a brand's subscribers. So a message is

    1.<HMAC-SHA256 hex>.<sent, ms since the epoch>.<the alert as JSON>

with the HMAC keyed from the deployment's secret (derived from
``PROOFGATE_CURSOR_KEY``, which every process shares) over the channel, the
time and the JSON: a forged message, or a real one moved to
another brand's channel, fails it. A message sent longer ago than
``max_age`` (or ahead of the reader's clock by more than ``SKEW_SECONDS``)
is a replay and is dropped; a replay within the window is the same alert id,
which the broker passes on once. The JSON is at most ``MESSAGE_MAX_BYTES``
and decodes into ``AlertMessage`` (msgspec; nesting deeper than msgspec's
limit is an error, not a crash), whose id must name the brand, product, type
and window the message claims. Whatever fails is ``MalformedMessage``: the
transport counts and drops it, and the table sweep still delivers the real
alerts.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any, Literal

import msgspec

from domain.datetimes import format_datetime, parse_datetime
from domain.enums import Severity, ThreatType
from domain.errors import BadUserInput
from domain.threats import parse_alert_id
from storage import Item

__all__ = [
    "MESSAGE_KEY_LABEL",
    "MESSAGE_MAX_BYTES",
    "SKEW_SECONDS",
    "AlertMessage",
    "MalformedMessage",
    "open_body",
    "open_message",
    "seal_message",
    "sign_body",
]

MESSAGE_MAX_BYTES = 64 * 1024
"""An alert's details are a few fields; this leaves room and bounds the decode."""
SKEW_SECONDS = 5.0
_VERSION = b"1"
MESSAGE_KEY_LABEL = b"proofgate redis alert messages v1"
"""What the key is derived for from the deployment's cursor key (``CursorCodec.derive_key``)."""


class MalformedMessage(ValueError):
    """A message that is not a signed, fresh, well-formed alert of its channel."""


class AlertMessage(msgspec.Struct, frozen=True):
    """The stored alert item as ``alert_item`` writes it; unknown fields are
    ignored (and not passed on), wrong types refused."""

    PK: str
    SK: str
    GSI1PK: str
    GSI1SK: str
    entity: Literal["ThreatAlert"]
    id: str
    brandId: str
    productId: str
    type: ThreatType
    severity: Severity
    details: dict[str, Any]
    detectedAt: str
    windowStart: str
    recordedAt: str
    resolved: bool = False
    country: str | None = None
    city: str | None = None


_DECODER = msgspec.json.Decoder(AlertMessage)


def _mac(key: bytes, channel: str, sent: bytes, body: bytes) -> bytes:
    signed = b"\n".join((channel.encode(), sent, body))
    return hmac.new(key, signed, hashlib.sha256).hexdigest().encode()


def seal_message(key: bytes, channel: str, item: Item, now: float) -> bytes:
    return sign_body(key, channel, msgspec.json.encode(item), now)


def sign_body(key: bytes, channel: str, body: bytes, now: float) -> bytes:
    """A message of any body: ``seal_message``'s, or a test's malformed one."""
    sent = str(int(now * 1000)).encode()
    return b".".join((_VERSION, _mac(key, channel, sent, body), sent, body))


def open_message(key: bytes, channel: str, data: bytes, now: float, max_age: float) -> Item:
    """The alert ``data`` carries, or ``MalformedMessage`` saying why not."""
    return _validated(channel, open_body(key, channel, data, now, max_age))


def open_body(key: bytes, channel: str, data: bytes, now: float, max_age: float) -> bytes:
    """The signed, fresh body of a message of any kind (``sign_body``'s), or
    ``MalformedMessage``; what the body means is the caller's to check."""
    if len(data) > MESSAGE_MAX_BYTES + 128:
        raise MalformedMessage(f"{len(data)} bytes")
    version, mac, sent, body = [*data.split(b".", 3), b"", b"", b""][:4]
    if version != _VERSION or not sent.isdigit():
        raise MalformedMessage("not a signed alert message")
    if not hmac.compare_digest(mac, _mac(key, channel, sent, body)):
        raise MalformedMessage("bad signature")
    age = now - int(sent) / 1000
    if age > max_age or age < -SKEW_SECONDS:
        raise MalformedMessage(f"sent {age:.1f} s ago: a replay")
    return body


def _validated(channel: str, body: bytes) -> Item:
    try:
        message = _DECODER.decode(body)
        key = parse_alert_id(message.id)
        for stamp in (message.detectedAt, message.recordedAt):
            parse_datetime(stamp)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError, BadUserInput) as error:
        raise MalformedMessage(str(error)[:200]) from None
    claimed = (message.brandId, message.productId, message.type, message.windowStart)
    if (key.brand_id, key.product_id, key.type, format_datetime(key.window_start)) != claimed:
        raise MalformedMessage("the id names another alert")
    item: Item = msgspec.to_builtins(message)
    return item
