"""The MCP server: registered operations marked ``@tool`` as MCP tools, over
Streamable HTTP (``/mcp``) and stdio (``proofgate mcp``).

Only the settings are exported here: ``api.settings.gateway`` imports them, and must
not load the MCP SDK (docs/design.md, "MCP tools").
"""

from api.mcp.settings import MCPVariables

__all__ = ["MCPVariables"]
