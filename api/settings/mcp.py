"""The one setting of ``proofgate mcp``: the API key its agent acts with."""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["MCPVariables"]


class MCPVariables(BaseModel):
    mcp_key: str | None = Field(None, repr=False)
    """Over stdio there is no request to carry a key, so the process is given
    one; unset, the agent is anonymous and sees only the public tools."""
