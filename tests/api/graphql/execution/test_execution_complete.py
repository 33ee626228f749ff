"""Remembering the classes of values found not awaitable answers what
``is_awaitable`` answers, every time."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Generator
from typing import Any

import pytest
from strawberry.execution.is_awaitable import optimized_is_awaitable as is_awaitable

from api.graphql.execution import complete
from api.graphql.execution.complete import PLAIN_LIMIT, SETTLED, awaitable


@pytest.fixture
def plain(monkeypatch: pytest.MonkeyPatch) -> set[type]:
    """A fresh set of remembered classes for each test."""
    remembered: set[type] = set(SETTLED)
    monkeypatch.setattr(complete, "PLAIN", remembered)
    return remembered


class Plain:
    pass


class Awaits:
    def __await__(self) -> Generator[Any, None, None]:
        yield


def _generator() -> Generator[int, None, None]:
    yield 1


@types.coroutine
def _generator_coroutine() -> Generator[Any, None, None]:
    yield


async def _coroutine() -> None:
    return None


def _values() -> list[Any]:
    coroutine = _coroutine()
    coroutine.close()
    return [
        Plain(),
        Awaits(),
        _generator(),
        _generator_coroutine(),
        coroutine,
        asyncio.Future.__new__(asyncio.Future),
        Plain,
        Awaits,
        object(),
        {"a": 1},
    ]


@pytest.mark.parametrize("rounds", [1, 2])
def test_every_value_is_answered_as_is_awaitable_answers(plain: set[type], rounds: int) -> None:
    """Twice over the same values: the second time, remembered classes answer."""
    for _ in range(rounds):
        for value in _values():
            remembered = type(value) in plain
            assert (not remembered and awaitable(value)) == is_awaitable(value), value
    assert Plain in plain
    assert object in plain
    assert Awaits not in plain
    assert types.GeneratorType not in plain  # a generator's awaitability is its code's
    assert type not in plain


def test_the_remembered_classes_are_bounded(plain: set[type]) -> None:
    made = [type(f"Made{index}", (), {})() for index in range(PLAIN_LIMIT + 10)]
    for value in made:
        awaitable(value)
    assert len(plain) == PLAIN_LIMIT
