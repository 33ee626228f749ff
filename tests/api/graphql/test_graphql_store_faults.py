"""A real ``proofgate serve`` on the DynamoDB backend whose store answers 500
after applying every third transaction (a proxy in front of moto's server)."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from pathlib import Path

import pytest
from _live import ADMIN_KEY, Gateway

from api.cli.secrets import init_secrets
from storage.dynamodb import create_table
from tests._support.faulty_dynamo import faulty_dynamo

REGISTER = """mutation($input: RegisterProductInput!) {
    registerProduct(input: $input) { id }
}"""
BALANCE = """query($id: ID!) {
    brand(id: $id) { stats { productCount } ledger { balance(currency: "CREDIT") { available } } }
}"""


@pytest.mark.slow
async def test_concurrent_registrations_survive_5xx_after_apply(
    moto_endpoint: str, tmp_path: Path
) -> None:
    """FREE plan: 10 credits, fee 1. The retried transactions carry their token,
    so none applies twice and none is reported as an internal error."""
    table = f"faults-{uuid.uuid4().hex[:8]}"
    await create_table(table_name=table, region="us-east-1", endpoint_url=moto_endpoint)
    init_secrets(tmp_path)  # what a DynamoDB process needs to start
    with faulty_dynamo(moto_endpoint, fail_every=3) as proxy:
        gateway = Gateway(
            tmp_path,
            PROOFGATE_BACKEND="dynamodb",
            PROOFGATE_DYNAMODB_ENDPOINT=proxy.url,
            PROOFGATE_TABLE=table,
            PROOFGATE_AWS_REGION="us-east-1",
        )
        await gateway.start()
        try:
            brand_id, key = await gateway.brand()

            async def register(n: int) -> str:
                body = await gateway.execute(
                    REGISTER, {"input": {"brandId": brand_id, "name": f"P{n}"}}, key
                )
                return "OK" if "errors" not in body else body["errors"][0]["extensions"]["code"]

            outcomes = Counter(await asyncio.gather(*(register(n) for n in range(14))))
            brand = (await gateway.data(BALANCE, {"id": brand_id}, ADMIN_KEY))["brand"]
        finally:
            await gateway.stop()

    assert outcomes == {"OK": 10, "INSUFFICIENT_CREDITS": 4}
    assert brand["stats"]["productCount"] == 10
    assert brand["ledger"]["balance"]["available"] == "0.00"
    assert proxy.failed and len(set(proxy.tokens)) < len(proxy.tokens)
