"""The MCP tools over stdio, for desktop agents (``proofgate mcp``).

The process is a gateway without HTTP: it opens the same store with the same
settings (and runs a relay, as every gateway process does), and acts with the
key in ``PROOFGATE_MCP_KEY``, checked at start-up and again on every call, so
a revoked key stops working at once. Only JSON-RPC goes to stdout; logs go to
stderr (docs/design.md, "MCP tools").
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from domain.errors import ConfigurationError, ProofgateError
from services.auth import Principal, authenticate

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from api.settings.gateway import Settings

__all__ = ["serve_stdio"]

logger = logging.getLogger("proofgate.mcp")


async def serve_stdio(settings: Settings, key: str | None) -> None:
    """The tools over this process's stdin and stdout until the agent closes them."""
    from mcp.server.stdio import stdio_server

    from api.graphql.schema import build_schema
    from api.mcp.runner import ToolRunner
    from api.mcp.server import build_server
    from api.mcp.tools import tool_specs
    from api.operations.defaults import default_documents
    from api.operations.registry import load_registry
    from api.runtime.backend import open_storage
    from api.runtime.cache_channel import running_cache_channel
    from api.runtime.pipeline import build_pipeline, running_pipeline
    from api.runtime.resolver_services import build_services

    operations = settings.operations
    schema = build_schema(
        settings.limits,
        lambda built: load_registry(
            built, settings.limits, operations.directory, default_documents()
        ),
        operations.trusted_documents,
        redis_url=settings.pipeline.redis_url,
    )
    assert schema.operations is not None
    tools = tool_specs(schema.graphql_schema, schema.operations)
    storage = await open_storage(settings)
    try:
        pipeline = build_pipeline(settings, storage)
        services = build_services(settings, storage, pipeline)
        authorization = None if key is None else f"Bearer {key}"

        async def identify(ctx: ServerRequestContext[Any, Any] | None = None) -> Principal:
            return await authenticate(storage, authorization, services.admin_key_hash)

        try:
            principal = await identify()
        except ProofgateError as error:
            raise ConfigurationError(
                f"Invalid PROOFGATE_MCP_KEY: {error.message}",
                hint="Set it to a live API key, or leave it unset for the public tools only.",
            ) from None
        server = build_server(ToolRunner(schema, services, tools), identify)
        async with (
            running_cache_channel(settings, storage),
            running_pipeline(pipeline),
            stdio_server() as (read, write),
        ):
            logger.info("MCP over stdio: %d tools, acting as %s", len(tools), principal.role)
            await server.run(read, write, server.create_initialization_options())
    finally:
        await storage.close()
