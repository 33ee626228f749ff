"""Sections made from the variables a settings dataclass declares.

A setting is declared one way, wherever it lives: a field of a frozen
dataclass marked ``variable(default, name)`` (``domain.variables``). The
threat rules' and the pipeline's settings live in layers that may not import
the gateway, so the mark is plain data; the gateway's own settings
(``Settings``, ``Limits``, ``Policy``, the secrets, ...) are declared the same
way. ``class ThreatVariables(Declared, declares=ThreatSettings)`` gets one
field per mark (the variable's name, its format's parser, the dataclass
default counted in the variable's unit), ``build`` makes the dataclass from
what was read, and ``check`` holds a dataclass built directly (tests,
embedding) to the same rules, so a field is declared once and copied by nothing.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_validator,
)

from api.settings.environment import configuration_error
from api.settings.formats import (
    Addresses,
    ArenasOrOff,
    BytesOrOff,
    EntriesOrOff,
    FramesOrOff,
    HttpUrl,
    MillisecondsOrOff,
    OneOrZero,
    OperationNames,
    Origins,
    PerMinuteOrOff,
    PlainDecimal,
    Port,
    Positive,
    Switch,
    UserPath,
    choice,
)
from domain.variables import declared

__all__ = ["FORMATS", "Declared"]

_T = TypeVar("_T")

FORMATS: Mapping[str, object] = {
    "positive": Positive,
    "decimal": PlainDecimal,
    "milliseconds_or_off": MillisecondsOrOff,
    "one_or_zero": OneOrZero,
    "text": str,
    "path": UserPath,
    "port": Port,
    "http_url": HttpUrl,
    "origins": Origins,
    "operation_names": OperationNames,
    "addresses": Addresses,
    "switch": Switch,
    "per_minute_or_off": PerMinuteOrOff,
    "entries_or_off": EntriesOrOff,
    "frames_or_off": FramesOrOff,
    "arenas_or_off": ArenasOrOff,
    "bytes_or_off": BytesOrOff,
}
"""The formats a mark may name; a section adds its own with ``formats=``.
``choice`` is one more: a value of the default's enum, in any letter case."""


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
            for field, mark in declared(declares):
                where = f"{declares.__name__}.{field.name}"
                default: Any = field.default  # variable() gives every field one
                if mark.format == "choice":
                    annotations[mark.name] = Annotated[type(default), choice(type(default))]
                elif mark.format in known:
                    annotations[mark.name] = known[mark.format]
                else:
                    raise TypeError(f"{where}: no format {mark.format!r}")
                if mark.unit is not None and default % mark.unit:
                    raise TypeError(f"{where}: default not whole {mark.unit}")
                value = default if mark.unit is None else default // mark.unit
                setattr(cls, mark.name, Field(value, repr=field.repr))
            cls.__annotations__ = annotations
        super().__init_subclass__(**kwargs)

    @model_validator(mode="wrap")
    @classmethod
    def _one_line(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """The one-line error of ``EnvironmentReader.read``, whoever reads
        the section (``Environment()``, pydantic-settings' own source, ``check``)."""
        try:
            return handler(data)
        except ValidationError as error:
            raise configuration_error(error) from None

    def build(self, settings: type[_T], **others: Any) -> _T:
        """The ``settings`` dataclass with the values read; ``others`` are
        its fields no variable sets."""
        values: dict[str, Any] = {}
        for field, mark in declared(settings):
            value = getattr(self, mark.name)
            if mark.unit is not None:
                value = mark.unit * value
            for name in (field.name, *mark.also):
                values[name] = value
        return settings(**values, **others)

    @classmethod
    def check(cls, settings: object) -> None:
        """Holds a dataclass built directly to its variables' rules, with
        the variables' one-line errors, from its ``__post_init__``; a value
        a format normalizes (a preset named for its lanes) is kept normalized."""
        marked = list(declared(type(settings)))
        values = {}
        for field, mark in marked:
            value = getattr(settings, field.name)
            values[mark.name] = value if mark.unit is None else value // mark.unit
        read = cls.model_validate(values)
        for field, mark in marked:
            value = getattr(read, mark.name)
            if mark.unit is not None:
                value = mark.unit * value
            object.__setattr__(settings, field.name, value)  # frozen: set here, once
