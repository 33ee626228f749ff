"""Demo data for ``proofgate serve --demo`` (and ``make run``).

Loaded through the real GraphQL operations, with the real keys, so the demo
exercises what a client would: validation, access control, credits, hash
chains, scans and the threat pipeline. Loading converges rather than
replays: each step first reads what is already there (through the API) and
does only what is missing, so a second start, or a start after one that
crashed half-way, never duplicates anything.

API keys are shown once by the API, so the demo keeps the ones it was given
in ``<data dir>/demo-keys.json`` (mode 0600), to print them again on the
next start.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

import strawberry

from domain.errors import ErrorCode, ProofgateError
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import ANONYMOUS, Principal, authenticate
from services.context import Services

from ._demo_catalog import CATALOG, BrandPlan, ProductPlan
from .settings import Settings

__all__ = ["DEMO_KEYS_FILE", "Demo", "DemoBrand", "load_demo", "render_demo", "start_demo"]

DEMO_KEYS_FILE = "demo-keys.json"
_LOCK_FILE = ".demo.lock"
_PRIVATE = 0o600
_HINT = "Delete the data directory (or its demo-keys.json) to load the demo afresh."

_BRAND = "query($id: ID!) { brand(id: $id) { id } }"
_REGISTER_BRAND = """
mutation($input: RegisterBrandInput!) { registerBrand(input: $input) { apiKey brand { id } } }
"""
_BRAND_PRODUCTS = """
query($id: ID!) {
  brand(id: $id) {
    ledger { balance { available } }
    products(first: 100) { edges { node { id sku verificationCode } } }
  }
}
"""
_GRANT = """
mutation($brandId: ID!, $amount: Decimal!, $key: String!) {
  grantCredits(brandId: $brandId, amount: $amount, idempotencyKey: $key, memo: "Demo") { id }
}
"""
_REGISTER_PRODUCTS = """
mutation($inputs: [RegisterProductInput!]!, $key: String!) {
  registerProducts(inputs: $inputs, idempotencyKey: $key) { id sku verificationCode }
}
"""
_PRODUCT_STATE = """
query($id: ID!) {
  product(id: $id) {
    status scanCount claim { claimedAt }
    provenance(first: 100) { edges { cursor } }
  }
}
"""
_ADD_EVENT = """
mutation($id: ID!, $input: ProvenanceEventInput!) {
  addProvenanceEvent(productId: $id, input: $input) { sequence }
}
"""
_CLAIM = """
mutation($code: String!, $device: String!) {
  claimProduct(code: $code, deviceFingerprint: $device) { claimedAt }
}
"""
_TRANSFER = """
mutation($id: ID!, $to: String!) { transferProduct(productId: $id, to: $to) { status } }
"""
_RECALL = """
mutation($id: ID!, $reason: String!) { recallProduct(productId: $id, reason: $reason) { status } }
"""
_VERIFY = """
mutation($code: String!, $scan: ScanInput) { verifyProduct(code: $code, scan: $scan) { result } }
"""


@dataclass(frozen=True)
class DemoBrand:
    slug: str
    id: str
    name: str
    plan: str
    api_key: str = field(repr=False)


@dataclass(frozen=True)
class Demo:
    brands: tuple[DemoBrand, ...]
    verification_code: str
    """A code printed on a demo product, for verifyProduct."""

    @property
    def brand(self) -> DemoBrand:
        """The brand whose key the explorer and the banner offer."""
        return self.brands[0]


@dataclass(frozen=True)
class _Result:
    data: dict[str, Any] | None
    errors: tuple[tuple[str, str], ...]
    """(extensions.code, message) of each error."""

    @property
    def codes(self) -> list[str]:
        return [code for code, _ in self.errors]


class _Client:
    """Runs operations the way the HTTP endpoint does: the key is
    authenticated, and each operation gets a fresh context and loaders."""

    def __init__(self, schema: strawberry.Schema, services: Services) -> None:
        self._schema = schema
        self._services = services

    async def principal(self, key: str) -> Principal:
        return await authenticate(
            self._services.storage, f"Bearer {key}", self._services.admin_key_hash
        )

    async def execute(
        self, query: str, variables: Mapping[str, Any], principal: Principal
    ) -> _Result:
        context = RequestContext(
            services=self._services,
            principal=principal,
            loaders=Loaders(self._services.storage, principal.tenant),
            request_id=secrets.token_hex(8),
        )
        result = await self._schema.execute(
            query, variable_values=dict(variables), context_value=context
        )
        errors = tuple(
            (str((error.extensions or {}).get("code", "")), error.message)
            for error in result.errors or ()
        )
        return _Result(result.data, errors)

    async def data(
        self, query: str, variables: Mapping[str, Any], principal: Principal
    ) -> dict[str, Any]:
        result = await self.execute(query, variables, principal)
        if result.errors or result.data is None:
            problems = "; ".join(message for _, message in result.errors) or "no data"
            raise ProofgateError(f"Loading the demo data failed: {problems}", hint=_HINT)
        return result.data


async def load_demo(
    schema: strawberry.Schema,
    services: Services,
    settings: Settings,
    catalog: Sequence[BrandPlan] = CATALOG,
) -> Demo:
    """The demo brands, registering and filling in whatever is missing."""
    client = _Client(schema, services)
    admin = await client.principal(settings.admin_key)
    path = settings.data_dir / DEMO_KEYS_FILE
    with _locked(settings.data_dir):
        saved = _read_keys(path)
        brands: list[DemoBrand] = []
        codes: list[str] = []
        for plan in catalog:
            brand = await _ensure_brand(client, admin, plan, saved.get(plan.slug))
            saved[plan.slug] = brand
            _write_keys(path, saved)
            codes.extend(await _ensure_products(client, admin, plan, brand))
            brands.append(brand)
    return Demo(brands=tuple(brands), verification_code=codes[0])


async def _ensure_brand(
    client: _Client, admin: Principal, plan: BrandPlan, saved: DemoBrand | None
) -> DemoBrand:
    if saved is not None:
        found = await client.execute(_BRAND, {"id": saved.id}, admin)
        if not found.errors:
            return saved
        if found.codes != [ErrorCode.NOT_FOUND.value]:
            await client.data(_BRAND, {"id": saved.id}, admin)
    data = await client.data(_REGISTER_BRAND, {"input": plan.as_input()}, admin)
    payload = data["registerBrand"]
    return DemoBrand(plan.slug, payload["brand"]["id"], plan.name, plan.plan, payload["apiKey"])


async def _ensure_products(
    client: _Client, admin: Principal, plan: BrandPlan, brand: DemoBrand
) -> list[str]:
    """The verification codes of the brand's demo products, in catalogue order."""
    key = await client.principal(brand.api_key)
    data = await client.data(_BRAND_PRODUCTS, {"id": brand.id}, key)
    existing = {edge["node"]["sku"]: edge["node"] for edge in data["brand"]["products"]["edges"]}
    missing = [p for p in plan.products if p.sku not in existing]
    if missing:
        available = Decimal(data["brand"]["ledger"]["balance"]["available"])
        if plan.credits and available < len(missing):
            amount = str(plan.credits)
            grant = {"brandId": brand.id, "amount": amount, "key": f"demo-credits-{brand.id}"}
            await client.data(_GRANT, grant, admin)
        inputs = [p.as_input(brand.id) for p in missing]
        # Keyed by what is registered: a retry of this very call replays it.
        skus = hashlib.sha256(",".join(p.sku for p in missing).encode()).hexdigest()[:16]
        created = await client.data(
            _REGISTER_PRODUCTS, {"inputs": inputs, "key": f"demo-products-{skus}"}, key
        )
        existing.update({p["sku"]: p for p in created["registerProducts"]})
    for product in plan.products:
        await _ensure_history(client, key, product, existing[product.sku])
    return [existing[p.sku]["verificationCode"] for p in plan.products]


async def _ensure_history(
    client: _Client, key: Principal, plan: ProductPlan, product: Mapping[str, Any]
) -> None:
    """Events, then the claim, transfer or recall, then the scans: each step
    counted against what the product already shows."""
    state = (await client.data(_PRODUCT_STATE, {"id": product["id"]}, key))["product"]
    code = product["verificationCode"]
    for event in plan.events[len(state["provenance"]["edges"]) :]:
        await client.data(_ADD_EVENT, {"id": product["id"], "input": event.as_input()}, key)
    if plan.claimed_by is not None and state["claim"] is None:
        await client.data(_CLAIM, {"code": code, "device": plan.claimed_by}, ANONYMOUS)
    if plan.transfer_to is not None and state["status"] == "ACTIVE":
        await client.data(_TRANSFER, {"id": product["id"], "to": plan.transfer_to}, key)
    if plan.recall_reason is not None and state["status"] != "RECALLED":
        await client.data(_RECALL, {"id": product["id"], "reason": plan.recall_reason}, key)
    for scan in plan.scans[state["scanCount"] :]:
        await client.data(_VERIFY, {"code": code, "scan": scan.as_input()}, ANONYMOUS)


def render_demo(demo: Demo, settings: Settings) -> str:
    """What ``serve --demo`` prints once the demo data is in place."""
    lines = ["Demo data loaded:"]
    for brand in demo.brands:
        lines.append(f"  {brand.name} ({brand.plan}, id {brand.id})")
        lines.append(f"    API key: {brand.api_key}")
    lines += [
        f"  Verification code to try: {demo.verification_code}",
        f"  Keys are kept in {settings.data_dir / DEMO_KEYS_FILE}",
        f"  Explorer: open {settings.url}/graphql in a browser",
        "  Try:",
        f"    curl -s {settings.url}/graphql -H 'Content-Type: application/json' \\",
        f"      -H 'Authorization: Bearer {demo.brand.api_key}' \\",
        '      -d \'{"query": "{ viewer { role brandId } }"}\'',
    ]
    return "\n".join(lines)


async def start_demo(
    schema: strawberry.Schema, services: Services, settings: Settings, out: TextIO | None = None
) -> Demo:
    """Loads the demo and prints its keys: the lifespan's step under ``--demo``."""
    demo = await load_demo(schema, services, settings)
    print(render_demo(demo, settings), file=out or sys.stdout, flush=True)
    return demo


@contextlib.contextmanager
def _locked(data_dir: Path) -> Iterator[None]:
    """Two processes started together on one data directory load the demo once."""
    data_dir.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(data_dir / _LOCK_FILE, os.O_RDWR | os.O_CREAT, _PRIVATE)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def _read_keys(path: Path) -> dict[str, DemoBrand]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    try:
        entries = json.loads(text)["brands"]
        return {slug: DemoBrand(**entry) for slug, entry in entries.items()}
    except (ValueError, KeyError, TypeError):
        raise ProofgateError(f"Demo key file {path} is not readable", hint=_HINT) from None


def _write_keys(path: Path, brands: Mapping[str, DemoBrand]) -> None:
    """Replaced whole, so a crash never leaves half a file."""
    body = json.dumps({"brands": {slug: asdict(b) for slug, b in brands.items()}}, indent=2)
    draft = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, _PRIVATE)
    try:
        os.fchmod(descriptor, _PRIVATE)
        os.write(descriptor, (body + "\n").encode())
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    os.replace(draft, path)
