"""The one reader of ``PROOFGATE_*`` variables, built on pydantic-settings.

Each part of the settings declares its variables on a dataclass, and the
reader's sections are made from those marks (``api.settings.declared``): a
section is a pydantic model whose field ``max_depth`` is the variable
``PROOFGATE_MAX_DEPTH``. ``EnvironmentReader`` reads any combination of
sections in one pass, so every
variable treats an empty or blank value as unset, and a malformed one stops
start-up with a one-line ``ConfigurationError`` naming it, never a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, Self

from pydantic import ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from domain.errors import ConfigurationError

__all__ = ["PREFIX", "EnvironmentReader", "Malformed", "configuration_error", "variable_name"]

PREFIX = "PROOFGATE_"


class Malformed(ValueError):
    """Raised by a value's parser; the reader names the variable around it."""

    def __init__(self, problem: str, *, hint: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.hint = hint


def variable_name(field: str) -> str:
    return f"{PREFIX}{field.upper()}"


class _MappingSource(PydanticBaseSettingsSource):
    """The environment as given (``os.environ`` or a test's dict), blank
    values dropped, values stripped. Only exact upper-case names count, as
    they always have: pydantic-settings' own source would also accept
    ``proofgate_max_depth``. A custom source is pydantic-settings' documented
    way ("Adding sources"); no field here is decoded as JSON (those that hold
    several values are ``NoDecode``), so none needs its environment source."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self.environ = environ

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        value = self.environ.get(variable_name(field_name), "").strip()
        return value or None, field_name, False

    def __call__(self) -> dict[str, Any]:
        found = {}
        for name, field in self.settings_cls.model_fields.items():
            value, key, _ = self.get_field_value(field, name)
            if value is not None:
                found[key] = value
        return found


_ENVIRON: ContextVar[Mapping[str, str]] = ContextVar("proofgate_environ")
"""The environment ``EnvironmentReader.read`` was given, for the one source it reads."""


class EnvironmentReader(BaseSettings):
    """Base of a set of sections read together: ``class Env(SectionA,
    SectionB, EnvironmentReader)``, then ``Env.read(environ)``."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX,
        env_ignore_empty=True,
        frozen=True,
        extra="forbid",
        validate_default=False,
    )
    """Defaults are typed values, not text: the parsers only see what was set."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Values passed to the constructor, then the given environment; no
        ``.env`` file, no secrets directory."""
        return init_settings, _MappingSource(settings_cls, _ENVIRON.get(os.environ))

    @classmethod
    def read(cls, environ: Mapping[str, str] = os.environ) -> Self:
        token = _ENVIRON.set(environ)
        try:
            return cls()
        except ValidationError as error:
            raise configuration_error(error) from None
        finally:
            _ENVIRON.reset(token)

    @classmethod
    def variables(cls) -> tuple[str, ...]:
        return tuple(variable_name(field) for field in cls.model_fields)


def configuration_error(error: ValidationError) -> ConfigurationError:
    """The first problem pydantic found: one line an operator can act on.
    Our parsers say what was wrong with the value; a check pydantic made
    itself contributes its own message."""
    first = error.errors(include_url=False)[0]
    name = variable_name(str(first["loc"][0])) if first["loc"] else PREFIX + "*"
    cause = first.get("ctx", {}).get("error")
    if isinstance(cause, Malformed):
        return ConfigurationError(f"Invalid {name}: {cause.problem}", hint=cause.hint)
    return ConfigurationError(f"Invalid {name}: {first['msg']}")
