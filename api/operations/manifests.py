"""Persisted-document manifests, as frontend build tools write them.

- Apollo's ``persisted-query-manifest.json``: ``{"format":
  "apollo-persisted-query-manifest", "version": 1, "operations": [{id, name,
  type, body}]}``, the id the SHA-256 of the body;
- Relay's ``persisted_queries.json``: ``{id: text}``, the id an MD5 of the
  text by default;
- GraphQL Codegen's client-preset ``persisted-documents.json``: ``{hash:
  document}``, the hash a SHA-256.

Relay's and Codegen's are the same shape, so a manifest is read as either
Apollo's or an id map, and an id is whatever the tool chose: the registry maps
id -> text and never recomputes it (docs/design.md, "Named operations"),
except Apollo's, whose format says the id is the body's SHA-256: one that is
not is refused. A duplicate key (JSON would keep the last, silently) and
nesting Python cannot read are refused too, each in one line naming the file.
``export`` writes the registry back in each format.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

from domain.errors import ConfigurationError

__all__ = [
    "APOLLO_FORMAT",
    "DOCUMENT_ID_MAX_CHARS",
    "ManifestFormat",
    "export_manifest",
    "read_manifest",
]

APOLLO_FORMAT = "apollo-persisted-query-manifest"
DOCUMENT_ID_MAX_CHARS = 128
"""Longer than any tool's ids (a prefixed SHA-256 is 71 characters)."""
MANIFEST_MAX_BYTES = 16 * 1024 * 1024


class ManifestFormat(StrEnum):
    APOLLO = "apollo"
    RELAY = "relay"
    CODEGEN = "codegen"


def read_manifest(path: Path) -> list[tuple[str, str]]:
    """``(document id, text)`` pairs of one manifest file, in file order."""
    try:
        if path.stat().st_size > MANIFEST_MAX_BYTES:
            raise ConfigurationError(
                f"Invalid operation manifest {path}: over {MANIFEST_MAX_BYTES} bytes"
            )
        value = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique_keys)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ConfigurationError(f"Invalid operation manifest {path}: {error}") from None
    except RecursionError:
        raise ConfigurationError(
            f"Invalid operation manifest {path}: nested too deeply to read "
            "(a manifest is three levels deep)"
        ) from None
    try:
        entries = _apollo(value) if _is_apollo(value) else _id_map(value)
    except ValueError as error:
        raise ConfigurationError(f"Invalid operation manifest {path}: {error}") from None
    for document_id, _ in entries:
        if not 0 < len(document_id) <= DOCUMENT_ID_MAX_CHARS:
            raise ConfigurationError(
                f"Invalid operation manifest {path}: a document id is empty or over "
                f"{DOCUMENT_ID_MAX_CHARS} characters"
            )
    return entries


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members; a key given twice is an error, not the last one."""
    value: dict[str, Any] = {}
    for key, member in pairs:
        if key in value:
            raise ValueError(f"the key {key[:80]!r} appears twice in one object")
        value[key] = member
    return value


def _is_apollo(value: Any) -> bool:
    return isinstance(value, dict) and value.get("format") == APOLLO_FORMAT


def _apollo(value: dict[str, Any]) -> list[tuple[str, str]]:
    if value.get("version") != 1:
        raise ValueError(f"unsupported {APOLLO_FORMAT} version {value.get('version')!r}")
    operations = value.get("operations")
    if not isinstance(operations, list):
        raise ValueError("operations must be a list")
    entries = []
    for operation in operations:
        if not isinstance(operation, dict):
            raise ValueError("each operation must be an object with id and body")
        document_id, body = operation.get("id"), operation.get("body")
        if not isinstance(document_id, str) or not isinstance(body, str):
            raise ValueError("each operation needs a string id and body")
        if document_id.removeprefix("sha256:").lower() != _sha256(body):
            raise ValueError(f"operation id {document_id[:80]!r} is not the SHA-256 of its body")
        entries.append((document_id, body))
    return entries


def _id_map(value: Any) -> list[tuple[str, str]]:
    """Relay's and Codegen's shape."""
    if not isinstance(value, dict):
        raise ValueError(
            f'neither {{"format": "{APOLLO_FORMAT}", ...}} nor an object of id: document'
        )
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError("an id map's values must be document texts")
    return list(value.items())


def export_manifest(
    manifest_format: ManifestFormat, operations: Iterable[tuple[str, str, str]]
) -> Mapping[str, Any]:
    """``operations``: (name, kind, document text), one per operation. Ids are
    each tool's default: SHA-256 for Apollo and Codegen, MD5 for Relay."""
    listed = list(operations)
    if manifest_format is ManifestFormat.APOLLO:
        return {
            "format": APOLLO_FORMAT,
            "version": 1,
            "operations": [
                {"id": _sha256(text), "name": name, "type": kind, "body": text}
                for name, kind, text in listed
            ],
        }
    digest = _md5 if manifest_format is ManifestFormat.RELAY else _sha256
    return {digest(text): text for _, _, text in listed}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _md5(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()
