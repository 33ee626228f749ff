"""Sections made from the variables a settings dataclass declares.

The threat rules' and the pipeline's settings live in layers that may not
import the gateway; their tunable fields carry ``domain.variables.variable``
marks. ``class ThreatVariables(Declared, declares=ThreatSettings)`` gets one
field per mark (the variable's name, its format's parser, the dataclass
default counted in the variable's unit), and ``build`` makes the dataclass
from what was read, so a field is declared once and copied by nothing.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from api.settings.formats import MillisecondsOrOff, PlainDecimal, Positive
from domain.variables import declared

__all__ = ["FORMATS", "Declared"]

_T = TypeVar("_T")

FORMATS: Mapping[str, object] = {
    "positive": Positive,
    "decimal": PlainDecimal,
    "milliseconds_or_off": MillisecondsOrOff,
}
"""The formats a mark may name; a section adds its own with ``formats=``."""


class Declared(BaseModel):
    """Base of a section whose fields a dataclass declares.

    The fields are added in ``__init_subclass__``, before pydantic reads the
    class's annotations, so they are ordinary fields: read by
    ``EnvironmentReader`` with every other section, in its one-line errors,
    listed by ``Environment.variables()``.
    """

    def __init_subclass__(
        cls,
        *,
        declares: type[Any] | None = None,
        formats: Mapping[str, object] | None = None,
        **kwargs: Any,
    ) -> None:
        if declares is not None:
            known = {**FORMATS, **(formats or {})}
            annotations = dict(inspect.get_annotations(cls))
            for field, default, mark in declared(declares):
                if mark.format not in known:
                    raise TypeError(f"{declares.__name__}.{field}: no format {mark.format!r}")
                if mark.unit is not None and default % mark.unit:
                    raise TypeError(f"{declares.__name__}.{field}: default not whole {mark.unit}")
                annotations[mark.name] = known[mark.format]
                setattr(cls, mark.name, default if mark.unit is None else default // mark.unit)
            cls.__annotations__ = annotations
        super().__init_subclass__(**kwargs)

    def build(self, settings: type[_T], **others: Any) -> _T:
        """The ``settings`` dataclass with the values read; ``others`` are
        its fields no variable sets."""
        values: dict[str, Any] = {}
        for field, _default, mark in declared(settings):
            value = getattr(self, mark.name)
            if mark.unit is not None:
                value = mark.unit * value
            for name in (field, *mark.also):
                values[name] = value
        return settings(**values, **others)
