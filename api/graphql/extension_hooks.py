"""Strawberry's extension hooks, classified once per extension class.

For every request and every lifecycle stage, Strawberry asks each of the
schema's extensions whether it has the hook, whether the hook is a generator,
an async generator or a plain function, and wraps it in a fresh context
manager (``functools.update_wrapper`` included). The answers depend only on
the extension's class, so here they are worked out once per class and hook;
a request only creates the context managers themselves, through the same
``contextlib`` decorators and exit stacks, so ordering, exception and
suppression behaviour are Strawberry's own (the differential test is
``tests/api/graphql/test_extension_hooks.py``; docs/design.md, Performance budgets).

A subscription asks for its extensions' results and runs their
``on_stream_result`` hooks on every event it sends, so those are classified
too, looked up once per operation, and only the extensions whose class
overrides ``get_results`` are asked (the base class answers ``{}``, which
adds nothing). How a stage enters its hooks: ``api/graphql/extension_stages.py``.
"""

from __future__ import annotations

import contextlib
import inspect
from asyncio import iscoroutinefunction
from collections.abc import Callable
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

from api.graphql.extension_stages import Call, GeneratorHook, stage

if TYPE_CHECKING:
    from strawberry.types import ExecutionContext

__all__ = ["ClassifiedExtensionsRunner"]

_Factory = Callable[[SchemaExtension], Any]
_MAX_CLASSES = 256
"""Hooks are classified per extension class; a schema has a dozen."""


_FUNCTION, _GENERATOR, _CONTEXT_MANAGER = range(3)


def _classify(extension_class: type, hook_name: str) -> tuple[_Factory, bool, int] | None:
    """What Strawberry's ``get_hook`` decides, for the class instead of the
    instance: the hook, whether it is async, and whether it is a function
    (run on entering, ``api/graphql/extension_stages.py``), a generator
    (entered there) or a context manager."""
    function = getattr(extension_class, hook_name)
    if function is getattr(SchemaExtension, hook_name):
        return None
    if inspect.isgeneratorfunction(function):
        return function, False, _GENERATOR
    if inspect.isasyncgenfunction(function):
        return contextlib.asynccontextmanager(function), True, _CONTEXT_MANAGER
    if callable(function):
        return function, iscoroutinefunction(function), _FUNCTION
    raise ValueError(f"Hook {hook_name} on {extension_class} must be callable, got {function!r}")


class _Classified:
    """The classification cache of one context-manager kind."""

    def __init__(self, hook_name: str) -> None:
        self.hook_name = hook_name
        self.hooks: dict[type, tuple[_Factory, bool, int] | None] = {}

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
        hook, is_async, how = classified
        call: Call | GeneratorHook | partial[Any]
        if how == _FUNCTION:
            call = Call(hook, extension, is_async)
        elif how == _GENERATOR:
            call = GeneratorHook(hook, extension)
        else:
            call = partial(hook, extension)
        return WrappedHook(extension=extension, hook=call, is_async=is_async)  # type: ignore[arg-type]


_NO_EXTENSIONS: list[SchemaExtension] = []


def _classified(base: type[Any], *, stays_entered: bool = False) -> type:
    cache = _Classified(base.HOOK_NAME)

    def get_hook(self: Any, extension: SchemaExtension) -> WrappedHook | None:
        return cache.wrapped(extension)

    return stage(base, get_hook, stays_entered=stays_entered)


_Operation = _classified(OperationContextManager, stays_entered=True)
_Validation = _classified(ValidationContextManager)
_Parsing = _classified(ParsingContextManager)
_Executing = _classified(ExecutingContextManager, stays_entered=True)
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
