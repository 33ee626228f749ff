"""An operation's variables coerced as graphql-core coerces them, with the
variables' signatures worked out once per operation.

graphql-core's ``get_variable_values`` works out each variable's signature
(its type, from the definition's AST) on every request before coercing the
value; for ``verifyProduct``'s two variables that was a third of the cost.
The signatures are fixed by the document, so ``Variables`` keeps them and
coerces each value with graphql-core's own ``coerce_input_value``, as its
``coerce_variable_values`` does. Anything but the plain case (a default
value, a missing non-null variable, a value that does not coerce, a value
nested too deeply) answers None, having decided nothing, and the caller runs
``get_variable_values``, which applies the default or says what is wrong
(``tests/api/graphql/execution/test_execution_variables.py`` holds the two
together).
"""

from __future__ import annotations

from collections.abc import Collection
from functools import partial
from typing import Any

from graphql import GraphQLError, GraphQLSchema, VariableDefinitionNode, is_non_null_type
from graphql.execution.get_variable_signature import (
    GraphQLVariableSignature,
    get_variable_signature,
)
from graphql.execution.values import (
    VariableValues,
    VariableValueSource,
    input_is_nested_too_deeply,
)
from graphql.pyutils import Undefined
from graphql.utilities import coerce_input_value

from api.graphql.execution.input_coercion import Coerce, input_coercer, nests_boundedly

__all__ = ["Variables"]


_Signature = tuple[GraphQLVariableSignature, bool, Coerce, bool]
"""A variable's signature, whether it is non-null, its type's coercion
(``input_coercion.py``), and whether a value may nest too deeply for it."""


class Variables:
    __slots__ = ("_signatures",)

    _signatures: list[_Signature] | None

    def __init__(self, schema: GraphQLSchema, definitions: Collection[VariableDefinitionNode]):
        signatures: list[_Signature] = []
        for definition in definitions:
            signature = get_variable_signature(schema, definition)
            if isinstance(signature, GraphQLError) or definition.default_value:
                self._signatures = None  # graphql-core's path, every time
                return
            kind = signature.type
            coerce = input_coercer(kind) or partial(_coerce_input_value, kind=kind)
            deep = not nests_boundedly(kind)
            signatures.append((signature, is_non_null_type(kind), coerce, deep))
        self._signatures = signatures

    def coerce(self, inputs: dict[str, Any]) -> VariableValues | None:
        """The coerced values, or None for ``get_variable_values`` to decide."""
        signatures = self._signatures
        if signatures is None:
            return None
        sources: dict[str, VariableValueSource] = {}
        coerced: dict[str, Any] = {}
        for signature, non_null, coerce, deep in signatures:
            name, kind = signature.name, signature.type
            value = inputs.get(name, Undefined)
            if value is Undefined:
                if non_null:
                    return None
                sources[name] = VariableValueSource(signature)
                continue  # a nullable variable left out is omitted
            sources[name] = VariableValueSource(signature, value)
            try:
                if deep and input_is_nested_too_deeply(value, kind):
                    return None
                coerced_value = coerce(value)
            except Exception:  # graphql-core's path says what went wrong
                return None
            if coerced_value is Undefined:
                return None
            coerced[name] = coerced_value
        return VariableValues(sources, coerced)


def _coerce_input_value(value: Any, kind: Any) -> Any:
    """graphql-core's, looked up when called (the tests plant a fault in it)."""
    return coerce_input_value(value, kind)
