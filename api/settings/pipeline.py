"""The threat pipeline's variables: outbox, relay, live delivery, webhooks.

``PipelineSettings`` lives with the pipeline, which must not import the
gateway; its tunable fields name their variables (``domain.variables``), and
``PipelineVariables`` is the section they make (``api.settings.declared``),
with the formats only the pipeline's variables use.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator
from pydantic_settings import NoDecode

from api.settings.declared import Declared
from api.settings.environment import Malformed
from api.settings.formats import Positive
from domain.threats import ThreatSettings
from services.pipeline.settings import PipelineSettings, ShardLayout

__all__ = ["PipelineVariables"]

_DEFAULT = PipelineSettings()
_MILLISECOND = timedelta(milliseconds=1)
_LAYOUT = re.compile(r"([0-9]+):([0-9]+)")


def _layouts(text: str) -> tuple[ShardLayout, ...]:
    """``version:count,...``; their order is checked by ``PipelineSettings``."""
    layouts = []
    for part in text.split(","):
        match = _LAYOUT.fullmatch(part.strip())
        if match is None:
            raise Malformed(f"{text!r}", hint="Use version:count pairs, e.g. 1:4,2:8.")
        layouts.append(ShardLayout(int(match[1]), int(match[2])))
    return tuple(layouts)


def _redis_url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("redis", "rediss", "unix") or (
        parts.scheme != "unix" and not parts.hostname
    ):
        raise Malformed(
            "must be a redis://, rediss:// or unix:// URL",
            hint="For example redis://127.0.0.1:6379/0 (Redis 7 or Valkey).",
        )
    return text


_REDIS_PREFIX = re.compile(r"[A-Za-z0-9_.:{}-]{1,64}")


def _redis_prefix(text: str) -> str:
    if not _REDIS_PREFIX.fullmatch(text):
        raise Malformed(
            f"{text!r} is not a Redis key prefix",
            hint="Use up to 64 letters, digits and _ . : - { }, e.g. proofgate-staging:.",
        )
    return text


def _sweep_ms(value: int) -> int:
    overlap = _DEFAULT.tail_overlap // _MILLISECOND
    if value >= overlap:
        raise Malformed(
            f"{value} is not below the tail overlap ({overlap} ms)",
            hint="A longer sweep could skip past alerts Redis dropped; keep it under 10000.",
        )
    return value


_FORMATS = {
    "shard_layouts": Annotated[tuple[ShardLayout, ...], NoDecode, BeforeValidator(_layouts)],
    "redis_url": Annotated[str | None, BeforeValidator(_redis_url)],
    "redis_prefix": Annotated[str, BeforeValidator(_redis_prefix)],
    "sweep_ms": Annotated[Positive, AfterValidator(_sweep_ms)],
}


class PipelineVariables(Declared, declares=PipelineSettings, formats=_FORMATS):
    def pipeline(self, threats: ThreatSettings) -> PipelineSettings:
        return self.build(PipelineSettings, threats=threats)
