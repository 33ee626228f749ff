"""Checks of the document itself: tokens, depth, aliases, introspection,
and the suggestions error messages carry.

Depth and alias limits are validation rules built once per schema, so the
``DocumentCache`` (keyed by the rule classes) answers a repeated document
without validating it again. Their errors, and the parser's token limit, come
out as QUERY_TOO_COMPLEX through the one error mapping.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from graphql import (
    ASTValidationRule,
    GraphQLError,
    NoSchemaIntrospectionCustomRule,
    TypeInfo,
    ValidationContext,
    ValidationRule,
)
from graphql.validation.validate import ValidationAbortedError
from strawberry.extensions import SchemaExtension
from strawberry.extensions.max_aliases import create_validator as alias_validator
from strawberry.extensions.query_depth_limiter import create_validator as depth_validator

from api.limits.document_cache import DocumentCache
from api.settings.limits import Limits
from domain.errors import QueryTooComplex

__all__ = ["DocumentLimits", "document_rules", "hide_suggestions"]

_SUGGESTION = re.compile(r"\s*Did you mean [^?]*\?")
_SIMPLER = "Ask for fewer fields, less nesting or fewer aliases; split the operation if needed."


class DocumentLimits(SchemaExtension):
    """Parses through the schema's ``DocumentCache``, with the token limit, and reports
    the document-level refusals as QUERY_TOO_COMPLEX: too many tokens, and
    validation that graphql-core aborts (overlapping-field comparisons,
    fragment work or errors past its budgets).

    A document that does not parse is left to Strawberry's own parse (with the
    same limit), which reports it as a result error that the error mapping
    sees; raising from this hook, as ``ParserCache`` does, would skip it.
    """

    def __init__(self, cache: DocumentCache, *, max_tokens: int) -> None:
        self.cache = cache
        self.max_tokens = max_tokens
        self._too_long = f"Document contains more than {max_tokens} tokens. Parsing aborted."

    def on_parse(self) -> Iterator[None]:
        execution_context = self.execution_context
        execution_context.parse_options["max_tokens"] = self.max_tokens
        query = execution_context.query
        if query is not None:
            with contextlib.suppress(GraphQLError):
                execution_context.graphql_document = self.cache.parse(query, self.max_tokens)
        yield
        for error in execution_context.pre_execution_errors or ():
            if error.message.endswith(self._too_long):
                error.original_error = QueryTooComplex(
                    f"The document has more than {self.max_tokens} tokens",
                    hint=_SIMPLER,
                    maxTokens=self.max_tokens,
                )

    def on_validate(self) -> Iterator[None]:
        yield
        for error in self.execution_context.pre_execution_errors or ():
            if isinstance(error, ValidationAbortedError) and error.original_error is None:
                error.original_error = QueryTooComplex(
                    "The document is too complex to validate", hint=_SIMPLER
                )


def _too_complex(rule: type[ASTValidationRule], **limit: int) -> type[ValidationRule]:
    """``rule`` with its errors reported as QUERY_TOO_COMPLEX.

    Strawberry's depth and alias rules do all their work when constructed, so
    running one against a private context that forwards its errors is enough.
    """

    class TooComplex(ValidationRule):
        def __init__(self, context: ValidationContext) -> None:
            super().__init__(context)

            def report(error: GraphQLError) -> None:
                cause = QueryTooComplex(error.message, hint=_SIMPLER, **limit)
                context.report_error(GraphQLError(error.message, error.nodes, original_error=cause))

            rule(
                ValidationContext(
                    context.schema, context.document, TypeInfo(context.schema), report
                )
            )

    TooComplex.__name__ = TooComplex.__qualname__ = f"TooComplex{rule.__name__}"
    return TooComplex


def document_rules(limits: Limits) -> list[type[ASTValidationRule]]:
    """The validation rules ``limits`` call for; build them once per schema."""
    rules: list[type[ASTValidationRule]] = [
        _too_complex(depth_validator(limits.max_depth, None), maxDepth=limits.max_depth),
        _too_complex(alias_validator(limits.max_aliases), maxAliases=limits.max_aliases),
    ]
    if not limits.introspection:
        rules.append(NoSchemaIntrospectionCustomRule)
    return rules


def hide_suggestions(message: str) -> str:
    """``message`` without its "Did you mean ...?", which spells out field,
    argument, type and enum value names of the schema."""
    return _SUGGESTION.sub("", message)
