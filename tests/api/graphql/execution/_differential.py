"""Run one operation through compiled plans and through graphql-core, on the
same store, and compare the responses a client would parse."""

from __future__ import annotations

import ast
import base64
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import strawberry
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from graphql import (
    BooleanValueNode,
    GraphQLSchema,
    IntValueNode,
    OperationDefinitionNode,
    OperationType,
    StringValueNode,
    parse,
    validate,
)
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis_graphql import queries

from api.graphql.schema import build_schema
from api.settings.limits import Execution, Limits
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import Principal
from services.context import Services

__all__ = [
    "Differential",
    "Seed",
    "generated_queries",
    "generated_settings",
    "seed_variables",
    "suite_operations",
]

ROOT = Path(__file__).resolve().parents[4]
_LIMITS = Limits(rate_limit=None, key_rate_limit=None)
CURSOR_KEY = bytes(range(32))
"""The cursor key of the API tests' gateways (``tests/api/conftest.py``)."""
_CURSOR_FIELDS = ("cursor", "startCursor", "endCursor")
ABSTRACT_ROOT_FIELDS = ("node", "nodes")
_NONCE = 12


@dataclass
class Seed:
    """Ids of the seeded data, for the variables and ID arguments of operations."""

    brand_ids: list[str] = field(default_factory=list)
    product_ids: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)

    def variable(self, name: str, type_name: str) -> Any:
        lowered = name.lower()
        if "code" in lowered:
            return self.codes[0]
        if "hash" in lowered:
            return self.hashes[0]
        if "product" in lowered or lowered in ("id", "p", "pid"):
            return self.product_ids[0]
        if "brand" in lowered or lowered == "b":
            return self.brand_ids[0]
        if type_name == "Int":
            return 3
        return None


def seed_variables(text: str, seed: Seed) -> dict[str, Any]:
    """Values from ``seed`` for the variables of ``text``'s operations, by name and type."""
    variables: dict[str, Any] = {}
    for definition in parse(text).definitions:
        if not isinstance(definition, OperationDefinitionNode):
            continue
        for variable in definition.variable_definitions or ():
            type_node = variable.type
            while hasattr(type_node, "type"):
                type_node = type_node.type
            value = seed.variable(variable.variable.name.value, type_node.name.value)
            if value is not None:
                variables[variable.variable.name.value] = value
    return variables


def _lanes(execution: str) -> Limits:
    return replace(_LIMITS, execution=execution)


class Differential:
    def __init__(self, services: Services, execution: str = Execution.COMPILED) -> None:
        """``execution``: the compiled side's lanes (``PROOFGATE_EXECUTION``),
        named here so the suite run with the lanes off still compares them."""
        self.services = services
        self.compiled = build_schema(_lanes(execution))
        self.core = build_schema(_lanes(Execution.GRAPHQL_CORE))

    async def both(
        self, query: str, variables: Mapping[str, Any] | None, principal: Principal
    ) -> tuple[str, str, str | None]:
        """Both responses as JSON text (key order included), and the executor
        the compiled side reported."""
        compiled, mode = await self.run(self.compiled, query, variables, principal)
        core, _ = await self.run(self.core, query, variables, principal)
        return compiled, core, mode

    async def agree(
        self, query: str, variables: Mapping[str, Any] | None, principal: Principal
    ) -> tuple[bool, str | None]:
        """Whether the compiled response equals graphql-core's, and which
        executor ran it. Sibling fields resolve concurrently, so when several
        fail, graphql-core itself lists their errors in the order the storage
        thread answered, and a non-null field's error that nulls the whole
        result cancels siblings that may or may not have failed yet: a
        difference counts as agreement once both executors are seen to give
        one same response."""
        compiled, core, mode = await self.both(query, variables, principal)
        if compiled == core:
            return True, mode
        seen_compiled, seen_core = {compiled}, {core}
        for _ in range(RACE_RERUNS):
            again_compiled, again_core, _ = await self.both(query, variables, principal)
            seen_compiled.add(again_compiled)
            seen_core.add(again_core)
            if seen_compiled & seen_core:
                return True, mode
        return False, mode

    async def run(
        self,
        schema: strawberry.Schema,
        query: str,
        variables: Mapping[str, Any] | None,
        principal: Principal,
    ) -> tuple[str, str | None]:
        context = RequestContext(
            services=self.services,
            principal=principal,
            loaders=Loaders(self.services.storage, principal.tenant),
            request_id="differential",
        )
        result = await schema.execute(
            query, variable_values=dict(variables or {}), context_value=context
        )
        body: dict[str, Any] = {"data": result.data}
        if result.errors:
            body["errors"] = [error.formatted for error in result.errors]
        return json.dumps(_opened(body), default=str), context.execution


RACE_RERUNS = 60
"""Enough for both executors to show a common order even on a loaded machine;
only queries with several failing siblings ever rerun."""


def _opened(value: Any, key: str = "") -> Any:
    """Cursors carry a random nonce; compare what they seal instead."""
    if isinstance(value, dict):
        return {name: _opened(item, name) for name, item in value.items()}
    if isinstance(value, list):
        return [_opened(item) for item in value]
    if key in _CURSOR_FIELDS and isinstance(value, str):
        try:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
            nonce, sealed = raw[1 : 1 + _NONCE], raw[1 + _NONCE :]
            opened = AESGCM(CURSOR_KEY).decrypt(nonce, sealed, b"proofgate-cursor")
            return "sealed:" + opened.decode()
        except Exception:
            return value
    return value


def suite_operations(schema: GraphQLSchema) -> Iterator[str]:
    """Every query the test suite and the explorer send: the string literals of
    ``tests/`` and ``api/http/explorer_examples.py`` that parse, validate against
    the schema, and hold no mutation, subscription, ``@defer`` or ``@stream``
    (those change the store, or stream)."""
    files = [
        *sorted((ROOT / "tests").rglob("*.py")),
        ROOT / "api" / "http" / "explorer_examples.py",
    ]
    seen: set[str] = set()
    for path in files:
        for text in _string_literals(path):
            if text in seen or not _looks_like_graphql(text):
                continue
            seen.add(text)
            if _is_valid_query(schema, text):
                yield text


def _string_literals(path: Path) -> Iterator[str]:
    try:
        tree = ast.parse(path.read_text())
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def _looks_like_graphql(text: str) -> bool:
    stripped = "\n".join(
        line for line in text.splitlines() if not line.lstrip().startswith("#")
    ).lstrip()
    return stripped.startswith(("{", "query", "fragment")) and "}" in stripped


def _is_valid_query(schema: GraphQLSchema, text: str) -> bool:
    try:
        document = parse(text)
    except Exception:
        return False
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if not operations or any(op.operation is not OperationType.QUERY for op in operations):
        return False
    if "@defer" in text or "@stream" in text:
        return False  # answered in increments, which neither executor compares
    return not validate(schema, document)


def _id_values(seed: Seed) -> st.SearchStrategy[StringValueNode]:
    ids = [*seed.brand_ids, *seed.product_ids, *seed.codes, *seed.hashes, "missing"]
    return st.sampled_from(ids).map(lambda value: StringValueNode(value=value))


def generated_queries(seed: Seed, schema: GraphQLSchema) -> st.SearchStrategy[str]:
    """Queries drawn from ``schema`` by hypothesis-graphql, arguments from ``seed``."""
    scalars = {
        "ID": _id_values(seed),
        "Int": st.integers(-1, 8).map(lambda value: IntValueNode(value=str(value))),
        "Boolean": st.booleans().map(lambda value: BooleanValueNode(value=value)),
        "String": st.sampled_from([*seed.codes, *seed.hashes, "x", "2026-01"]).map(
            lambda value: StringValueNode(value=value)
        ),
        # Analytics ranges: today, a week, a range over the 92-day limit, a bad value.
        "Date": st.sampled_from(["2026-11-30", "2026-11-24", "2026-01-01", "x"]).map(
            lambda value: StringValueNode(value=value)
        ),
    }
    # node/nodes return an interface, which plans leave to graphql-core: the
    # suite's node queries cover them (test_every_suite_and_explorer_query_answers_alike).
    query_type = schema.query_type
    assert query_type is not None
    fields = [name for name in query_type.fields if name not in ABSTRACT_ROOT_FIELDS]
    return queries(schema, fields=fields, custom_scalars=scalars, allow_null=False)


def generated_settings(max_examples: int) -> settings:
    """The same queries every run (derandomized, no example database), with
    no time limit: each example draws a batch of queries."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
