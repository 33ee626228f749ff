"""Parsed and validated documents by query text, within a byte budget.

Clients choose the query text, so a cache keyed by it must be bounded by
memory, not by entries: 1,024 documents of 1 MB each (a comment that differs
by one character makes each distinct) held about 2 GB. Each entry is charged
what it keeps alive: the text (the key), the parsed tokens and nodes (a
comment or a string token holds a copy of its text), and its validation
results. ``document_weight`` is checked against tracemalloc in the tests, so
the estimate never undercounts.

One cache serves parsing and validation, so a document evicted from one is
gone from both (Strawberry's ``ValidationCache`` is an ``lru_cache`` keyed by
the document, which kept documents alive after the parse cache let go).

A parsed document's tokens form a doubly linked list, a reference cycle: an
uncached or evicted document, and the text its tokens copied, would wait for
a full garbage collection (after ``gc.freeze()``, hundreds of requests), so
RSS climbed about 1 MB per distinct 1 MB query. Nothing reads the links after
parsing, so they are cut and the document goes when its last user does.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

from graphql import DocumentNode, GraphQLError, OperationDefinitionNode, parse
from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import validate_document

from api._strawberry import graphql_schema_of

__all__ = [
    "DocumentCache",
    "ValidatedDocuments",
    "document_weight",
]

# Measured on CPython 3.11 and graphql-core 3.3: a token and its share of the
# AST cost 230-630 bytes; a comment or string token also copies its text.
_TOKEN_BYTES = 700
_ENTRY_BYTES = 4096
# A validation result: its list, and per error the message and locations.
_ERROR_BYTES = 1024
# One document may take this share of the budget at most, so a single huge
# query cannot flush every hot one.
_ENTRY_SHARE = 4
# What the prepared lane keeps of one operation of a document: its small
# record and an executor template of about forty references (no copies of
# the text or the nodes, which the entry already holds).
_PREPARED_BYTES = 4096
_MIXED = object()


def _tokens(document: DocumentNode) -> int:
    loc = document.loc
    token = loc.start_token if loc is not None else None
    count = 0
    while token is not None:
        count += 1
        token = token.next
    return count


def _unlink_tokens(document: DocumentNode) -> None:
    loc = document.loc
    token = loc.start_token if loc is not None else None
    while token is not None:
        following = token.next
        token.prev = token.next = None
        token = following


def document_weight(query: str, document: DocumentNode) -> int:
    """Bytes an entry keeps alive: the key, the copies tokens make of it, the rest per token."""
    return 2 * sys.getsizeof(query) + _TOKEN_BYTES * _tokens(document) + _ENTRY_BYTES


@dataclass
class _Entry:
    document: DocumentNode
    weight: int
    validations: dict[Hashable, list[GraphQLError]] = field(default_factory=dict)
    pinned: bool = False
    prepared: dict[str | None, Any] = field(default_factory=dict)
    """The prepared lane's answers by operation name (``prepared``)."""


class DocumentCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[tuple[str, int], _Entry] = OrderedDict()
        self._keys: dict[int, tuple[str, int]] = {}
        self._pinned: dict[tuple[str, int], _Entry] = {}
        """Registered documents: parsed once at start-up and never evicted, so
        their compiled plans stay valid; outside the byte budget, which bounds
        what clients bring (the registry bounds these)."""
        self._rules: Hashable | None = None
        """The validation rules every document has been validated with, or
        ``_MIXED`` once two sets were used: then no document counts as valid
        for ``validated`` (a schema validates with one set)."""

    def __len__(self) -> int:
        return len(self._entries) + len(self._pinned)

    def pin(self, query: str, max_tokens: int) -> DocumentNode:
        key = (query, max_tokens)
        pinned = self._pinned.get(key)
        if pinned is None:
            document = parse(query, max_tokens=max_tokens)
            _unlink_tokens(document)
            pinned = self._pinned[key] = _Entry(document, 0, pinned=True)
            self._keys[id(document)] = key
        return pinned.document

    def parse(self, query: str, max_tokens: int) -> DocumentNode:
        """Raises what ``parse`` raises; failures are not cached."""
        key = (query, max_tokens)
        pinned = self._pinned.get(key)
        if pinned is not None:
            return pinned.document
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            return entry.document
        document = parse(query, max_tokens=max_tokens)
        weight = document_weight(query, document)
        _unlink_tokens(document)
        if weight <= self.max_bytes // _ENTRY_SHARE:
            self._entries[key] = _Entry(document, weight)
            self._keys[id(document)] = key
            self.bytes += weight
            self._evict()
        return document

    def validated(self, query: str, max_tokens: int) -> DocumentNode | None:
        """The cached document of ``query`` if it passed validation without
        an error, for the prepared lane (``api/graphql/prepared.py``); else None."""
        entry = self._valid_entry(query, max_tokens)
        return None if entry is None else entry.document

    def _valid_entry(self, query: str, max_tokens: int) -> _Entry | None:
        key = (query, max_tokens)
        entry = self._pinned.get(key)
        if entry is None:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
        rules = self._rules
        if rules is None or rules is _MIXED or entry.validations.get(rules) != []:
            return None
        return entry

    def prepared(
        self,
        query: str,
        max_tokens: int,
        name: str | None,
        prepare: Callable[[DocumentNode, str | None], Any],
    ) -> Any:
        """What ``prepare`` made of the validated document of ``query`` for
        the operation ``name``, made once and kept with the document, so it
        goes when the document does; None when ``query`` is not a validated
        document. The lane keeps its answers here, None ones too: whatever
        depends only on the text is worked out once
        (docs/design.md, Prepared lane). The names kept per document are
        bounded by its operations: nothing is kept for a name the document
        does not hold."""
        entry = self._valid_entry(query, max_tokens)
        if entry is None:
            return None
        slots = entry.prepared
        if name in slots:
            return slots[name]
        answer = prepare(entry.document, name)
        if name is not None and name not in _operation_names(entry.document):
            return answer
        slots[name] = answer
        if not entry.pinned:
            entry.weight += _PREPARED_BYTES
            self.bytes += _PREPARED_BYTES
            self._evict()
        return answer

    def validate(
        self,
        document: DocumentNode,
        rules: Hashable,
        validate: Callable[[], list[GraphQLError]],
    ) -> list[GraphQLError]:
        """``validate()``'s errors, remembered with ``document`` while it is cached."""
        if self._rules != rules:
            self._rules = rules if self._rules is None else _MIXED
        entry = self._entry_of(document)
        if entry is None:
            return validate()
        errors = entry.validations.get(rules)
        if errors is None:
            errors = entry.validations[rules] = validate()
            if entry.pinned:
                return errors
            charge = _ERROR_BYTES * (1 + len(errors))
            entry.weight += charge
            self.bytes += charge
            self._evict()
        return errors

    def _entry_of(self, document: DocumentNode) -> _Entry | None:
        key = self._keys.get(id(document))
        entry = None if key is None else self._pinned.get(key) or self._entries.get(key)
        return entry if entry is not None and entry.document is document else None

    def _evict(self) -> None:
        while self.bytes > self.max_bytes and self._entries:
            _, evicted = self._entries.popitem(last=False)
            del self._keys[id(evicted.document)]
            self.bytes -= evicted.weight


def _operation_names(document: DocumentNode) -> set[str]:
    return {
        definition.name.value
        for definition in document.definitions
        if isinstance(definition, OperationDefinitionNode) and definition.name is not None
    }


class ValidatedDocuments(SchemaExtension):
    """Strawberry's ``ValidationCache``, answered from the ``DocumentCache``."""

    def __init__(self, cache: DocumentCache) -> None:
        self.cache = cache

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        schema = graphql_schema_of(context.schema)
        document = context.graphql_document
        rules = tuple(context.validation_rules)
        if document is None:
            yield
            return
        context.pre_execution_errors = self.cache.validate(
            document,
            (id(schema), rules),
            lambda: validate_document(schema, document, rules),
        )
        yield
