"""Which requests the response cache takes, and what names their answer.

Opt-in per operation: ``PROOFGATE_RESPONSE_CACHE_OPERATIONS`` lists
registered queries by name; start-up refuses a name the registry does not
hold or that is not a query. A request is taken when it runs one of them (by
its text, its ``documentId``, or its name alone), with no ``extensions``
(APQ), not as a batch, and asks for a single JSON answer. Its key is the
document's SHA-256, the operation's name, the variables as canonical JSON and
what the caller may see: anonymous, a brand's key of a role (every key of a
brand and role sees the same), an integration, the operator. Nothing else of
the caller reaches a query's answer: no query field reads the key itself
(docs/design.md, Response cache).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from api.operations.registry import OperationRegistry
from domain.errors import ConfigurationError
from services.auth import Principal

from .entries import ResponseKey

__all__ = ["CacheableOperations", "scope_of"]

_FIELDS = frozenset({"query", "variables", "operationName", "documentId"})


def scope_of(principal: Principal) -> str:
    """What the caller may see, as a key part: the key itself is not in it."""
    return f"{principal.role.value}|{principal.brand_id or ''}|{principal.integration_id or ''}"


@dataclass(frozen=True, slots=True)
class _Document:
    sha256: str
    cached: frozenset[str]
    only: str | None
    """The document's one operation, when it has one (a request may omit its name)."""


class CacheableOperations:
    def __init__(self, registry: OperationRegistry, names: Iterable[str]) -> None:
        """Refuses, with a one-line error, a name that is not a registered query."""
        self.registry = registry
        operations_of: dict[str, list[str]] = {}
        for operation in registry.by_name.values():
            operations_of.setdefault(operation.text, []).append(operation.name)
        cached: dict[str, set[str]] = {}
        for name in names:
            found = registry.by_name.get(name)
            if found is None or found.kind != "query":
                what = "not registered" if found is None else f"a {found.kind}"
                raise ConfigurationError(
                    f"PROOFGATE_RESPONSE_CACHE_OPERATIONS names {name!r}, which is {what}",
                    hint="List registered queries by name (proofgate operations list).",
                )
            cached.setdefault(found.text, set()).add(name)
        self._documents = {
            text: _Document(
                hashlib.sha256(text.encode()).hexdigest(),
                frozenset(names_),
                operations_of[text][0] if len(operations_of[text]) == 1 else None,
            )
            for text, names_ in cached.items()
        }
        self.names = frozenset(name for names_ in cached.values() for name in names_)

    def __bool__(self) -> bool:
        return bool(self._documents)

    def key(self, fields: Mapping[str, Any], principal: Principal) -> ResponseKey | None:
        """The key of a request's answer, from its body or GET parameters
        (``variables`` already decoded), or None when it is not cached."""
        if not _FIELDS.issuperset(fields):
            return None
        text, name = fields.get("query"), fields.get("operationName")
        document_id = fields.get("documentId")
        if not (name is None or isinstance(name, str)):
            return None
        if isinstance(document_id, str) and text is None:
            text = self.registry.document(document_id)
        elif document_id is not None:
            return None
        if text is None and name is not None:
            registered = self.registry.by_name.get(name)
            text = None if registered is None else registered.text
        document = self._documents.get(text) if isinstance(text, str) else None
        if document is None:
            return None
        name = name or document.only
        if name not in document.cached:
            return None
        variables = fields.get("variables")
        if variables is None:
            variables = {}
        if not isinstance(variables, dict):
            return None
        try:
            canonical = orjson.dumps(variables, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:
            return None
        return ResponseKey(document.sha256, name, canonical, scope_of(principal))
