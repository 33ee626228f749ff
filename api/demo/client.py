"""Runs the demo's operations in process, as the HTTP endpoint would."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import strawberry

from api.demo.keys import HINT
from domain.errors import ProofgateError
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import Principal, authenticate
from services.context import Services

__all__ = ["DemoClient", "Result"]


@dataclass(frozen=True)
class Result:
    data: dict[str, Any] | None
    errors: tuple[tuple[str, str], ...]
    """(extensions.code, message) of each error."""

    @property
    def codes(self) -> list[str]:
        return [code for code, _ in self.errors]


class DemoClient:
    """Runs operations the way the HTTP endpoint does: the key is
    authenticated, and each operation gets a fresh context and loaders."""

    def __init__(self, schema: strawberry.Schema, services: Services) -> None:
        self._schema = schema
        self._services = services
        self.mutations = 0
        """Mutations run: none means the demo was already in the store."""

    async def principal(self, key: str) -> Principal:
        return await authenticate(
            self._services.storage, f"Bearer {key}", self._services.admin_key_hash
        )

    async def execute(
        self,
        query: str,
        variables: Mapping[str, Any],
        principal: Principal,
        at: datetime | None = None,
    ) -> Result:
        """``at``: run as of that time (the services' clock fixed to it)."""
        services = self._services if at is None else replace(self._services, clock=lambda: at)
        self.mutations += query.lstrip().startswith("mutation")
        context = RequestContext(
            services=services,
            principal=principal,
            loaders=Loaders(self._services.storage, principal.tenant),
            request_id=secrets.token_hex(8),
            from_client=False,  # loads under trusted documents' enforce too
        )
        result = await self._schema.execute(
            query, variable_values=dict(variables), context_value=context
        )
        errors = tuple(
            (str((error.extensions or {}).get("code", "")), error.message)
            for error in result.errors or ()
        )
        return Result(result.data, errors)

    async def data(
        self,
        query: str,
        variables: Mapping[str, Any],
        principal: Principal,
        at: datetime | None = None,
    ) -> dict[str, Any]:
        result = await self.execute(query, variables, principal, at)
        if result.errors or result.data is None:
            problems = "; ".join(message for _, message in result.errors) or "no data"
            raise ProofgateError(f"Loading the demo data failed: {problems}", hint=HINT)
        return result.data
