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
"""

from __future__ import annotations

import contextlib
import inspect
from asyncio import iscoroutinefunction
from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from typing import Any

from strawberry.extensions import SchemaExtension
from strawberry.extensions.context import (
    ExecutingContextManager,
    OperationContextManager,
    ParsingContextManager,
    ValidationContextManager,
    WrappedHook,
)
from strawberry.extensions.runner import SchemaExtensionsRunner

__all__ = ["ClassifiedExtensionsRunner"]

_Factory = Callable[[SchemaExtension], Any]
_MAX_CLASSES = 256
"""Hooks are classified per extension class; a schema has a dozen."""


def _from_function(function: Callable[..., Any]) -> tuple[_Factory, bool]:
    if iscoroutinefunction(function):

        @contextlib.asynccontextmanager
        async def run_async(extension: SchemaExtension) -> AsyncIterator[None]:
            await function(extension)
            yield

        return run_async, True

    @contextlib.contextmanager
    def run(extension: SchemaExtension) -> Iterator[None]:
        function(extension)
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


def _classified(base: type) -> type:
    cache = _Classified(base.HOOK_NAME)  # type: ignore[attr-defined]

    def get_hook(self: Any, extension: SchemaExtension) -> WrappedHook | None:
        return cache.wrapped(extension)

    return type(base.__name__, (base,), {"__slots__": (), "get_hook": get_hook})


_Operation = _classified(OperationContextManager)
_Validation = _classified(ValidationContextManager)
_Parsing = _classified(ParsingContextManager)
_Executing = _classified(ExecutingContextManager)


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
