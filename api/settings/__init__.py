"""The PROOFGATE_* environment, read once into typed settings, one section per concern."""

# The public modules; importing the package loads none of them (the CLI jobs read
# settings without loading the GraphQL layer, docs/design.md, "Layout").
__all__ = [
    "declared",
    "environment",
    "formats",
    "gateway",
    "key_ring",
    "keyfile",
    "limits",
    "mcp",
    "operations",
    "pipeline",
    "policy",
    "secrets",
    "threats",
]
