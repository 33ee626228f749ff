"""The GraphQL endpoint: the POST entry, view, schema, extensions, prepared lane,
registered operations' plans, incremental delivery, content negotiation,
compiled execution."""

# The public modules; importing the package loads none of them (the CLI jobs read
# settings without loading the GraphQL layer, docs/design.md, "Layout").
__all__ = [
    "entry",
    "extension_hooks",
    "extension_stages",
    "fieldmap",
    "incremental",
    "negotiation",
    "operation_plans",
    "prepared",
    "schema",
    "view",
]
