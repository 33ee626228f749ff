"""The demo's key file: API and ingest keys are shown once by the API, so the
demo keeps the ones it was given in ``<data dir>/demo-keys.json`` (mode
0600), to print them again on the next start, and a lock so two processes
started together on one data directory load the demo once."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from domain.errors import ProofgateError

__all__ = ["DEMO_KEYS_FILE", "DemoBrand", "locked", "read_keys", "write_keys"]

DEMO_KEYS_FILE = "demo-keys.json"
_LOCK_FILE = ".demo.lock"
_PRIVATE = 0o600
HINT = "Delete the data directory (or its demo-keys.json) to load the demo afresh."


@dataclass(frozen=True)
class DemoBrand:
    slug: str
    id: str
    name: str
    plan: str
    api_key: str = field(repr=False)
    ingest_key: str | None = field(default=None, repr=False)
    """The key of the brand's partner integration, if its plan has one."""
    integration_id: str | None = None


@contextlib.contextmanager
def locked(data_dir: Path) -> Iterator[None]:
    """Two processes started together on one data directory load the demo once."""
    data_dir.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(data_dir / _LOCK_FILE, os.O_RDWR | os.O_CREAT, _PRIVATE)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def read_keys(path: Path) -> dict[str, DemoBrand]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    try:
        entries = json.loads(text)["brands"]
        return {slug: DemoBrand(**entry) for slug, entry in entries.items()}
    except (ValueError, KeyError, TypeError):
        raise ProofgateError(f"Demo key file {path} is not readable", hint=HINT) from None


def write_keys(path: Path, brands: Mapping[str, DemoBrand]) -> None:
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
