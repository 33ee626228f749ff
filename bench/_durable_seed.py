"""The durable baseline's file (``bench._durable``): its tables, and one brand
with the gateway run's products, each with a signed certificate and a chain
of ``events`` provenance events, under the codes the gateway issued, so one
set of requests drives both servers alike."""

from __future__ import annotations

import hashlib
from base64 import urlsafe_b64encode
from collections.abc import Sequence
from datetime import UTC, datetime

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ._durable import canonical, connect

__all__ = ["TABLES", "claim", "dump", "seed"]

BRAND_ID = "brand-1"
TABLES = """
CREATE TABLE brands (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, public_key BLOB NOT NULL,
  scan_count INTEGER NOT NULL DEFAULT 0);
CREATE TABLE products (
  id TEXT PRIMARY KEY, code TEXT NOT NULL UNIQUE, brand_id TEXT NOT NULL REFERENCES brands,
  name TEXT NOT NULL, sku TEXT, status TEXT NOT NULL, created_at TEXT NOT NULL,
  metadata TEXT NOT NULL, head_sequence INTEGER NOT NULL, head_hash TEXT NOT NULL,
  scan_count INTEGER NOT NULL DEFAULT 0);
CREATE TABLE certificates (
  product_id TEXT PRIMARY KEY REFERENCES products, hash TEXT NOT NULL,
  signature TEXT NOT NULL, algorithm TEXT NOT NULL);
CREATE TABLE events (
  product_id TEXT NOT NULL REFERENCES products, sequence INTEGER NOT NULL, type TEXT NOT NULL,
  occurred_at TEXT NOT NULL, actor TEXT, location TEXT, latitude TEXT, longitude TEXT,
  data TEXT NOT NULL, previous_hash TEXT NOT NULL, hash TEXT NOT NULL,
  PRIMARY KEY (product_id, sequence)) WITHOUT ROWID;
CREATE TABLE claims (
  product_id TEXT PRIMARY KEY REFERENCES products, device_hash TEXT NOT NULL,
  expires_at REAL NOT NULL);
CREATE TABLE scans (
  id TEXT PRIMARY KEY, product_id TEXT NOT NULL, brand_id TEXT NOT NULL,
  scanned_at REAL NOT NULL, result TEXT NOT NULL, country TEXT, city TEXT,
  device_hash TEXT, ip_hash TEXT, user_agent TEXT);
CREATE INDEX scans_by_product ON scans (product_id, scanned_at);
CREATE TABLE product_days (
  owner TEXT NOT NULL, day TEXT NOT NULL, scans INTEGER NOT NULL DEFAULT 0,
  authentic INTEGER NOT NULL DEFAULT 0, suspicious INTEGER NOT NULL DEFAULT 0,
  counterfeit INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (owner, day)) WITHOUT ROWID;
CREATE TABLE brand_days (
  owner TEXT NOT NULL, day TEXT NOT NULL, scans INTEGER NOT NULL DEFAULT 0,
  authentic INTEGER NOT NULL DEFAULT 0, suspicious INTEGER NOT NULL DEFAULT 0,
  counterfeit INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (owner, day)) WITHOUT ROWID;
CREATE TABLE outbox (
  id INTEGER PRIMARY KEY, scan_id TEXT NOT NULL, product_id TEXT NOT NULL,
  brand_id TEXT NOT NULL, scanned_at REAL NOT NULL);
CREATE TABLE alerts (
  id TEXT PRIMARY KEY, brand_id TEXT NOT NULL, product_id TEXT NOT NULL, type TEXT NOT NULL,
  window_start INTEGER NOT NULL, scans INTEGER NOT NULL, created_at REAL NOT NULL);
"""


def _stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _sha256(document: dict[str, object]) -> str:
    return hashlib.sha256(canonical(document)).hexdigest()


def _product(index: int, code: str, key: Ed25519PrivateKey) -> tuple[tuple[object, ...], ...]:
    product_id, created_at = f"product-{index:06d}", _stamp()
    record = {
        "brandId": BRAND_ID,
        "createdAt": created_at,
        "metadata": {},
        "name": f"Product {index}",
        "productId": product_id,
        "sku": f"SKU-{index:05d}",
    }
    certificate = _sha256(record)
    signature = urlsafe_b64encode(key.sign(bytes.fromhex(certificate))).rstrip(b"=").decode()
    return (
        (product_id, code, BRAND_ID, record["name"], record["sku"], "ACTIVE", created_at, "{}"),
        (product_id, certificate, signature, "Ed25519"),
    )


def _events(product_id: str, previous: str, count: int) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    for sequence in range(1, count + 1):
        content = {
            "actor": None,
            "data": {},
            "latitude": None,
            "location": "Rotterdam",
            "longitude": None,
            "occurredAt": _stamp(),
            "previousHash": previous,
            "sequence": sequence,
            "type": "SHIPPED",
        }
        digest = _sha256(content)
        rows.append(
            (
                product_id,
                sequence,
                "SHIPPED",
                content["occurredAt"],
                None,
                "Rotterdam",
                None,
                None,
                "{}",
                previous,
                digest,
            )
        )
        previous = digest
    return rows


def seed(path: str, codes: Sequence[str], *, events: int = 1) -> None:
    """A new file at ``path``: one brand, a product per code."""
    key = Ed25519PrivateKey.generate()
    public_key = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    db = connect(path)
    try:
        db.executescript(TABLES)
        db.execute("BEGIN")
        db.execute(
            "INSERT INTO brands (id, name, public_key) VALUES (?, 'Bench', ?)",
            (BRAND_ID, public_key),
        )
        for index, code in enumerate(codes):
            product, certificate = _product(index, code, key)
            chain = _events(str(product[0]), str(certificate[1]), events)
            head = (len(chain), chain[-1][-1] if chain else certificate[1])
            db.execute(
                "INSERT INTO products (id, code, brand_id, name, sku, status, created_at, "
                "metadata, head_sequence, head_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*product, *head),
            )
            db.execute("INSERT INTO certificates VALUES (?, ?, ?, ?)", certificate)
            db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", chain)
        db.execute("COMMIT")
    finally:
        db.close()


def claim(path: str, code: str, device_hash: str, expires_at: float) -> None:
    """An active claim on ``code``'s product (for tests)."""
    db = connect(path)
    try:
        db.execute(
            "INSERT INTO claims SELECT id, ?, ? FROM products WHERE code = ?",
            (device_hash, expires_at, code),
        )
    finally:
        db.close()


def dump(path: str, table: str) -> list[dict[str, object]]:
    """Every row of ``table`` (for tests)."""
    db = connect(path)
    try:
        cursor = db.execute(f"SELECT * FROM {table}")
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    finally:
        db.close()
