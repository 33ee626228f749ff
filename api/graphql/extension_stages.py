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
  reads.

Generator hooks are entered through ``contextlib`` and exited by the stack, as
Strawberry does, so ordering, exceptions and suppression are its own (the
differential test is ``tests/api/graphql/test_extension_hooks.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from strawberry.extensions import SchemaExtension
from strawberry.extensions.context import WrappedHook

__all__ = ["Call", "stage"]

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
