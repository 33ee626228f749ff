"""The demo data proofgate serve --demo loads through the real GraphQL operations."""

# The public modules; importing the package loads none of them (the CLI jobs read
# settings without loading the GraphQL layer, docs/design.md, "Layout").
__all__ = [
    "catalog",
    "client",
    "documents",
    "keys",
    "loader",
]
