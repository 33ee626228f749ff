"""Strawberry's extension hooks, classified once per extension class.

For every request and every lifecycle stage, Strawberry asks each of the
schema's extensions whether it has the hook, whether the hook is a generator,
an async generator or a plain function, and wraps it in a fresh context
manager (``functools.update_wrapper`` included). The answers depend only on
the extension's class, so here they are worked out once per class and hook;
a request only creates the context managers themselves, through the same
``contextlib`` decorators and the same exit stack, so ordering, exception
and suppression behaviour are Strawberry's own (the differential test is
``tests/api/test_extension_hooks.py``; docs/design.md, Performance budgets).

A subscription asks for its extensions' results and runs their
``on_stream_result`` hooks on every event it sends, so those are classified
too, and only the extensions whose class overrides ``get_results`` are asked
(the base class answers ``{}``, which adds nothing). A live subscription's
operation and execution stages stay entered for as long as it lives: once
entered, a stage forgets its list of hooks (its exit stack holds what exit
needs), since that list would otherwise be kept per idle subscription.
"""

from __future__ import annotations

import contextlib
import inspect
from asyncio import iscoroutinefunction
from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from strawberry.extensions import SchemaExtension
from strawberry.extensions.context import (
    ExecutingContextManager,
    OperationContextManager,
    ParsingContextManager,
    StreamResultContextManager,
    ValidationContextManager,
    WrappedHook,
)
from strawberry.extensions.runner import SchemaExtensionsRunner
from strawberry.utils.await_maybe import await_maybe

if TYPE_CHECKING:
    from strawberry.types import ExecutionContext

__all__ = ["ClassifiedExtensionsRunner"]

_Factory = Callable[[SchemaExtension], Any]
_MAX_CLASSES = 256
"""Hooks are classified per extension class; a schema has a dozen."""


def _from_function(function: Callable[..., Any]) -> tuple[_Factory, bool]:
    """A plain or coroutine function as a context manager, passing on the
    stream result that ``on_stream_result`` hooks receive, as Strawberry does."""
    if iscoroutinefunction(function):

        @contextlib.asynccontextmanager
        async def run_async(extension: SchemaExtension, *result: Any) -> AsyncIterator[None]:
            await function(extension, *result)
            yield

        return run_async, True

    @contextlib.contextmanager
    def run(extension: SchemaExtension, *result: Any) -> Iterator[None]:
        function(extension, *result)
        yield

    return run, False


def _classify(extension_class: type, hook_name: str) -> tuple[_Factory, bool] | None:
    """What Strawberry's ``get_hook`` decides, for the class instead of the instance."""
    function = getattr(extension_class, hook_name)
    if function is getattr(SchemaExtension, hook_name):
        return None
    if inspect.isgeneratorfunction(function):
        return contextlib.contextmanager(function), False
    if inspect.isasyncgenfunction(function):
        return contextlib.asynccontextmanager(function), True
    if callable(function):
        return _from_function(function)
    raise ValueError(f"Hook {hook_name} on {extension_class} must be callable, got {function!r}")


class _Classified:
    """The classification cache of one context-manager kind."""

    def __init__(self, hook_name: str) -> None:
        self.hook_name = hook_name
        self.hooks: dict[type, tuple[_Factory, bool] | None] = {}

    def wrapped(self, extension: SchemaExtension) -> WrappedHook | None:
        kind = type(extension)
        try:
            classified = self.hooks[kind]
        except KeyError:
            classified = _classify(kind, self.hook_name)
            if len(self.hooks) < _MAX_CLASSES:
                self.hooks[kind] = classified
        if classified is None:
            return None
        factory, is_async = classified
        return WrappedHook(extension=extension, hook=partial(factory, extension), is_async=is_async)


_NO_HOOKS: list[WrappedHook] = []
_NO_EXTENSIONS: list[SchemaExtension] = []


def _classified(base: type[Any], *, forgets_hooks: bool = False) -> type:
    cache = _Classified(base.HOOK_NAME)

    def get_hook(self: Any, extension: SchemaExtension) -> WrappedHook | None:
        return cache.wrapped(extension)

    attributes: dict[str, Any] = {"__slots__": (), "get_hook": get_hook}
    if forgets_hooks:

        def __enter__(self: Any) -> None:
            base.__enter__(self)
            self.hooks = _NO_HOOKS

        async def __aenter__(self: Any) -> None:
            await base.__aenter__(self)
            self.hooks = _NO_HOOKS

        attributes.update(__enter__=__enter__, __aenter__=__aenter__)
    return type(base.__name__, (base,), attributes)


_Operation = _classified(OperationContextManager, forgets_hooks=True)
_Validation = _classified(ValidationContextManager)
_Parsing = _classified(ParsingContextManager)
_Executing = _classified(ExecutingContextManager, forgets_hooks=True)
_StreamResult = _classified(StreamResultContextManager)


class _Results:
    """Which extension classes override ``get_results``, asked once per class."""

    def __init__(self) -> None:
        self.overrides: dict[type, bool] = {}

    def asked(self, extensions: list[SchemaExtension]) -> list[SchemaExtension]:
        overrides = self.overrides
        asked = []
        for extension in extensions:
            kind = type(extension)
            answer = overrides.get(kind)
            if answer is None:
                answer = kind.get_results is not SchemaExtension.get_results
                if len(overrides) < _MAX_CLASSES:
                    overrides[kind] = answer
            if answer:
                asked.append(extension)
        return asked


_RESULTS = _Results()


class ClassifiedExtensionsRunner(SchemaExtensionsRunner):
    def operation(self) -> OperationContextManager:
        manager: OperationContextManager = _Operation(self.extensions)
        return manager

    def validation(self) -> ValidationContextManager:
        manager: ValidationContextManager = _Validation(self.extensions)
        return manager

    def parsing(self) -> ParsingContextManager:
        manager: ParsingContextManager = _Parsing(self.extensions)
        return manager

    def executing(self) -> ExecutingContextManager:
        manager: ExecutingContextManager = _Executing(self.extensions)
        return manager

    _stream_hooks: list[WrappedHook] | None = None
    _asked: list[SchemaExtension] | None = None

    def on_stream_result(self, result: Any) -> StreamResultContextManager:
        """The hooks are looked up on the first result and kept for the
        rest: a runner's extensions do not change while its operation runs."""
        if self._stream_hooks is None:
            self._stream_hooks = _StreamResult(self.extensions, result).hooks
        manager: StreamResultContextManager = _StreamResult(_NO_EXTENSIONS, result)
        manager.hooks = self._stream_hooks
        return manager

    async def get_extensions_results(self, ctx: ExecutionContext) -> dict[str, Any]:
        if self._asked is None:
            self._asked = _RESULTS.asked(self.extensions)
        data: dict[str, Any] = {}
        for extension in self._asked:
            results = extension.get_results()
            data.update(results if type(results) is dict else await await_maybe(results))
        data.update(ctx.extensions_results)
        return data
