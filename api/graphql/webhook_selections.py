"""Webhooks' GraphQL documents: checked when a webhook is registered, run
for each of its deliveries (docs/design.md, Webhook selections).

A document is a subscription with one root field, ``threatAlerts``, whose
only argument is ``brandId``: the webhook's brand, spelled out or as the
operation's one variable (so one registered document serves every brand).
It is checked as a subscription sent over a socket would be: the schema's
validation with the gateway's depth and alias limits, the cost of one event
against ``PROOFGATE_MAX_COST``, and trusted documents. A delivery runs it as
graphql-core maps a subscription's event to its response: the alert is the
root value, so the selection resolves against it with the brand's view.
"""

from __future__ import annotations

from collections import OrderedDict
from inspect import isawaitable
from typing import Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    FieldNode,
    GraphQLError,
    OperationDefinitionNode,
    OperationType,
    StringValueNode,
    VariableNode,
    experimental_execute_incrementally,
    parse,
    specified_rules,
    validate,
)

from api.graphql.schema import ProofgateSchema
from api.limits.cost import cost_model
from api.limits.validation import document_rules, hide_suggestions
from api.operations.registry import OperationRegistry
from api.operations.trusted import UntrustedCounter, runs_freely
from api.settings.limits import Limits
from api.settings.operations import TrustedDocuments
from api.wire.errors import map_errors
from domain.errors import (
    BadUserInput,
    PersistedQueryNotAllowed,
    QueryTooComplex,
    ServiceUnavailable,
)
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from resolvers.threats.types import ThreatAlert
from services.auth import Principal, Role
from services.context import Services
from storage import Item

__all__ = ["PARSED_KEPT", "SchemaSelections"]

PARSED_KEPT = 256
"""Parsed documents kept, by text: at most 256 x 16 KB of text."""
_ROOT = "threatAlerts"
_SHAPE = (
    "A webhook's document is `subscription ($brand: ID!) { threatAlerts(brandId: $brand) "
    "{ ... } }` or names the brand's id in place of the variable."
)


class SchemaSelections:
    def __init__(
        self,
        schema: ProofgateSchema,
        limits: Limits,
        trusted: TrustedDocuments = TrustedDocuments.OFF,
        registry: OperationRegistry | None = None,
        counter: UntrustedCounter | None = None,
    ) -> None:
        self._schema = schema
        self._rules = [*specified_rules, *document_rules(limits)]
        self._max_cost = limits.max_cost
        self._trusted = trusted
        self._registry = registry
        self._counter = counter
        self._services: Services | None = None
        self._parsed: OrderedDict[str, tuple[DocumentNode, str | None]] = OrderedDict()

    def bind(self, services: Services) -> None:
        """The services deliveries run with, built after the pipeline that
        holds this object."""
        self._services = services

    def check(self, text: str, brand_id: str, principal: Principal) -> None:
        if not runs_freely(self._trusted, self._registry, text, principal):
            if self._trusted is TrustedDocuments.ENFORCE:
                raise PersistedQueryNotAllowed(
                    "document: this server runs only registered operations",
                    hint="Register the webhook's document with the operations; "
                    "`proofgate operations list` shows them.",
                )
            if self._counter is not None:
                self._counter.add()
        try:
            document = parse(text)
        except GraphQLError as error:
            raise BadUserInput(f"document: {error.message}", hint=_SHAPE) from None
        errors = validate(self._schema.graphql_schema, document, self._rules)
        if errors:
            raise BadUserInput(f"document: {hide_suggestions(errors[0].message)}", hint=_SHAPE)
        variable = _brand_variable(document, brand_id)
        variables = {} if variable is None else {variable: brand_id}
        cost = cost_model(self._schema).measure(document, None, variables)
        if cost is None or cost > self._max_cost:
            raise QueryTooComplex(
                f"document: each delivery would read {cost}, over the limit of {self._max_cost}",
                hint="Select fewer fields per alert.",
                cost=cost,
                maxCost=self._max_cost,
            )

    async def run(self, webhook: Item, alert: Item, delivery_id: str) -> dict[str, Any]:
        services = self._services
        if services is None:
            raise ServiceUnavailable("Webhook documents run once the gateway has started")
        document, variable = self._prepared(webhook["document"], webhook["brandId"])
        principal = Principal(Role.BRAND, brand_id=webhook["brandId"])
        context = RequestContext(
            services=services,
            principal=principal,
            loaders=Loaders(services.storage, principal.tenant),
            request_id=delivery_id,
        )
        # The schema declares @defer and @stream, which plain ``execute``
        # refuses; validation refuses both on a subscription.
        result = experimental_execute_incrementally(
            self._schema.graphql_schema,
            document,
            root_value=ThreatAlert.from_item(alert),
            context_value=context,
            variable_values={} if variable is None else {variable: webhook["brandId"]},
        )
        if isawaitable(result):
            result = await result
        if not isinstance(result, ExecutionResult):
            raise ServiceUnavailable("A webhook's document returned increments")
        for error in result.errors or ():
            if isinstance(error.original_error, ServiceUnavailable):
                raise error.original_error  # a read failed: the outbox retries
        body: dict[str, Any] = {"data": result.data}
        if result.errors:
            body["errors"] = [e.formatted for e in map_errors(result.errors, delivery_id)]
        return body

    def _prepared(self, text: str, brand_id: str) -> tuple[DocumentNode, str | None]:
        """The document, parsed once per text while it is among the last
        ``PARSED_KEPT``; it was checked when the webhook was registered."""
        kept = self._parsed.get(text)
        if kept is not None:
            self._parsed.move_to_end(text)
            return kept
        document = parse(text)
        kept = (document, _brand_variable(document, brand_id))
        self._parsed[text] = kept
        while len(self._parsed) > PARSED_KEPT:
            self._parsed.popitem(last=False)
        return kept


def _brand_variable(document: DocumentNode, brand_id: str) -> str | None:
    """The variable that names the brand, if one does; raises unless the
    document has the one shape a webhook runs."""
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if len(operations) != 1 or operations[0].operation is not OperationType.SUBSCRIPTION:
        raise BadUserInput("document: one subscription operation", hint=_SHAPE)
    (operation,) = operations
    fields = operation.selection_set.selections
    if len(fields) != 1 or not isinstance(fields[0], FieldNode) or fields[0].name.value != _ROOT:
        raise BadUserInput(f"document: select {_ROOT} and nothing else at the root", hint=_SHAPE)
    arguments = {a.name.value: a.value for a in fields[0].arguments or ()}
    declared = [d.variable.name.value for d in operation.variable_definitions or ()]
    value = arguments.get("brandId")
    if set(arguments) != {"brandId"}:
        raise BadUserInput(
            f"document: {_ROOT} takes only brandId here; the webhook's filter chooses alerts",
            hint=_SHAPE,
        )
    if isinstance(value, VariableNode) and declared == [value.name.value]:
        return value.name.value
    if isinstance(value, StringValueNode) and value.value == brand_id and not declared:
        return None
    raise BadUserInput(f"document: brandId must be {brand_id} or the one variable", hint=_SHAPE)
