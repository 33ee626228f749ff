"""auditLog(days): operator only, every mutation recorded, N days read in parallel."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from domain.datetimes import parse_datetime
from services.audit.items import audit_entry
from services.auth import Principal, Role

AUDIT = """query($days: Int!, $first: Int!) {
    auditLog(days: $days, first: $first) { id occurredAt action actorRole actorBrandId
        actorKeyId brandId targetIds }
}"""


async def entries(gateway, days: int = 1, first: int = 100) -> list[dict]:
    data = await gateway.data(AUDIT, {"days": days, "first": first}, key=gateway.admin_key)
    log: list[dict] = data["auditLog"]
    return log


async def test_every_mutation_is_recorded_newest_first(gateway) -> None:
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    key = await gateway.create_key(brand, "PARTNER")
    key_id = hashlib.sha256(key.encode()).hexdigest()
    await gateway.data(
        "mutation($id: ID!) { revokeApiKey(id: $id) { id } }", {"id": key_id}, key=brand.key
    )
    mine = [e for e in await entries(gateway) if e["brandId"] == brand.id]
    assert [e["action"] for e in mine] == [
        "revokeApiKey",
        "createApiKey",
        "registerProduct",
        "registerBrand",
    ]
    assert [e["targetIds"] for e in mine] == [[key_id], [key_id], [product["id"]], [brand.id]]
    assert mine[-1]["actorRole"] == "ADMIN" and mine[-1]["actorBrandId"] is None
    brand_key_id = hashlib.sha256(brand.key.encode()).hexdigest()
    assert all(
        (e["actorRole"], e["actorBrandId"], e["actorKeyId"]) == ("BRAND", brand.id, brand_key_id)
        for e in mine[:3]
    )
    times = [parse_datetime(e["occurredAt"]) for e in mine]
    assert times == sorted(times, reverse=True)


async def test_failed_mutations_leave_no_entry(gateway) -> None:
    brand = await gateway.register_brand()
    await gateway.register_product(brand, name="Dup")
    body = await gateway.execute(
        """mutation($b: ID!) { registerProduct(input: {brandId: $b, name: "Dup"}) { id } }""",
        {"b": brand.id},
        key=brand.key,
    )
    assert gateway.codes(body) == ["CONFLICT"]
    actions = [e["action"] for e in await entries(gateway) if e["brandId"] == brand.id]
    assert actions == ["registerProduct", "registerBrand"]


async def test_audit_log_is_admin_only(gateway) -> None:
    brand = await gateway.register_brand()
    variables = {"days": 1, "first": 10}
    assert gateway.codes(await gateway.execute(AUDIT, variables)) == ["UNAUTHENTICATED"]
    assert gateway.codes(await gateway.execute(AUDIT, variables, key=brand.key)) == ["FORBIDDEN"]


async def test_days_and_first_are_bounded(gateway) -> None:
    for variables in (
        {"days": 0, "first": 10},
        {"days": 32, "first": 10},
        {"days": 1, "first": 0},
        {"days": 1, "first": 101},
    ):
        body = await gateway.execute(AUDIT, variables, key=gateway.admin_key)
        assert gateway.codes(body) == ["BAD_USER_INPUT"], variables


async def test_n_days_are_n_parallel_queries(gateway) -> None:
    await gateway.register_brand()
    body = await gateway.execute(AUDIT, {"days": 7, "first": 5}, key=gateway.admin_key, trace=True)
    calls = body["extensions"]["trace"]["calls"]
    assert [(c["operation"], c["accessPattern"]) for c in calls] == [("Query", "AP14")] * 7
    assert len(body["data"]["auditLog"]) <= 5


async def test_older_days_are_read_only_when_asked_for(gateway) -> None:
    storage = gateway.app.state.storage
    admin = Principal(Role.ADMIN)
    marker = f"marker-{datetime.now(UTC).timestamp()}"
    at = datetime.now(UTC) - timedelta(days=3)
    await storage.transact_write([audit_entry(admin, marker, at, brand_id=None, target_ids=[])])
    assert marker not in [e["action"] for e in await entries(gateway, days=3)]
    assert marker in [e["action"] for e in await entries(gateway, days=4)]
