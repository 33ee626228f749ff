"""Routes and HTTP plumbing other than the GraphQL view: the POST guard,
authentication, subscriptions over HTTP (``streams``), ingest, QR, passport,
explorer, health."""

# The public modules; importing the package loads none of them (the CLI jobs read
# settings without loading the GraphQL layer, docs/design.md, "Layout").
__all__ = [
    "authentication",
    "explorer",
    "explorer_examples",
    "guard",
    "health",
    "ingest",
    "passport",
    "public_product",
    "qr",
    "streams",
]
