"""The graphql-core executor Strawberry runs, with compiled plans.

Strawberry hands its ``execution_context_class`` to graphql-core's
``execute``; by the time ``execute_operation`` runs, parsing, validation,
every schema extension's limit and variable coercion are done. Here the
operation runs its cached plan, or graphql-core's own code when the plan
cannot cover it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from typing import Any, ClassVar, cast

from graphql import (
    ExecutionResult,
    ExperimentalIncrementalExecutionResults,
    GraphQLError,
    GraphQLLeafType,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLResolveInfoHelpers,
    OperationType,
    located_error,
)
from graphql.execution.collect_fields import FieldDetailsList
from graphql.execution.executor import CollectedErrors, Executor
from graphql.execution.values import get_variable_values
from graphql.language import DocumentNode
from graphql.pyutils import Path
from strawberry.execution.is_awaitable import optimized_is_awaitable as is_awaitable
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from api.graphql.execution.async_helpers import weak_helpers
from api.graphql.execution.budget import ResponseBytes, ends_operation, key_bytes, leaf_bytes
from api.graphql.execution.cache import PlanCache
from api.graphql.execution.deferred import within_read_budget
from api.graphql.execution.fanout import SharedEvents, Sharers
from api.graphql.execution.plan import OperationPlan, Unsupported, compile_operation
from api.graphql.execution.protocols import OperationContext
from api.graphql.execution.variables import Variables
from api.observability.fallbacks import fell_back
from api.settings.limits import MAX_RESPONSE_BYTES, SHARED_EVENTS, Lane
from domain.errors import BudgetExceeded

__all__ = ["COMPILED", "GRAPHQL_CORE", "CompiledExecutor", "OperationStart", "compiled_executor"]

COMPILED = "compiled"
GRAPHQL_CORE = "graphql-core"
_UNKNOWN = object()


class CompiledExecutor(StrawberryGraphQLCoreExecutionContext):
    plans: ClassVar[PlanCache | None]
    """None: every operation runs on graphql-core (``PROOFGATE_EXECUTION``)."""
    events: ClassVar[SharedEvents]
    max_response_bytes: ClassVar[int]
    response_bytes: ResponseBytes
    """What this execution's data will take as JSON (docs/design.md, Response budget)."""

    _shared_by: Sharers | object | None = _UNKNOWN
    """Who a subscription's events are shared by, worked out when it starts
    from its plan, visibility and variables (None: run on graphql-core)."""

    _helpers: GraphQLResolveInfoHelpers | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._helpers = None

    @property
    def async_helpers(self) -> GraphQLResolveInfoHelpers:
        """The resolvers' helpers, held without a cycle (``weak_helpers``),
        made when a resolve info first asks: most operations build none."""
        helpers = self._helpers
        if helpers is None:
            helpers = self._helpers = weak_helpers(self)
        return helpers

    @async_helpers.setter
    def async_helpers(self, helpers: GraphQLResolveInfoHelpers) -> None:
        """graphql-core's ``__init__`` sets its own, over a cycle: ours replace them."""

    @classmethod
    def build(cls, *args: Any, **kwargs: Any) -> list[GraphQLError] | Executor[Any]:
        """A subscription works out who shares its events when it starts,
        not on its first alert, which a thousand subscribers may share."""
        executor = super().build(*args, **kwargs)
        if (
            isinstance(executor, CompiledExecutor)
            and executor.operation.operation is OperationType.SUBSCRIPTION
        ):
            executor._sharers()
        return executor

    def build_per_event_executor(self, payload: Any) -> Executor[Any]:
        """graphql-core's copy of the subscription's executor for one event.
        An alert fanned out to a thousand subscribers asks for a thousand:
        an event another subscriber's execution already answered gets a
        stand-in holding that answer, and the others a copy made without
        ``copy.copy``'s generic protocol (docs/design.md, Alert fan-out)."""
        shared_by = self._sharers()
        if shared_by is not None:
            answer = self.events.answered((shared_by, id(payload)), payload)
            if answer is not None:
                return cast("Executor[Any]", _Answered(answer))
        executor = object.__new__(type(self))
        executor.__dict__ = self.__dict__.copy()  # as ``OperationStart.start`` copies
        executor.root_value = payload
        executor.collected_errors = CollectedErrors()
        return executor

    def execute_operation(self, serially: bool | None = None) -> Any:
        """``serially`` is False only for a subscription's events (each one
        runs the subscription's selection set on the event), None otherwise.
        An event another subscriber already ran is answered from that run
        (``SharedEvents``), before this one copies its context."""
        if serially is False:
            shared_by = self._sharers()
            if shared_by is not None:
                key = (shared_by, id(self.root_value))
                return self.events.result(key, self.root_value, self._run_event)
            self._begin(GRAPHQL_CORE)
            return super().execute_operation(serially)
        plan = self.compiled_plan() if serially is None else None
        self._begin(COMPILED if plan else GRAPHQL_CORE)
        if plan is None:
            return self._settled(super().execute_operation(serially))
        return self._run(plan)

    def _settled(self, result: Any) -> Any:
        """The result once no work of this operation runs in the background.

        A field error that bubbles (a budget that ends the operation above
        all) leaves its siblings' coroutines to settle in the background, as
        graphql-core does: they would outlive the response, each a
        coroutine per failing request under hostile load, and one the event
        loop closes before it runs is never awaited (graphql-core #269). So
        the answer waits for them; only an operation that failed pays it."""
        if is_awaitable(result):
            return self._settle_after(result)
        if self.background_futures:
            return self._settle_after(_ready(result))
        return result

    async def _settle_after(self, result: Any) -> Any:
        settled = await result
        await self._background_settled()
        return settled

    async def _background_settled(self) -> None:
        background = self.background_futures
        while background:
            await asyncio.wait(list(background))

    def _begin(self, mode: str) -> None:
        self.response_bytes = ResponseBytes(self.max_response_bytes)
        context: OperationContext | None = self.context_value
        if context is not None:
            # A WebSocket context serves many operations: each, and each of a
            # subscription's events that runs, runs on its own copy (SocketContext).
            context = self.context_value = context.for_operation()
            context.execution = mode

    def sharers(self) -> Sharers | None:
        """Who this subscription's events are shared by; None: no plan runs them."""
        return self._sharers()

    def run_event(self, context: Any, event: Any) -> Any:
        """The subscription's selection run on ``event`` with ``context`` (a
        copy of this executor, as ``build_per_event_executor`` makes, on its
        plan): the one run the direct fan-out makes for every subscriber of
        ``sharers()`` (docs/design.md, Alert fan-out)."""
        sharers = self._sharers()
        assert sharers is not None
        executor = object.__new__(type(self))
        executor.__dict__ = self.__dict__.copy()
        executor.root_value = event
        executor.context_value = context
        executor.collected_errors = CollectedErrors()
        executor.background_futures = set()
        executor.pending_incremental_futures = set()
        executor._helpers = None
        executor._begin(COMPILED)
        return executor._run(sharers.plan)

    def _sharers(self) -> Sharers | None:
        shared_by = self._shared_by
        if shared_by is _UNKNOWN:
            plan = self.compiled_plan()
            shared_by = (
                None
                if plan is None
                else self.events.sharers(plan, _visibility(self.context_value), self._variables())
            )
            self._shared_by = shared_by
        return shared_by  # type: ignore[return-value]

    def _run_event(self) -> Any:
        """The one run of an event that everyone sharing it is answered from."""
        sharers = cast("Sharers", self._shared_by)
        self._begin(COMPILED)
        return self._run(sharers.plan)

    def _run(self, plan: OperationPlan) -> Any:
        if plan.single_loads:
            context: OperationContext | None = self.context_value
            if context is not None:
                context.loaders.single = plan.single_loads
        try:
            data = plan.run(self, self.root_value)
        except (GraphQLError, BudgetExceeded) as error:
            self.collected_errors.add(located_error(error), None)
            return self._settled(self.build_response(None))
        if is_awaitable(data):
            return self._await_data(data)
        return self.build_response(data)

    async def _await_data(self, data: Any) -> ExecutionResult:
        try:
            settled = await data
        except (GraphQLError, BudgetExceeded) as error:
            self.collected_errors.add(located_error(error), None)
            settled = None
        if self.background_futures:  # the compiled path's ``_settled``
            await self._background_settled()
        return self.build_response(settled)  # type: ignore[return-value]

    def build_response(
        self, data: dict[str, Any] | None
    ) -> ExecutionResult | ExperimentalIncrementalExecutionResults:
        """Increments (@defer, @stream) read within the operation's read budget.
        With no hook, no error and nothing deferred or streamed, graphql-core's
        answer is the data alone, built here without its three calls
        (``run_async_work_finished_hook``, ``get_incremental_work`` and the base
        ``build_response``: a tenth of a small query's execution)."""
        if self.hooks is None and not (self.collected_errors.errors or self.tasks or self.streams):
            return ExecutionResult(data, None)
        return within_read_budget(super().build_response(data))

    def handle_field_error(
        self,
        raw_error: Exception,
        return_type: GraphQLOutputType,
        field_details_list: FieldDetailsList,
        path: Path,
    ) -> None:
        """A budget of the whole operation that ran out is raised on, up to
        the operation, which then answers that one error and no data."""
        if ends_operation(raw_error):
            raise located_error(raw_error, [d.node for d in field_details_list], path.as_list())
        super().handle_field_error(raw_error, return_type, field_details_list, path)

    def execute_field(
        self,
        parent_type: GraphQLObjectType,
        source: Any,
        field_details_list: FieldDetailsList,
        path: Path,
        position_context: Any,
    ) -> Any:
        """graphql-core's path: each field's response key is counted."""
        self.response_bytes.used += key_bytes(path.key)  # type: ignore[arg-type]
        return super().execute_field(
            parent_type, source, field_details_list, path, position_context
        )

    def complete_leaf_value(self, return_type: GraphQLLeafType, result: Any) -> Any:  # type: ignore[override]
        completed = super().complete_leaf_value(return_type, result)
        self.response_bytes.charge(leaf_bytes(completed))
        return completed

    def _variables(self) -> str:
        return repr(sorted(self.variable_values.coerced.items()))

    def compiled_plan(self, *, counted: bool = True) -> OperationPlan | None:
        """This operation's plan for these variables, compiled on first use;
        None: graphql-core runs it, a fallback counted by cause, but not when
        compiled ahead at start-up (``counted`` False), before any request
        and before logging is set up."""
        plans = self.plans
        if plans is None:
            return None
        if self.middleware_manager is not None and self.middleware_manager.middlewares:
            fell_back(Lane.PLAN, "field middleware")
            return None
        if self.abort_signal is not None or self.hooks is not None:
            fell_back(Lane.PLAN, "abort signal or hooks")
            return None
        entry = plans.entry(self.operation, self.fragment_definitions.values())
        conditions = entry.conditions
        if conditions:
            coerced = self.variable_values.coerced
            values = tuple([coerced.get(variable) for variable in conditions])
        else:  # most operations: no generator to make and run for nothing
            values = ()
        plan = entry.plans.get(values, _UNKNOWN)
        if plan is _UNKNOWN:
            plans.stats.compilations += 1
            cause = ""
            try:
                plan = compile_operation(self, fused=plans.fused, projection=plans.projection)
            except Unsupported as unsupported:
                plans.stats.fallbacks += 1
                plan, cause = None, unsupported.cause
            plans.store(entry, values, plan, cause)
        if plan is None and counted:
            fell_back(Lane.PLAN, entry.causes.get(values, "unsupported"))
        return plan  # type: ignore[return-value]


class OperationStart:
    """One operation of one validated document, started per request without
    graphql-core's ``build``.

    ``build`` finds the operation and its fragments in the document, checks
    the schema and makes an executor of some forty attributes; for a small
    query that cost more than running its plan. All of it but the context and
    the variables is fixed by the document, so the first start builds an
    executor once, as a template, and every start copies its attributes (as
    ``build_per_event_executor`` does for a subscription's events) with this
    request's context, coerced variables and fresh per-execution state
    (docs/design.md, Prepared lane).

    Only an operation its compiled plan runs starts here: ``start`` answers
    None, having run nothing, for one graphql-core would run (no plan for
    these ``@skip``/``@include`` values) or whose variables do not coerce, and
    the caller runs it through graphql-core's ``execute``, which says why.
    graphql-core's own executor fills caches keyed by its per-request objects;
    a plan touches none of them, so the copies share the template's.
    """

    __slots__ = ("_document", "_executor_class", "_name", "_schema", "_template", "_variables")

    def __init__(
        self,
        executor_class: type[Executor[Any]],
        schema: Any,
        document: DocumentNode,
        operation_name: str | None,
    ) -> None:
        self._executor_class = executor_class
        self._schema = schema
        self._document = document
        self._name = operation_name
        self._template: CompiledExecutor | None = None
        self._variables: Variables | None = None
        """The operation's variables, to coerce per start; None when it declares none."""

    def start(self, context: Any, variables: dict[str, Any] | None) -> Any:
        """The operation's ``ExecutionResult``, or an awaitable of it; None
        when the caller should run it through graphql-core's ``execute``."""
        executor = self._executor(context, variables)
        if executor is None:
            return None
        plan = executor.compiled_plan(counted=False)
        if plan is None:  # counted once, by graphql-core's run of it
            return None
        executor._begin(COMPILED)
        return executor._run(plan)

    def subscription(self, context: Any, variables: dict[str, Any] | None) -> Any:
        """An executor of the subscription for ``context``, with who shares
        its events worked out; None when its plan does not run them or its
        variables do not coerce (graphql-core's path says why)."""
        executor = self._executor(context, variables)
        if executor is None:
            return None
        executor._shared_by = _UNKNOWN  # the template's was worked out without a context
        return executor if executor.sharers() is not None else None

    def _executor(self, context: Any, variables: dict[str, Any] | None) -> CompiledExecutor | None:
        template = self._template or self._build(variables)
        if template is None:
            return None
        executor = object.__new__(type(template))
        # A copy of the template's dict, assigned: one copy of its table,
        # where ``update`` inserted the forty attributes one by one (8x the cost).
        executor.__dict__ = template.__dict__.copy()
        coercion = self._variables
        if coercion is not None:
            inputs = variables or {}
            coerced = coercion.coerce(inputs)
            if coerced is None:
                checked = get_variable_values(
                    template.schema,
                    template.operation.variable_definitions or (),
                    inputs,
                    hide_suggestions=template.hide_suggestions,
                )
                if isinstance(checked, list):
                    return None  # graphql-core's execute says what is wrong
                fell_back(Lane.PREPARED, "variables only graphql-core coerced")
                coerced = checked
            executor.variable_values = coerced
        executor.context_value = context
        executor.collected_errors = CollectedErrors()
        executor.background_futures = set()
        executor.pending_incremental_futures = set()
        executor._helpers = None
        return executor

    def _build(self, variables: dict[str, Any] | None) -> CompiledExecutor | None:
        built = self._executor_class.build(
            self._schema,
            self._document,
            raw_variable_values=variables,
            operation_name=self._name,
            is_awaitable=is_awaitable,  # type: ignore[arg-type]
        )
        if not isinstance(built, CompiledExecutor):
            return None  # variables that do not coerce: graphql-core says why
        definitions = built.operation.variable_definitions
        self._variables = Variables(self._schema, definitions) if definitions else None
        self._template = built
        return built


def compiled_executor(
    plans: PlanCache | None,
    max_response_bytes: int = MAX_RESPONSE_BYTES,
    shared_events: int = SHARED_EVENTS,
) -> type[CompiledExecutor]:
    """An executor class bound to one schema's plan cache; with None it runs
    graphql-core's executor and only reports that it did. Both count the
    response against ``max_response_bytes``, and keep ``shared_events``
    events' results for a fan-out's next subscribers."""
    attributes = {
        "plans": plans,
        "events": SharedEvents(shared_events),
        "max_response_bytes": max_response_bytes,
    }
    return type("CompiledExecutor", (CompiledExecutor,), attributes)


async def _ready(value: Any) -> Any:
    return value


class _Answered:
    """Stands in for an event's executor when the event is already answered:
    graphql-core's ``execute_subscription_event`` only asks it to execute."""

    __slots__ = ("_answer",)

    def __init__(self, answer: Any) -> None:
        self._answer = answer

    def execute_operation(self, serially: bool | None = None) -> Any:
        return self._answer


def _visibility(context: OperationContext | None) -> tuple[Hashable, str | None]:
    """What decides which data a subscriber may see: its role and brand
    (without a context, as graphql-core allows, nobody's)."""
    if context is None:
        return (None, None)
    principal = context.principal
    return (principal.role, principal.brand_id)
