"""The proofgate command, one module per subcommand."""

# The public modules; importing the package loads none of them (the CLI jobs read
# settings without loading the GraphQL layer, docs/design.md, "Layout").
__all__ = [
    "backup",
    "capacity",
    "explain",
    "flags",
    "ledger",
    "main",
    "mcp",
    "migrate",
    "operations",
    "outbox",
    "secrets",
    "serve",
]
