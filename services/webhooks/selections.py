"""A webhook's own selection: a GraphQL subscription document on
``threatAlerts`` whose result, run for each alert, is the delivery's body
(docs/design.md, Webhook selections).

Checking and running a document needs the schema, which lives above the
services; the gateway hands its implementation of ``WebhookSelections`` to
the services and the pipeline when it builds them.
"""

from __future__ import annotations

from typing import Any, Protocol

from storage import Item

from ..auth import Principal

__all__ = ["SELECTION_MAX_BYTES", "WebhookSelections"]

SELECTION_MAX_BYTES = 16 * 1024
"""A webhook's document is stored in its item and parsed by every process
that delivers for it."""


class WebhookSelections(Protocol):
    def check(self, text: str, brand_id: str, principal: Principal) -> None:
        """Raises (BAD_USER_INPUT, QUERY_TOO_COMPLEX, PERSISTED_QUERY_NOT_ALLOWED)
        unless ``text`` is a subscription on ``threatAlerts`` of ``brand_id``
        that ``principal`` may register."""

    async def run(self, webhook: Item, alert: Item, delivery_id: str) -> dict[str, Any]:
        """The webhook's selection for ``alert``, as the brand's keys would
        get it: ``{"data": ...}`` and ``"errors"`` if any."""
