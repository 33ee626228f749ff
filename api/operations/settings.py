"""Settings of the operation registry and of trusted-documents mode."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel

from api.settings.formats import UserPath, choice

__all__ = ["OperationSettings", "OperationVariables", "TrustedDocuments"]


class TrustedDocuments(StrEnum):
    """``log`` exists so an operator sees what ``enforce`` would refuse
    before refusing it (docs/design.md, "Named operations")."""

    OFF = "off"
    LOG = "log"
    ENFORCE = "enforce"


@dataclass(frozen=True, kw_only=True)
class OperationSettings:
    directory: Path | None = None
    """Folder of ``.graphql`` files registered next to the default set."""
    trusted_documents: TrustedDocuments = TrustedDocuments.OFF


class OperationVariables(BaseModel):
    operations_dir: UserPath | None = None
    trusted_documents: Annotated[TrustedDocuments, choice(TrustedDocuments)] = TrustedDocuments.OFF

    def operations(self) -> OperationSettings:
        return OperationSettings(
            directory=self.operations_dir, trusted_documents=self.trusted_documents
        )
