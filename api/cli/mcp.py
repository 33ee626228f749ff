"""``proofgate mcp``: the registered tools over stdio, acting with ``PROOFGATE_MCP_KEY``.

The server itself is ``api/mcp/stdio.py``; this module only reads the settings
and the key, and configures logging (to stderr: stdout carries JSON-RPC).
"""

from __future__ import annotations

import argparse
import asyncio
import logging.config
import os
from typing import Any

__all__ = ["add_mcp_command"]


def add_mcp_command(commands: Any) -> None:
    """Adds ``mcp`` to ``proofgate``'s parser."""
    mcp = commands.add_parser(
        "mcp",
        help="serve the registered tools over stdio (MCP), acting with PROOFGATE_MCP_KEY",
    )
    mcp.set_defaults(command=_run)


def _run(args: argparse.Namespace) -> int:
    from api.mcp.stdio import serve_stdio
    from api.observability.logs import logging_config
    from api.settings.gateway import Environment, Settings
    from api.settings.mcp import MCPSettings

    settings = Settings.from_env()
    key = Environment.read(os.environ).build(MCPSettings).mcp_key
    logging.config.dictConfig(logging_config(settings.log_format, settings.log_level))
    asyncio.run(serve_stdio(settings, key))
    return 0
