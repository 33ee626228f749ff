"""Registered operations by name or hash, and trusted-documents mode.

``NamedOperations`` runs before APQ: a request naming a registered
operation (by ``operationName`` without a query, by the hash APQ sends, or
by a manifest's ``documentId``) gets the registered text, so the APQ wire
format works unchanged and a registered hash is never "not found".
``TrustedDocuments`` runs after APQ, on the text that would run: in
``enforce`` a text the registry does not hold is refused before parsing for
every caller but the admin key, over HTTP and WebSocket alike; in ``log`` it
runs and is counted (docs/design.md, "Named operations").
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from graphql import GraphQLError
from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType

from api._strawberry import forget_operation_name
from api.operations.manifests import DOCUMENT_ID_MAX_CHARS
from api.operations.persisted import NOT_FOUND
from api.operations.registry import OperationRegistry
from api.settings.operations import TrustedDocuments
from api.wire.errors import to_graphql_error
from domain.errors import PersistedQueryNotAllowed, PersistedQueryNotFound
from resolvers.context import request_context

if TYPE_CHECKING:
    from services.auth import Principal

__all__ = [
    "DOCUMENT_ID",
    "NamedOperations",
    "TrustedDocumentCheck",
    "UntrustedCounter",
    "runs_freely",
    "with_document_id",
]

DOCUMENT_ID = "documentId"
"""The extensions key a body's ``documentId`` is moved to (``with_document_id``)."""

_PLACEHOLDER = "{ __typename }"
_SUBSCRIPTION_PLACEHOLDER = "subscription { __typename }"
"""For a caller that allows subscriptions only (legacy graphql-ws); it does
not validate, but the refusal replaces its validation result anyway."""

logger = logging.getLogger("proofgate.operations")


class UntrustedCounter:
    """Documents outside the registry run in ``log`` mode, for the operator;
    ``on_count`` passes each on (the metrics counter)."""

    def __init__(self, on_count: Callable[[], object] | None = None) -> None:
        self.count = 0
        self._on_count = on_count

    def add(self) -> None:
        self.count += 1
        if self._on_count is not None:
            self._on_count()


def runs_freely(
    mode: TrustedDocuments,
    registry: OperationRegistry | None,
    query: str | None,
    principal: Principal | None,
) -> bool:
    """Whether ``query`` runs without being refused or counted: trusted
    documents off, no text yet, the admin key, or a text the registry holds."""
    return (
        mode is TrustedDocuments.OFF
        or query is None
        or (principal is not None and principal.is_admin)
        or (registry is not None and registry.trusts(query))
    )


class NamedOperations(SchemaExtension):
    def __init__(self, registry: OperationRegistry) -> None:
        self.registry = registry

    def on_operation(self) -> None:  # type: ignore[override]
        execution_context = self.execution_context
        extensions = execution_context.operation_extensions or {}
        if execution_context.query is None:
            text = self._registered(extensions)
            if text is not None:
                execution_context.query = text
                # Answered here: the APQ cache (off, perhaps) has no part in it.
                execution_context.operation_extensions = {
                    key: value
                    for key, value in extensions.items()
                    if key not in ("persistedQuery", DOCUMENT_ID)
                }

    def _registered(self, extensions: Mapping[str, Any]) -> str | None:
        if DOCUMENT_ID in extensions:
            return self._document(extensions[DOCUMENT_ID])
        persisted = extensions.get("persistedQuery")
        if isinstance(persisted, Mapping):
            digest = persisted.get("sha256Hash")
            return self.registry.by_hash.get(digest.lower()) if isinstance(digest, str) else None
        operation = self.registry.by_name.get(self.execution_context.operation_name or "")
        return operation.text if operation is not None else None

    def _document(self, document_id: object) -> str:
        """A ``documentId`` names a registered document or nothing: there is
        no cache behind it, and no retry with the text."""
        text = None
        if isinstance(document_id, str) and len(document_id) <= DOCUMENT_ID_MAX_CHARS:
            text = self.registry.document(document_id)
        if text is None:
            error = PersistedQueryNotFound(
                NOT_FOUND,
                hint="documentId names no registered document; "
                "`proofgate operations list` shows them.",
            )
            context = request_context(self.execution_context.context)
            cause = GraphQLError(error.message, original_error=error)
            raise to_graphql_error(cause, context.request_id if context is not None else None)
        return text


def with_document_id(body: Any) -> Any:
    """A request body's ``documentId`` (GraphQL over HTTP's persisted
    documents) carried in its extensions, where ``NamedOperations`` reads
    it: Strawberry's request data has no place for it. A batch, entry by entry."""
    if isinstance(body, list):
        return [with_document_id(entry) for entry in body]
    if not isinstance(body, dict) or "documentId" not in body:
        return body
    extensions = body.get("extensions")
    if extensions is not None and not isinstance(extensions, dict):
        return body
    moved = {key: value for key, value in body.items() if key != "documentId"}
    moved["extensions"] = {**(extensions or {}), DOCUMENT_ID: body["documentId"]}
    return moved


class TrustedDocumentCheck(SchemaExtension):
    """Refuses by swapping the document for a placeholder that is never
    executed and reporting the refusal as its validation result: raising from
    a hook would escape Strawberry's subscription stream, and a pre-execution
    error is answered alike over HTTP and WebSocket. It must come after
    ``ValidationCache``, which sets the validation result it replaces."""

    def __init__(
        self, registry: OperationRegistry, mode: TrustedDocuments, counter: UntrustedCounter
    ) -> None:
        self.registry = registry
        self.mode = mode
        self.counter = counter
        self._refused = False

    def on_operation(self) -> None:  # type: ignore[override]
        execution_context = self.execution_context
        context = request_context(execution_context.context)
        principal = context.principal if context is not None else None
        query = execution_context.query
        if context is not None and not context.from_client:
            return  # the gateway's own operation (the demo loader's)
        trusted = runs_freely(self.mode, self.registry, query, principal)
        if not trusted and self.mode is TrustedDocuments.LOG:
            self.counter.add()
            name = execution_context.operation_name
            logger.warning(
                "Document outside the operation registry accepted (operation %r)",
                name if not isinstance(name, str) else name[:100],
            )
        elif not trusted:
            self._refused = True
            queries = OperationType.QUERY in set(execution_context.allowed_operations)
            execution_context.query = _PLACEHOLDER if queries else _SUBSCRIPTION_PLACEHOLDER
            forget_operation_name(execution_context)

    def on_validate(self) -> Iterator[None]:
        if self._refused:
            error = PersistedQueryNotAllowed(
                "This server runs only registered operations",
                hint="Call a registered operation by name or by its sha256Hash; "
                "`proofgate operations list` shows them.",
            )
            self.execution_context.pre_execution_errors = [
                GraphQLError(error.message, original_error=error)
            ]
        yield
