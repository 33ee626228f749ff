"""The MCP server: registered operations marked ``@tool`` as MCP tools, over
Streamable HTTP (``/mcp``) and stdio (``proofgate mcp``). Its one setting is
``api.settings.mcp`` (docs/design.md, "MCP tools")."""

# The public modules; importing the package loads none of them (the CLI jobs read
# settings without loading the GraphQL layer, docs/design.md, "Layout").
__all__ = [
    "http",
    "inputs",
    "runner",
    "server",
    "stdio",
    "tools",
]
