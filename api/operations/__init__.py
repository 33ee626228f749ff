"""Operation stores: named operations (``registry``) and their manifests,
trusted-documents mode (``trusted``), automatic persisted queries
(``persisted``, ``shared_persisted``)."""

# The public modules; importing the package loads none of them (the CLI jobs read
# settings without loading the GraphQL layer, docs/design.md, "Layout").
__all__ = [
    "defaults",
    "largest_variables",
    "manifests",
    "persisted",
    "registry",
    "shared_persisted",
    "trusted",
]
