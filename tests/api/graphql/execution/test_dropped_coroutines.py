"""A field that ends the operation (a budget run out) while its siblings'
coroutines already exist: graphql-core settles them in the background, where
they outlive the response, and one the event loop closes before it runs is
never awaited (graphql-core #269; issue 27). The answer now waits for them."""

from __future__ import annotations

import asyncio
import secrets

import pytest
from _limits import serve

from api.settings.limits import Execution, Limits
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import Principal, Role

# brands and health resolve asynchronously, reading the store; viewer's role,
# a leaf, is completed at once and runs the response budget out while their
# coroutines exist.
QUERY = "{ brands(first: 1) { edges { node { id } } } health { status } viewer { role } }"


@pytest.mark.parametrize("execution", list(Execution))
async def test_no_sibling_outlives_an_operation_a_budget_ended(execution: Execution) -> None:
    async with serve(Limits(execution=execution, max_response_bytes=16)) as gateway:
        graphql = gateway.app.state.graphql
        services = graphql.services
        admin = Principal(Role.ADMIN)
        for _ in range(5):
            context = RequestContext(
                services=services,
                principal=admin,
                loaders=Loaders(services.storage, admin.tenant),
                request_id=secrets.token_hex(8),
            )
            before = asyncio.all_tasks()
            result = await graphql.schema.execute(QUERY, context_value=context)
            left = [task for task in asyncio.all_tasks() - before if not task.done()]
            assert result.data is None
            assert result.errors is not None
            assert "16 bytes" in result.errors[0].message
            assert left == []
