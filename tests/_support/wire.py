"""Intercepting a driver's data-plane calls, for faults moto cannot produce."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest

from storage.dynamodb import DynamoDriver

__all__ = ["Handler", "Send", "intercept"]

Send = Callable[[Mapping[str, Any]], Awaitable[dict[str, Any]]]
Handler = Callable[[dict[str, Any], Send], Awaitable[dict[str, Any]]]


def intercept(
    monkeypatch: pytest.MonkeyPatch, driver: DynamoDriver, operation: str, handler: Handler
) -> None:
    """Route ``operation``'s calls through ``handler(parameters, send)``; other
    operations, and earlier interceptions, go through as before."""
    real = driver.wire.call

    async def call(name: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
        if name != operation:
            return await real(name, parameters)

        async def send(sent: Mapping[str, Any]) -> dict[str, Any]:
            return await real(name, sent)

        return await handler(dict(parameters), send)

    monkeypatch.setattr(driver.wire, "call", call)
