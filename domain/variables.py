"""Which ``PROOFGATE_*`` variable sets a field of a layer's settings.

The threat rules' and the pipeline's settings are dataclasses of layers that
may not import the gateway, yet an operator tunes some of their fields. Such
a field is declared once, here where it lives: ``variable(default, name)``
gives it its default and marks it with the variable that sets it, and the
gateway's reader (``api/settings/declared.py``) makes its section from those
marks (the gateway's own settings dataclasses are declared the same way).
A new tunable field is that one line and a row in README's tables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

__all__ = ["Variable", "declared", "variable"]

_T = TypeVar("_T")
_MARK = "proofgate.variable"


@dataclass(frozen=True, slots=True)
class Variable:
    name: str
    """The variable is ``PROOFGATE_`` and this in capitals."""
    format: str = "positive"
    """How its value is written: a format the gateway's reader knows by this
    name (``positive``, ``decimal``, ``choice`` of the default's enum, ... in
    ``api/settings/declared.py``, or one the section adds for itself)."""
    unit: timedelta | None = None
    """For a ``timedelta`` field: what one of the variable's numbers counts."""
    also: tuple[str, ...] = ()
    """Other fields the same value sets (a rule's window is also its dedupe bucket)."""


def variable(
    default: _T,
    name: str,
    *,
    format: str = "positive",
    unit: timedelta | None = None,
    also: tuple[str, ...] = (),
    repr: bool = True,
) -> _T:
    """A dataclass field with ``default``, set by ``PROOFGATE_<NAME>``."""
    mark = Variable(name, format, unit, also)
    return dataclasses.field(default=default, repr=repr, metadata={_MARK: mark})


def declared(settings: type[Any]) -> Iterator[tuple[dataclasses.Field[Any], Variable]]:
    """Each field of the ``settings`` dataclass a variable sets, with its
    variable, in declaration order."""
    for field in dataclasses.fields(settings):
        mark = field.metadata.get(_MARK)
        if isinstance(mark, Variable):
            yield field, mark
