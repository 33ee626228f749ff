"""The one setting of ``proofgate mcp``: the API key its agent acts with."""

from __future__ import annotations

from dataclasses import dataclass

from api.settings.declared import Declared
from domain.variables import variable

__all__ = ["MCPSettings", "MCPVariables"]


@dataclass(frozen=True)
class MCPSettings:
    mcp_key: str | None = variable(None, "mcp_key", format="text", repr=False)
    """Over stdio there is no request to carry a key, so the process is given
    one; unset, the agent is anonymous and sees only the public tools."""


class MCPVariables(Declared, declares=MCPSettings):
    pass
