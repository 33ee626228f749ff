"""The operation registry: named operations checked and prepared once, at
start-up, the way ``storage.registry`` checks access patterns at import.

Each ``.graphql`` file is one document, and so is each entry of a
persisted-document manifest (``manifests``); every operation in it must be
named, names are unique across the registry, and the document is known by
the SHA-256 of its text (what an APQ client sends) and by its manifest id.
A file that does not parse, validate or fit a limit stops start-up with one
line naming it
(docs/design.md, "Named operations").
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import strawberry
from graphql import (
    DocumentNode,
    FieldNode,
    GraphQLError,
    OperationDefinitionNode,
    TypeInfo,
    TypeInfoVisitor,
    Visitor,
    parse,
    specified_rules,
    validate,
    visit,
)

from api._strawberry import graphql_schema_of
from api.limits.cost import cost_model
from api.limits.validation import document_rules
from api.operations.largest_variables import largest_variables
from api.operations.manifests import read_manifest
from api.settings.limits import Limits
from domain.errors import ConfigurationError, ProofgateError
from resolvers.fields import field_access_patterns

logger = logging.getLogger("proofgate.operations")

__all__ = [
    "DEFAULT_SOURCE",
    "OperationRegistry",
    "RegisteredOperation",
    "canonical_id",
    "load_registry",
]

DEFAULT_SOURCE = "<explorer examples>"
MAX_OPERATIONS = 1000
"""Every registered document is kept in memory for the life of the process."""


@dataclass(frozen=True)
class RegisteredOperation:
    name: str
    kind: str
    """``query``, ``mutation`` or ``subscription``."""
    source: str
    """The file it came from, for operators."""
    text: str
    sha256: str
    cost: int
    access_patterns: tuple[str, ...]
    comment: tuple[str, ...] = ()
    """The ``#`` lines right above the operation, without the ``#``: where a
    file marks an operation as an MCP tool and describes it."""


@dataclass(frozen=True)
class OperationRegistry:
    by_name: Mapping[str, RegisteredOperation]
    by_hash: Mapping[str, str]
    """Document text by the lowercase hex SHA-256 of its UTF-8 bytes."""
    by_id: Mapping[str, str] = field(default_factory=dict)
    """Document text by the id a manifest gave it (``manifests``): Relay's MD5,
    Apollo's and Codegen's SHA-256, whatever the tool chose."""

    def __len__(self) -> int:
        return len(self.by_name)

    def trusts(self, text: str) -> bool:
        return hashlib.sha256(text.encode()).hexdigest() in self.by_hash

    def document(self, document_id: str) -> str | None:
        """The text a client's ``documentId`` names: a manifest's id, or the
        document's SHA-256 (bare or ``sha256:``-prefixed, as the GraphQL over
        HTTP persisted-documents proposal spells it). Every spelling of one
        SHA-256 names one text: ``load_registry`` refuses an id that is
        another document's hash."""
        canonical = canonical_id(document_id)
        text = self.by_id.get(canonical)
        if text is None:
            text = self.by_hash.get(canonical)
        return text


_SHA256_ID = re.compile(r"(?:sha256:)?[0-9a-fA-F]{64}")


def canonical_id(document_id: str) -> str:
    """A SHA-256-shaped id as lowercase hex without its prefix; any other id
    as it is (Relay's MD5 and a tool's own ids are compared verbatim)."""
    if _SHA256_ID.fullmatch(document_id):
        return document_id.removeprefix("sha256:").lower()
    return document_id


def load_registry(
    schema: strawberry.Schema,
    limits: Limits,
    directory: Path | None,
    defaults: Iterable[str] = (),
) -> OperationRegistry:
    """``defaults`` (the explorer's examples) first, then ``directory``'s
    ``*.graphql`` files and ``*.json`` manifests in name order. A default
    that does not fit the limits (an operator who lowered ``max_cost``) is
    left out, not fatal. A text already registered is registered once, under
    every id that names it."""
    sources: list[tuple[str, str, str | None]] = [(DEFAULT_SOURCE, t, None) for t in defaults]
    if directory is not None:
        sources.extend(_documents(directory))
    if len(sources) > MAX_OPERATIONS:
        raise ConfigurationError(f"More than {MAX_OPERATIONS} operation documents")
    by_name: dict[str, RegisteredOperation] = {}
    by_hash: dict[str, str] = {}
    by_id: dict[str, str] = {}
    id_sources: dict[str, str] = {}
    for source, text, document_id in sources:
        if document_id is not None:
            _name_document(by_id, source, canonical_id(document_id), text)
            id_sources.setdefault(canonical_id(document_id), source)
        if hashlib.sha256(text.encode()).hexdigest() in by_hash:
            continue
        try:
            operations = _check(schema, limits, source, text)
        except ProofgateError as error:
            if source == DEFAULT_SOURCE:
                # The operator's limits win over examples the operator did not write.
                logger.info("Explorer example not registered: %s", error.message)
                continue
            raise ConfigurationError(f"Invalid operation file {source}: {error.message}") from None
        for operation in operations:
            if operation.name in by_name:
                first = by_name[operation.name].source
                raise ConfigurationError(
                    f"Invalid operation file {source}: operation {operation.name} "
                    f"is already registered by {first}"
                )
            by_name[operation.name] = operation
            by_hash[operation.sha256] = text
    _refuse_ids_of_other_documents(by_id, by_hash, id_sources)
    return OperationRegistry(by_name, by_hash, by_id)


def _refuse_ids_of_other_documents(
    by_id: Mapping[str, str], by_hash: Mapping[str, str], sources: Mapping[str, str]
) -> None:
    """One id, one text: an id equal to another registered document's
    SHA-256 would run one text as ``documentId`` and the other as its hash
    (APQ, ``sha256:``, or the text sent itself)."""
    for document_id, text in by_id.items():
        other = by_hash.get(document_id)
        if other is not None and other != text:
            raise ConfigurationError(
                f"Invalid operation file {sources[document_id]}: document id {document_id} "
                "is the SHA-256 of another registered document"
            )


def _name_document(by_id: dict[str, str], source: str, document_id: str, text: str) -> None:
    known = by_id.setdefault(document_id, text)
    if known != text:
        raise ConfigurationError(
            f"Invalid operation file {source}: document id {document_id} "
            "names two different documents"
        )


def _documents(directory: Path) -> list[tuple[str, str, str | None]]:
    """(source, text, document id) of each ``.graphql`` file and manifest entry."""
    if not directory.is_dir():
        raise ConfigurationError(
            f"Invalid PROOFGATE_OPERATIONS_DIR: {directory} is not a directory"
        )
    found: list[tuple[str, str, str | None]] = []
    for path in sorted([*directory.glob("*.graphql"), *directory.glob("*.json")]):
        if path.suffix == ".graphql":
            found.append((str(path), _read(path), None))
        else:
            found.extend((f"{path} ({i})", text, i) for i, text in read_manifest(path))
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = f"cannot read it: {error}"
        raise ConfigurationError(f"Invalid operation file {path}: {reason}") from None


def _check(
    schema: strawberry.Schema, limits: Limits, source: str, text: str
) -> list[RegisteredOperation]:
    try:
        document = parse(text, max_tokens=limits.max_tokens)
    except GraphQLError as error:
        raise ConfigurationError(error.message) from None
    rules = [*specified_rules, *document_rules(limits)]
    errors = validate(graphql_schema_of(schema), document, rules)
    if errors:
        raise ConfigurationError(errors[0].message)
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if not operations or any(o.name is None for o in operations):
        raise ConfigurationError("every operation must be named")
    digest = hashlib.sha256(text.encode()).hexdigest()
    return [_register(schema, limits, source, text, digest, document, o) for o in operations]


def _register(
    schema: strawberry.Schema,
    limits: Limits,
    source: str,
    text: str,
    digest: str,
    document: DocumentNode,
    operation: OperationDefinitionNode,
) -> RegisteredOperation:
    assert operation.name is not None
    name = operation.name.value
    variables = largest_variables(graphql_schema_of(schema), operation)
    cost = cost_model(schema).measure(document, name, variables)
    if cost is None:
        raise ConfigurationError(f"{name}: its cost cannot be measured")
    if cost > limits.max_cost:
        raise ConfigurationError(
            f"{name} costs {cost} at its largest variables, over the limit of {limits.max_cost}"
        )
    return RegisteredOperation(
        name=name,
        kind=operation.operation.value,
        source=source,
        text=text,
        sha256=digest,
        cost=cost,
        access_patterns=_access_patterns(schema, document),
        comment=_leading_comment(text, operation.loc.start if operation.loc else 0),
    )


def _leading_comment(text: str, start: int) -> tuple[str, ...]:
    lines: list[str] = []
    for line in reversed(text[:start].splitlines()):
        stripped = line.strip()
        if not stripped.startswith("#"):
            break
        lines.append(stripped[1:].strip())
    return tuple(reversed(lines))


def _access_patterns(schema: strawberry.Schema, document: DocumentNode) -> tuple[str, ...]:
    """The patterns the document's fields read (and load through), fragments included."""
    declared: dict[tuple[str, str], set[str]] = {}
    for access in field_access_patterns(schema):
        patterns = {p for p in (access.access_pattern, access.loads) if p is not None}
        patterns.update(pattern for _, pattern in access.by_type)
        if patterns:
            declared[(access.type_name, access.field_name)] = patterns
    found: set[str] = set()
    type_info = TypeInfo(graphql_schema_of(schema))

    class Fields(Visitor):
        def enter_field(self, node: FieldNode, *_: object) -> None:
            parent = type_info.get_parent_type()
            if parent is not None:
                found.update(declared.get((parent.name, node.name.value), ()))

    visit(document, TypeInfoVisitor(type_info, Fields()))
    return tuple(sorted(found))
