"""Running a tool: its registered operation, through the schema every
GraphQL request goes through, so limits, cost, rate limits, trusted
documents, access control and error mapping apply unchanged
(docs/design.md, "MCP tools").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import strawberry

from api.mcp.tools import ToolSpec
from api.observability.observation import new_request_id
from api.wire.errors import error_extensions
from api.wire.json_response import encode_json
from domain.errors import NotFound, ProofgateError, Unauthenticated
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import Principal, Role
from services.context import Services

__all__ = ["ToolRunner", "refusal"]


@dataclass(frozen=True)
class ToolRunner:
    schema: strawberry.Schema
    services: Services
    specs: Mapping[str, ToolSpec]

    def tools(self, principal: Principal) -> list[types.Tool]:
        """Only the tools ``principal`` can call (``offered``)."""
        return [_tool(s) for s in self.specs.values() if offered(s, principal)]

    async def call(
        self,
        principal: Principal,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        request: Any = None,
        request_id: str | None = None,
    ) -> types.CallToolResult:
        spec = self.specs.get(name)
        if spec is None:
            return refusal(NotFound(f"No tool {name}", hint="tools/list names them."))
        if principal.role is Role.ANONYMOUS and not spec.public:
            return refusal(
                Unauthenticated(
                    f"The tool {name} needs an API key",
                    hint="Send Authorization: Bearer <key> (over stdio: PROOFGATE_MCP_KEY).",
                )
            )
        context = RequestContext(
            services=self.services,
            principal=principal,
            loaders=Loaders(self.services.storage, principal.tenant),
            request_id=request_id or new_request_id(),
            request=request,
        )
        result = await self.schema.execute(
            spec.operation.text,
            variable_values=dict(arguments or {}),
            context_value=context,
            operation_name=spec.operation.name,
        )
        if result.errors:
            errors = [error.formatted for error in result.errors]
            return _failure(errors, result.data)
        data = result.data or {}
        return types.CallToolResult(
            content=[types.TextContent(text=encode_json(data))], structured_content=data
        )


def _tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema,
        annotations=types.ToolAnnotations.model_validate(spec.annotations),
    )


def refusal(error: ProofgateError) -> types.CallToolResult:
    """A tool error for what was refused before the operation ran."""
    return _failure([{"message": error.message, "extensions": error_extensions(error)}], None)


def _failure(errors: list[Any], data: Any) -> types.CallToolResult:
    """The GraphQL errors as they would be answered over HTTP, codes and all;
    the text leads with the codes, for an agent that reads only the text."""
    codes = ", ".join(str((e.get("extensions") or {}).get("code")) for e in errors)
    body: dict[str, Any] = {"errors": errors}
    if data is not None:
        body["data"] = data
    return types.CallToolResult(
        content=[types.TextContent(text=f"{codes}: {encode_json(body)}")],
        structured_content=body,
        is_error=True,
    )


def offered(spec: ToolSpec, principal: Principal) -> bool:
    """Anonymous agents and ingest keys (which read nothing) see the public
    tools; PARTNER keys, read-only, the tools that change nothing too; BRAND
    and ADMIN keys every tool. A tool listed is one the key may call."""
    if spec.public:
        return True
    if principal.role in (Role.ANONYMOUS, Role.INTEGRATION):
        return False
    return principal.role is not Role.PARTNER or spec.annotations.get("readOnlyHint", False)
