"""Bare Strawberry doing verifyProduct's durable work on stdlib ``sqlite3``.

The honest peer of the gateway's ``verifyProduct`` (docs/design.md,
Performance budgets): served as ``bench._bare`` is (ParserCache,
ValidationCache, uvloop, httptools, ``gc.freeze()``), on a SQLite file in WAL
mode with ``synchronous = NORMAL`` as the embedded store, with plain
relational tables, written the way a careful user would in a day. Per call:

- reads: the product by code, its brand (name, public key), its certificate,
  its chain in order, its active claim;
- checks: the certificate hash recomputed, its Ed25519 signature checked with
  ``cryptography`` (every call, no cache), every chain link recomputed and the
  chain head compared, the claim compared with the device's salted hash; the
  verdict and warnings by the gateway's own rule (``domain.verification``);
- one transaction: the scan row, the product's and the brand's counters, the
  day's counters of both (upserts), one outbox row;
- after commit, inline: the burst rule (the product's scans of the last hour
  counted, an alert inserted past the threshold, one per product and hour) and
  the outbox row deleted.

``bench._durable_seed`` builds the file; ``python -m bench._durable --port P
--db FILE`` serves it.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import sqlite3
import sys
import time
import uuid
from base64 import urlsafe_b64decode
from datetime import UTC, datetime
from typing import Any

import strawberry
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from strawberry.asgi import GraphQL
from strawberry.extensions import ParserCache, ValidationCache

from domain.enums import ProductStatus as Status
from domain.verification import assess

from ._bare import ProductStatus, ScanInput, ScanResult, serve, with_lifespan

__all__ = ["BURST_THRESHOLD", "SALT", "Store", "canonical", "connect", "make_schema"]

SALT = b"bench-durable-salt"
BURST_THRESHOLD = 10
"""More scans than this of one product within the hour raise an alert (the
gateway's BURST_SCAN default)."""
HOUR = 3600


def canonical(document: dict[str, Any]) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def salted(kind: str, value: str) -> str:
    return hmac.new(SALT, f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()


def connect(path: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute("PRAGMA busy_timeout = 5000")
    return connection


@strawberry.type
class Certificate:
    hash: str


@strawberry.type
class Brand:
    name: str


@strawberry.type
class Product:
    id: strawberry.ID
    name: str
    status: ProductStatus
    certificate: Certificate
    brand: Brand


@strawberry.type
class Verification:
    authentic: bool
    result: ScanResult
    product: Product | None
    signature_valid: bool
    chain_intact: bool
    claimed: bool
    is_claimant: bool
    warnings: list[str]
    scan_count: int


def _signature_valid(public_key: bytes, certificate: sqlite3.Row) -> bool:
    try:
        signature = urlsafe_b64decode(certificate["signature"] + "==")
        Ed25519PublicKey.from_public_bytes(public_key).verify(
            signature, bytes.fromhex(certificate["hash"])
        )
    except (InvalidSignature, ValueError):
        return False
    return True


def _hash_valid(product: sqlite3.Row, certificate: sqlite3.Row) -> bool:
    record = {
        "brandId": product["brand_id"],
        "createdAt": product["created_at"],
        "metadata": json.loads(product["metadata"]),
        "name": product["name"],
        "productId": product["id"],
        "sku": product["sku"],
    }
    return hashlib.sha256(canonical(record)).hexdigest() == certificate["hash"]


def _chain_intact(product: sqlite3.Row, certificate: sqlite3.Row, events: list[Any]) -> bool:
    previous = certificate["hash"]
    for expected, event in enumerate(events, start=1):
        content = {
            "actor": event["actor"],
            "data": json.loads(event["data"]),
            "latitude": event["latitude"],
            "location": event["location"],
            "longitude": event["longitude"],
            "occurredAt": event["occurred_at"],
            "previousHash": event["previous_hash"],
            "sequence": event["sequence"],
            "type": event["type"],
        }
        if event["sequence"] != expected or event["previous_hash"] != previous:
            return False
        if hashlib.sha256(canonical(content)).hexdigest() != event["hash"]:
            return False
        previous = event["hash"]
    return product["head_sequence"] == len(events) and product["head_hash"] == previous


class Store:
    """One connection, used on the event loop's thread: a verification is a
    few milliseconds of SQLite, and nothing else waits on a lock here."""

    def __init__(self, path: str) -> None:
        self.connection = connect(path)
        self.connection.row_factory = sqlite3.Row

    def _read(self, code: str) -> tuple[sqlite3.Row, ...] | None:
        """The product, its brand, its certificate and its active claim (None
        when there is none); None for an unknown code."""
        db = self.connection
        product = db.execute("SELECT * FROM products WHERE code = ?", (code,)).fetchone()
        if product is None:
            return None
        product_id = product["id"]
        brand = db.execute(
            "SELECT name, public_key FROM brands WHERE id = ?", (product["brand_id"],)
        ).fetchone()
        certificate = db.execute(
            "SELECT * FROM certificates WHERE product_id = ?", (product_id,)
        ).fetchone()
        claim = db.execute(
            "SELECT device_hash FROM claims WHERE product_id = ? AND expires_at > ?",
            (product_id, time.time()),
        ).fetchone()
        return product, brand, certificate, claim

    def _chain(self, product_id: str) -> list[sqlite3.Row]:
        return self.connection.execute(
            "SELECT * FROM events WHERE product_id = ? ORDER BY sequence", (product_id,)
        ).fetchall()

    def verify(self, code: str, scan: ScanInput | None, client_ip: str | None) -> Verification:
        read = self._read(code)
        if read is None:
            return Verification(
                authentic=False,
                result=ScanResult.UNKNOWN,
                product=None,
                signature_valid=False,
                chain_intact=False,
                claimed=False,
                is_claimant=False,
                warnings=[],
                scan_count=0,
            )
        product, brand, certificate, claim = read
        events = self._chain(product["id"])
        device = scan.device_fingerprint if scan else None
        device_hash = salted("device", device) if device else None
        is_claimant = claim is not None and hmac.compare_digest(
            claim["device_hash"], device_hash or ""
        )
        signature_valid = _signature_valid(brand["public_key"], certificate)
        chain_intact = _chain_intact(product, certificate, events)
        outcome = assess(
            found=True,
            hash_valid=_hash_valid(product, certificate),
            signature_valid=signature_valid,
            chain_intact=chain_intact,
            status=Status(product["status"]),
            claimed_by_other=claim is not None and not is_claimant,
        )
        result = ScanResult(outcome.result.value)
        ip_hash = salted("ip", client_ip) if client_ip else None
        self._record(product, result, (device_hash, ip_hash), scan)
        return Verification(
            authentic=outcome.authentic,
            result=result,
            product=Product(
                id=strawberry.ID(product["id"]),
                name=product["name"],
                status=ProductStatus(product["status"]),
                certificate=Certificate(hash=certificate["hash"]),
                brand=Brand(name=brand["name"]),
            ),
            signature_valid=signature_valid,
            chain_intact=chain_intact,
            claimed=claim is not None,
            is_claimant=is_claimant,
            warnings=list(outcome.warnings),
            scan_count=product["scan_count"] + 1,
        )

    def _record(
        self,
        product: sqlite3.Row,
        result: ScanResult,
        hashes: tuple[str | None, str | None],
        scan: ScanInput | None,
    ) -> None:
        db = self.connection
        now = time.time()
        day = datetime.fromtimestamp(now, UTC).date().isoformat()
        scan_id = uuid.uuid4().hex
        product_id, brand_id = product["id"], product["brand_id"]
        country = scan.country if scan else None
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "INSERT INTO scans (id, product_id, brand_id, scanned_at, result, country, city, "
                "device_hash, ip_hash, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    scan_id,
                    product_id,
                    brand_id,
                    now,
                    result.value,
                    country,
                    scan.city if scan else None,
                    *hashes,
                    scan.user_agent if scan else None,
                ),
            )
            db.execute(
                "UPDATE products SET scan_count = scan_count + 1 WHERE id = ?", (product_id,)
            )
            db.execute("UPDATE brands SET scan_count = scan_count + 1 WHERE id = ?", (brand_id,))
            for table, owner in (("product_days", product_id), ("brand_days", brand_id)):
                db.execute(
                    f"INSERT INTO {table} (owner, day, scans, {result.value.lower()}) "
                    "VALUES (?, ?, 1, 1) ON CONFLICT (owner, day) DO UPDATE SET "
                    f"scans = scans + 1, {result.value.lower()} = {result.value.lower()} + 1",
                    (owner, day),
                )
            outbox = db.execute(
                "INSERT INTO outbox (scan_id, product_id, brand_id, scanned_at) "
                "VALUES (?, ?, ?, ?)",
                (scan_id, product_id, brand_id, now),
            ).lastrowid
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._burst_rule(outbox, product_id, brand_id, now)

    def _burst_rule(self, outbox: int | None, product_id: str, brand_id: str, now: float) -> None:
        db = self.connection
        db.execute("BEGIN IMMEDIATE")
        try:
            (recent,) = db.execute(
                "SELECT count(*) FROM scans WHERE product_id = ? AND scanned_at > ?",
                (product_id, now - HOUR),
            ).fetchone()
            if recent > BURST_THRESHOLD:
                window = int(now) // HOUR * HOUR
                db.execute(
                    "INSERT OR IGNORE INTO alerts (id, brand_id, product_id, type, window_start, "
                    "scans, created_at) VALUES (?, ?, ?, 'BURST_SCAN', ?, ?, ?)",
                    (
                        f"{product_id}:BURST_SCAN:{window}",
                        brand_id,
                        product_id,
                        window,
                        recent,
                        now,
                    ),
                )
            db.execute("DELETE FROM outbox WHERE id = ?", (outbox,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


def make_schema(store: Store) -> strawberry.Schema:
    @strawberry.type
    class Query:
        @strawberry.field
        def health(self) -> bool:
            return True

    @strawberry.type
    class Mutation:
        @strawberry.mutation
        def verify_product(
            self, info: strawberry.Info, code: str, scan: ScanInput | None = None
        ) -> Verification:
            client = info.context["request"].client
            return store.verify(code, scan, client.host if client else None)

    return strawberry.Schema(
        query=Query,
        mutation=Mutation,
        extensions=[lambda: ParserCache(maxsize=100), lambda: ValidationCache(maxsize=100)],
    )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench._durable")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db", required=True, help="a file bench._durable_seed built")
    args = parser.parse_args(argv)
    serve(with_lifespan(GraphQL(make_schema(Store(args.db)))), args.port)


if __name__ == "__main__":
    main(sys.argv[1:])
