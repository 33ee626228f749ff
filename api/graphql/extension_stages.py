"""How a lifecycle stage enters its extensions' hooks, lighter than Strawberry.

A live subscription keeps its operation and execution stages entered for as
long as it lives, so what entering leaves behind is memory every idle
subscription holds (docs/design.md, Alert fan-out):

- a hook that is a plain or coroutine function runs when its stage is
  entered and leaves nothing to exit. Strawberry wraps it in a generator
  context manager that does nothing on exit (it neither suppresses nor
  replaces an exception), so the wrapper is skipped, not its behaviour;
- the exit stacks keep their callbacks in a list, not a deque (an empty
  deque alone is 600 bytes);
- a stage that stays entered forgets its list of hooks, which only entering
  reads;
- a generator hook is entered here and its exit stack keeps only the
  generator (``_Leave``), not ``contextlib``'s context manager around
  it (its dict of the function, arguments and docstring, and a bound
  method): 500 bytes a hook, seven hooks an idle subscription keeps.
  Exiting does what ``contextlib.contextmanager``'s exit does.

Async generator hooks are entered through ``contextlib``. The stack exits
them all, as Strawberry's does, so ordering, exceptions and suppression are
its own (the differential test is ``tests/api/graphql/test_extension_hooks.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator
from types import TracebackType
from typing import Any

from strawberry.extensions import SchemaExtension
from strawberry.extensions.context import WrappedHook

__all__ = ["Call", "GeneratorHook", "stage"]

_NO_HOOKS: list[WrappedHook] = []


class Call:
    """A plain or coroutine function hook of one extension."""

    __slots__ = ("extension", "function", "is_async")

    def __init__(
        self, function: Callable[..., Any], extension: SchemaExtension, is_async: bool
    ) -> None:
        self.function = function
        self.extension = extension
        self.is_async = is_async


class GeneratorHook:
    """A generator hook of one extension, entered by ``_enter``."""

    __slots__ = ("extension", "function")

    def __init__(self, function: Callable[..., Any], extension: SchemaExtension) -> None:
        self.function = function
        self.extension = extension


def _enter(hook: GeneratorHook, arguments: tuple[Any, ...]) -> _Leave:
    """As ``contextlib.contextmanager``'s ``__enter__``."""
    generator = hook.function(hook.extension, *arguments)
    try:
        next(generator)
    except StopIteration:
        raise RuntimeError("generator didn't yield") from None
    return _Leave(generator)


class _Leave:
    """An exit callback: ``contextlib.contextmanager``'s ``__exit__``, for a
    generator entered by ``_enter``."""

    __slots__ = ("generator",)

    def __init__(self, generator: Generator[Any, None, None]) -> None:
        self.generator = generator

    def __call__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        if kind is None:
            try:
                next(self.generator)
            except StopIteration:
                return False
            raise RuntimeError("generator didn't stop")
        if value is None:
            value = kind()
        try:
            self.generator.throw(value)
        except StopIteration as stopped:
            # Suppressed, unless the StopIteration is the one thrown in.
            return stopped is not value
        except RuntimeError as error:
            if error is value:
                error.__traceback__ = traceback
                return False
            if isinstance(value, StopIteration) and error.__cause__ is value:
                value.__traceback__ = traceback
                return False
            raise
        except BaseException as error:
            if error is not value:
                raise
            error.__traceback__ = traceback
            return False
        raise RuntimeError("generator didn't stop after throw()")


class _ExitStack(contextlib.ExitStack):
    def __init__(self) -> None:
        self._exit_callbacks: Any = []

    def __exit__(self, *exc_details: Any) -> bool | None:
        """With nothing to exit, ``contextlib`` would return False too."""
        if not self._exit_callbacks:
            return False
        return super().__exit__(*exc_details)


class _AsyncExitStack(contextlib.AsyncExitStack):
    def __init__(self) -> None:
        self._exit_callbacks: Any = []

    async def __aexit__(self, *exc_details: Any) -> bool | None:
        if not self._exit_callbacks:
            return False
        return await super().__aexit__(*exc_details)


def stage(base: type[Any], get_hook: Callable[..., Any], *, stays_entered: bool) -> type:
    """``base`` (one of Strawberry's stage context managers) entering its
    hooks as above; ``stays_entered``: the stage lasts as long as its
    operation (the operation and execution stages)."""
    passes_result = base.HOOK_NAME == "on_stream_result"

    def __enter__(self: Any) -> None:
        stack = self.exit_stack = _ExitStack()
        arguments = (self.result,) if passes_result else ()
        for hook in self.hooks:
            if hook.is_async:
                raise RuntimeError(
                    f"SchemaExtension hook {hook.extension}.{self.HOOK_NAME} "
                    "failed to complete synchronously."
                )
            call = hook.hook
            if type(call) is Call:
                call.function(call.extension, *arguments)
            elif type(call) is GeneratorHook:
                stack.push(_enter(call, arguments))
            else:
                stack.enter_context(call(*arguments))
        if stays_entered:
            self.hooks = _NO_HOOKS

    async def __aenter__(self: Any) -> None:
        stack = self.async_exit_stack = _AsyncExitStack()
        arguments = (self.result,) if passes_result else ()
        for hook in self.hooks:
            call = hook.hook
            if type(call) is Call:
                outcome = call.function(call.extension, *arguments)
                if call.is_async:
                    await outcome
            elif type(call) is GeneratorHook:
                stack.push(_enter(call, arguments))
            elif hook.is_async:
                await stack.enter_async_context(call(*arguments))
            else:
                stack.enter_context(call(*arguments))
        if stays_entered:
            self.hooks = _NO_HOOKS

    attributes = {
        "__slots__": (),
        "get_hook": get_hook,
        "__enter__": __enter__,
        "__aenter__": __aenter__,
    }
    return type(base.__name__, (base,), attributes)
