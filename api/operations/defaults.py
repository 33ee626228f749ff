"""The registry's default set: the explorer's examples and the default MCP
tools, the documents in ``tools/`` (docs/design.md, "MCP tools")."""

from __future__ import annotations

from importlib.resources import files

from api.http.explorer_examples import default_operations

__all__ = ["default_documents", "tool_documents"]


def tool_documents() -> tuple[str, ...]:
    folder = files(__package__).joinpath("tools")
    paths = sorted((p for p in folder.iterdir() if p.name.endswith(".graphql")), key=str)
    return tuple(path.read_text(encoding="utf-8") for path in paths)


def default_documents() -> tuple[str, ...]:
    return (*default_operations(), *tool_documents())
