"""Settings of the operation registry and of trusted-documents mode."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from api.settings.declared import Declared
from domain.variables import variable

__all__ = ["OperationSettings", "OperationVariables", "TrustedDocuments"]


class TrustedDocuments(StrEnum):
    """``log`` exists so an operator sees what ``enforce`` would refuse
    before refusing it (docs/design.md, "Named operations")."""

    OFF = "off"
    LOG = "log"
    ENFORCE = "enforce"


@dataclass(frozen=True, kw_only=True)
class OperationSettings:
    directory: Path | None = variable(None, "operations_dir", format="path")
    """Folder of ``.graphql`` files registered next to the default set."""
    trusted_documents: TrustedDocuments = variable(
        TrustedDocuments.OFF, "trusted_documents", format="choice"
    )


class OperationVariables(Declared, declares=OperationSettings):
    def operations(self) -> OperationSettings:
        return self.build(OperationSettings)
