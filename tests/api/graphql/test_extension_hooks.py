"""``ClassifiedExtensionsRunner`` against Strawberry's own runner.

Every combination of hook kinds (none, generator, async generator, function,
coroutine function) and behaviours (plain, raising before or after its
``yield``, swallowing the stage's error) runs a stage that succeeds or
raises, through both runners; what ran, in which order, and what came out
must be the same. ``on_stream_result`` hooks also receive the result, and
``get_results`` of every kind of extension adds up to the same dict.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from strawberry.extensions import SchemaExtension
from strawberry.extensions.runner import SchemaExtensionsRunner

from api.graphql.extension_hooks import ClassifiedExtensionsRunner

KINDS = ("none", "generator", "async-generator", "function", "coroutine")
BEHAVIOURS = ("plain", "raise-before", "raise-after", "swallow")
STAGES = ("operation", "validation", "parsing", "executing", "on_stream_result")
HOOKS = {
    "operation": "on_operation",
    "validation": "on_validate",
    "parsing": "on_parse",
    "executing": "on_execute",
    "on_stream_result": "on_stream_result",
}


class Boom(Exception):
    pass


def _extension_class(kind: str, behaviour: str, name: str) -> type[SchemaExtension]:
    """One extension class with ``kind`` hooks for every stage."""

    def before(self: Any, *result: Any) -> None:
        self.log.append(f"{name}:before{result}")
        if behaviour == "raise-before":
            raise Boom(f"{name} before")

    def after(self: Any, failed: BaseException | None) -> None:
        self.log.append(f"{name}:after:{type(failed).__name__ if failed else '-'}")
        if behaviour == "raise-after":
            raise Boom(f"{name} after")

    def generator(self: Any, *result: Any) -> Iterator[None]:
        before(self, *result)
        try:
            yield
        except Boom as error:
            after(self, error)
            if behaviour != "swallow":
                raise
            return
        after(self, None)

    async def async_generator(self: Any, *result: Any) -> AsyncIterator[None]:
        before(self, *result)
        try:
            yield
        except Boom as error:
            after(self, error)
            if behaviour != "swallow":
                raise
            return
        after(self, None)

    def function(self: Any, *result: Any) -> None:
        before(self, *result)

    async def coroutine(self: Any, *result: Any) -> None:
        before(self, *result)

    hooks = {
        "none": None,
        "generator": generator,
        "async-generator": async_generator,
        "function": function,
        "coroutine": coroutine,
    }[kind]
    attributes = {hook: hooks for hook in HOOKS.values()} if hooks else {}
    return type(f"Extension_{name}", (SchemaExtension,), attributes)


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


async def _run(
    runner_class: type[SchemaExtensionsRunner],
    classes: list[type[SchemaExtension]],
    stage: str,
    stage_fails: bool,
    *,
    synchronous: bool = False,
) -> tuple[list[str], list[str]]:
    """What ran and how each round ended; ``on_stream_result`` runs two
    results through one runner, as a subscription does."""
    log: list[str] = []
    extensions = []
    for extension_class in classes:
        extension = extension_class()
        extension.log = log  # type: ignore[attr-defined]
        extensions.append(extension)
    runner = runner_class(execution_context=None, extensions=extensions)  # type: ignore[arg-type]
    rounds = ("r1", "r2") if stage == "on_stream_result" else (None,)
    outcomes = []
    for result in rounds:
        manager = runner.on_stream_result(result) if result else getattr(runner, stage)()
        try:
            if synchronous:
                with manager:
                    _body(log, stage_fails)
            else:
                async with manager:
                    _body(log, stage_fails)
        except Exception as error:
            outcomes.append(f"{type(error).__name__}: {_ADDRESS.sub('', str(error))}")
        else:
            outcomes.append("ok")
    return log, outcomes


def _body(log: list[str], stage_fails: bool) -> None:
    log.append("stage")
    if stage_fails:
        raise Boom("stage")


CASES = list(
    itertools.product(
        itertools.product(KINDS, BEHAVIOURS), itertools.product(KINDS, BEHAVIOURS), [False, True]
    )
)


@pytest.mark.parametrize("middle", ["generator", "function"])
@pytest.mark.parametrize("synchronous", [False, True], ids=["async", "sync"])
@pytest.mark.parametrize("stage", STAGES)
async def test_every_hook_combination_runs_as_strawberry_runs_it(
    stage: str, synchronous: bool, middle: str
) -> None:
    """With a function in the middle, some stages have nothing to exit."""
    for (kind_a, behaviour_a), (kind_b, behaviour_b), stage_fails in CASES:
        classes = [
            _extension_class(kind_a, behaviour_a, "a"),
            _extension_class(middle, "plain", "m"),
            _extension_class(kind_b, behaviour_b, "b"),
        ]
        expected = await _run(
            SchemaExtensionsRunner, classes, stage, stage_fails, synchronous=synchronous
        )
        actual = await _run(
            ClassifiedExtensionsRunner, classes, stage, stage_fails, synchronous=synchronous
        )
        case = (stage, kind_a, behaviour_a, kind_b, behaviour_b, stage_fails)
        assert actual == expected, case


async def test_the_comparison_sees_a_difference() -> None:
    """Positive control: two orders of the same extensions log differently."""
    a = _extension_class("generator", "plain", "a")
    b = _extension_class("async-generator", "plain", "b")
    first = await _run(ClassifiedExtensionsRunner, [a, b], "operation", False)
    second = await _run(ClassifiedExtensionsRunner, [b, a], "operation", False)
    assert first != second
    assert first[0] == ["a:before()", "b:before()", "stage", "b:after:-", "a:after:-"]
    streamed = await _run(ClassifiedExtensionsRunner, [a, b], "on_stream_result", False)
    assert streamed[0][:2] == ["a:before('r1',)", "b:before('r1',)"]
    assert "a:before('r2',)" in streamed[0]


def _results_class(kind: str, name: str) -> type[SchemaExtension]:
    def results(self: Any) -> dict[str, Any]:
        return {name: kind, "shared": name}

    async def async_results(self: Any) -> dict[str, Any]:
        return {name: kind, "shared": name}

    hooks = {"none": {}, "function": {"get_results": results}}
    hooks["coroutine"] = {"get_results": async_results}
    return type(f"Results_{name}", (SchemaExtension,), hooks[kind])


class _Context:
    def __init__(self) -> None:
        self.extensions_results = {"from-context": 1, "shared": "context"}


@pytest.mark.parametrize(
    "kinds", list(itertools.product(("none", "function", "coroutine"), repeat=3))
)
async def test_extension_results_add_up_as_strawberry_adds_them(kinds: tuple[str, ...]) -> None:
    classes = [_results_class(kind, name) for kind, name in zip(kinds, "abc", strict=True)]

    async def results(runner_class: type[SchemaExtensionsRunner]) -> list[tuple[str, Any]]:
        runner = runner_class(execution_context=None, extensions=[c() for c in classes])  # type: ignore[arg-type]
        return list((await runner.get_extensions_results(_Context())).items())  # type: ignore[arg-type]

    expected = await results(SchemaExtensionsRunner)
    assert await results(ClassifiedExtensionsRunner) == expected
    assert len(expected) == 2 + sum(kind != "none" for kind in kinds)


async def test_a_schema_runs_its_operations_through_the_classified_runner() -> None:
    from api.graphql.schema import build_schema

    schema = build_schema()
    runner = schema.create_extensions_runner(None, [])  # type: ignore[arg-type]
    assert isinstance(runner, ClassifiedExtensionsRunner)
